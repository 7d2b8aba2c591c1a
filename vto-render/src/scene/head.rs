//! Points of the canonical head (the face template's head frame, centimetres) that products
//! rest on: the head's centre (occluders, light normals) and the ear points (eyewear temples,
//! earrings).

use crate::math::Vec3;
use crate::vision::head_pose::canonical_face;

/// The ear point (where temples rest) lies this far (cm) below the outer eye corners.
pub const EAR_Y_BELOW_EYES_CM: f32 = 0.9;
/// The ear point lies this far (cm) behind landmarks 127/356 (the face's side at the ear).
pub const EAR_BEHIND_CM: f32 = 1.5;

/// A head-centre proxy, from the template itself (so it does not depend on where the
/// template's origin is): between the face's side landmarks 234 and 454, at mid height
/// between forehead (10) and chin (152).
pub fn head_centre() -> Vec3 {
    let model = canonical_face();
    if model.len() < 468 {
        return Vec3::ZERO;
    }
    Vec3::new(
        (model[234][0] + model[454][0]) / 2.0,
        (model[10][1] + model[152][1]) / 2.0,
        (model[234][2] + model[454][2]) / 2.0,
    )
}

/// The ear point on the `side` (negative: the template's −X side, else +X): at the height
/// of the outer eye corner less [`EAR_Y_BELOW_EYES_CM`], [`EAR_BEHIND_CM`] behind the face's
/// side at the ear.
pub fn ear_point(side: f32) -> Option<Vec3> {
    let model = canonical_face();
    if model.len() < 468 {
        return None;
    }
    let (eye, ear) = if side < 0.0 { (33, 127) } else { (263, 356) };
    Some(Vec3::new(
        model[ear][0],
        model[eye][1] - EAR_Y_BELOW_EYES_CM,
        model[ear][2] - EAR_BEHIND_CM,
    ))
}
