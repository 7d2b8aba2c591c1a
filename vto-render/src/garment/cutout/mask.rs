//! The garment's mask in its product photo: the PNG's alpha when the photo has one (a
//! transparent border); otherwise the garment found against its background by
//! [`crate::garment::cutout::segment`] (a background model learned from the border, an
//! edge-stopped fill, thin parts such as a hanger's hook removed), closed, the drop shadow
//! peeled and softened (or, where that lost most of a garment the plain fill below finds
//! inside the frame — a white garment on white whose faint outline has a gap — the plain
//! fill's mask). Edge pixels are recoloured from the garment's interior. An outfit
//! photo's pieces ([`garment_pieces`]) come from the same segmentation, every piece lying
//! apart kept ([`crate::garment::cutout::segment::segment_pieces`]).

use image::RgbaImage;

use crate::garment::cutout::segment::{largest_component, segment, segment_pieces};

fn luma_cbcr(p: [u8; 4]) -> [f32; 3] {
    let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    let y = 0.299 * r + 0.587 * g + 0.114 * b;
    [y, 0.564 * (b - y), 0.713 * (r - y)]
}

/// The background's colour: the per-channel median of the border pixels.
fn border_colour(img: &RgbaImage) -> [u8; 4] {
    let (w, h) = img.dimensions();
    let mut ch: [Vec<u8>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut push = |x: u32, y: u32| {
        let p = img.get_pixel(x, y).0;
        for c in 0..3 {
            ch[c].push(p[c]);
        }
    };
    for x in 0..w {
        push(x, 0);
        push(x, h - 1);
    }
    for y in 0..h {
        push(0, y);
        push(w - 1, y);
    }
    let mut out = [0u8, 0, 0, 255];
    for c in 0..3 {
        ch[c].sort_unstable();
        out[c] = ch[c][ch[c].len() / 2];
    }
    out
}

/// The garment mask (0–1 per pixel) of a photo: alpha when the border is transparent, else
/// the segmentation of the module docs.
pub fn garment_mask(img: &RgbaImage) -> (Vec<f32>, bool) {
    let (w, h) = img.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let border_transparent = {
        let mut n = 0usize;
        let mut clear = 0usize;
        for x in 0..w {
            for y in [0, h - 1] {
                n += 1;
                clear += usize::from(img.get_pixel(x, y).0[3] < 128);
            }
        }
        clear * 2 > n
    };
    if border_transparent {
        let mask = img.pixels().map(|p| f32::from(p.0[3]) / 255.0).collect();
        return (mask, true);
    }
    let fg = no_worse_than_fill(img, segment(img));
    let closed = close_binary(&fg, wu, hu, 2);
    let fg = peel_shadow(img, &fg, closed);
    (soften(&fg, wu, hu), false)
}

/// The learned segmentation's mask, or the plain edge-stopped fill's ([`background_fill`],
/// its largest component) where the segmentation lost most of a garment the fill found
/// cleanly. A white garment on a white backdrop is the surface's colour a little darker:
/// where its faint outline has a gap the segmentation's fill runs through the garment and
/// leaves only its print. The plain fill, stricter about lightness, stops there. It is
/// taken when its garment lies inside the frame (touching under 1 % of the border, as a
/// fill that reached the whole background does), is a plausible share of the photo (2–95 %)
/// and the segmentation kept less than half of it; otherwise the segmentation's mask
/// stands (on a textured surface the plain fill stops at the grain and keeps the border).
fn no_worse_than_fill(img: &RgbaImage, learned: Vec<bool>) -> Vec<bool> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let plain = largest_component(&background_fill(img), w, h);
    let area = |m: &[bool]| m.iter().filter(|&&v| v).count();
    let (n_plain, n_learned) = (area(&plain), area(&learned));
    let border = (0..w)
        .flat_map(|x| [x, (h - 1) * w + x])
        .chain((0..h).flat_map(|y| [y * w, y * w + w - 1]));
    let (mut on, mut all) = (0usize, 0usize);
    for i in border {
        on += usize::from(plain[i]);
        all += 1;
    }
    let inside_frame = on * 100 < all;
    let plausible = n_plain * 50 >= w * h && n_plain * 100 <= w * h * 95;
    if inside_frame && plausible && n_learned * 2 < n_plain {
        plain
    } else {
        learned
    }
}

/// Every garment piece of a photo (the components covering at least `min_share` of it,
/// largest first), each a binary mask over the whole photo: an outfit photo's top and
/// bottom lying apart. An opaque photo is segmented as a single garment's is (a learned
/// background, not the plain fill, which stops at a textured surface's grain or takes the
/// whole frame); a transparent one is split by its alpha.
pub fn garment_pieces(img: &RgbaImage, min_share: f32) -> Vec<Vec<bool>> {
    let (wu, hu) = (img.width() as usize, img.height() as usize);
    if wu == 0 || hu == 0 {
        return Vec::new();
    }
    let transparent = img.pixels().filter(|p| p.0[3] < 128).count() * 10 > wu * hu;
    if !transparent {
        return segment_pieces(img, min_share)
            .iter()
            .map(|one| close_binary(one, wu, hu, 2))
            .collect();
    }
    let fg: Vec<bool> = img.pixels().map(|p| p.0[3] >= 128).collect();
    let (comp, sizes) = components(&fg, wu, hu);
    let mut big: Vec<(u32, usize)> = sizes
        .iter()
        .enumerate()
        .filter(|(_, &n)| n as f32 >= min_share * (wu * hu) as f32)
        .map(|(k, &n)| (k as u32 + 1, n))
        .collect();
    big.sort_by_key(|b| std::cmp::Reverse(b.1));
    big.iter()
        .map(|&(id, _)| {
            let one: Vec<bool> = comp.iter().map(|&c| c == id).collect();
            close_binary(&one, wu, hu, 2)
        })
        .collect()
}

/// Foreground pixels: what the edge-stopped flood fill from the border does not reach.
fn background_fill(img: &RgbaImage) -> Vec<bool> {
    let (w, h) = img.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let bg = luma_cbcr(border_colour(img));
    let ycc: Vec<[f32; 3]> = img.pixels().map(|p| luma_cbcr(p.0)).collect();
    let close = |i: usize, strict: bool| {
        let [y, cb, cr] = ycc[i];
        let dc = ((cb - bg[1]).powi(2) + (cr - bg[2]).powi(2)).sqrt();
        let dl = if y < bg[0] {
            (bg[0] - y) * 0.3
        } else {
            y - bg[0]
        };
        let tol = if strict { 0.6 } else { 1.0 };
        dc < 10.0 * tol && dl < 14.0 * tol
    };
    let grad = |x: usize, y: usize| {
        let at = |x: usize, y: usize| ycc[y * wu + x][0];
        // The strongest step within two pixels: the fill stops short of soft outlines too
        // (the join passes below bring it back to the outline).
        let mut g = 0.0f32;
        for r in 1..=2 {
            let (xa, xb) = (x.saturating_sub(r), (x + r).min(wu - 1));
            let (ya, yb) = (y.saturating_sub(r), (y + r).min(hu - 1));
            g = g.max((at(xb, y) - at(xa, y)).abs() + (at(x, yb) - at(x, ya)).abs());
        }
        g
    };
    // 1 = background reached by the fill.
    let mut bgm = vec![0u8; wu * hu];
    let mut stack = Vec::new();
    let seed = |x: usize, y: usize, bgm: &mut Vec<u8>, stack: &mut Vec<(usize, usize)>| {
        let i = y * wu + x;
        if bgm[i] == 0 && close(i, false) {
            bgm[i] = 1;
            stack.push((x, y));
        }
    };
    for x in 0..wu {
        seed(x, 0, &mut bgm, &mut stack);
        seed(x, hu - 1, &mut bgm, &mut stack);
    }
    for y in 0..hu {
        seed(0, y, &mut bgm, &mut stack);
        seed(wu - 1, y, &mut bgm, &mut stack);
    }
    while let Some((x, y)) = stack.pop() {
        let mut visit = |nx: usize, ny: usize| {
            let i = ny * wu + nx;
            if bgm[i] == 0 && close(i, false) && grad(nx, ny) < 11.0 {
                bgm[i] = 1;
                stack.push((nx, ny));
            }
        };
        if x > 0 {
            visit(x - 1, y);
        }
        if x + 1 < wu {
            visit(x + 1, y);
        }
        if y > 0 {
            visit(x, y - 1);
        }
        if y + 1 < hu {
            visit(x, y + 1);
        }
    }
    // The fill stops one or two pixels short of an outline (the gradient is high on both
    // sides of it): background-coloured pixels next to the fill join it.
    for _ in 0..3 {
        let prev = bgm.clone();
        for y in 0..hu {
            for x in 0..wu {
                let i = y * wu + x;
                if prev[i] == 1 || !close(i, true) {
                    continue;
                }
                if crate::garment::geom::neighbours4(i, wu, hu).any(|n| prev[n] == 1) {
                    bgm[i] = 1;
                }
            }
        }
    }
    bgm.iter().map(|&b| b == 0).collect()
}

/// The mask without the drop shadow's inner part: the fill stops where the shadow is
/// darkest, and what it leaves of the shadow, lighter than a dark garment, would show as a
/// light rim when worn. Peeled from the outline inwards, up to the halo width: pixels of the
/// background's chroma, darker than it (a shadow), smooth (a shadow has no weave), and
/// clearly lighter than the garment a dozen pixels further in. `filled` is the mask before
/// its closing, `fg` after.
fn peel_shadow(img: &RgbaImage, filled: &[bool], mut fg: Vec<bool>) -> Vec<bool> {
    const HALO: usize = 24;
    const INWARD: f32 = 12.0;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let bg = luma_cbcr(border_colour(img));
    let ycc: Vec<[f32; 3]> = img.pixels().map(|p| luma_cbcr(p.0)).collect();
    let shadow_like = |i: usize| {
        let [y, cb, cr] = ycc[i];
        let dc = ((cb - bg[1]).powi(2) + (cr - bg[2]).powi(2)).sqrt();
        dc < 8.0 && y < 0.97 * bg[0] && y > 0.4 * bg[0]
    };
    // What the closing added (`filled` is the mask before it) in a narrow wedge, such as an
    // armpit's, may be shadowed background: out when it is lighter than the garment around.
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if !fg[i] || filled[i] || !shadow_like(i) {
                continue;
            }
            let (mut sum, mut n) = (0.0f32, 0.0f32);
            for yy in y.saturating_sub(4)..(y + 5).min(h) {
                for xx in x.saturating_sub(4)..(x + 5).min(w) {
                    if filled[yy * w + xx] {
                        sum += ycc[yy * w + xx][0];
                        n += 1.0;
                    }
                }
            }
            if n > 0.0 && ycc[i][0] > sum / n + 25.0 {
                fg[i] = false;
            }
        }
    }
    let smooth = |x: usize, y: usize| {
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for yy in y.saturating_sub(1)..(y + 2).min(h) {
            for xx in x.saturating_sub(1)..(x + 2).min(w) {
                let l = ycc[yy * w + xx][0];
                lo = lo.min(l);
                hi = hi.max(l);
            }
        }
        hi - lo < 10.0
    };
    for _ in 0..HALO {
        let mut peel = Vec::new();
        for y in 1..h.saturating_sub(1) {
            for x in 1..w.saturating_sub(1) {
                let i = y * w + x;
                if !fg[i] || !shadow_like(i) {
                    continue;
                }
                // The way inwards: away from the background neighbours.
                let mut out = (0.0f32, 0.0f32);
                for (dx, dy, j) in [
                    (-1.0, 0.0, i - 1),
                    (1.0, 0.0, i + 1),
                    (0.0, -1.0, i - w),
                    (0.0, 1.0, i + w),
                ] {
                    if !fg[j] {
                        out = (out.0 + dx, out.1 + dy);
                    }
                }
                if out == (0.0, 0.0) || !smooth(x, y) {
                    continue;
                }
                let n = (out.0 * out.0 + out.1 * out.1).sqrt();
                let xi = x as f32 - out.0 / n * INWARD;
                let yi = y as f32 - out.1 / n * INWARD;
                if xi < 0.0 || yi < 0.0 || xi >= w as f32 || yi >= h as f32 {
                    continue;
                }
                let j = yi as usize * w + xi as usize;
                if fg[j] && ycc[i][0] > ycc[j][0] + 25.0 {
                    peel.push(i);
                }
            }
        }
        if peel.is_empty() {
            break;
        }
        for i in peel {
            fg[i] = false;
        }
    }
    // Hairlines of shadow or background the peel leaves where the noise stopped it (1–4 px
    // spikes under a hem, worn as white ticks): pixels of the background's hue outside the
    // mask's opening.
    let opened = open_binary(&fg, w, h, 2);
    let background_hue = |i: usize| {
        let [y, cb, cr] = ycc[i];
        ((cb - bg[1]).powi(2) + (cr - bg[2]).powi(2)).sqrt() < 8.0 && y > 0.4 * bg[0]
    };
    for (i, v) in fg.iter_mut().enumerate() {
        if *v && !opened[i] && background_hue(i) {
            *v = false;
        }
    }
    fg
}

/// Morphological opening (erode, then dilate) with a square of radius `r`: keeps what a
/// `2r + 1` square fits in.
fn open_binary(fg: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    use crate::image_ops::box_blur;
    let f: Vec<f32> = fg.iter().map(|&v| f32::from(u8::from(v))).collect();
    let eroded: Vec<f32> = box_blur(&f, w, h, r)
        .iter()
        .map(|&v| if v > 0.9999 { 1.0 } else { 0.0 })
        .collect();
    box_blur(&eroded, w, h, r)
        .iter()
        .map(|&v| v > 1e-4)
        .collect()
}

/// Morphological closing (dilate, then erode) with a square of radius `r`: fills bites the
/// fill took out of a low-contrast outline.
fn close_binary(fg: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    use crate::image_ops::box_blur;
    let f: Vec<f32> = fg.iter().map(|&v| f32::from(u8::from(v))).collect();
    let dilated: Vec<f32> = box_blur(&f, w, h, r)
        .iter()
        .map(|&v| if v > 1e-4 { 1.0 } else { 0.0 })
        .collect();
    box_blur(&dilated, w, h, r)
        .iter()
        .map(|&v| v > 0.9999)
        .collect()
}

/// The 4-connected components of `fg`: a component id per pixel (0 = background; ids from
/// 1) and each component's size (index id − 1).
fn components(fg: &[bool], w: usize, h: usize) -> (Vec<u32>, Vec<usize>) {
    let mut comp = vec![0u32; w * h];
    let mut sizes = Vec::new();
    let mut next = 0u32;
    let mut stack = Vec::new();
    for start in 0..w * h {
        if !fg[start] || comp[start] != 0 {
            continue;
        }
        next += 1;
        comp[start] = next;
        stack.push(start);
        let mut size = 0usize;
        while let Some(i) = stack.pop() {
            size += 1;
            let (x, y) = (i % w, i / w);
            let mut n = [usize::MAX; 4];
            if x > 0 {
                n[0] = i - 1;
            }
            if x + 1 < w {
                n[1] = i + 1;
            }
            if y > 0 {
                n[2] = i - w;
            }
            if y + 1 < h {
                n[3] = i + w;
            }
            for j in n {
                if j != usize::MAX && fg[j] && comp[j] == 0 {
                    comp[j] = next;
                    stack.push(j);
                }
            }
        }
        sizes.push(size);
    }
    (comp, sizes)
}

/// A binary mask with anti-aliased edges (3×3 mean).
fn soften(fg: &[bool], w: usize, h: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            if !fg[y * w + x] {
                continue;
            }
            let mut n = 0.0;
            for dy in -1i32..=1 {
                for dx in -1i32..=1 {
                    let (xx, yy) = (x as i32 + dx, y as i32 + dy);
                    if xx >= 0
                        && yy >= 0
                        && (xx as usize) < w
                        && (yy as usize) < h
                        && fg[yy as usize * w + xx as usize]
                    {
                        n += 1.0;
                    }
                }
            }
            out[y * w + x] = (n / 9.0f32 * 1.6).min(1.0);
        }
    }
    out
}

/// The photo with the garment's edge band recoloured from its interior: pixels of the mask
/// within two pixels of its outline (anti-aliased, or holding what is left of a shadow) take
/// the mean colour of the pixels at least three pixels inside within five pixels; the
/// background blended into the outline would show as a light or dark rim on the person.
pub(crate) fn decontaminate(img: &RgbaImage, mask: &[f32]) -> RgbaImage {
    let (w, h) = (img.width() as usize, img.height() as usize);
    // Depth inside the fully covered region (chamfer, 4-connected), capped.
    let mut depth: Vec<u8> = mask
        .iter()
        .map(|&m| if m >= 0.999 { 8 } else { 0 })
        .collect();
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            let mut d = depth[i];
            if x == 0 || y == 0 {
                d = d.min(1);
            } else {
                d = d.min(depth[i - 1] + 1).min(depth[i - w] + 1);
            }
            depth[i] = d;
        }
    }
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let i = y * w + x;
            let mut d = depth[i];
            if x + 1 == w || y + 1 == h {
                d = d.min(1);
            } else {
                d = d.min(depth[i + 1] + 1).min(depth[i + w] + 1);
            }
            depth[i] = d;
        }
    }
    let mut out = img.clone();
    let raw = img.as_raw();
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if mask[i] <= 0.0 || depth[i] > 2 {
                continue;
            }
            let mut sum = [0u32; 3];
            let mut n = 0u32;
            for yy in y.saturating_sub(5)..(y + 6).min(h) {
                for xx in x.saturating_sub(5)..(x + 6).min(w) {
                    let j = yy * w + xx;
                    if depth[j] < 3 {
                        continue;
                    }
                    for c in 0..3 {
                        sum[c] += u32::from(raw[4 * j + c]);
                    }
                    n += 1;
                }
            }
            if n == 0 {
                continue;
            }
            let p = out.get_pixel_mut(x as u32, y as u32);
            for (dst, total) in p.0.iter_mut().zip(sum) {
                *dst = (total / n) as u8;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::*;
    use crate::garment::cutout::cutout;
    use crate::samples::garment::upper::{inside, render_flat};

    fn luma(p: [f32; 3]) -> f32 {
        0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]
    }

    /// A near-black tee with the samples' drop shadow on a white background: the mask
    /// leaves the shadow out, so the worn texture (decontaminated colour × mask) has no
    /// light pixels along its edge — colours more than 40 levels lighter than the fabric
    /// where the mask is over 5 %, at most 1 % of the outline — and still covers the
    /// garment's interior.
    #[test]
    fn a_dark_garments_drop_shadow_leaves_no_light_rim() {
        let tee = [
            Vec2::new(250.0, 150.0),
            Vec2::new(340.0, 130.0),
            Vec2::new(460.0, 130.0),
            Vec2::new(550.0, 150.0),
            Vec2::new(640.0, 300.0),
            Vec2::new(560.0, 340.0),
            Vec2::new(540.0, 300.0),
            Vec2::new(540.0, 700.0),
            Vec2::new(260.0, 700.0),
            Vec2::new(260.0, 300.0),
            Vec2::new(240.0, 340.0),
            Vec2::new(160.0, 300.0),
        ];
        let fabric = [30.0, 30.0, 36.0];
        let img = render_flat(
            (800, 900),
            |p| u8::from(inside(&tee, p)),
            |_, _| fabric,
            5,
            false,
            &[690.0],
        );
        let cut = cutout(&img).expect("the garment is found");
        let clean = decontaminate(&cut.img, &cut.mask);
        let (w, h) = (cut.img.width(), cut.img.height());
        let mut light = Vec::new();
        let mut rim = 0;
        let mut missing = 0;
        for y in 0..h {
            for x in 0..w {
                let m = cut.mask[(y * w + x) as usize];
                let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                let deep = [(-3.0, 0.0), (3.0, 0.0), (0.0, -3.0), (0.0, 3.0)]
                    .iter()
                    .all(|d| inside(&tee, p + Vec2::new(d.0, d.1)));
                missing += usize::from(deep && m < 0.9);
                if m <= 0.05 {
                    continue;
                }
                if !deep {
                    rim += 1;
                }
                let c = clean.get_pixel(x, y).0;
                let c = [f32::from(c[0]), f32::from(c[1]), f32::from(c[2])];
                if luma(c) > luma(fabric) + 40.0 {
                    light.push((x, y, c));
                }
            }
        }
        assert!(rim > 1000, "the outline has {rim} pixels");
        // Tolerance: 1 % of the outline (the tips of the armpits' narrow wedges keep a few
        // shadowed pixels; a rim along the shadow's side is hundreds).
        assert!(
            light.len() * 100 <= rim,
            "{} light pixels in the worn garment's edge of {rim}, e.g. {:?}",
            light.len(),
            &light[..light.len().min(8)]
        );
        assert!(
            missing < 50,
            "{missing} interior pixels left out of the mask"
        );
    }
}
