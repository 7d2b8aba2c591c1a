//! Where a top's hem falls on the body, from the product's own proportions.
//!
//! The product photo gives the garment's length (shoulder seams' midpoint to the hem's) in
//! its own shoulder widths ([`GarmentLandmarks::length`] over
//! [`GarmentLandmarks::shoulder_width`]). That ratio is a class — cropped, waist, hip or
//! tunic ([`LengthClass`]) — and within the class a depth on a standard body, in seam-to-seam
//! shoulder widths below the seams ([`RATIO_TO_DEPTH`]: a 40 cm shoulder puts the natural
//! waist about 38 cm and the hip joints 50 cm below the seams, as in
//! [`crate::garment::lower::fit::STANDARD_DEPTHS`]). The standard depth is mapped onto the
//! person's own hips ([`hem_depth`]), so a hip-length top ends at the hips of a long or a
//! short torso alike, whatever the photo's framing does to the shoulder width.
//!
//! Within a class the depth moves less than the ratio (the classes' depth ranges are
//! narrower than their ratio ranges): a flat-lay's ratio is measured to a few per cent at
//! best, a long top laid out with its shoulders narrowed by the sleeves must not hang like a
//! dress.
//!
//! The old top never shows below a new one that is not cropped: its hem goes at least as far
//! down as the top the person wears now, when that can be seen ([`cover_worn_top`]; on a
//! half-body photo without legs, as far as the top runs down the torso — out of the photo
//! when it runs out of it: [`crate::garment::body::worn_top::worn_top_reach`]).

use crate::garment::body::frame::BodyFrame;
use crate::garment::cutout::GarmentLandmarks;

/// A top's length class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthClass {
    /// Ends above the waist (a crop top, a cropped jacket): the body under it may show.
    Cropped,
    /// Ends at the waist.
    Waist,
    /// Ends about the hips (a t-shirt, a shirt, a blazer).
    Hip,
    /// Ends below the hips, over the upper thighs.
    Tunic,
}

impl LengthClass {
    /// The class's name for metadata: `cropped`, `waist`, `hip`, `tunic`.
    pub fn as_str(self) -> &'static str {
        match self {
            LengthClass::Cropped => "cropped",
            LengthClass::Waist => "waist",
            LengthClass::Hip => "hip",
            LengthClass::Tunic => "tunic",
        }
    }

    /// The class of a length `ratio` (length over shoulder width).
    pub fn of(ratio: f32) -> LengthClass {
        match ratio {
            r if r < CLASS_BOUNDS[0] => LengthClass::Cropped,
            r if r < CLASS_BOUNDS[1] => LengthClass::Waist,
            r if r < CLASS_BOUNDS[2] => LengthClass::Hip,
            _ => LengthClass::Tunic,
        }
    }
}

/// Length ratios where the classes change: cropped | waist | hip | tunic.
pub const CLASS_BOUNDS: [f32; 3] = [0.95, 1.3, 2.0];

/// The ratio → standard depth map (seam widths below the seams), piecewise linear through
/// these knots and flat past the ends. The knots at the class bounds put a cropped top's hem
/// above the natural waist (0.95), a waist-length top's between the waist and the hip bone,
/// a hip-length top's about the hip joints (1.25) and a tunic's over the upper thighs.
pub const RATIO_TO_DEPTH: [(f32, f32); 5] = [
    (0.6, 0.62),
    (0.95, 0.85),
    (1.3, 1.05),
    (2.0, 1.42),
    (2.8, 1.85),
];

/// The standard body's hip joints below the seams, in seam widths.
pub const HIPS: f32 = 1.25;

/// With the hips seen, the person's unit may reach this many seam widths: a body turned
/// 60° shows its shoulders at half their width (cos 60°).
pub const TURNED_UNIT: f32 = 2.0;

/// A garment's length over its shoulder width. The shoulder width is taken as the median of
/// three measures that agree on a tee laid flat: the seams' distance, 0.9 of the chest
/// (armpit to armpit) and 0.95 of the hem — a tank top's straps or sleeves the outline does
/// not tell from the torso (sleeves laid along it) make one of them wrong, not the length.
pub fn length_ratio(g: &GarmentLandmarks) -> f32 {
    let mut w = [
        g.shoulder_width(),
        0.9 * g.armpit[0].distance(g.armpit[1]),
        0.95 * g.hem[0].distance(g.hem[1]),
    ];
    w.sort_by(f32::total_cmp);
    g.length() / w[1].max(1.0)
}

/// The standard depth (seam widths below the seams) of a length `ratio` ([`RATIO_TO_DEPTH`]).
pub fn standard_depth(ratio: f32) -> f32 {
    let k = &RATIO_TO_DEPTH;
    if ratio <= k[0].0 {
        return k[0].1;
    }
    for w in k.windows(2) {
        let ((r0, d0), (r1, d1)) = (w[0], w[1]);
        if ratio <= r1 {
            return d0 + (ratio - r0) * (d1 - d0) / (r1 - r0);
        }
    }
    k[k.len() - 1].1
}

/// The hem's depth below the shoulder keypoints' midpoint along the torso axis for a length
/// `ratio` on the body `f`: the standard depth in the person's units, one unit being the
/// seams-to-hips depth over the standard body's ([`HIPS`]), kept within 0.75–1.35 of the
/// seams' width apart (a pose model's hips guessed far outside a head-and-shoulders photo)
/// — up to [`TURNED_UNIT`] when the hips are seen in the photo ([`BodyFrame::hips_seen`]):
/// a body turned three-quarters shows its shoulders narrower, not its torso shorter.
pub fn hem_depth(ratio: f32, f: &BodyFrame) -> f32 {
    let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5;
    let seams = (f.seam[0] + f.seam[1]) * 0.5;
    let seam_depth = (seams - mid).dot(f.down);
    let hips_depth = (f.hips - mid).dot(f.down);
    let bw = f.seam[0].distance(f.seam[1]);
    let most = if f.hips_seen { TURNED_UNIT } else { 1.35 };
    let unit = ((hips_depth - seam_depth) / HIPS).clamp(0.75 * bw, most * bw);
    seam_depth + standard_depth(ratio) * unit
}

/// The hem's depth `depth` lowered, for a top that is not cropped, to cover the top the
/// person wears now down to its hem `worn_hem` (same measure, when it was seen) and a
/// little past it.
pub fn cover_worn_top(depth: f32, class: LengthClass, worn_hem: Option<f32>, sw: f32) -> f32 {
    match (class, worn_hem) {
        (LengthClass::Cropped, _) | (_, None) => depth,
        (_, Some(h)) => depth.max(h + 0.04 * sw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map rises with the ratio, the classes come in order, and a long top's
    /// ratio well past a tee's still ends within the upper thighs, not at the knees.
    #[test]
    fn longer_products_hang_lower_and_classes_come_in_order() {
        let mut last = f32::MIN;
        for k in 0..60 {
            let r = 0.5 + k as f32 * 0.05;
            let d = standard_depth(r);
            assert!(d >= last, "{r}: {d} < {last}");
            last = d;
        }
        assert_eq!(LengthClass::of(0.85), LengthClass::Cropped);
        assert_eq!(LengthClass::of(1.2), LengthClass::Waist);
        assert_eq!(LengthClass::of(1.6), LengthClass::Hip);
        assert_eq!(LengthClass::of(2.3), LengthClass::Tunic);
        assert!(
            standard_depth(0.85) < 0.95,
            "a crop top ends above the waist"
        );
        assert!(
            (standard_depth(1.6) - HIPS).abs() < 0.1,
            "a tee ends at the hips"
        );
        assert!(standard_depth(2.2) < 1.6, "a long top is no dress");
    }

    /// A body turned three-quarters (shoulders 80 px across, hips 200 px below them): with
    /// its hips seen in the photo a hip-length top ends near them; with the hips only
    /// guessed (outside a portrait) the shoulders' width still bounds the torso.
    #[test]
    fn a_turned_body_with_its_hips_seen_keeps_its_torso_length() {
        use crate::garment::body::frame::Arm;
        use glam::Vec2;
        let arm = Arm {
            chain: [Vec2::ZERO; 4],
            visibility: 0.0,
        };
        let mut f = BodyFrame {
            shoulder_width: 80.0,
            shoulder: [Vec2::new(60.0, 100.0), Vec2::new(140.0, 100.0)],
            seam: [Vec2::new(54.0, 90.0), Vec2::new(146.0, 90.0)],
            across: Vec2::X,
            down: Vec2::Y,
            hips: Vec2::new(100.0, 300.0),
            hips_seen: true,
            arms: [arm, arm],
            face_oval: Vec::new(),
            skin: None,
            tone: None,
        };
        let seen = hem_depth(1.6, &f);
        assert!(
            (seen - 200.0).abs() < 25.0,
            "hips seen: hem at {seen}, hips at 200"
        );
        f.hips_seen = false;
        let guessed = hem_depth(1.6, &f);
        assert!(guessed < 150.0, "hips guessed: hem at {guessed}");
    }

    /// Old top below a waist-length top is covered; below a cropped one it is not.
    #[test]
    fn only_a_cropped_top_leaves_the_worn_top_showing() {
        assert_eq!(
            cover_worn_top(100.0, LengthClass::Waist, Some(150.0), 100.0),
            154.0
        );
        assert_eq!(
            cover_worn_top(100.0, LengthClass::Cropped, Some(150.0), 100.0),
            100.0
        );
        assert_eq!(
            cover_worn_top(200.0, LengthClass::Hip, Some(150.0), 100.0),
            200.0
        );
        assert_eq!(cover_worn_top(100.0, LengthClass::Hip, None, 100.0), 100.0);
    }
}
