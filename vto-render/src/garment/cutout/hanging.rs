//! Sleeves that hang down beside the torso in the product photo.
//!
//! A jacket, blazer, cardigan or hoodie is photographed on a hanger, a ghost mannequin or
//! laid flat with its sleeves hanging straight down beside the body, touching it or a thin
//! gap apart: the silhouette never widens at an armpit and the outline scan of
//! [`crate::garment::cutout::measure`] finds no sleeves (the try-on drew such a jacket as a
//! vest and painted the arms bare). What separates sleeve from body there is in the photo,
//! not the outline: the seam, the fold's shading or the strip of background between them, a
//! line running down from the armpit to the cuff about a sleeve's width in from the
//! silhouette's side.
//!
//! Per side, that line is the best path down the rows, from a fifth of the way down the
//! garment to its bottom, through the across-the-row colour gradient (the photo blurred,
//! each row's gradient relative to the row's mean, so a textured cloth — glitter, denim —
//! does not make every path look like a seam), with background inside the silhouette (the
//! gap) scoring as a strong edge; the path stays within 6–32 % of the garment's width of the
//! silhouette's side and moves at most a pixel a row, each move costing a little (a seam is
//! straight, noise is not). Dynamic programming finds it exactly.
//!
//! The sleeves are taken as hanging when on both sides the path's mean score over the
//! middle of the garment (35–80 % of the way down) reaches [`MIN_SCORE`] — a seam or a gap
//! all the way, not texture — and the silhouette a third of the way down is no wider than
//! [`MAX_UPPER_WIDTH`] times at mid-height (a short sleeve held out, as a polo's that the
//! outline scan missed, widens it: its "hanging sleeve" would run to the hem). A tank top's
//! best paths score about 0.25, a hanging sleeve's 0.7–1.35 on the shop photos.

use image::RgbaImage;

use crate::image_ops::box_blur;

/// The least mean path score over the garment's middle for a hanging sleeve.
pub const MIN_SCORE: f32 = 0.55;

/// The silhouette's width a third of the way down over its width at mid-height, above
/// which the garment's sleeves are held out, not hanging.
pub const MAX_UPPER_WIDTH: f32 = 1.08;

/// What a background pixel inside the silhouette's band scores (a gap between sleeve and
/// body): above any cloth edge's clipped score.
const GAP_SCORE: f32 = 1.2;

/// An edge's score is its gradient over this many times the row's mean, clipped at 1.5.
const ROW_NORM: f32 = 2.5;

/// What one pixel's sideways move of the path costs.
const STEP_COST: f32 = 0.15;

/// A sleeve's inner edge lies at most this many times its median offset (over the
/// garment's middle) in from the silhouette's side.
const MAX_WIDEN: f32 = 1.3;

/// What a jump of the path (where the silhouette's side jumps) costs.
const JUMP_COST: f32 = 3.0;

/// The inner edges of two hanging sleeves: per side (0 the image's left), the path's
/// column for each row from `y0` on.
#[derive(Debug, Clone, PartialEq)]
pub struct HangingSleeves {
    /// The first row of the paths.
    pub y0: usize,
    /// Per side, the sleeve's inner edge, one column per row from `y0` down to its cuff's
    /// last row.
    pub edge: [Vec<usize>; 2],
    /// Per side, the path's mean score over the garment's middle.
    pub score: [f32; 2],
}

impl HangingSleeves {
    /// The inner edge of side `s` in row `y`, when the path covers that row.
    pub fn at(&self, s: usize, y: usize) -> Option<usize> {
        y.checked_sub(self.y0)
            .and_then(|i| self.edge[s].get(i))
            .copied()
    }
}

/// The colour gradient across the rows of `img` (blurred by `r` twice), summed over the
/// three channels, halved, within the window `x0..x1` × `y0..y1` (the garment's box and
/// the blur's reach: the photo around it does not change the values inside the box, and
/// blurring only the window spares the time of a whole 1024² photo).
struct GradientX {
    x0: usize,
    y0: usize,
    w: usize,
    g: Vec<f32>,
}

impl GradientX {
    /// The gradient of `img` over its pixels within `margin` of the box `x0..=x1` ×
    /// `y0..=y1` (clamped to the photo); `margin` at least `2r + 2` keeps the box's values
    /// those of the whole photo's gradient (the two blurs reach `2r`, the difference one
    /// more).
    fn new(img: &RgbaImage, r: usize, bbox: [usize; 4], margin: usize) -> GradientX {
        let (iw, ih) = (img.width() as usize, img.height() as usize);
        let x0 = bbox[0].saturating_sub(margin);
        let y0 = bbox[1].saturating_sub(margin);
        let x1 = (bbox[2] + margin + 1).min(iw);
        let y1 = (bbox[3] + margin + 1).min(ih);
        let (w, h) = (x1 - x0, y1 - y0);
        let mut g = vec![0.0f32; w * h];
        let raw = img.as_raw();
        for c in 0..3 {
            let mut ch = Vec::with_capacity(w * h);
            for y in y0..y1 {
                ch.extend((x0..x1).map(|x| f32::from(raw[4 * (y * iw + x) + c])));
            }
            let b = box_blur(&box_blur(&ch, w, h, r), w, h, r);
            for y in 0..h {
                for x in 1..w.saturating_sub(1) {
                    g[y * w + x] += (b[y * w + x + 1] - b[y * w + x - 1]).abs() * 0.5;
                }
            }
        }
        GradientX { x0, y0, w, g }
    }

    /// The gradient at photo pixel (`x`, `y`), inside the box it was computed for.
    fn at(&self, x: usize, y: usize) -> f32 {
        self.g[(y - self.y0) * self.w + (x - self.x0)]
    }
}

/// Finds two sleeves hanging beside the torso of the garment `fg` (row-major, the size of
/// `img`) in the photo `img` (see the module docs); `None` when the photo shows none.
pub fn find(fg: &[bool], img: &RgbaImage) -> Option<HangingSleeves> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if fg.len() != w * h || w < 16 || h < 16 {
        return None;
    }
    let row = |y: usize| &fg[y * w..(y + 1) * w];
    let y_top = (0..h).find(|&y| row(y).contains(&true))?;
    let y_bot = (0..h).rev().find(|&y| row(y).contains(&true))?;
    let x0 = (0..h)
        .filter_map(|y| row(y).iter().position(|&v| v))
        .min()?;
    let x1 = (0..h)
        .filter_map(|y| row(y).iter().rposition(|&v| v))
        .max()?;
    let (height, width) = (y_bot - y_top, x1 - x0);
    if height < 32 || width < 32 {
        return None;
    }
    let span = |y: usize| {
        let r = row(y);
        Some((r.iter().position(|&v| v)?, r.iter().rposition(|&v| v)?))
    };
    let width_at = |f: f32| {
        let y = y_top + (f * height as f32) as usize;
        span(y).map_or(0, |(a, b)| b - a)
    };
    if width_at(0.3) as f32 > MAX_UPPER_WIDTH * width_at(0.5).max(1) as f32 {
        return None;
    }
    let r = ((w.max(h) + 100) / 200).max(2);
    let g = GradientX::new(img, r, [x0, y_top, x1, y_bot], 2 * r + 2);
    // Each row's gradient over its garment pixels' mean.
    let score_row: Vec<Vec<f32>> = (0..h)
        .map(|y| {
            let (sum, n) = (0..w)
                .filter(|&x| fg[y * w + x])
                .fold((0.0f32, 0usize), |(s, n), x| (s + g.at(x, y), n + 1));
            let mean = sum / n.max(1) as f32;
            (0..w)
                .map(|x| {
                    if fg[y * w + x] {
                        (g.at(x, y) / (ROW_NORM * mean + 1e-3)).min(1.5)
                    } else {
                        GAP_SCORE
                    }
                })
                .collect()
        })
        .collect();
    let y0 = y_top + height / 5;
    let (d_min, d_max) = (width * 6 / 100, width * 32 / 100);
    let mid = (y_top + height * 35 / 100, y_top + height * 80 / 100);
    let mut edge = [Vec::new(), Vec::new()];
    let mut score = [0.0f32; 2];
    for s in 0..2 {
        let path = best_path(&|y| span(y), &score_row, s, (y0, y_bot), (d_min, d_max), w)?;
        let (sum, n) = path
            .iter()
            .enumerate()
            .filter(|(i, _)| (mid.0..=mid.1).contains(&(y0 + i)))
            .fold((0.0f32, 0usize), |(a, n), (i, &x)| {
                (a + score_row[y0 + i][x], n + 1)
            });
        score[s] = sum / n.max(1) as f32;
        edge[s] = settle(&path, &|y| span(y), s, y0, mid, y_top + height * 55 / 100);
    }
    (score.iter().all(|&v| v >= MIN_SCORE)).then_some(HangingSleeves { y0, edge, score })
}

/// The sleeve's inner edge from its best `path` (rows from `y0`), on side `s` of the
/// silhouette (`span`), from its armpit down to its cuff. From the middle (`mid`) down, the
/// path's offset in from the silhouette's side, never more than [`MAX_WIDEN`] times its
/// median over the middle rows (near the bottom the path wanders out into the background
/// beside a cuff or in over the hem). Above the middle the path follows the strongest edge
/// near the shoulder — a lapel, a hood — rather than the armhole's faint seam: the seam runs
/// straight up from the middle's first row, the lower quartile of the middle's offsets in
/// from the side (a sleeve laid out at a slant is widest across the rows at its cuff). The sleeve ends at its cuff, where the
/// silhouette's side steps in by half the sleeve's width within a few rows (below, the side
/// is the torso's hem), looked for from row `lower` down (a long sleeve's cuff lies in the
/// garment's lower half; higher up, a step is the cut-out's own unevenness): the edge stops
/// there.
fn settle(
    path: &[usize],
    span: &dyn Fn(usize) -> Option<(usize, usize)>,
    s: usize,
    y0: usize,
    mid: (usize, usize),
    lower: usize,
) -> Vec<usize> {
    let side = |y: usize| span(y).map(|(a, b)| if s == 0 { a } else { b });
    let offsets: Vec<Option<usize>> = path
        .iter()
        .enumerate()
        .map(|(i, &x)| side(y0 + i).map(|o| x.abs_diff(o)))
        .collect();
    let mut middle: Vec<usize> = offsets
        .iter()
        .enumerate()
        .filter(|(i, _)| (mid.0..=mid.1).contains(&(y0 + i)))
        .filter_map(|(_, d)| *d)
        .collect();
    middle.sort_unstable();
    let Some(&median) = middle.get(middle.len() / 2) else {
        return path.to_vec();
    };
    let cap = (median as f32 * MAX_WIDEN) as usize;
    let at = |i: usize| {
        let x = path[i];
        let Some(o) = side(y0 + i) else { return x };
        let d = offsets[i].unwrap_or(median).min(cap);
        if s == 0 {
            o + d
        } else {
            o.saturating_sub(d)
        }
    };
    let first = mid.0.saturating_sub(y0).min(path.len().saturating_sub(1));
    let inward = |a: usize, b: usize| {
        if s == 0 {
            b.saturating_sub(a)
        } else {
            a.saturating_sub(b)
        }
    };
    let step = (median / 2).max(3);
    let lowest_half = lower.saturating_sub(y0).max(first + 3);
    let cuff = (lowest_half..path.len())
        .find(|&i| match (side(y0 + i - 3), side(y0 + i)) {
            (Some(a), Some(b)) => inward(a, b) > step,
            _ => false,
        })
        .unwrap_or(path.len());
    // The armhole's seam: straight up from the middle's first row, a sleeve's narrower
    // widths (the lower quartile of the middle's offsets) in from the side there.
    let narrow = middle[middle.len() / 4];
    let seam = side(y0 + first).map_or(at(first), |o| {
        if s == 0 {
            o + narrow
        } else {
            o.saturating_sub(narrow)
        }
    });
    (0..cuff)
        .map(|i| if i < first { seam } else { at(i) })
        .collect()
}

/// The best path down rows `rows` (inclusive) on side `s`: each row's column between
/// `d.0` and `d.1` in from the silhouette's side (`span`), maximising the summed score less
/// [`STEP_COST`] per pixel moved, at most one pixel a row (or [`JUMP_COST`] for a jump).
fn best_path(
    span: &dyn Fn(usize) -> Option<(usize, usize)>,
    score: &[Vec<f32>],
    s: usize,
    rows: (usize, usize),
    d: (usize, usize),
    w: usize,
) -> Option<Vec<usize>> {
    let n = d.1.checked_sub(d.0)? + 1;
    // The column of offset k in row y.
    let mut sides: Vec<usize> = Vec::with_capacity(rows.1 + 1 - rows.0);
    let mut last = None;
    for y in rows.0..=rows.1 {
        let side = span(y).map(|(a, b)| if s == 0 { a } else { b }).or(last)?;
        last = Some(side);
        sides.push(side);
    }
    let col = |i: usize, k: usize| -> Option<usize> {
        let o = sides[i];
        let x = if s == 0 {
            o + d.0 + k
        } else {
            o.checked_sub(d.0 + k)?
        };
        (x < w).then_some(x)
    };
    let rows_n = sides.len();
    let mut acc: Vec<f32> = (0..n)
        .map(|k| col(0, k).map_or(f32::NEG_INFINITY, |x| score[rows.0][x]))
        .collect();
    let mut back = vec![0u32; rows_n * n];
    for i in 1..rows_n {
        // Where the silhouette's side jumps (a cuff ends, a run splits off) further than the
        // path can follow, it may jump too, at a price.
        let restart = acc
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or((f32::NEG_INFINITY, 0), |(k, v)| (v - JUMP_COST, k));
        let mut next = vec![f32::NEG_INFINITY; n];
        for k in 0..n {
            let Some(x) = col(i, k) else { continue };
            let mut best = restart;
            for dx in [-1i64, 0, 1] {
                let px = x as i64 - dx;
                // The previous row's offset with the column px.
                let o = sides[i - 1] as i64;
                let kp = if s == 0 {
                    px - o - d.0 as i64
                } else {
                    o - px - d.0 as i64
                };
                if kp < 0 || kp >= n as i64 {
                    continue;
                }
                let v = acc[kp as usize] - STEP_COST * dx.abs() as f32;
                if v > best.0 {
                    best = (v, kp as usize);
                }
            }
            if best.0.is_finite() {
                next[k] = best.0 + score[rows.0 + i][x];
                back[i * n + k] = best.1 as u32;
            }
        }
        acc = next;
    }
    let (mut k, best) = acc
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, v)| (k, *v))?;
    if !best.is_finite() {
        return None;
    }
    let mut path = vec![0usize; rows_n];
    for i in (0..rows_n).rev() {
        path[i] = col(i, k)?;
        k = back[i * n + k] as usize;
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    /// A drawn jacket laid flat: a torso 200 wide and two sleeves 50 wide hanging straight
    /// down beside it, touching it, told apart only by a darker seam line (`seam`: false
    /// draws the same outline in one plain colour, a vest). Returns the photo and its mask.
    fn drawn(seam: bool) -> (RgbaImage, Vec<bool>) {
        let (w, h) = (400usize, 420usize);
        let mut img = RgbaImage::from_pixel(w as u32, h as u32, Rgba([240, 240, 240, 255]));
        let mut fg = vec![false; w * h];
        for y in 40..400 {
            for x in 50..350 {
                // Shoulders sloping from the collar.
                let top = 40 + (x as i64 - 200).unsigned_abs() as usize / 6;
                if y < top {
                    continue;
                }
                fg[y * w + x] = true;
                let on_seam = seam && (y > 110) && (x.abs_diff(100) <= 1 || x.abs_diff(299) <= 1);
                let c = if on_seam {
                    [40, 60, 90]
                } else {
                    [70, 100, 150]
                };
                img.put_pixel(x as u32, y as u32, Rgba([c[0], c[1], c[2], 255]));
            }
        }
        (img, fg)
    }

    /// The seams are found as the sleeves' inner edges, from the middle down to the bottom,
    /// within the blur's reach (the photo is blurred twice by 2 pixels: the edge lies on the
    /// dark line's blurred flank, up to 5 pixels off its centre).
    #[test]
    fn sleeves_told_apart_by_a_seam_are_found() {
        let (img, fg) = drawn(true);
        let hs = find(&fg, &img).expect("the hanging sleeves are found");
        for y in [200usize, 300, 390] {
            let (l, r) = (hs.at(0, y).unwrap(), hs.at(1, y).unwrap());
            assert!(
                l.abs_diff(100) <= 5 && r.abs_diff(299) <= 5,
                "row {y}: {l} {r}"
            );
        }
    }

    /// The gradient over the garment's box and the blur's reach is the whole photo's
    /// gradient inside the box (to float rounding), on a textured photo whose box lies away
    /// from the edges and on one whose box touches them.
    #[test]
    fn the_boxed_gradient_is_the_whole_photos() {
        let (w, h) = (300usize, 260usize);
        let img = RgbaImage::from_fn(w as u32, h as u32, |x, y| {
            let v = (x * 37 + y * 91 + (x * y) % 23) % 256;
            Rgba([v as u8, (v * 3 % 256) as u8, ((x + 2 * y) % 256) as u8, 255])
        });
        let r = 3;
        let whole = GradientX::new(&img, r, [0, 0, w - 1, h - 1], 0);
        for bbox in [[60, 40, 220, 200], [0, 0, 120, 259], [150, 100, 299, 259]] {
            let part = GradientX::new(&img, r, bbox, 2 * r + 2);
            assert!(part.g.len() < whole.g.len(), "{bbox:?}: the whole photo");
            for y in bbox[1]..=bbox[3] {
                for x in bbox[0]..=bbox[2] {
                    let (a, b) = (whole.at(x, y), part.at(x, y));
                    assert!((a - b).abs() < 1e-3, "{bbox:?} ({x}, {y}): {a} vs {b}");
                }
            }
        }
    }

    /// The same outline in one plain colour has no sleeves to find: a vest stays a vest.
    #[test]
    fn a_plain_outline_has_no_hanging_sleeves() {
        let (img, fg) = drawn(false);
        assert_eq!(find(&fg, &img), None);
    }
}
