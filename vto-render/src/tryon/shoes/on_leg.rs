//! Each foot moved onto the leg the person mask shows.
//!
//! The pose model's ankle, heel and toe keypoints may sit beside the leg they belong to: on
//! the b/w dunes photo (bare feet sunk in sand, the legs' shadows running toward the camera)
//! both ankles lay 3.5–4 cm inside their legs, and both shoes stood together between the
//! legs, under neither. The shoe belongs under its shin: across the leg axis (knee → ankle),
//! the centre of the person-mask run around the axis is measured on the shin's lowest part
//! ([`SHIN_CM`] above the ankle, where a low shoe does not widen the run and the legs are
//! still apart), and the foot's keypoints are moved by the median offset when it is at
//! least [`MIN_SHIFT_CM`], by at most [`MAX_SHIFT_CM`]. Rows where the run is wider than one leg ([`MAX_LEG_CM`]: two legs
//! together, a skirt) or does not reach the axis tell nothing; with fewer than a third of
//! the rows telling, the foot stays where the keypoints put it.

use crate::math::Vec2;
use crate::vision::Mask;

/// The shin from the ankle keypoint up this far (cm) is measured.
pub const SHIN_CM: f32 = 12.0;
/// A person-mask run across the shin wider than this (cm) is not one leg.
pub const MAX_LEG_CM: f32 = 14.0;
/// The most (cm) a foot is moved.
pub const MAX_SHIFT_CM: f32 = 5.0;
/// A foot less than this (cm) off its shin's centre stays: the ankle keypoint need not sit
/// at the centre of the leg's outline (a side view, the mask's soft edge), and on the small
/// walking woman a 1.5 cm move (2 px) turned her front shin over more of the back shoe.
pub const MIN_SHIFT_CM: f32 = 2.0;

/// The image offset (pixels) that moves a foot whose ankle is at `ankle` and knee at `knee`
/// onto its shin in `mask` (see the module docs); zero when the shin does not tell.
/// `s` is pixels per centimetre at the feet.
pub fn leg_offset(mask: &Mask, ankle: Vec2, knee: Vec2, s: f32) -> Vec2 {
    let axis = knee - ankle;
    let len = axis.length();
    if !len.is_finite() || len < 2.0 || s <= 0.0 {
        return Vec2::ZERO;
    }
    let d = axis / len;
    let n = Vec2::new(-d.y, d.x);
    let at = |q: Vec2| -> bool {
        let (x, y) = (q.x.round(), q.y.round());
        x >= 0.0
            && y >= 0.0
            && x < mask.width as f32
            && y < mask.height as f32
            && mask.data[y as usize * mask.width as usize + x as usize] >= 0.5
    };
    let rows = ((SHIN_CM * s).min(len * 0.6).round() as usize).max(1);
    let max_run = MAX_LEG_CM * s;
    let mut offsets = Vec::new();
    for k in 0..rows {
        let p = ankle + d * k as f32;
        // The run through the axis point (or through the masked pixel nearest it within
        // 2 cm: an axis just outside the leg).
        let Some(start) = (0..=(2.0 * s).ceil() as i32)
            .flat_map(|j| [j as f32, -(j as f32)])
            .find(|&t| at(p + n * t))
        else {
            continue;
        };
        let run = |sign: f32| {
            let mut r = 0.0;
            while r <= max_run && at(p + n * (start + sign * (r + 1.0))) {
                r += 1.0;
            }
            r
        };
        let (hi, lo) = (run(1.0), run(-1.0));
        if hi + lo + 1.0 > max_run {
            continue;
        }
        offsets.push(start + (hi - lo) / 2.0);
    }
    if offsets.len() * 3 < rows {
        return Vec2::ZERO;
    }
    offsets.sort_by(f32::total_cmp);
    let median = offsets[offsets.len() / 2];
    if median.abs() < MIN_SHIFT_CM * s {
        return Vec2::ZERO;
    }
    n * median.clamp(-MAX_SHIFT_CM * s, MAX_SHIFT_CM * s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vertical leg 20 px wide centred at x = `centre`, from y 0 to 100, in a 100×120 mask.
    fn leg(centre: f32) -> Mask {
        let (w, h) = (100u32, 120u32);
        let data = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                if (x - centre).abs() <= 10.0 && y <= 100.0 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        Mask {
            width: w,
            height: h,
            data,
        }
    }

    #[test]
    fn a_foot_beside_its_leg_moves_onto_it() {
        // The ankle 8 px (4 cm) left of the leg's centre: moved 8 px right.
        let o = leg_offset(
            &leg(50.0),
            Vec2::new(42.0, 95.0),
            Vec2::new(42.0, 20.0),
            2.0,
        );
        assert!((o.x - 8.0).abs() <= 1.0 && o.y.abs() < 1e-3, "{o:?}");
        // On the leg's centre, or 3 px (1.5 cm) off it: unmoved.
        for x in [50.0, 47.0] {
            let o = leg_offset(&leg(50.0), Vec2::new(x, 95.0), Vec2::new(x, 20.0), 2.0);
            assert_eq!(o, Vec2::ZERO, "{x}");
        }
    }

    #[test]
    fn a_run_wider_than_a_leg_or_no_leg_tells_nothing() {
        // 2 px per cm: a 14 cm limit is 28 px, the leg is 21 px; at 1 px per cm it is 14.
        let o = leg_offset(
            &leg(50.0),
            Vec2::new(42.0, 95.0),
            Vec2::new(42.0, 20.0),
            1.0,
        );
        assert_eq!(o, Vec2::ZERO);
        let o = leg_offset(&leg(50.0), Vec2::new(5.0, 95.0), Vec2::new(5.0, 20.0), 2.0);
        assert_eq!(o, Vec2::ZERO);
    }
}
