//! # The fill stage: what a try-on uncovers, filled from the photo's own content
//!
//! Given a photo and a mask (the hole: what an old shoe, collar, sleeve or pair of glasses
//! covered), [`fill`] invents the hole's pixels from the rest of the photo, and changes no
//! pixel outside the mask. An optional guide says where it may copy from (only background
//! for background, only skin for skin).
//!
//! ## How
//! Structure first, then texture, coherent across scales (Wexler, Shechtman and Irani 2007,
//! "Space-time completion of video"; Barnes et al. 2009, "PatchMatch"; the scheme behind
//! content-aware fill):
//! 1. Crop to the hole's bounding box plus a margin (sources nearby look most alike), and
//!    build a pyramid down to where the hole is a few pixels thick.
//! 2. At the coarsest level, a smooth fill (push–pull, then Laplace sweeps: colour diffuses
//!    in from the rim) continues the large shapes and gradients into the hole.
//! 3. At every level, a few EM iterations: PatchMatch finds, for every 7×7 patch that
//!    overlaps the hole, the most similar patch wholly outside it (and inside the guide);
//!    voting sets each hole pixel to the similarity-weighted mean of what those patches put
//!    there.
//! 4. Each finer level starts from the coarser one's matches, doubled (so the texture copied
//!    at the fine level continues what the coarse level decided), voted with the fine
//!    level's own pixels. The finest level only votes these matches, without a search.
//! 5. At full resolution, the vote's error on the rim is spread over the hole (a membrane) and
//!    the voted Laplacian is integrated (Poisson sweeps): no seams, gradients continue.
//! 6. The result mixes the patch synthesis with a smooth fill (the harmonic fill from the
//!    rim): [`FillOptions::detail`] of the texture on the hole's edge, a third of that deep
//!    inside.
//!
//! ## Design decisions
//! - **CPU, with rayon, no GPU kernel.** The work is a data-dependent search with early exits
//!   over a few ten thousand pixels; on lavapipe (the CPU Vulkan device this service often
//!   runs on) our vision stack's wgpu kernels ran 20–80× slower than its native ones (see
//!   `docs/performance.md`). A 1024² photo with 5 % masked fills in about 100 ms on two
//!   cores (`scripts/bench-inpaint.sh`; the goal is ≤ 150 ms).
//! - **Deterministic.** Rows are searched in bands of fixed height and every random draw is
//!   a hash of the seed and the pixel, so the result does not depend on the thread count.
//! - **Pixels outside the mask never change**: the result is the photo with only the masked
//!   pixels replaced.
//!
//! ## Main items
//! [`fill`], [`fill_rgba`], [`fill_with`], [`FillOptions`], [`FillError`]; [`grain`] puts
//! the finest grain a fill's vote averages away back into it; [`ground`] fills what a
//! try-on removes from the ground beside it (the shoes' floor, the garments' background).

pub mod grain;
pub mod ground;
mod level;
mod patchmatch;
mod relax;
mod smooth;
#[cfg(test)]
mod tests;

use image::{GrayImage, RgbImage, RgbaImage};
use rayon::prelude::*;

pub(crate) use level::dilate;
use level::Level;
use patchmatch::{Field, Nnf};

/// Why a fill could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    /// The mask is not the photo's size.
    #[error("the mask is {mask_w}×{mask_h} but the photo {photo_w}×{photo_h}: they must be the same size")]
    MaskSize {
        /// The photo's width.
        photo_w: u32,
        /// The photo's height.
        photo_h: u32,
        /// The mask's width.
        mask_w: u32,
        /// The mask's height.
        mask_h: u32,
    },
    /// The guide is not the photo's size.
    #[error("the guide is {guide_w}×{guide_h} but the photo {photo_w}×{photo_h}: they must be the same size")]
    GuideSize {
        /// The photo's width.
        photo_w: u32,
        /// The photo's height.
        photo_h: u32,
        /// The guide's width.
        guide_w: u32,
        /// The guide's height.
        guide_h: u32,
    },
    /// No pixel outside the mask (and inside the guide) to fill from.
    #[error("nothing to fill from: every pixel is masked or outside the guide")]
    NoSource,
}

/// How the fill runs. The defaults are what the benchmark measures.
#[derive(Debug, Clone, PartialEq)]
pub struct FillOptions {
    /// The patch radius: patches are `2 r + 1` pixels square (default 3: 7×7).
    pub patch_radius: u32,
    /// The seed of every random draw (the fill is a function of its inputs and this).
    pub seed: u64,
    /// How much of the copied texture the result keeps on the hole's edge, against a smooth
    /// fill (the harmonic fill from the rim): 1 is the patch synthesis alone, 0 the smooth
    /// fill alone. Deeper than a patch width into the hole the weight falls to a third of
    /// this: texture copied deep into a large hole is plausible but rarely the truth. The
    /// default, 0.3, keeps the texture at 30 % of its contrast on the edge and 10 % deep
    /// inside (see `docs/fill.md` for the measurements).
    pub detail: f32,
    /// Whether a part of the hole with no pixel it may copy from beside it keeps the vote
    /// rather than being integrated (default false). Nothing anchors such a part's Poisson
    /// sweeps: over a few sweeps a thick one mostly has its patches' seams relaxed, but a
    /// sliver, or a hole whose every neighbour is kept out of the guide (the garments'
    /// background, copied only from pixels off the old clothing), drifts — to white beside
    /// the couple's new jeans, to a green and pink cast on the skier's snow.
    pub rimless_keep_vote: bool,
}

impl Default for FillOptions {
    fn default() -> Self {
        Self {
            patch_radius: 3,
            seed: 0x5eed_f111,
            detail: 0.3,
            rimless_keep_vote: false,
        }
    }
}

/// Mask and guide values at or above this are set (white = fill, white = may copy from).
pub const THRESHOLD: u8 = 128;

/// Fills the pixels of `photo` where `mask` ≥ 128 from the rest of the photo (only from
/// where `guide` ≥ 128, when given), with the default [`FillOptions`]. Pixels outside the
/// mask are returned unchanged; an empty mask returns the photo.
pub fn fill(
    photo: &RgbImage,
    mask: &GrayImage,
    guide: Option<&GrayImage>,
) -> Result<RgbImage, FillError> {
    fill_with(photo, mask, guide, &FillOptions::default())
}

/// [`fill`] for an RGBA photo: the colour is filled, the alpha channel kept as it is.
pub fn fill_rgba(
    photo: &RgbaImage,
    mask: &GrayImage,
    guide: Option<&GrayImage>,
) -> Result<RgbaImage, FillError> {
    let rgb = RgbImage::from_fn(photo.width(), photo.height(), |x, y| {
        let p = photo.get_pixel(x, y).0;
        image::Rgb([p[0], p[1], p[2]])
    });
    let filled = fill(&rgb, mask, guide)?;
    let mut out = photo.clone();
    for (x, y, p) in out.enumerate_pixels_mut() {
        if mask.get_pixel(x, y).0[0] >= THRESHOLD {
            let c = filled.get_pixel(x, y).0;
            p.0[..3].copy_from_slice(&c);
        }
    }
    Ok(out)
}

/// [`fill`] with explicit options.
pub fn fill_with(
    photo: &RgbImage,
    mask: &GrayImage,
    guide: Option<&GrayImage>,
    options: &FillOptions,
) -> Result<RgbImage, FillError> {
    let (pw, ph) = photo.dimensions();
    if mask.dimensions() != (pw, ph) {
        return Err(FillError::MaskSize {
            photo_w: pw,
            photo_h: ph,
            mask_w: mask.width(),
            mask_h: mask.height(),
        });
    }
    if let Some(g) = guide {
        if g.dimensions() != (pw, ph) {
            return Err(FillError::GuideSize {
                photo_w: pw,
                photo_h: ph,
                guide_w: g.width(),
                guide_h: g.height(),
            });
        }
    }
    let (w, h) = (pw as usize, ph as usize);
    let m = mask.as_raw();
    let g = guide.map(|g| g.as_raw().as_slice());
    let allowed = |i: usize| g.is_none_or(|g| g[i] >= THRESHOLD);
    // The numbers of hole pixels and of sources.
    let (holes, sources) = (0..h)
        .into_par_iter()
        .map(|y| {
            let (mut holes, mut sources) = (0usize, 0usize);
            for (i, &v) in m.iter().enumerate().take((y + 1) * w).skip(y * w) {
                if v >= THRESHOLD {
                    holes += 1;
                } else if allowed(i) {
                    sources += 1;
                }
            }
            (holes, sources)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if holes == 0 {
        return Ok(photo.clone());
    }
    if sources == 0 {
        return Err(FillError::NoSource);
    }
    let r = options.patch_radius.max(1) as usize;
    let in_crop = |c: (usize, usize, usize, usize)| -> usize {
        (c.1..c.3)
            .into_par_iter()
            .map(|y| {
                (c.0..c.2)
                    .filter(|&x| m[y * w + x] < THRESHOLD && allowed(y * w + x))
                    .count()
            })
            .sum()
    };
    // Each group of holes is filled on its own crop: its bounding box and a margin of half
    // its size (at least a few patches) around it, where the sources are.
    let crop_of = |(x0, y0, x1, y1): (usize, usize, usize, usize)| {
        let margin = ((x1 - x0).max(y1 - y0) / 2).max(8 * (2 * r + 1));
        (
            x0.saturating_sub(margin),
            y0.saturating_sub(margin),
            (x1 + margin).min(w),
            (y1 + margin).min(h),
        )
    };
    let mut crops: Vec<(usize, usize, usize, usize)> = groups(m, w, h, crop_of)
        .into_iter()
        .map(|(b, n)| {
            let c = crop_of(b);
            if in_crop(c) < n.max(1) {
                (0, 0, w, h)
            } else {
                c
            }
        })
        .collect();
    if crops.contains(&(0, 0, w, h)) {
        crops = vec![(0, 0, w, h)];
    }
    let detail = options.detail.clamp(0.0, 1.0);
    let done: Vec<((usize, usize), Level)> = crops
        .par_iter()
        .enumerate()
        .map(|(k, &(x0, y0, x1, y1))| {
            let level = Level::from_photo(photo, (x0, y0, x1 - x0, y1 - y0), r, m, g, THRESHOLD);
            let seed = if k == 0 {
                options.seed
            } else {
                patchmatch::mix(options.seed ^ k as u64)
            };
            let keep = options.rimless_keep_vote;
            ((x0, y0), complete(level, r, seed, detail, keep))
        })
        .collect();
    let mut out = photo.clone();
    for ((cx, cy), done) in &done {
        let (cx, cy, cw) = (*cx, *cy, done.w);
        out.par_chunks_mut(3 * w)
            .skip(cy)
            .take(done.h)
            .enumerate()
            .for_each(|(y, row)| {
                for x in 0..cw {
                    if done.hole[y * cw + x] {
                        row[3 * (cx + x)..3 * (cx + x) + 3].copy_from_slice(&done.rgb(x, y));
                    }
                }
            });
    }
    Ok(out)
}

/// The most groups of holes filled on crops of their own; with more, one crop holds them all.
const MAX_GROUPS: usize = 64;

/// The groups of holes of `mask` (`w × h`, set at ≥ [`THRESHOLD`]) whose crops (`crop_of`
/// their bounding box) do not overlap: the 8-connected parts of the mask, merged while
/// their crops overlap. Each as its bounding box `(x0, y0, x1, y1)` and its number of
/// pixels, in the order of their first pixel. One group of all when there are more than
/// [`MAX_GROUPS`].
fn groups(
    mask: &[u8],
    w: usize,
    h: usize,
    crop_of: impl Fn((usize, usize, usize, usize)) -> (usize, usize, usize, usize),
) -> Vec<((usize, usize, usize, usize), usize)> {
    // The runs of set pixels of every row.
    let runs: Vec<Vec<(usize, usize)>> = (0..h)
        .into_par_iter()
        .map(|y| {
            let row = &mask[y * w..(y + 1) * w];
            level::runs_where(w, |x| row[x] >= THRESHOLD)
        })
        .collect();
    // Union–find over the runs: a run joins the runs of the row above it touches (8-connected).
    let mut first = Vec::with_capacity(h + 1);
    let mut n = 0;
    for r in &runs {
        first.push(n);
        n += r.len();
    }
    first.push(n);
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut a: usize) -> usize {
        while parent[a] != a {
            parent[a] = parent[parent[a]];
            a = parent[a];
        }
        a
    }
    for y in 1..h {
        let (above, here) = (&runs[y - 1], &runs[y]);
        let mut j = 0;
        for (i, &(a0, a1)) in here.iter().enumerate() {
            while j < above.len() && above[j].1 < a0 {
                j += 1;
            }
            let mut k = j;
            while k < above.len() && above[k].0 <= a1 {
                let (p, q) = (
                    root(&mut parent, first[y] + i),
                    root(&mut parent, first[y - 1] + k),
                );
                if p != q {
                    parent[p.max(q)] = p.min(q);
                }
                k += 1;
            }
        }
    }
    // The parts' bounding boxes and sizes, in the order of their first run.
    let mut slot = vec![usize::MAX; n];
    let mut parts: Vec<((usize, usize, usize, usize), usize)> = Vec::new();
    for (y, r) in runs.iter().enumerate() {
        for (i, &(a0, a1)) in r.iter().enumerate() {
            let p = root(&mut parent, first[y] + i);
            if slot[p] == usize::MAX {
                slot[p] = parts.len();
                parts.push(((a0, y, a1, y + 1), 0));
            }
            let (b, size) = &mut parts[slot[p]];
            *b = (b.0.min(a0), b.1.min(y), b.2.max(a1), b.3.max(y + 1));
            *size += a1 - a0;
        }
        if parts.len() > MAX_GROUPS {
            break;
        }
    }
    if parts.len() > MAX_GROUPS {
        let total = runs.iter().flatten().map(|&(a, b)| b - a).sum();
        let b = parts.iter().fold((w, h, 0, 0), |c, &(b, _)| {
            (c.0.min(b.0), c.1.min(b.1), c.2.max(b.2), c.3.max(b.3))
        });
        let all = runs
            .iter()
            .enumerate()
            .fold(b, |c, (y, r)| match (r.first(), r.last()) {
                (Some(f), Some(l)) => (c.0.min(f.0), c.1.min(y), c.2.max(l.1), c.3.max(y + 1)),
                _ => c,
            });
        return vec![(all, total)];
    }
    // Merge while two crops overlap.
    let overlap = |a: (usize, usize, usize, usize), b: (usize, usize, usize, usize)| {
        a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
    };
    loop {
        let mut merged = false;
        'outer: for i in 0..parts.len() {
            for j in i + 1..parts.len() {
                if overlap(crop_of(parts[i].0), crop_of(parts[j].0)) {
                    let (b, n) = parts.remove(j);
                    let a = &mut parts[i];
                    a.0 = (
                        a.0 .0.min(b.0),
                        a.0 .1.min(b.1),
                        a.0 .2.max(b.2),
                        a.0 .3.max(b.3),
                    );
                    a.1 += n;
                    merged = true;
                    break 'outer;
                }
            }
        }
        if !merged {
            return parts;
        }
    }
}

/// EM iterations and PatchMatch passes per EM iteration at a level: 3 at the coarsest (two
/// passes each when it is small: it decides the layout), 2 going up, 1 at the level just
/// below full resolution, none at the finest below a coarser level (it votes the coarser
/// level's matches, upsampled, once: a search there cost about 15 % of the time and scored
/// lower on the benchmark). 6 at the coarsest and 2 below the finest scored the same on the
/// benchmark for about 10 % more time (see `docs/fill.md`).
fn schedule(k: usize, top: usize, pixels: usize) -> (usize, usize) {
    if k == top && pixels <= 128 * 128 {
        (3, 2)
    } else if k == top {
        (3, 1)
    } else if k == 0 {
        (0, 0)
    } else if k == 1 {
        (1, 1)
    } else {
        (2, 1)
    }
}

/// Fills the hole of `finest` (a crop) and returns it.
fn complete(finest: Level, r: usize, seed: u64, detail: f32, rimless_keep_vote: bool) -> Level {
    let depth = level::depth(&finest.hole, finest.w, finest.h);
    let thick = depth.par_iter().copied().max().unwrap_or(0) as usize;
    let mut levels = vec![finest];
    // The field of each level (they do not change: the hole and the guide are fixed).
    let mut fields: Vec<Option<Field>> = vec![None];
    // Down to where the hole is about two pixels thick, while a level keeps enough room.
    while (thick >> (levels.len() - 1)) > 2 {
        let last = &levels[levels.len() - 1];
        if last.w.min(last.h) / 2 < 4 * (2 * r + 1) {
            break;
        }
        let coarse = last.reduce();
        let holes = coarse.hole.par_iter().filter(|&&b| b).count();
        let field = Field::new(&coarse, r);
        if field.sources.len() < holes.max(64) {
            break;
        }
        levels.push(coarse);
        fields.push(Some(field));
    }
    let top = levels.len() - 1;
    // Structure: the coarsest level's hole diffuses in from its rim.
    smooth::smooth_fill(&mut levels[top]);
    let mut prev: Option<(Nnf, usize, usize)> = None;
    for k in (0..=top).rev() {
        if k < top {
            // Start from the coarser level's result, upsampled.
            let (lo, hi) = levels.split_at_mut(k + 1);
            fill_from_coarser(&mut lo[k], &hi[0]);
        }
        let field = fields[k]
            .take()
            .unwrap_or_else(|| Field::new(&levels[k], r));
        if field.sources.is_empty() {
            // No patch to copy: the smooth fill (coarsest) or the coarser level stays.
            prev = None;
            continue;
        }
        let lseed = patchmatch::mix(seed ^ ((k as u64) << 40));
        let level = &mut levels[k];
        let mut nnf = match prev.take() {
            Some((c, cw, ch)) => {
                let nnf = patchmatch::upsample(&c, cw, ch, &field, lseed);
                if k > 0 {
                    // A first vote with this level's own pixels, for the search to compare
                    // against (the finest level votes once, at the end).
                    patchmatch::vote(level, &field, &nnf, true);
                }
                nnf
            }
            None => patchmatch::random_init(&field, lseed),
        };
        // The distances weigh the vote (at the finest level, against the coarser level's
        // result, upsampled).
        patchmatch::measure(level, &field, &mut nnf);
        let (em, passes) = schedule(k, top, level.w * level.h);
        // The coarsest level searches widely (it decides the layout), the finer ones near
        // the upsampled match.
        let radius = if k == top {
            level.w.max(level.h).min(96)
        } else {
            16
        };
        for e in 0..em {
            for p in 0..passes {
                let s = patchmatch::mix(lseed ^ ((e * 16 + p) as u64 + 1));
                let reverse = (e * passes + p) % 2 == 1;
                patchmatch::search(level, &field, &mut nnf, radius, s, reverse);
            }
            if k == 0 && e + 1 == em {
                break;
            }
            patchmatch::vote(level, &field, &nnf, false);
            if k > 0 || e + 1 < em {
                patchmatch::measure(level, &field, &mut nnf);
            }
        }
        if k == 0 {
            // Structure at full resolution: the copied texture meets the rim without a
            // seam and slow colour changes continue through the hole.
            let holes = smooth::Holes::new(level, rimless_keep_vote);
            let finish = patchmatch::vote_finish(level, &field, &nnf, &holes);
            let smooth = smooth::membranes(level, &holes, Some(&finish.mismatch), thick as u32)
                .expect("the finest level has sources");
            smooth::correct(level, &holes, &smooth);
            smooth::poisson(level, &holes, &finish.laplacian, 24);
            if detail < 1.0 {
                blend(level, &holes, &smooth, &depth, detail, r);
            }
        }
        prev = Some((nnf, level.w, level.h));
    }
    levels.swap_remove(0)
}

/// What share of `detail` (the copied texture's weight at the hole's rim) is left deep
/// inside the hole, see [`detail_at`].
const DEEP_DETAIL: f32 = 1.0 / 3.0;

/// The copied texture's weight at a hole pixel `depth` pixels from the nearest known pixel
/// (1 on the hole's edge), for patches of radius `r`: `detail` on the edge, falling with
/// e-folding length `2 r` (one patch width) to [`DEEP_DETAIL`] of it. Near the rim, the
/// patches that put texture there overlap known pixels and were matched against them, so
/// the texture there is constrained by the photo; deep inside a large hole it is invented,
/// plausible but rarely the truth, and a wrong texture lowers PSNR and SSIM more than its
/// absence. On the benchmark (same cases, same build otherwise) a constant 0.2 scored PSNR
/// 20.42 dB / SSIM 0.6526 in the holes (blobs 0.6169, below OpenCV Navier–Stokes' 0.6177),
/// a constant 0.15 20.41 / 0.6538, and this weight (0.3 falling to 0.1) 20.41 / 0.6535
/// (blobs 0.6186) with twice the texture on the rim (see `docs/fill.md`).
fn detail_at(detail: f32, depth: u32, r: usize) -> f32 {
    let deep = detail * DEEP_DETAIL;
    let fall = (-((depth.max(1) - 1) as f32) / (2 * r.max(1)) as f32).exp();
    deep + (detail - deep) * fall
}

/// Mixes the hole pixels of `level` with the smooth fill (lanes 0–2 of `smooth`, per pixel
/// of `holes`, rounded): [`detail_at`] of the first, by the pixel's `depth`.
fn blend(
    level: &mut Level,
    holes: &smooth::Holes,
    smooth: &[[f32; 8]],
    depth: &[u32],
    detail: f32,
    r: usize,
) {
    let w = level.w;
    for (&i, s) in holes.pixels.iter().zip(smooth) {
        let d = detail_at(detail, depth[i as usize], r);
        let (x, y) = (i as usize % w, i as usize / w);
        let (a, b) = (level.rgb(x, y), s.map(|v| v.round().clamp(0.0, 255.0)));
        let v = [0, 1, 2].map(|k| (d * f32::from(a[k]) + (1.0 - d) * b[k]).round() as u8);
        level.set_rgb(x, y, v);
    }
    level.refresh_padding();
}

/// Sets the hole pixels of `fine` bilinearly from the level above it.
fn fill_from_coarser(fine: &mut Level, coarse: &Level) {
    for y in 0..fine.h {
        for x in 0..fine.w {
            if !fine.hole[y * fine.w + x] {
                continue;
            }
            let fx = ((x as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (coarse.w - 1) as f32);
            let fy = ((y as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (coarse.h - 1) as f32);
            let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
            let (x1, y1) = ((x0 + 1).min(coarse.w - 1), (y0 + 1).min(coarse.h - 1));
            let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
            let mut acc = [0.0f32; 3];
            for (xx, yy, wgt) in [
                (x0, y0, (1.0 - tx) * (1.0 - ty)),
                (x1, y0, tx * (1.0 - ty)),
                (x0, y1, (1.0 - tx) * ty),
                (x1, y1, tx * ty),
            ] {
                let c = coarse.rgb(xx, yy);
                for k in 0..3 {
                    acc[k] += wgt * f32::from(c[k]);
                }
            }
            fine.set_rgb(x, y, acc.map(|v| v.round().clamp(0.0, 255.0) as u8));
        }
    }
    fine.refresh_padding();
}
