//! The shoe model: which foot it is, its scale and its anchor.
//!
//! - **Foot**: [`ProductMeta::foot`](crate::product::ProductMeta) (glTF extras
//!   `{"vto": {"foot": "left" | "right"}}`, read where `product::meta` says); else the shape: the toe tip (the front 3 % of the length) lies toward the big
//!   toe, the medial side, so a tip right of the forefoot's centre (+X) is a right shoe; else
//!   (a symmetric toe) a right shoe is assumed and said. The other foot gets the mirror image.
//! - **Axes**: the toe along +Z, +Y up. A model whose longest horizontal extent lies along X
//!   is turned a quarter about Y; a model whose high end (the collar) is at +Z is turned
//!   half a turn, so the toe (the low end) points along +Z. Said in the metadata.
//! - **Scale**: real units when the length is 20–36 cm in metres, centimetres or millimetres
//!   (tried in that order); otherwise scaled to a
//!   [`DEFAULT_LENGTH_CM`] shoe.
//! - **Anchor**: the origin when it is the heel's bottom (within 1 cm below/behind the
//!   heel's back, centred across it); otherwise estimated at the heel's back, bottom, centre.

use crate::math::Vec3;
use crate::product::pose::{self, unit_to_cm, Pose, PoseCategory};
use crate::product::{Foot, Product};

/// Length an auto-fitted shoe is scaled to (cm).
pub const DEFAULT_LENGTH_CM: f32 = 28.5;

/// Where the model's foot came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideSource {
    /// The glTF extras.
    Extras,
    /// The toe's shape.
    Shape,
    /// Neither said: a right shoe assumed.
    Assumed,
}

/// How the model maps into the shoe frame (cm, +Y up, toe +Z, origin at the heel's bottom).
#[derive(Debug, Clone, PartialEq)]
pub struct ShoeFit {
    /// Whether the model is a right shoe.
    pub right: bool,
    /// Where that came from.
    pub side_source: SideSource,
    /// Quarter turns about +Y applied to put the toe along +Z.
    pub quarter_turns: u32,
    /// Asset units → cm.
    pub scale_to_cm: f32,
    /// The asset-frame anchor (after the turn).
    pub anchor: Vec3,
    /// `None` in real units; otherwise why the model was auto-fitted.
    pub auto_fit: Option<String>,
    /// The shoe's length in cm.
    pub length_cm: f32,
    /// The turn into the shoe's canonical pose (sole down, toe +Z), applied before
    /// everything above ([`crate::product::pose`]).
    pub pose: Pose,
}

impl ShoeFit {
    /// An asset point in the shoe frame (cm).
    pub fn point(&self, q: Vec3) -> Vec3 {
        self.scale_to_cm * (turn(self.pose.rotation() * q, self.quarter_turns) - self.anchor)
    }

    /// An asset direction in the shoe frame.
    pub fn dir(&self, n: Vec3) -> Vec3 {
        turn(self.pose.rotation() * n, self.quarter_turns)
    }
}

fn turn(q: Vec3, quarter_turns: u32) -> Vec3 {
    match quarter_turns % 4 {
        0 => q,
        1 => Vec3::new(q.z, q.y, -q.x),
        2 => Vec3::new(-q.x, q.y, -q.z),
        _ => Vec3::new(-q.z, q.y, q.x),
    }
}

/// Decides the foot, the turn, the scale and the anchor of `product` (see the module docs).
pub fn fit(product: &Product) -> ShoeFit {
    let pose = pose::infer(product, PoseCategory::Shoe);
    let r = pose.rotation();
    let pts: Vec<Vec3> = product
        .primitives
        .iter()
        .flat_map(|p| &p.positions)
        .map(|q| r * Vec3::from(*q))
        .collect();
    let bounds = |pts: &[Vec3]| {
        pts.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        )
    };
    let (lo, hi) = bounds(&pts);
    let mut turns = if hi.x - lo.x > 1.3 * (hi.z - lo.z) {
        1
    } else {
        0
    };
    // The collar (the high end) is at the back: compare the tops of the two end quarters.
    let top_at = |turns: u32, front: bool| {
        let t: Vec<Vec3> = pts.iter().map(|p| turn(*p, turns)).collect();
        let (l, h) = bounds(&t);
        let len = (h.z - l.z).max(1e-9);
        t.iter()
            .filter(|p| {
                let u = (p.z - l.z) / len;
                if front {
                    u > 0.75
                } else {
                    u < 0.25
                }
            })
            .map(|p| p.y)
            .fold(f32::MIN, f32::max)
    };
    if top_at(turns, true) > top_at(turns, false) {
        turns += 2;
    }
    let t: Vec<Vec3> = pts.iter().map(|p| turn(*p, turns)).collect();
    let (lo, hi) = bounds(&t);
    let length = (hi.z - lo.z).max(1e-9);
    // The toe tip against the forefoot's centre.
    let mean_x = |from: f32| {
        let xs: Vec<f32> = t
            .iter()
            .filter(|p| p.z >= lo.z + from * length)
            .map(|p| p.x)
            .collect();
        xs.iter().sum::<f32>() / xs.len().max(1) as f32
    };
    let (fore_lo, fore_hi) = t
        .iter()
        .filter(|p| p.z >= lo.z + 0.6 * length)
        .fold((f32::MAX, f32::MIN), |(a, b), p| (a.min(p.x), b.max(p.x)));
    let tip_offset = (mean_x(0.97) - (fore_lo + fore_hi) / 2.0) / (fore_hi - fore_lo).max(1e-9);
    let (right, side_source) = match product.meta.foot.map(|f| f == Foot::Right) {
        Some(r) => (r, SideSource::Extras),
        None if tip_offset.abs() > 0.04 => (tip_offset > 0.0, SideSource::Shape),
        None => (true, SideSource::Assumed),
    };
    let unit = unit_to_cm(length, 20.0..=36.0);
    let metres = unit.is_some();
    let to_cm = unit.unwrap_or(100.0);
    let heel_mid_x = {
        let xs: Vec<f32> = t
            .iter()
            .filter(|p| p.z <= lo.z + 0.15 * length)
            .map(|p| p.x)
            .collect();
        let (a, b) = xs
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        (a + b) / 2.0
    };
    let origin_is_heel = turns == 0
        && !pose.turns()
        && metres
        && (lo.y * to_cm).abs() < 1.0
        && (-1.0..=1.0).contains(&(lo.z * to_cm))
        && (heel_mid_x * to_cm).abs() < 1.5;
    let estimated = Vec3::new(heel_mid_x, lo.y, lo.z);
    let mut reasons = Vec::new();
    if pose.turns() {
        reasons.push(format!(
            "turned into the shoe pose: up was the file's {}, the toe its {}",
            pose.up.dir.as_str(),
            pose.front.dir.as_str()
        ));
    }
    if turns != 0 {
        reasons.push(format!(
            "the toe was not along +Z: turned {} degrees about +Y",
            turns * 90
        ));
    }
    if !metres {
        reasons.push(format!(
            "length {length:.4} units is not 20–36 cm in metres, centimetres or millimetres: \
             scaled to a {DEFAULT_LENGTH_CM} cm shoe"
        ));
    }
    if !origin_is_heel {
        reasons.push("the origin is not at the heel's bottom: estimated at its back".into());
    }
    let scale_to_cm = if metres {
        to_cm
    } else {
        DEFAULT_LENGTH_CM / length
    };
    ShoeFit {
        right,
        side_source,
        quarter_turns: turns,
        scale_to_cm,
        anchor: if origin_is_heel {
            Vec3::ZERO
        } else {
            estimated
        },
        auto_fit: (!reasons.is_empty()).then(|| reasons.join("; ")),
        length_cm: length * scale_to_cm,
        pose,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::product::shoes::SampleShoe;

    #[test]
    fn the_samples_are_right_shoes_in_real_units() {
        for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
            let f = fit(&shoe.product());
            assert!(f.right, "{}", shoe.name());
            assert_eq!(f.side_source, SideSource::Shape);
            assert_eq!(f.quarter_turns, 0);
            assert_eq!(f.scale_to_cm, 100.0);
            assert_eq!(f.auto_fit, None, "{}", shoe.name());
        }
    }

    #[test]
    fn mirrored_turned_and_rescaled_models_are_fitted_and_say_so() {
        let mut p = SampleShoe::Sneaker.product();
        // A left shoe in millimetres with the toe along -X and the origin mid-sole.
        for prim in &mut p.primitives {
            for v in &mut prim.positions {
                *v = [-v[2] * 1000.0 + 100.0, v[1] * 1000.0 + 5.0, -v[0] * 1000.0];
            }
        }
        let f = fit(&p);
        assert!(!f.right, "the mirrored toe points the other way");
        // The toe was along −X: the canonical pose turns it (the quarter turns are left
        // with nothing to do).
        assert_eq!(f.pose.front.dir.as_str(), "-x");
        assert_eq!(f.quarter_turns, 0);
        // Millimetres are real units: the sample's own length.
        let real = fit(&SampleShoe::Sneaker.product()).length_cm;
        assert!(
            (f.length_cm - real).abs() < 0.01,
            "{} vs {real}",
            f.length_cm
        );
        let reason = f.auto_fit.clone().unwrap();
        assert!(
            reason.contains("turned") && reason.contains("heel's bottom"),
            "{reason}"
        );
        // The toe ends along +Z, the heel's bottom at the origin.
        let pts: Vec<Vec3> = p.primitives[0]
            .positions
            .iter()
            .map(|q| f.point(Vec3::from(*q)))
            .collect();
        let zmin = pts.iter().map(|q| q.z).fold(f32::MAX, f32::min);
        let ymin = pts.iter().map(|q| q.y).fold(f32::MAX, f32::min);
        assert!(zmin.abs() < 1.0 && ymin > -0.5, "{zmin} {ymin}");
        // Extras win over the shape.
        p.meta.foot = Some(Foot::Right);
        let f = fit(&p);
        assert!(f.right);
        assert_eq!(f.side_source, SideSource::Extras);
    }
}
