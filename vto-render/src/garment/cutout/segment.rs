//! The garment/background split of an opaque product photo, as shops take them: flat-lays on
//! white, grey, coloured and textured surfaces (wood, fur, carpet, a sheet), hanger and
//! ghost-mannequin shots.
//!
//! 1. **Work image**: the photo scaled to at most [`WORK_SIDE`] pixels (the scaling also
//!    averages away JPEG noise and fine weave); per pixel luma, chroma (YCbCr) and a texture
//!    measure (the mean gradient magnitude over a 5×5 window).
//! 2. **Background model** from the border band: the band's pixels clustered by k-means
//!    (six clusters, deterministic start at luma quantiles) over colour and texture, so a
//!    wood floor's light and dark grain, a fur rug's highlights or a sheet's folds each get a
//!    cluster. A cluster is background when it is at least as common in the band as in the
//!    photo's centre (a garment that runs off the frame puts its colours in the band too, but
//!    they are far more common in the centre).
//! 3. **Edge-stopped fill**: from the band's background pixels, the fill grows through pixels
//!    near a background cluster (darker is cheaper: shadows join) and stops at edges stronger
//!    than the background's own texture (the threshold adapts: a smooth studio wall stops the
//!    fill at the faint outline of a white tee, a wood floor's grain does not). Edges are
//!    widened by a pixel first so the fill does not leak through one-pixel gaps of a faint
//!    outline, and the fill then creeps back up to the outline through background-coloured
//!    pixels. A shadow is the surface darkened (colour scaled by one factor, down to
//!    60 % of its luma): a second fill walks through shadows too, and a third with the model
//!    refitted on the background reached; what either would add that cuts the garment in
//!    two or takes a quarter of it (a white stripe's end in the shadow, a white garment on
//!    white) stays garment. At the photo's resolution, shade the work image cannot reach
//!    (an armpit's narrow wedge) is peeled from the background inwards while it darkens
//!    smoothly.
//!    On a textured surface (wood, fur, carpet: the background's own gradients are
//!    strong) the planks' joints and the grain fence pieces of the floor off from the fill;
//!    the garment's colours are then learned from its deep middle and the surface grown,
//!    edges or not, through every pixel that is no garment colour and much nearer the
//!    surface's, lit brighter or darker (`surface_by_colour`), unless that cuts the
//!    garment in two.
//! 4. **Cleanup**: what the fill did not reach is the garment; its largest component, without
//!    thin parts (a hanger's hook, a string: removed by an opening whose radius is a hundredth
//!    of the photo and restored where the garment is thick), holes filled (a print in the
//!    garment's colour of the background is garment).
//!
//! Deterministic: no random start, no iteration order that depends on anything but the
//! pixels. A graph cut would place the outline more exactly where colour and edges disagree;
//! no maintained max-flow crate for image grids was found, and the fill above, with a learned
//! background, accepted every flat-lay, hanger and ghost photo of our test set.

use image::RgbaImage;

use crate::garment::geom::neighbours4;
use crate::image_ops::box_blur;

/// The work image's longer side (pixels).
pub const WORK_SIDE: u32 = 360;

/// Background clusters in the border band.
const K: usize = 6;

/// Feature weights: luma, chroma (per channel), texture.
const W_LUMA: f32 = 1.0;
const W_CHROMA: f32 = 2.0;
const W_TEXTURE: f32 = 1.5;

/// Per-feature floor of a cluster's spread (in weighted feature units): JPEG noise and
/// lighting drift across a plain background.
const MIN_SPREAD: [f32; 4] = [6.0, 5.0, 5.0, 4.0];

/// How many spreads from a background cluster a pixel may lie and still be background.
const BG_DIST: f32 = 3.2;

/// The darkest shadow the fill walks through, as a share of the surface's luma (a garment's
/// drop shadow on a flat-lay, the shade in an armpit's wedge: 10–30 % darker).
const SHADOW: f32 = 0.6;

/// The largest change of lightness (3×3 mean) from one pixel to the next inside a shadow;
/// a garment's outline, even a white garment's on white, steps more.
const SHADE_STEP: f32 = 4.0;

/// The brightest light on a surface, as a multiple of its luma in the border band (a
/// phone's flash lights the middle of a floor a third brighter than its edges).
const LIGHT: f32 = 1.5;

/// A pixel's weighted chroma (Cb, Cr) under this is near-neutral (grey).
const NEUTRAL: f32 = 16.0;

/// A background whose own gradients (90th percentile) pass this is textured (wood, fur,
/// carpet): its edges do not stop the fill.
const TEXTURED: f32 = 5.5;

fn luma_cbcr(p: [u8; 4]) -> [f32; 3] {
    let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    let y = 0.299 * r + 0.587 * g + 0.114 * b;
    [y, 0.564 * (b - y), 0.713 * (r - y)]
}

/// Per-pixel features of a work image: weighted luma, Cb, Cr and texture.
struct Features {
    w: usize,
    h: usize,
    f: Vec<[f32; 4]>,
    /// Gradient magnitude (luma + chroma) per pixel.
    grad: Vec<f32>,
}

impl Features {
    fn new(img: &RgbaImage) -> Features {
        let (w, h) = (img.width() as usize, img.height() as usize);
        let ycc: Vec<[f32; 3]> = img.pixels().map(|p| luma_cbcr(p.0)).collect();
        let mut grad = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                let (xa, xb) = (x.saturating_sub(1), (x + 1).min(w - 1));
                let (ya, yb) = (y.saturating_sub(1), (y + 1).min(h - 1));
                let (l, r) = (ycc[y * w + xa], ycc[y * w + xb]);
                let (u, d) = (ycc[ya * w + x], ycc[yb * w + x]);
                let mut g = 0.0f32;
                for (c, wc) in [1.0f32, 1.5, 1.5].into_iter().enumerate() {
                    let (gx, gy) = (r[c] - l[c], d[c] - u[c]);
                    g += wc * (gx * gx + gy * gy).sqrt();
                }
                grad[y * w + x] = g * 0.5;
            }
        }
        let texture = box_blur(&grad, w, h, 2);
        let f = ycc
            .iter()
            .zip(&texture)
            .map(|(c, &t)| {
                [
                    c[0] * W_LUMA,
                    c[1] * W_CHROMA,
                    c[2] * W_CHROMA,
                    t * W_TEXTURE,
                ]
            })
            .collect();
        Features { w, h, f, grad }
    }
}

/// One cluster of border pixels.
#[derive(Debug, Clone, Copy)]
struct Cluster {
    mean: [f32; 4],
    spread: [f32; 4],
}

impl Cluster {
    /// Distance in spreads; a pixel darker than the cluster (a shadow) counts its luma at
    /// half.
    fn dist(&self, f: &[f32; 4]) -> f32 {
        let mut s = 0.0;
        for (c, ((&v, &m), &spread)) in f.iter().zip(&self.mean).zip(&self.spread).enumerate() {
            let mut d = (v - m) / spread;
            if c == 0 && d < 0.0 {
                d *= 0.5;
            }
            s += d * d;
        }
        s.sqrt()
    }

    /// [`Cluster::dist`] by colour alone: next to an outline the texture measure is the
    /// outline's own gradient, not the surface's.
    fn colour_dist(&self, f: &[f32; 4]) -> f32 {
        let mut g = *f;
        g[3] = self.mean[3];
        self.dist(&g)
    }

    /// [`Cluster::dist`] with the pixel taken as the cluster's surface in shadow where it can
    /// be one: a shadow scales the surface's colour (luma and chroma alike) by a factor `s`,
    /// and down to [`SHADOW`] the darkening costs nothing; only the chroma left after
    /// the scaling and the texture count. A garment of the surface's colour, only darker,
    /// is kept out of the fill by its outline's edges (the fill is edge-stopped).
    fn shadow_dist(&self, f: &[f32; 4]) -> f32 {
        self.scaled_dist(f, SHADOW, 1.0)
    }

    /// [`Cluster::shadow_dist`] for a surface lit brighter too, up to [`LIGHT`] times its
    /// luma.
    fn light_dist(&self, f: &[f32; 4]) -> f32 {
        self.scaled_dist(f, SHADOW, LIGHT)
    }

    /// [`Cluster::dist`] with the surface's colour scaled by any factor in `lo..hi` for free.
    fn scaled_dist(&self, f: &[f32; 4], lo: f32, hi: f32) -> f32 {
        let s = f[0] / self.mean[0].max(1.0);
        if !(lo..hi).contains(&s) {
            return self.dist(f);
        }
        let lit = [
            self.mean[0] * s,
            self.mean[1] * s,
            self.mean[2] * s,
            self.mean[3],
        ];
        let mut d2 = 0.0;
        for c in 1..4 {
            d2 += ((f[c] - lit[c]) / self.spread[c]).powi(2);
        }
        d2.sqrt().min(self.dist(f))
    }
}

/// k-means over `samples` with `k` clusters started at luma quantiles; returns the
/// clusters and each sample's cluster.
fn kmeans(samples: &[[f32; 4]], k: usize) -> (Vec<Cluster>, Vec<usize>) {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by(|&a, &b| samples[a][0].total_cmp(&samples[b][0]).then(a.cmp(&b)));
    let mut means: Vec<[f32; 4]> = (0..k)
        .map(|i| samples[order[(2 * i + 1) * samples.len() / (2 * k)]])
        .collect();
    let mut assign = vec![0usize; samples.len()];
    for _ in 0..10 {
        for (s, a) in samples.iter().zip(assign.iter_mut()) {
            *a = (0..k)
                .min_by(|&i, &j| sq(s, &means[i]).total_cmp(&sq(s, &means[j])))
                .unwrap_or(0);
        }
        let mut sum = vec![[0.0f64; 5]; k];
        for (s, &a) in samples.iter().zip(&assign) {
            for c in 0..4 {
                sum[a][c] += f64::from(s[c]);
            }
            sum[a][4] += 1.0;
        }
        for (m, s) in means.iter_mut().zip(&sum) {
            if s[4] > 0.0 {
                for c in 0..4 {
                    m[c] = (s[c] / s[4]) as f32;
                }
            }
        }
    }
    let mut var = vec![[0.0f64; 5]; k];
    for (s, &a) in samples.iter().zip(&assign) {
        for c in 0..4 {
            var[a][c] += f64::from((s[c] - means[a][c]).powi(2));
        }
        var[a][4] += 1.0;
    }
    let clusters = means
        .iter()
        .zip(&var)
        .map(|(m, v)| {
            let n = v[4].max(1.0);
            let mut spread = [0.0; 4];
            for c in 0..4 {
                spread[c] = ((v[c] / n).sqrt() as f32).max(MIN_SPREAD[c]);
            }
            Cluster { mean: *m, spread }
        })
        .collect();
    (clusters, assign)
}

fn sq(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    (0..4).map(|c| (a[c] - b[c]).powi(2)).sum()
}

/// The background clusters of a work image (see the module docs, step 2).
fn background_model(feat: &Features) -> Vec<Cluster> {
    let (w, h) = (feat.w, feat.h);
    let band = (w.max(h) * 25 / 1000).max(2);
    let in_band = |x: usize, y: usize| x < band || y < band || x + band >= w || y + band >= h;
    let samples: Vec<[f32; 4]> = (0..w * h)
        .filter(|&i| in_band(i % w, i / w))
        .map(|i| feat.f[i])
        .collect();
    let (clusters, assign) = kmeans(&samples, K);
    let mut border_share = [0.0f32; K];
    for &a in &assign {
        border_share[a] += 1.0 / assign.len() as f32;
    }
    // The centre: the middle half of the photo each way, each pixel given to its nearest
    // cluster when it lies within reach of one.
    let mut centre_share = [0.0f32; K];
    let (cx0, cx1, cy0, cy1) = (w / 4, w * 3 / 4, h / 4, h * 3 / 4);
    let n = ((cx1 - cx0) * (cy1 - cy0)).max(1) as f32;
    for y in cy0..cy1 {
        for x in cx0..cx1 {
            let f = &feat.f[y * w + x];
            let best = (0..K).min_by(|&i, &j| clusters[i].dist(f).total_cmp(&clusters[j].dist(f)));
            if let Some(b) = best.filter(|&b| clusters[b].dist(f) < BG_DIST) {
                centre_share[b] += 1.0 / n;
            }
        }
    }
    let bg: Vec<Cluster> = (0..K)
        .filter(|&c| border_share[c] >= 0.02 && border_share[c] >= 0.6 * centre_share[c])
        .map(|c| clusters[c])
        .collect();
    if bg.is_empty() {
        // Every border colour is more common in the centre (a garment filling the frame):
        // the most common one stands for the background, the fill then finds little.
        let top = (0..K)
            .max_by(|&a, &b| border_share[a].total_cmp(&border_share[b]))
            .unwrap_or(0);
        return vec![clusters[top]];
    }
    bg
}

/// Foreground (garment) pixels of a photo with an opaque background (see the module docs).
pub fn segment(img: &RgbaImage) -> Vec<bool> {
    let (w0, h0) = img.dimensions();
    let work = super::within(img, WORK_SIDE);
    let feat = Features::new(&work);
    let (fg, bg) = segment_work(&feat);
    let mut fg = upscale(&fg, feat.w, feat.h, w0 as usize, h0 as usize);
    refine_outline(img, &feat, &bg, &mut fg);
    peel_shade(img, &bg, &mut fg);
    fg
}

/// Every garment lying apart in a photo with an opaque background (an outfit photo's top
/// and bottom, side by side or stacked with a gap): the segmentation of the module docs
/// with step 4 done per piece — each component of the garment mask covering at least
/// `min_share` of the work image is cleaned on its own (thin parts removed, holes filled),
/// so a second garment is not dropped as the largest component's clutter. Each piece is a
/// mask over the whole photo, largest first.
pub fn segment_pieces(img: &RgbaImage, min_share: f32) -> Vec<Vec<bool>> {
    let (w0, h0) = img.dimensions();
    let (w0, h0) = (w0 as usize, h0 as usize);
    let work = super::within(img, WORK_SIDE);
    let feat = Features::new(&work);
    let (w, h) = (feat.w, feat.h);
    let (raw, bg) = segment_raw(&feat);
    let (comp, sizes) = components(&raw, w, h);
    let mut big: Vec<usize> = (0..sizes.len())
        .filter(|&k| sizes[k] as f32 >= min_share * (w * h) as f32)
        .collect();
    big.sort_by_key(|&k| (std::cmp::Reverse(sizes[k]), k));
    let mut pieces = Vec::new();
    for k in big {
        let id = k as u32 + 1;
        let one: Vec<bool> = comp.iter().map(|&c| c == id).collect();
        let clean = cleanup(&one, w, h);
        let mut fg = upscale(&clean, w, h, w0, h0);
        refine_outline(img, &feat, &bg, &mut fg);
        peel_shade(img, &bg, &mut fg);
        let fg = largest_component(&fg, w0, h0);
        if fg.iter().filter(|&&v| v).count() as f32 >= min_share * (w0 * h0) as f32 {
            pieces.push(fg);
        }
    }
    pieces
}

/// Shade the work image cannot reach (an armpit's narrow wedge, darkened by the sleeve's
/// shadow) leaves the mask at the photo's resolution: from the background inwards, pixels
/// that are a background cluster's surface in shadow ([`Cluster::shadow_dist`] by colour)
/// and continue their neighbour's lightness smoothly and no lighter (a garment's shadow
/// darkens gradually towards the garment; its outline is a step, and a garment's own rim
/// gets lighter inwards), at most a tenth of the photo's longer side deep (a long sleeve
/// lying beside the torso leaves a slot a few pixels wide that the work image closes over
/// much of its length; peeled a pixel a round, a thirty-second stopped some 45 pixels
/// short of the armpit).
fn peel_shade(img: &RgbaImage, bg: &[Cluster], fg: &mut [bool]) {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let ycc: Vec<[f32; 3]> = img.pixels().map(|p| luma_cbcr(p.0)).collect();
    let luma: Vec<f32> = ycc.iter().map(|c| c[0]).collect();
    let smooth = box_blur(&luma, w, h, 1);
    let shade = |i: usize| {
        let c = ycc[i];
        let f = [c[0] * W_LUMA, c[1] * W_CHROMA, c[2] * W_CHROMA, 0.0];
        bg.iter().any(|k| {
            let mut g = f;
            g[3] = k.mean[3];
            f[0] < k.mean[0] && k.shadow_dist(&g) < BG_DIST * 0.8
        })
    };
    let mut front: Vec<usize> = (0..w * h)
        .filter(|&i| !fg[i] && neighbours4(i, w, h).any(|j| fg[j]))
        .collect();
    for _ in 0..(w.max(h) / 10).max(2) {
        let mut next = Vec::new();
        for &i in &front {
            for j in neighbours4(i, w, h) {
                let darker = smooth[i] - smooth[j];
                if fg[j] && darker > -0.5 && darker < SHADE_STEP && shade(j) {
                    fg[j] = false;
                    next.push(j);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        front = next;
    }
}

/// The outline placed at the photo's own resolution (the work image's is coarser): from
/// outside in, up to twice a work pixel and one more deep (an armpit's narrow wedge), garment pixels of the background's
/// colour next to the background leave the mask.
fn refine_outline(img: &RgbaImage, feat: &Features, bg: &[Cluster], fg: &mut [bool]) {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (sx, sy) = (feat.w as f32 / w as f32, feat.h as f32 / h as f32);
    let depth = 2 * ((1.0 / sx.min(sy)).ceil() as usize + 1);
    let cost = |i: usize| {
        let p = img.as_raw()[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]);
        let c = luma_cbcr(p);
        let (x, y) = (i % w, i / w);
        let wx = ((x as f32 * sx) as usize).min(feat.w - 1);
        let wy = ((y as f32 * sy) as usize).min(feat.h - 1);
        let t = feat.f[wy * feat.w + wx][3];
        let f = [c[0] * W_LUMA, c[1] * W_CHROMA, c[2] * W_CHROMA, t];
        bg.iter()
            .map(|k| k.colour_dist(&f))
            .fold(f32::MAX, f32::min)
    };
    for _ in 0..depth {
        let out: Vec<usize> = (0..w * h)
            .filter(|&i| fg[i] && neighbours4(i, w, h).any(|j| !fg[j]) && cost(i) < BG_DIST * 0.8)
            .collect();
        if out.is_empty() {
            break;
        }
        for i in out {
            fg[i] = false;
        }
    }
}

/// The segmentation on the work image's features (steps 2–4), and the background's
/// clusters.
fn segment_work(feat: &Features) -> (Vec<bool>, Vec<Cluster>) {
    let (fg, bg) = segment_raw(feat);
    (cleanup(&fg, feat.w, feat.h), bg)
}

/// Steps 2–3 on the work image: what the background fill did not reach (every piece, not
/// cleaned), and the background's clusters.
fn segment_raw(feat: &Features) -> (Vec<bool>, Vec<Cluster>) {
    let (w, h) = (feat.w, feat.h);
    let bg = background_model(feat);
    let strict = costs(feat, &bg, false);
    let cost = costs(feat, &bg, true);
    // The edge threshold: well above the gradients of the background's own texture (its
    // 90th percentile over the pixels the model calls background), never below a faint
    // outline's.
    let mut bg_grads: Vec<f32> = strict
        .iter()
        .zip(&feat.grad)
        .filter(|(&c, _)| c < BG_DIST * 0.5)
        .map(|(_, &g)| g)
        .collect();
    bg_grads.sort_by(f32::total_cmp);
    let p90 = bg_grads
        .get(bg_grads.len() * 9 / 10)
        .copied()
        .unwrap_or(10.0);
    let textured = p90 > TEXTURED;
    let edge_t = (p90 * 2.0).clamp(7.0, 60.0);
    let edge: Vec<bool> = feat.grad.iter().map(|&g| g > edge_t).collect();
    // Edges widened by one pixel (closes one-pixel gaps in a faint outline).
    let wide: Vec<bool> = (0..w * h)
        .map(|i| edge[i] || neighbours4(i, w, h).any(|j| edge[j]))
        .collect();
    let mut reached = fill(w, h, &strict, &strict, &wide);
    // Then into the shadows (the drop shadow's darkest part, an armpit's shaded wedge),
    // unless that cuts the garment (a white stripe's end in the shadow, darkened like it).
    let shaded = fill(w, h, &strict, &cost, &wide);
    keep_whole(w, h, &mut reached, &shaded);
    {
        // The border shows only part of the background's colours (a lit patch, a plank of
        // another shade). The background reached so far teaches the model the rest; a
        // second fill takes what the first could not reach. On a textured surface (its
        // grain has edges everywhere) only edges twice as strong as the threshold stop it.
        // The refitted clusters hold the shadows the first fill reached: no shadows of
        // them. What the second fill would take that cuts the garment in two (a white
        // stripe of a striped tee, reached through a faint outline) stays garment
        // ([`keep_whole`]).
        let samples: Vec<[f32; 4]> = (0..w * h)
            .filter(|&i| reached[i])
            .step_by(3)
            .map(|i| feat.f[i])
            .collect();
        if samples.len() > 4 * K {
            let (refit, _) = kmeans(&samples, K);
            let cost2 = costs(feat, &refit, false);
            let strong: Vec<bool> = feat.grad.iter().map(|&g| g > 2.0 * edge_t).collect();
            let again = fill(
                w,
                h,
                &strict,
                &cost2,
                if textured { &strong } else { &wide },
            );
            keep_whole(w, h, &mut reached, &again);
            if textured {
                let mut surface = bg.clone();
                surface.extend(refit);
                if let Some(more) = surface_by_colour(feat, &surface, &reached) {
                    keep_whole(w, h, &mut reached, &more);
                }
            }
        }
    }
    // Back up to the outline: background-coloured pixels next to the fill join it.
    let colour_cost: Vec<f32> = feat
        .f
        .iter()
        .map(|f| bg.iter().map(|c| c.colour_dist(f)).fold(f32::MAX, f32::min))
        .collect();
    for _ in 0..3 {
        let prev = reached.clone();
        for i in 0..w * h {
            if !prev[i] && colour_cost[i] < BG_DIST * 0.8 && neighbours4(i, w, h).any(|j| prev[j]) {
                reached[i] = true;
            }
        }
    }
    (reached.iter().map(|&r| !r).collect(), bg)
}

/// On a textured surface (a wood floor's planks and joints, a rug's tufts) the surface's
/// own strong edges fence pieces of it off from the fill: left unreached, they count as
/// garment, and the worn garment carried patches of floor. Here the garment's colours are
/// learned too — k-means over the pixels of what the fill left that lie at least half as
/// deep inside it as its deepest ([`depth_inside`]) — and the surface is
/// grown from `reached`, edges or not, through every pixel that is no garment colour (over
/// twice [`BG_DIST`] from each; over [`BG_DIST`] for a near-neutral pixel no rougher than
/// the surface) and lies under half as far from the `surface`'s clusters, lit brighter or
/// darker ([`Cluster::light_dist`]: the floor is not lit evenly).
/// `None` when the garment's middle is too small to learn from.
fn surface_by_colour(feat: &Features, surface: &[Cluster], reached: &[bool]) -> Option<Vec<bool>> {
    let (w, h) = (feat.w, feat.h);
    let garment: Vec<bool> = reached.iter().map(|&r| !r).collect();
    let main = largest_component(&garment, w, h);
    // The garment's middle: its pixels at least half as deep inside it as the deepest (a
    // piece of floor kept along the outline is shallow, the torso deep).
    let depth = depth_inside(&main, w, h);
    let deepest = depth.iter().copied().max().unwrap_or(0);
    // The surface by colour alone too: a sunlit patch of the floor shows its grain stronger.
    let d_surface: Vec<f32> = feat
        .f
        .iter()
        .map(|f| {
            surface
                .iter()
                .map(|c| c.light_dist(f).min(c.colour_dist(f)))
                .fold(f32::MAX, f32::min)
        })
        .collect();
    // Not the surface's own colours: a piece of floor fenced in between two trouser legs
    // lies as deep inside what the fill left as the garment does, and learnt as a garment
    // colour it kept itself (grey planks between denim shorts' legs, read as trousers).
    let samples: Vec<[f32; 4]> = (0..w * h)
        .filter(|&i| main[i] && 2 * depth[i] >= deepest && d_surface[i] > BG_DIST)
        .map(|i| feat.f[i])
        .collect();
    if samples.len() < (w * h / 100).max(4 * K) {
        return None;
    }
    let (cloth, _) = kmeans(&samples, K);
    let d_cloth = costs(feat, &cloth, false);
    // A grey floor lit brighter at the middle (a phone's flash) is near no garment colour
    // by under twice BG_DIST: the light planks between and below denim shorts' legs
    // matched the printed cuffs' broad cluster at 3.5 spreads, and the shorts were worn as
    // trousers down to the ankles. A near-neutral pixel no rougher than the surface is
    // taken at BG_DIST already (a print is rougher, a coloured garment not neutral).
    let surface_texture = surface
        .iter()
        .map(|c| c.mean[3] + c.spread[3])
        .fold(0.0f32, f32::max);
    let like: Vec<bool> = d_surface
        .iter()
        .zip(&d_cloth)
        .zip(&feat.f)
        .map(|((&s, &c), f)| {
            let plain_grey = f[1].hypot(f[2]) < NEUTRAL && f[3] <= surface_texture;
            s < 0.5 * c && (c > 2.0 * BG_DIST || (c > BG_DIST && plain_grey))
        })
        .collect();
    let mut out = reached.to_vec();
    let mut stack: Vec<usize> = (0..w * h).filter(|&i| reached[i]).collect();
    while let Some(i) = stack.pop() {
        for j in neighbours4(i, w, h) {
            if !out[j] && like[j] {
                out[j] = true;
                stack.push(j);
            }
        }
    }
    Some(out)
}

/// Each pixel's depth inside `fg`: its chamfer distance (3 a step across, 4 a diagonal
/// one) to the nearest pixel outside `fg` or off the image; 0 outside.
fn depth_inside(fg: &[bool], w: usize, h: usize) -> Vec<u32> {
    let big = u32::MAX / 2;
    let mut d: Vec<u32> = fg.iter().map(|&v| if v { big } else { 0 }).collect();
    let at = |d: &[u32], x: isize, y: isize| -> u32 {
        if x < 0 || y < 0 || x >= w as isize || y >= h as isize {
            0
        } else {
            d[y as usize * w + x as usize]
        }
    };
    for y in 0..h as isize {
        for x in 0..w as isize {
            let i = y as usize * w + x as usize;
            if d[i] == 0 {
                continue;
            }
            let v = (at(&d, x - 1, y) + 3)
                .min(at(&d, x, y - 1) + 3)
                .min(at(&d, x - 1, y - 1) + 4)
                .min(at(&d, x + 1, y - 1) + 4);
            d[i] = d[i].min(v);
        }
    }
    for y in (0..h as isize).rev() {
        for x in (0..w as isize).rev() {
            let i = y as usize * w + x as usize;
            if d[i] == 0 {
                continue;
            }
            let v = (at(&d, x + 1, y) + 3)
                .min(at(&d, x, y + 1) + 3)
                .min(at(&d, x + 1, y + 1) + 4)
                .min(at(&d, x - 1, y + 1) + 4);
            d[i] = d[i].min(v);
        }
    }
    d
}

/// Adds the background `again` found to `reached`, region by region (4-connected), largest
/// first, but not a region whose removal from the garment (what `reached` leaves) would cut
/// off more of the garment's largest part than the region itself, by over 2 % of it, or a
/// quarter of it at once: a background region lies beside the garment, a stripe of the
/// background's colour runs through it, and a white garment on white, darker than the
/// surface, is no shadow.
fn keep_whole(w: usize, h: usize, reached: &mut [bool], again: &[bool]) {
    let added: Vec<bool> = again
        .iter()
        .zip(reached.iter())
        .map(|(&a, &r)| a && !r)
        .collect();
    let (comp, sizes) = components(&added, w, h);
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(sizes[k]), k));
    // The garment as the cleanup will see it: opened (a bridge thinner than the opening
    // joins nothing).
    let r = (w.max(h) / 70).max(2);
    let largest = |reached: &[bool]| {
        let fg: Vec<bool> = reached.iter().map(|&r| !r).collect();
        largest_component(&open(&fg, w, h, r), w, h)
            .iter()
            .filter(|&&v| v)
            .count()
    };
    let mut whole = largest(reached);
    for k in order {
        let id = k as u32 + 1;
        if sizes[k] < r * r {
            // Too small to cut across a part the opening keeps.
            for (t, &c) in reached.iter_mut().zip(&comp) {
                *t |= c == id;
            }
            continue;
        }
        let mut trial = reached.to_vec();
        for (t, &c) in trial.iter_mut().zip(&comp) {
            *t |= c == id;
        }
        let after = largest(&trial);
        let lost = whole.saturating_sub(after);
        if lost <= sizes[k] + whole / 50 && lost <= whole / 4 {
            reached.copy_from_slice(&trial);
            whole = after;
        }
    }
}

/// Each pixel's distance to the nearest of `clusters`; with `shadows`, shadows of them are
/// near too ([`Cluster::shadow_dist`]).
fn costs(feat: &Features, clusters: &[Cluster], shadows: bool) -> Vec<f32> {
    feat.f
        .iter()
        .map(|f| {
            clusters
                .iter()
                .map(|c| if shadows { c.shadow_dist(f) } else { c.dist(f) })
                .fold(f32::MAX, f32::min)
        })
        .collect()
}

/// The fill from the border band's background pixels (`seed` within [`BG_DIST`]: a garment
/// running off the frame does not seed it through a shadow's leniency) through pixels whose
/// `cost` is within [`BG_DIST`], not `blocked`.
fn fill(w: usize, h: usize, seed: &[f32], cost: &[f32], blocked: &[bool]) -> Vec<bool> {
    let mut reached = vec![false; w * h];
    let mut stack = Vec::new();
    let band = (w.max(h) * 25 / 1000).max(2);
    for i in 0..w * h {
        let (x, y) = (i % w, i / w);
        let in_band = x < band || y < band || x + band >= w || y + band >= h;
        if in_band && seed[i] < BG_DIST && !blocked[i] {
            reached[i] = true;
            stack.push(i);
        }
    }
    while let Some(i) = stack.pop() {
        for j in neighbours4(i, w, h) {
            if !reached[j] && !blocked[j] && cost[j] < BG_DIST {
                reached[j] = true;
                stack.push(j);
            }
        }
    }
    reached
}

/// Largest component without thin parts, holes filled (step 4).
fn cleanup(fg: &[bool], w: usize, h: usize) -> Vec<bool> {
    let main = largest_component(fg, w, h);
    let r = (w.max(h) / 70).max(2);
    let opened = open(&main, w, h, r);
    let core = largest_component(&opened, w, h);
    // Restore the outline's detail where the garment is thick: pixels of the mask within
    // `r + 1` of the opened core.
    let near = dilate(&core, w, h, r + 1);
    let kept: Vec<bool> = main.iter().zip(&near).map(|(&m, &n)| m && n).collect();
    let kept = largest_component(&kept, w, h);
    fill_holes(&kept, w, h)
}

fn dilate(fg: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    let f: Vec<f32> = fg.iter().map(|&v| f32::from(u8::from(v))).collect();
    box_blur(&f, w, h, r).iter().map(|&v| v > 1e-4).collect()
}

fn erode(fg: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    let f: Vec<f32> = fg.iter().map(|&v| f32::from(u8::from(v))).collect();
    box_blur(&f, w, h, r).iter().map(|&v| v > 0.9999).collect()
}

fn open(fg: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    dilate(&erode(fg, w, h, r), w, h, r)
}

/// The 4-connected components of `fg`: an id per pixel (0 outside; ids from 1) and each
/// component's size (index id − 1).
fn components(fg: &[bool], w: usize, h: usize) -> (Vec<u32>, Vec<usize>) {
    let mut comp = vec![0u32; w * h];
    let mut sizes = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if !fg[start] || comp[start] != 0 {
            continue;
        }
        let id = sizes.len() as u32 + 1;
        comp[start] = id;
        stack.push(start);
        let mut size = 0usize;
        while let Some(i) = stack.pop() {
            size += 1;
            for j in neighbours4(i, w, h) {
                if fg[j] && comp[j] == 0 {
                    comp[j] = id;
                    stack.push(j);
                }
            }
        }
        sizes.push(size);
    }
    (comp, sizes)
}

/// The largest 4-connected component of `fg`.
pub(crate) fn largest_component(fg: &[bool], w: usize, h: usize) -> Vec<bool> {
    let (comp, sizes) = components(fg, w, h);
    let best = (0..sizes.len())
        .max_by_key(|&k| (sizes[k], std::cmp::Reverse(k)))
        .map_or(0, |k| k as u32 + 1);
    comp.iter().map(|&c| c != 0 && c == best).collect()
}

/// `fg` with every background region that does not touch the border filled.
fn fill_holes(fg: &[bool], w: usize, h: usize) -> Vec<bool> {
    let mut outside = vec![false; w * h];
    let mut stack = Vec::new();
    for i in 0..w * h {
        let (x, y) = (i % w, i / w);
        if !fg[i] && (x == 0 || y == 0 || x + 1 == w || y + 1 == h) {
            outside[i] = true;
            stack.push(i);
        }
    }
    while let Some(i) = stack.pop() {
        for j in neighbours4(i, w, h) {
            if !fg[j] && !outside[j] {
                outside[j] = true;
                stack.push(j);
            }
        }
    }
    outside.iter().map(|&o| !o).collect()
}

/// A work-resolution mask brought to the photo's size (bilinear, thresholded at a half).
fn upscale(fg: &[bool], w: usize, h: usize, w0: usize, h0: usize) -> Vec<bool> {
    if (w, h) == (w0, h0) {
        return fg.to_vec();
    }
    let at = |x: isize, y: isize| {
        let x = x.clamp(0, w as isize - 1) as usize;
        let y = y.clamp(0, h as isize - 1) as usize;
        f32::from(u8::from(fg[y * w + x]))
    };
    let (sx, sy) = (w as f32 / w0 as f32, h as f32 / h0 as f32);
    let mut out = Vec::with_capacity(w0 * h0);
    for y in 0..h0 {
        let fy = (y as f32 + 0.5) * sy - 0.5;
        let y0 = fy.floor();
        let ty = fy - y0;
        for x in 0..w0 {
            let fx = (x as f32 + 0.5) * sx - 0.5;
            let x0 = fx.floor();
            let tx = fx - x0;
            let (xi, yi) = (x0 as isize, y0 as isize);
            let top = at(xi, yi) * (1.0 - tx) + at(xi + 1, yi) * tx;
            let bot = at(xi, yi + 1) * (1.0 - tx) + at(xi + 1, yi + 1) * tx;
            out.push(top * (1.0 - ty) + bot * ty > 0.5);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;

    /// A deterministic noise in −1..1.
    fn noise(x: u32, y: u32) -> f32 {
        let mut v = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77);
        v ^= v >> 15;
        v = v.wrapping_mul(0xC2B2_AE3D);
        v ^= v >> 13;
        (v & 0xFFFF) as f32 / 32767.5 - 1.0
    }

    /// A blue garment on a wood floor (planks of two shades with grain and dark joints),
    /// running off the bottom of the frame, hung from a thin hook: the garment is found
    /// (IoU ≥ 0.95 with the drawn rectangle) and the hook is not part of it. The plain
    /// flood fill this replaced stopped at the grain and joints, refusing the photo as
    /// having "no plain background".
    #[test]
    fn a_garment_on_a_wood_floor_is_found_without_its_hook() {
        let (w, h) = (300u32, 240u32);
        let garment = |x: u32, y: u32| (100..200).contains(&x) && (60..240).contains(&y);
        let hook = |x: u32, y: u32| (149..152).contains(&x) && (20..60).contains(&y);
        let img = RgbaImage::from_fn(w, h, |x, y| {
            let n = noise(x, y);
            if garment(x, y) {
                let v = 8.0 * n;
                return Rgba([(40.0 + v) as u8, (70.0 + v) as u8, (150.0 + v) as u8, 255]);
            }
            if hook(x, y) {
                return Rgba([90, 90, 95, 255]);
            }
            let plank = x / 40;
            if x % 40 < 2 {
                return Rgba([100, 72, 45, 255]);
            }
            let base = if plank % 2 == 0 {
                [182.0, 140.0, 92.0]
            } else {
                [160.0, 120.0, 76.0]
            };
            let grain = 12.0 * ((y as f32 * 0.21 + plank as f32 * 1.7).sin()) + 6.0 * n;
            Rgba([
                (base[0] + grain) as u8,
                (base[1] + grain * 0.8) as u8,
                (base[2] + grain * 0.6) as u8,
                255,
            ])
        });
        let fg = segment(&img);
        let (mut both, mut either, mut on_hook) = (0, 0, 0);
        for y in 0..h {
            for x in 0..w {
                let m = fg[(y * w + x) as usize];
                let g = garment(x, y);
                both += usize::from(m && g);
                either += usize::from(m || g);
                on_hook += usize::from(m && hook(x, y) && y < 52);
            }
        }
        let iou = both as f32 / either as f32;
        assert!(iou >= 0.95, "IoU {iou}");
        assert_eq!(on_hook, 0, "the hook is part of the garment");
    }
}
