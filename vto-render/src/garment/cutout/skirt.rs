//! A skirt on its own, from its product photo: told from a dress by its top edge, measured
//! from its waistband down.
//!
//! - **Skirt or dress** ([`reads_as_skirt`]): a dress's top edge is a neckline between two
//!   shoulders (or straps): seen flat, the middle of the top edge lies lower than the highest
//!   point on either side of it — by 4.7–61 % of the garment's width on the dresses, jumpsuits
//!   and tops of `../shared/testdata/garments`, 9–12 % on our sample tees. A skirt's top edge
//!   is its waistband, straight across: 0–0.9 % on the three skirts there. A dip under
//!   [`NECKLINE_DIP`] of the width reads as a waistband. A strapless (bandeau) dress has no
//!   neckline either and reads as a skirt: the request's `product_kind` (`dress`) says
//!   otherwise.
//! - **Landmarks** ([`measure_skirt`]): the waistband's corners a fiftieth of the height below
//!   the top edge (clear of a gathered waistband's frill and of tags standing up above it);
//!   the skirt's edges at a quarter, half, three quarters and the hem, as a dress's skirt.
//!   The length is read in waistband widths ([`SkirtLandmarks::length_ratio`]).

use glam::Vec2;

use crate::garment::cutout::lower::{extent, row_runs};
use crate::garment::label;

/// The deepest dip of the top edge's middle below its highest points either side, in
/// garment widths, that still reads as a waistband (see the module docs).
pub const NECKLINE_DIP: f32 = 0.025;

/// A waistband's flat width in centimetres (half a 72 cm waist): the unit skirt lengths are
/// read in ([`crate::garment::lower::hang::SKIRT_DEPTHS`]).
pub const WAISTBAND_CM: f32 = 36.0;

/// A skirt's landmarks (garment pixels; index 0 is the image's left).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkirtLandmarks {
    /// The waistband's corners.
    pub waist: [Vec2; 2],
    /// The skirt's (left, right) edges at a quarter, half, three quarters and the hem.
    pub edges: [(Vec2, Vec2); 4],
}

impl SkirtLandmarks {
    /// The waistband's flat width.
    pub fn waist_width(&self) -> f32 {
        self.waist[0].distance(self.waist[1])
    }

    /// The waistband's centre.
    pub fn waist_centre(&self) -> Vec2 {
        (self.waist[0] + self.waist[1]) * 0.5
    }

    /// The hem's centre.
    pub fn hem_centre(&self) -> Vec2 {
        (self.edges[3].0 + self.edges[3].1) * 0.5
    }

    /// Waistband to hem over the waistband's flat width: the skirt's length in its own
    /// waistband widths ([`WAISTBAND_CM`]).
    pub fn length_ratio(&self) -> f32 {
        (self.hem_centre().y - self.waist_centre().y) / self.waist_width().max(1.0)
    }

    /// `mini`, `knee`, `midi` or `maxi` from [`Self::length_ratio`] (of a 36 cm waistband:
    /// mini to 47 cm, knee to 65 cm, midi to 86 cm).
    pub fn length_class(&self) -> &'static str {
        match self.length_ratio() {
            r if r < 1.3 => "mini",
            r if r < 1.8 => "knee",
            r if r < 2.4 => "midi",
            _ => "maxi",
        }
    }
}

/// How far the middle of the top edge of `fg` (a `w`×`h` garment mask) lies below the
/// highest point on either side of it, in garment widths (see the module docs); `None` for
/// a mask too small to read.
pub fn neckline_dip(fg: &[bool], w: usize, h: usize) -> Option<f32> {
    let (_, y0, _, y1) = extent(fg, w, h)?;
    let height = y1 - y0;
    let runs = row_runs(fg, w, y0 + height / 10);
    let (a, b) = (runs.first()?.0, runs.last()?.1);
    let width = b - a;
    if width < 20 || height < 20 {
        return None;
    }
    // The top edge: the first garment row of every column, median-smoothed over a fortieth
    // of the width (a frill, a tag, a ragged cut-out pixel).
    let first: Vec<f32> = (a..=b)
        .map(|x| (y0..=y1).find(|&y| fg[y * w + x]).unwrap_or(y1) as f32)
        .collect();
    let k = (width / 40).max(1);
    let n = first.len();
    let smooth: Vec<f32> = (0..n)
        .map(|i| {
            let mut win: Vec<f32> = first[i.saturating_sub(k)..(i + k + 1).min(n)].to_vec();
            win.sort_by(f32::total_cmp);
            win[win.len() / 2]
        })
        .collect();
    let span = |lo: f32, hi: f32| &smooth[(n as f32 * lo) as usize..(n as f32 * hi) as usize];
    let highest = |s: &[f32]| s.iter().copied().fold(f32::INFINITY, f32::min);
    let left = highest(span(0.1, 0.45));
    let right = highest(span(0.55, 0.9));
    let middle = span(0.4, 0.6)
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    Some((middle - left.max(right)) / width as f32)
}

/// Whether the garment mask `fg` reads as a skirt rather than a dress: its top edge is a
/// waistband, not a neckline ([`NECKLINE_DIP`]).
pub fn reads_as_skirt(fg: &[bool], w: usize, h: usize) -> bool {
    neckline_dip(fg, w, h).is_some_and(|d| d < NECKLINE_DIP)
}

/// A skirt's landmarks and part labels (every garment pixel [`label::SKIRT`]), or `None`
/// when the mask is too small or far wider than tall (under half its width).
pub fn measure_skirt(fg: &[bool], w: usize, h: usize) -> Option<(SkirtLandmarks, Vec<u8>)> {
    let (x0, y0, x1, y1) = extent(fg, w, h)?;
    let height = y1 - y0;
    if height < 24 || x1 - x0 < 16 || height * 2 < x1 - x0 {
        return None;
    }
    let span = |y: usize| {
        let r = row_runs(fg, w, y);
        r.first().zip(r.last()).map(|(a, b)| (a.0, b.1))
    };
    // The waistband: the first row past a hundredth of the height spanning a quarter of the
    // width (as trousers'), then a fiftieth of the height lower.
    let top = (y0 + height / 100 + 1..=y1)
        .find(|&y| span(y).is_some_and(|(a, b)| (b - a + 1) * 4 >= x1 - x0))?;
    let waist_row = top + height / 50;
    let (wa, wb) = span(waist_row)?;
    let hem = (waist_row..=y1).rev().find(|&y| span(y).is_some())?;
    let hem = hem.saturating_sub((hem - waist_row) / 100 + 1);
    if hem <= waist_row + 8 {
        return None;
    }
    let mut edges = [(Vec2::ZERO, Vec2::ZERO); 4];
    for (k, t) in [0.25f32, 0.5, 0.75, 1.0].iter().enumerate() {
        let y = waist_row + ((hem - waist_row) as f32 * t) as usize;
        let (a, b) = span(y)?;
        edges[k] = (Vec2::new(a as f32, y as f32), Vec2::new(b as f32, y as f32));
    }
    let lm = SkirtLandmarks {
        waist: [
            Vec2::new(wa as f32, waist_row as f32),
            Vec2::new(wb as f32, waist_row as f32),
        ],
        edges,
    };
    let labels = fg
        .iter()
        .map(|&v| if v { label::SKIRT } else { 0 })
        .collect();
    (lm.waist_width() >= 8.0).then_some((lm, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(w: usize, h: usize, f: impl Fn(f32, f32) -> bool) -> Vec<bool> {
        (0..w * h)
            .map(|i| f((i % w) as f32, (i / w) as f32))
            .collect()
    }

    /// An A-line skirt: a straight waistband flaring to the hem.
    fn a_line(x: f32, y: f32) -> bool {
        let t = (y - 20.0) / 300.0;
        let half = 60.0 + 60.0 * t;
        (0.0..=1.0).contains(&t) && (x - 150.0).abs() <= half
    }

    /// An A-line skirt reads as a skirt and measures as drawn; the same shape with a scoop
    /// neckline cut into its top edge (a trapeze dress) reads as a dress.
    #[test]
    fn a_waistband_reads_as_a_skirt_and_a_neckline_as_a_dress() {
        let (w, h) = (300, 340);
        let skirt = draw(w, h, a_line);
        assert!(
            reads_as_skirt(&skirt, w, h),
            "{:?}",
            neckline_dip(&skirt, w, h)
        );
        let (lm, labels) = measure_skirt(&skirt, w, h).expect("skirt");
        assert!((lm.waist_width() - 122.0).abs() <= 4.0, "{:?}", lm.waist);
        assert!(
            (lm.hem_centre().y - 316.0).abs() <= 4.0,
            "{}",
            lm.hem_centre()
        );
        assert!((lm.edges[3].1.x - lm.edges[3].0.x - 238.0).abs() <= 6.0);
        assert!(
            (lm.length_ratio() - 2.4).abs() < 0.15,
            "{}",
            lm.length_ratio()
        );
        assert_eq!(labels[200 * w + 150], label::SKIRT);
        let dress = draw(w, h, |x, y| {
            let neck = (x - 150.0).powi(2) / 35.0f32.powi(2) + (y - 20.0).powi(2) / 30.0f32.powi(2);
            a_line(x, y) && neck > 1.0
        });
        assert!(
            !reads_as_skirt(&dress, w, h),
            "{:?}",
            neckline_dip(&dress, w, h)
        );
    }
}
