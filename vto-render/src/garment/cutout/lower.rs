//! Lower-body garments from their product photos: trousers' landmarks, a dress's waist that
//! splits it into a bodice (measured as a top) and a skirt.
//!
//! - **Trousers** ([`measure_pants`]): the crotch is where the centre column leaves the
//!   garment for good; above it the waistband's corners (the top rows) and the hips (the outer
//!   edges at the crotch's row); below it each leg's outer and inner edge at a third, two
//!   thirds and the hem. The halves either side of the centre line are the two parts
//!   ([`label::LEG_LEFT`], [`label::LEG_RIGHT`]), which share the centre seam.
//! - **Dresses** ([`split_dress`]): the waist is the narrowest row of the body (the run
//!   through the centre column) between 22 % and 55 % of the height (a mini dress's waist
//!   lies about half-way down, a maxi dress's under a third); above it the bodice is measured as any top ([`crate::garment::cutout::measure`]), below it is
//!   the skirt ([`label::SKIRT`]) with its edges at four stations down to the hem.
//!
//! Lengths are read from the product's own proportions: a trouser leg's inseam over its
//! waistband's width, a dress's shoulder-to-hem over its shoulder width.

use glam::Vec2;

use crate::garment::cutout::{measure, GarmentLandmarks};
use crate::garment::error::{GarmentError, Unmeasurable};
use crate::garment::label;

/// A full-length trouser leg's inseam over the waistband's flat width (78 cm over 38 cm).
pub const FULL_INSEAM_RATIO: f32 = 2.05;

/// Trousers' landmarks (garment pixels; index 0 is the image's left).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PantsLandmarks {
    /// The waistband's corners.
    pub waist: [Vec2; 2],
    /// The waistband's centre.
    pub waist_centre: Vec2,
    /// The outer edges at the crotch's row.
    pub hip: [Vec2; 2],
    /// The crotch.
    pub crotch: Vec2,
    /// Per leg, (outer, inner) edge at a third, two thirds and the hem of the leg.
    pub legs: [[(Vec2, Vec2); 3]; 2],
}

impl PantsLandmarks {
    /// The waistband's flat width.
    pub fn waist_width(&self) -> f32 {
        self.waist[0].distance(self.waist[1])
    }

    /// The mean inseam (crotch to the hem's centre).
    pub fn inseam(&self) -> f32 {
        self.legs
            .iter()
            .map(|l| self.crotch.distance((l[2].0 + l[2].1) * 0.5))
            .sum::<f32>()
            * 0.5
    }

    /// The inseam over a full-length leg's ([`FULL_INSEAM_RATIO`]): 1 for trousers to the
    /// ankle, about a quarter for shorts.
    pub fn length_fraction(&self) -> f32 {
        self.inseam() / self.waist_width().max(1.0) / FULL_INSEAM_RATIO
    }

    /// `shorts`, `cropped` or `full` from [`Self::length_fraction`].
    pub fn length_class(&self) -> &'static str {
        match self.length_fraction() {
            f if f < 0.45 => "shorts",
            f if f < 0.85 => "cropped",
            _ => "full",
        }
    }
}

/// Row runs of `fg` in row `y`.
pub(crate) fn row_runs(fg: &[bool], w: usize, y: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for x in 0..w {
        match (fg[y * w + x], start) {
            (true, None) => start = Some(x),
            (false, Some(s)) => {
                out.push((s, x - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, w - 1));
    }
    out
}

/// The rows a mask occupies and its columns' extent.
pub(crate) fn extent(fg: &[bool], w: usize, h: usize) -> Option<(usize, usize, usize, usize)> {
    let rows: Vec<usize> = (0..h)
        .filter(|&y| fg[y * w..(y + 1) * w].contains(&true))
        .collect();
    let (y0, y1) = (*rows.first()?, *rows.last()?);
    let (mut x0, mut x1) = (usize::MAX, 0);
    for y in y0..=y1 {
        for (a, b) in row_runs(fg, w, y) {
            x0 = x0.min(a);
            x1 = x1.max(b);
        }
    }
    Some((x0, y0, x1, y1))
}

/// The crotch's row in column `xc`: the first row below which the column stays (95 %)
/// outside the garment to the bottom.
fn crotch_row(fg: &[bool], w: usize, xc: usize, y0: usize, y1: usize) -> Option<usize> {
    let mut inside_below = 0usize;
    let mut best = None;
    for y in (y0..=y1).rev() {
        if fg[y * w + xc] {
            inside_below += 1;
        }
        let span = y1 - y + 1;
        if !fg[y * w + xc] && inside_below * 20 <= span {
            best = Some(y);
        }
    }
    best
}

/// Trousers' landmarks and part labels of a binary garment mask, or `None` when the mask
/// has no crotch (no gap between two legs from the bottom up to at least a fifth of its
/// height).
pub fn measure_pants(fg: &[bool], w: usize, h: usize) -> Option<(PantsLandmarks, Vec<u8>)> {
    measure_pants_with(fg, w, h, false)
}

/// Like [`measure_pants`], for a photo known to hold trousers or shorts: where no crotch
/// shows (shorts or jeans lying with their legs together, a gap filled by the photo's
/// shadow), the crotch is placed at a typical rise below the waistband
/// ([`ASSUMED_RISE`] waistband widths, kept between a tenth and four fifths of the height)
/// and the legs are the halves either side of the centre column. `None` when the shape is
/// no trousers' either: under [`MIN_CLOSED_HEIGHT`] waistband widths tall, or long and
/// flaring like a dress ([`DRESS_MIN_HEIGHT`], [`DRESS_MIN_FLARE`]).
pub fn measure_pants_closed(fg: &[bool], w: usize, h: usize) -> Option<(PantsLandmarks, Vec<u8>)> {
    measure_pants(fg, w, h).or_else(|| measure_pants_with(fg, w, h, true))
}

/// A rise (waistband to crotch) in waistband flat widths: 27 cm over 38 cm.
pub const ASSUMED_RISE: f32 = 0.7;

/// The least height, in waistband widths, of trousers whose crotch is assumed: shorts lie
/// about as tall as wide; a shape much wider than tall is no lower garment.
pub const MIN_CLOSED_HEIGHT: f32 = 0.6;

/// Where no crotch shows, a shape taller than this many top widths ...
pub const DRESS_MIN_HEIGHT: f32 = 1.6;

/// ... whose hem is wider than this many top widths is a dress or a skirt, no trousers
/// (shorts flare as much but are about as tall as wide; trousers with their legs together
/// are no wider at the hem than at the waistband).
pub const DRESS_MIN_FLARE: f32 = 1.2;

fn measure_pants_with(
    fg: &[bool],
    w: usize,
    h: usize,
    assume_crotch: bool,
) -> Option<(PantsLandmarks, Vec<u8>)> {
    let (x0, y0, x1, y1) = extent(fg, w, h)?;
    let height = y1 - y0;
    if height < 24 || x1 - x0 < 16 {
        return None;
    }
    let xc = (x0 + x1) / 2;
    // The waistband's row: from the first (past a hundredth of the height) whose garment
    // spans a quarter of the width (a label, a loop or a hanger's hook standing up above it
    // is no waist), the widest within 4 % of the height.
    let span = |y: usize| {
        let r = row_runs(fg, w, y);
        r.first().zip(r.last()).map_or(0, |(a, b)| b.1 - a.0 + 1)
    };
    let first = (y0 + height / 100 + 1..=y1).find(|&y| span(y) * 4 >= x1 - x0)?;
    // A waistband lying curved or tilted shows its top edge first, shorter than the band:
    // the widest row of the next 4 % of the height is the waist (denim shorts' band
    // measured 144 px at its first row and 191 px 10 rows down, which lengthened their
    // legs by a third in waistband widths).
    let top = (first..=(first + height / 25).min(y1))
        .max_by_key(|&y| (span(y), std::cmp::Reverse(y)))
        .unwrap_or(first);
    let top_runs = row_runs(fg, w, top);
    let waist = [
        Vec2::new(top_runs.first()?.0 as f32, top as f32),
        Vec2::new(top_runs.last()?.1 as f32, top as f32),
    ];
    let cy = if assume_crotch {
        let waist_w = waist[1].x - waist[0].x;
        if (height as f32) < MIN_CLOSED_HEIGHT * waist_w {
            return None;
        }
        let hem_w = (y1 - height / 20..=y1).map(span).max().unwrap_or(0) as f32;
        if height as f32 > DRESS_MIN_HEIGHT * waist_w && hem_w > DRESS_MIN_FLARE * waist_w {
            // Long and flaring from the top to the hem: a dress or a skirt, not trousers
            // lying with their legs together (those taper or run straight).
            return None;
        }
        let rise = (ASSUMED_RISE * waist_w) as usize;
        top + rise.clamp(height / 10 + 1, height * 4 / 5)
    } else {
        crotch_row(fg, w, xc, y0, y1)?
    };
    // The legs take at least a fifth of the height, the rise at least a tenth.
    if (y1 - cy) * 5 < height || (cy - y0) * 10 < height {
        return None;
    }
    // Each leg's rows: runs left or right of the centre column (with the crotch assumed,
    // a run across the centre is split there).
    let side = |y: usize, right: bool| -> Option<(usize, usize)> {
        let r: Vec<(usize, usize)> = row_runs(fg, w, y)
            .into_iter()
            .filter_map(|(a, b)| {
                if assume_crotch {
                    if right {
                        (b > xc).then(|| (a.max(xc + 1), b))
                    } else {
                        (a < xc).then(|| (a, b.min(xc - 1)))
                    }
                } else if right {
                    (a > xc).then_some((a, b))
                } else {
                    (b < xc).then_some((a, b))
                }
            })
            .collect();
        Some((r.first()?.0, r.last()?.1))
    };
    let stations = |cy: usize| -> Option<[[(Vec2, Vec2); 3]; 2]> {
        let mut legs = [[(Vec2::ZERO, Vec2::ZERO); 3]; 2];
        for (s, leg) in legs.iter_mut().enumerate() {
            let right = s == 1;
            let hem = (cy..=y1).rev().find(|&y| side(y, right).is_some())?;
            if (hem - cy) * 10 < height {
                return None;
            }
            let hem_row = hem.saturating_sub((hem - cy) / 60 + 1);
            for (k, t) in [1.0 / 3.0, 2.0 / 3.0, 1.0].iter().enumerate() {
                let y = if k == 2 {
                    hem_row
                } else {
                    cy + ((hem_row - cy) as f32 * t) as usize
                };
                let (a, b) = side(y, right).or_else(|| side(hem_row, right))?;
                let (outer, inner) = if right { (b, a) } else { (a, b) };
                leg[k] = (
                    Vec2::new(outer as f32, y as f32),
                    Vec2::new(inner as f32, y as f32),
                );
            }
        }
        Some(legs)
    };
    let mut legs = stations(cy)?;
    // Legs lying together hide the crotch's V: continue the inner edges up to where they
    // meet.
    let (a0, b0) = (legs[0][0].1, legs[0][2].1);
    let (a1, b1) = (legs[1][0].1, legs[1][2].1);
    let (d0, d1) = (b0 - a0, b1 - a1);
    let den = d0.x * d1.y - d0.y * d1.x;
    let mut cy = cy;
    if den.abs() > 1e-3 && !assume_crotch {
        let t = ((a1.x - a0.x) * d1.y - (a1.y - a0.y) * d1.x) / den;
        let meet = a0 + d0 * t;
        if meet.y < cy as f32 - 2.0 && meet.y > (y0 + height / 10) as f32 {
            cy = meet.y as usize;
            legs = stations(cy)?;
        }
    }
    let hip_row = cy.saturating_sub(1).max(top);
    let hr = row_runs(fg, w, hip_row);
    let hip = [
        Vec2::new(hr.first()?.0 as f32, hip_row as f32),
        Vec2::new(hr.last()?.1 as f32, hip_row as f32),
    ];
    let mut labels = vec![0u8; w * h];
    for (i, l) in labels.iter_mut().enumerate() {
        if fg[i] {
            *l = if i % w < xc {
                label::LEG_LEFT
            } else {
                label::LEG_RIGHT
            };
        }
    }
    let lm = PantsLandmarks {
        waist,
        waist_centre: Vec2::new(xc as f32, top as f32),
        hip,
        crotch: Vec2::new(xc as f32, cy as f32),
        legs,
    };
    (lm.waist_width() >= 8.0).then_some((lm, labels))
}

/// A dress: its bodice measured as a top, and its skirt.
#[derive(Debug, Clone, PartialEq)]
pub struct DressLandmarks {
    /// The bodice (its hem corners are the waist's).
    pub bodice: GarmentLandmarks,
    /// The skirt's (left, right) edges at a quarter, half, three quarters and the hem.
    pub skirt: [(Vec2, Vec2); 4],
}

impl DressLandmarks {
    /// Shoulder seams' midpoint to the hem's, over the shoulder width: the dress's length in
    /// its own shoulder widths.
    pub fn length_ratio(&self) -> f32 {
        let b = &self.bodice;
        let top = (b.shoulder[0] + b.shoulder[1]) * 0.5;
        let hem = (self.skirt[3].0 + self.skirt[3].1) * 0.5;
        (hem.y - top.y) / b.fit_width().max(1.0)
    }

    /// `mini`, `knee`, `midi` or `maxi` from [`Self::length_ratio`] (a seam-to-seam
    /// shoulder of 40 cm: mini to 88 cm, knee to 108 cm, midi to 128 cm).
    pub fn length_class(&self) -> &'static str {
        match self.length_ratio() {
            r if r < 2.2 => "mini",
            r if r < 2.7 => "knee",
            r if r < 3.2 => "midi",
            _ => "maxi",
        }
    }
}

/// The waist's row of a dress or jumpsuit mask: the narrowest run through the centre
/// column (sleeves hanging beside the body do not count) between 22 % and 55 % of the
/// height; among near-ties the one nearest the middle of that range.
pub fn waist_row(fg: &[bool], w: usize, h: usize) -> Option<usize> {
    let (x0, y0, x1, y1) = extent(fg, w, h)?;
    let xc = (x0 + x1) / 2;
    let width_at = |y: usize| {
        row_runs(fg, w, y)
            .into_iter()
            .find(|&(a, b)| a <= xc && xc <= b)
            .map_or(0, |(a, b)| b - a + 1)
    };
    let height = y1 - y0;
    if height < 40 {
        return None;
    }
    let (lo, hi) = (y0 + height * 22 / 100, y0 + height * 55 / 100);
    let mid = (lo + hi) / 2;
    let narrow = (lo..=hi).map(width_at).filter(|&v| v > 0).min()?;
    (lo..=hi)
        .filter(|&y| width_at(y) > 0 && width_at(y) <= narrow + (narrow / 50).max(1))
        .min_by_key(|&y| y.abs_diff(mid))
}

/// Splits a dress's mask at the waist (see the module docs): the landmarks and the part
/// labels (bodice as a top's, skirt [`label::SKIRT`]).
pub fn split_dress(
    fg: &[bool],
    w: usize,
    h: usize,
) -> Result<(DressLandmarks, Vec<u8>), GarmentError> {
    let none = || GarmentError::Unmeasurable(Unmeasurable::DressOutline);
    let (_, _, _, y1) = extent(fg, w, h).ok_or_else(none)?;
    let waist = waist_row(fg, w, h).ok_or(GarmentError::Unmeasurable(Unmeasurable::DressWaist))?;
    let (bodice, mut labels) = measure(&fg[..(waist + 1) * w], w, waist + 1)?;
    labels.resize(w * h, 0);
    for y in waist + 1..h {
        for x in 0..w {
            if fg[y * w + x] {
                labels[y * w + x] = label::SKIRT;
            }
        }
    }
    let hem = (waist..=y1)
        .rev()
        .find(|&y| !row_runs(fg, w, y).is_empty())
        .ok_or_else(none)?;
    let hem = hem.saturating_sub((hem - waist) / 100 + 1);
    let mut skirt = [(Vec2::ZERO, Vec2::ZERO); 4];
    for (k, t) in [0.25f32, 0.5, 0.75, 1.0].iter().enumerate() {
        let y = waist + ((hem - waist) as f32 * t) as usize;
        let r = row_runs(fg, w, y);
        let (a, b) = match (r.first(), r.last()) {
            (Some(a), Some(b)) => (a.0, b.1),
            _ => return Err(none()),
        };
        skirt[k] = (Vec2::new(a as f32, y as f32), Vec2::new(b as f32, y as f32));
    }
    Ok((DressLandmarks { bodice, skirt }, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(w: usize, h: usize, f: impl Fn(f32, f32) -> bool) -> Vec<bool> {
        (0..w * h)
            .map(|i| f((i % w) as f32, (i / w) as f32))
            .collect()
    }

    /// Two legs joined by a waistband: the crotch, waist and hems where they were drawn.
    #[test]
    fn trousers_measure_as_drawn() {
        let (w, h) = (300, 400);
        let fg = draw(w, h, |x, y| {
            let band = (50.0..250.0).contains(&x) && (20.0..120.0).contains(&y);
            let left = (50.0..145.0).contains(&x) && (20.0..380.0).contains(&y);
            let right = (155.0..250.0).contains(&x) && (20.0..380.0).contains(&y);
            band || left || right
        });
        let (lm, labels) = measure_pants(&fg, w, h).expect("trousers");
        assert!((lm.crotch.y - 119.0).abs() <= 2.0, "{}", lm.crotch);
        assert!((lm.waist[0].x - 50.0).abs() <= 1.0 && (lm.waist[1].x - 249.0).abs() <= 1.0);
        assert!(
            (lm.legs[0][2].0.y - 376.0).abs() <= 5.0,
            "{:?}",
            lm.legs[0][2]
        );
        assert!((lm.legs[0][2].1.x - 144.0).abs() <= 1.0);
        assert_eq!(labels[200 * w + 60], label::LEG_LEFT);
        assert_eq!(labels[200 * w + 240], label::LEG_RIGHT);
        assert!(lm.length_fraction() > 0.6 && lm.length_fraction() < 0.75);
        // A block without a gap is no pair of trousers.
        let block = draw(w, h, |x, y| {
            (50.0..250.0).contains(&x) && (20.0..380.0).contains(&y)
        });
        assert!(measure_pants(&block, w, h).is_none());
    }

    /// Shorts lying with their legs together (no gap from the hem up) are refused by
    /// [`measure_pants`], which needs the crotch, and measured by [`measure_pants_closed`]:
    /// the crotch at the typical rise below the waistband, each leg a half. A label
    /// standing up above the waistband does not make the waist. A shape far wider than
    /// tall is no lower garment either way.
    #[test]
    fn shorts_without_a_visible_crotch_are_measured_with_a_typical_rise() {
        let (w, h) = (300, 260);
        let fg = draw(w, h, |x, y| {
            let body = (50.0..250.0).contains(&x) && (30.0..230.0).contains(&y);
            let label = (140.0..146.0).contains(&x) && (10.0..30.0).contains(&y);
            body || label
        });
        assert!(measure_pants(&fg, w, h).is_none());
        let (lm, labels) = measure_pants_closed(&fg, w, h).expect("shorts");
        assert!((lm.waist[0].x - 50.0).abs() <= 1.0 && (lm.waist[1].x - 249.0).abs() <= 1.0);
        assert!(lm.waist[0].y >= 30.0, "{}", lm.waist[0]);
        let rise = lm.crotch.y - lm.waist[0].y;
        assert!((rise - ASSUMED_RISE * 199.0).abs() <= 3.0, "rise {rise}");
        assert!(
            (lm.legs[0][2].1.x - 148.0).abs() <= 2.0,
            "{:?}",
            lm.legs[0][2]
        );
        assert!(
            (lm.legs[1][2].1.x - 151.0).abs() <= 2.0,
            "{:?}",
            lm.legs[1][2]
        );
        assert_eq!(lm.length_class(), "shorts");
        assert_eq!(labels[200 * w + 60], label::LEG_LEFT);
        assert_eq!(labels[200 * w + 240], label::LEG_RIGHT);
        let flat = draw(w, h, |x, y| {
            (20.0..280.0).contains(&x) && (100.0..200.0).contains(&y)
        });
        assert!(measure_pants_closed(&flat, w, h).is_none());
    }
}
