//! A warped top's pixels far outside the person taken away ([`clip_far_outside`]).
//!
//! A thin-plate spline is smooth, not bounded: garment pixels beyond its control points —
//! a sleeve laid flat beside a long jacket's hem, while the wearer's arms are crossed —
//! are carried wherever the spline extrapolates them, and on the suit man a puffer's left
//! sleeve came out as a long blue stick hanging from his hip to his knee, far off his
//! body. A new top may be bulkier than the old clothing, not a shoulder width beside it.

use crate::garment::body::frame::BodyFrame;
use crate::garment::upper::fit::PersonMask;
use crate::garment::WarpOutput;
use crate::image_ops::box_blur;

/// How far outside the person mask (in shoulder widths, a square distance) a new top's
/// pixels may lie: a puffer over a slim suit stands out a few centimetres, a sleeve's
/// stick two tenths of a shoulder and more.
pub const OUTSIDE: f32 = 0.15;

/// Takes away the pixels of `warped` lying farther than [`OUTSIDE`] shoulder widths (the
/// body frame `f`'s) from the person `mask`; returns how many. Nothing happens when the
/// mask's size is not the output's.
pub fn clip_far_outside(warped: &mut WarpOutput, mask: PersonMask<'_>, f: &BodyFrame) -> usize {
    let (w, h) = (warped.width as usize, warped.height as usize);
    if mask.size != (warped.width, warped.height) || mask.data.len() != w * h {
        return 0;
    }
    let r = ((OUTSIDE * f.shoulder_width).round() as usize).max(2);
    let binary: Vec<f32> = mask
        .data
        .iter()
        .map(|&m| if m >= 0.5 { 1.0 } else { 0.0 })
        .collect();
    let near = box_blur(&binary, w, h, r);
    let mut cut = 0;
    for (i, px) in warped.rgba.iter_mut().enumerate() {
        if px[3] > 0 && near[i] <= 1e-6 {
            *px = [0; 4];
            warped.top[i] = 0;
            cut += 1;
        }
    }
    cut
}
