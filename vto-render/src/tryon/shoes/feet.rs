//! Feet from the body: a camera matched to the photo, the ground, and each visible foot's 3D
//! pose.
//!
//! - **Scale**: pixels per centimetre at the feet from the longer leg (hip → knee → ankle,
//!   [`LEG_CM`] on an adult), else the torso (shoulders' to hips' centre, [`TORSO_CM`]).
//! - **Camera**: [`PhotoCamera`] at the photo's centre; the feet stand at the depth where one
//!   centimetre spans that scale. The focal length comes from the feet's foreshortening
//!   ([`view_down_from_feet`]): a foot pointing at the camera spans, from heel to toe, an
//!   image height of its length along the view × the tangent of the angle at which the
//!   camera looks down at the floor; that angle and the floor's image height give the focal
//!   length (within [`FOCAL_RANGE`] × the longer side). With no foot pointing within 60° of
//!   the camera (a side view), the focal is [`crate::scene::camera::FOCAL_FACTOR`] × the
//!   longer side. (A fixed 1.2× put the floor of the rendered full-body subjects, shot with
//!   ~2×, at 21° instead of 13°.)
//! - **Ground**: a level camera over a flat floor. The floor lies [`ANKLE_HEIGHT_CM`] below the
//!   ankles; the angle at which the camera looks down at it (clamped to 2°–40°) fixes the
//!   floor's height under the camera. Each heel and toe keypoint, dropped to the floor
//!   ([`HEEL_HEIGHT_CM`], [`TOE_HEIGHT_CM`]), is intersected with it: the heel's floor point
//!   is the shoe's anchor, heel → toe its heading (yaw).
//! - **Raised heel** (a walking subject's back foot): the toe stays on the floor; the heel is
//!   the point on the heel keypoint's ray one foot length ([`FOOT_CM`]) from the toe
//!   keypoint. When it stands more than [`RAISE_MIN_CM`] higher than a flat heel, the shoe
//!   pitches about the toe by the angle that lifts it there (at most [`MAX_PITCH_DEG`]).
//! - **Heading prior**: a foot pointing at the camera spans only a few pixels from heel to
//!   toe, and a few pixels of keypoint noise there swing its yaw by tens of degrees (seen on
//!   rendered full-body subjects: a front foot's shoe turned 45° sideways). The measured
//!   heading is blended with the body's facing (across the hips, with the pose model's
//!   depth) turned out 10°, by how long the foot looks in the photo against an adult foot
//!   seen side on: a side-view foot keeps its measured heading, a foreshortened one follows
//!   the body.
//! - **Seen from behind** ([`seen_from_behind`]: the left hip, shoulder, eye and ear on the
//!   image's left): the body faces away from the camera. The toes are hidden and the pose
//!   model puts their keypoints where a foot toward the camera would have them (below the
//!   heel), so a heading toward the camera is not taken. A heel keypoint that the toe's
//!   floor point leaves room for on the camera's side, one foot length from the toe and more
//!   than [`RAISE_MIN_CM`] up, is a back foot's heel raised toward the camera, its sole in
//!   view ([`raised_heel_behind`]): the shoe points from it to the toe, pitched to lift the
//!   heel there. Otherwise the shoe follows the body's facing, its heel at the heel keypoint.
//! - **On the leg** ([`super::on_leg`]): the ankle, heel and toe keypoints are moved across
//!   the shin onto the leg the person mask shows (at most 5 cm), before all of the above.
//! - **Visibility**: a foot wears a shoe when its ankle, heel and toe keypoints are inside
//!   the photo and each is visible with probability ≥ [`MIN_VISIBILITY`].

use super::on_leg;
use crate::math::{normalize_or, Vec2, Vec3};
use crate::scene::camera::PhotoCamera;
use crate::vision::{Body, PoseKeypoint};

/// Adult hip → knee → ankle length (cm).
pub const LEG_CM: f32 = 85.0;
/// Adult shoulders' centre → hips' centre (cm).
pub const TORSO_CM: f32 = 50.0;
/// The ankle keypoint's height above the floor (cm).
pub const ANKLE_HEIGHT_CM: f32 = 8.0;
/// The heel keypoint's height above the floor (cm).
pub const HEEL_HEIGHT_CM: f32 = 3.0;
/// The toe (foot index) keypoint's height above the floor (cm).
pub const TOE_HEIGHT_CM: f32 = 2.0;
/// Least keypoint visibility for a foot to wear a shoe.
pub const MIN_VISIBILITY: f32 = 0.5;
/// An adult foot's length (cm), what the keypoints' heel → toe should measure.
pub const FOOT_CM: f32 = 25.0;

/// Least and most focal length, as multiples of the longer image side, that the feet's
/// foreshortening may set (a wide phone camera to a long portrait lens).
pub const FOCAL_RANGE: (f32, f32) = (0.8, 4.0);
/// A heel this much (cm) higher than a flat one pitches the shoe.
pub const RAISE_MIN_CM: f32 = 2.0;
/// The steepest pitch (degrees) given to a shoe.
pub const MAX_PITCH_DEG: f32 = 40.0;
/// How far (a fraction of the shoulders' span) the left hip and shoulder must lie on the
/// image's left of the right ones for a body to be [`seen_from_behind`].
pub const BEHIND_MIN_SPAN: f32 = 0.2;

/// The tangent of the angle at which a level camera looks down at the floor, from the feet's
/// foreshortening (see the module docs): per visible foot pointing within 60° of the view,
/// the heel → toe image height (less the keypoints' height difference) over the foot's
/// length along the view; both feet's weighted mean, or the lower when they disagree (a
/// raised heel lengthens the image height). `None` when no foot tells.
pub fn view_down_from_feet(body: &Body, px_per_cm: f32, size: (u32, u32)) -> Option<f32> {
    let mut est = Vec::new();
    for side in [Side::Left, Side::Right] {
        if visible(body, side, size).is_err() {
            continue;
        }
        let [_, _, _, heel, toe] = side.keypoints();
        let (h, t) = (px(kp(body, heel)?), px(kp(body, toe)?));
        let u = (t.x - h.x) / px_per_cm;
        let v = (t.y - h.y) / px_per_cm - (HEEL_HEIGHT_CM - TOE_HEIGHT_CM);
        let along = (FOOT_CM * FOOT_CM - u * u).max(0.0).sqrt();
        if along < 0.5 * FOOT_CM || v <= 0.0 {
            continue;
        }
        est.push((v / along, along / FOOT_CM));
    }
    let tan = match est.as_slice() {
        [] => return None,
        [(t, _)] => *t,
        [(a, wa), (b, wb), ..] if (a - b).abs() <= 0.08 => (a * wa + b * wb) / (wa + wb),
        [(a, _), (b, _), ..] => a.min(*b),
    };
    Some(tan.clamp(2f32.to_radians().tan(), 40f32.to_radians().tan()))
}

/// The subject's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The subject's left (keypoints 23, 25, 27, 29, 31).
    Left,
    /// The subject's right (keypoints 24, 26, 28, 30, 32).
    Right,
}

impl Side {
    /// `left` or `right`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }

    /// Keypoint indices: hip, knee, ankle, heel, foot index.
    pub fn keypoints(self) -> [usize; 5] {
        match self {
            Side::Left => [23, 25, 27, 29, 31],
            Side::Right => [24, 26, 28, 30, 32],
        }
    }
}

/// The camera and the floor of one photo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloorFrame {
    /// The photo's camera.
    pub camera: PhotoCamera,
    /// Pixels per centimetre at the feet.
    pub px_per_cm: f32,
    /// What set the scale: `leg` or `torso`.
    pub scale_source: &'static str,
    /// The feet's depth (cm).
    pub depth: f32,
    /// The floor's height below the camera (cm, camera y).
    pub floor_y: f32,
    /// The angle (degrees) at which the camera looks down at the feet.
    pub view_down_deg: f32,
    /// Where the focal length came from: `feet` (their foreshortening) or `assumed`.
    pub focal_source: &'static str,
}

fn kp(body: &Body, i: usize) -> Option<PoseKeypoint> {
    body.keypoints.get(i).copied()
}

fn px(k: PoseKeypoint) -> Vec2 {
    Vec2::new(k.x, k.y)
}

impl FloorFrame {
    /// The frame of `body` in a `width`×`height` photo; `None` when neither the legs nor the
    /// torso give a scale.
    pub fn new(body: &Body, width: u32, height: u32) -> Option<Self> {
        let mut camera = PhotoCamera::new(width, height);
        let seen = |i: usize| kp(body, i).filter(|k| k.presence >= 0.5 || k.visibility >= 0.3);
        let leg = [Side::Left, Side::Right]
            .iter()
            .filter_map(|s| {
                let [h, k, a, _, _] = s.keypoints();
                let (h, k, a) = (seen(h)?, seen(k)?, seen(a)?);
                Some(px(h).distance(px(k)) + px(k).distance(px(a)))
            })
            .fold(0.0f32, f32::max);
        let torso = (|| {
            let sh = (px(seen(11)?) + px(seen(12)?)) / 2.0;
            let hp = (px(seen(23)?) + px(seen(24)?)) / 2.0;
            Some(sh.distance(hp))
        })();
        let (px_per_cm, scale_source) = if leg > 4.0 {
            (leg / LEG_CM, "leg")
        } else {
            (torso.filter(|t| *t > 4.0)? / TORSO_CM, "torso")
        };
        // The floor under the ankles that are in the photo.
        let ankles: Vec<f32> = [27usize, 28]
            .iter()
            .filter_map(|&i| kp(body, i))
            .filter(|k| k.y.is_finite())
            .map(|k| k.y)
            .collect();
        let ankle_y = if ankles.is_empty() {
            height as f32
        } else {
            ankles.iter().sum::<f32>() / ankles.len() as f32
        };
        let floor_px = ankle_y + ANKLE_HEIGHT_CM * px_per_cm;
        let below = floor_px - camera.centre.y;
        let mut focal_source = "assumed";
        if let Some(tan) = view_down_from_feet(body, px_per_cm, (width, height)) {
            let side = width.max(height) as f32;
            if below > 0.05 * height as f32 {
                camera.focal = (below / tan).clamp(FOCAL_RANGE.0 * side, FOCAL_RANGE.1 * side);
                focal_source = "feet";
            }
        }
        let depth = camera.focal / px_per_cm;
        let down = (below / camera.focal)
            .atan()
            .clamp(2f32.to_radians(), 40f32.to_radians());
        Some(FloorFrame {
            camera,
            px_per_cm,
            scale_source,
            depth,
            floor_y: depth * down.tan(),
            view_down_deg: down.to_degrees(),
            focal_source,
        })
    }

    /// The floor point seen at pixel `p` (camera space, cm): the ray through `p` meets the
    /// floor, its depth kept within 0.6–1.6 × the feet's depth.
    pub fn floor_point(&self, p: Vec2) -> Vec3 {
        let d = Vec3::new(
            (p.x - self.camera.centre.x) / self.camera.focal,
            (p.y - self.camera.centre.y) / self.camera.focal,
            1.0,
        );
        let z = if d.y > 1e-3 {
            (self.floor_y / d.y).clamp(0.6 * self.depth, 1.6 * self.depth)
        } else {
            1.6 * self.depth
        };
        d * z
    }

    /// The camera-space point at the feet's depth seen at pixel `p` (depth `z` when given).
    pub fn point_at(&self, p: Vec2, z: f32) -> Vec3 {
        self.camera.unproject(p, z)
    }

    /// The floor's up direction in camera space (y is down).
    pub fn up(&self) -> Vec3 {
        Vec3::NEG_Y
    }
}

/// One foot, placed.
#[derive(Debug, Clone, PartialEq)]
pub struct FootPose {
    /// Which foot.
    pub side: Side,
    /// The floor point under the back of the heel (camera space, cm).
    pub heel: Vec3,
    /// Unit heading heel → toe along the floor (camera space).
    pub heading: Vec3,
    /// Heel → toe length measured on the floor (cm).
    pub length_cm: f32,
    /// Least visibility of the ankle, heel and toe keypoints.
    pub visibility: f32,
    /// How sure the fit is, 0–1: the visibility, lowered when the measured foot length is
    /// far from an adult's.
    pub confidence: f32,
    /// Keypoints in pixels: ankle, heel, toe.
    pub ankle_px: Vec2,
    /// Heel keypoint.
    pub heel_px: Vec2,
    /// Toe (foot index) keypoint.
    pub toe_px: Vec2,
    /// Knee keypoint, when it is in the photo.
    pub knee_px: Option<Vec2>,
    /// How far (pixels) the ankle, heel and toe keypoints were moved onto the shin the
    /// person mask shows (already added to them; see [`super::on_leg`]).
    pub leg_shift_px: Vec2,
    /// The toe's floor point (camera space, cm): the pivot of a raised heel.
    pub toe: Vec3,
    /// The sole's pitch (degrees, the heel up; 0 on a flat foot).
    pub pitch_deg: f32,
    /// How much higher (cm) than a flat heel the heel keypoint stands.
    pub heel_raise_cm: f32,
    /// How much of the heading came from the heel → toe keypoints (1) against the body's
    /// facing (0; a foreshortened foot, see the module docs).
    pub heading_weight: f32,
}

impl FootPose {
    /// Yaw in degrees: 0 with the toe toward the camera, positive turned toward image right.
    pub fn yaw_deg(&self) -> f32 {
        self.heading.x.atan2(-self.heading.z).to_degrees()
    }
}

/// Why a foot gets no shoe.
#[derive(Debug, Clone, PartialEq)]
pub enum Hidden {
    /// A keypoint lies outside the photo.
    OutOfFrame,
    /// A keypoint's visibility is below [`MIN_VISIBILITY`] (the lowest given).
    LowVisibility(f32),
}

/// Whether the `side` foot of `body` is visible enough to wear a shoe in a photo of `size`.
pub fn visible(body: &Body, side: Side, size: (u32, u32)) -> Result<f32, Hidden> {
    let [_, _, ankle, heel, toe] = side.keypoints();
    let get = |i| kp(body, i).ok_or(Hidden::OutOfFrame);
    let (a, h, t) = (get(ankle)?, get(heel)?, get(toe)?);
    if ![a, h, t].iter().all(|k| inside(k, size)) {
        return Err(Hidden::OutOfFrame);
    }
    let visibility = a.visibility.min(h.visibility).min(t.visibility);
    // NaN visibility counts as not visible.
    if visibility.is_nan() || visibility < MIN_VISIBILITY {
        return Err(Hidden::LowVisibility(visibility));
    }
    Ok(visibility)
}

fn inside(k: &PoseKeypoint, size: (u32, u32)) -> bool {
    k.x >= 0.0 && k.y >= 0.0 && k.x < size.0 as f32 && k.y < size.1 as f32
}

/// The pose of the `side` foot of `body`, or why it gets no shoe.
pub fn foot(
    body: &Body,
    frame: &FloorFrame,
    side: Side,
    size: (u32, u32),
) -> Result<FootPose, Hidden> {
    let visibility = visible(body, side, size)?;
    let [_, knee, ankle, heel, toe] = side.keypoints();
    let get = |i| kp(body, i).ok_or(Hidden::OutOfFrame);
    let (mut a, mut h, mut t) = (get(ankle)?, get(heel)?, get(toe)?);
    let s = frame.px_per_cm;
    // The foot moved onto its shin in the person mask (see `on_leg`).
    let knee_kp = kp(body, knee).filter(|k| inside(k, size));
    let leg_shift = match (body.mask.as_ref(), knee_kp) {
        (Some(m), Some(k)) if m.width == size.0 && m.height == size.1 => {
            on_leg::leg_offset(m, px(a), px(k), s)
        }
        _ => Vec2::ZERO,
    };
    for k in [&mut a, &mut h, &mut t] {
        k.x += leg_shift.x;
        k.y += leg_shift.y;
    }
    let cos_down = frame.view_down_deg.to_radians().cos();
    let mut heel_floor = frame.floor_point(px(h) + Vec2::new(0.0, HEEL_HEIGHT_CM * s * cos_down));
    let toe_floor = frame.floor_point(px(t) + Vec2::new(0.0, TOE_HEIGHT_CM * s * cos_down));
    let mut heel_raise_cm = heel_raise(frame, px(h), toe_floor);
    let mut pitch_deg = 0.0;
    if heel_raise_cm > RAISE_MIN_CM {
        let sin = (heel_raise_cm / FOOT_CM).min(MAX_PITCH_DEG.to_radians().sin());
        pitch_deg = sin.asin().to_degrees();
        // The raised heel's floor point: under the heel, one foot length (its projection on
        // the floor) behind the toe along the heel ray's floor track.
        let dir = Vec3::new(heel_floor.x - toe_floor.x, 0.0, heel_floor.z - toe_floor.z);
        let flat = FOOT_CM * (1.0 - sin * sin).sqrt();
        if dir.length() > 1.0 {
            heel_floor = toe_floor + dir.normalize() * flat;
        }
    }
    let along = Vec3::new(toe_floor.x - heel_floor.x, 0.0, toe_floor.z - heel_floor.z);
    let length_cm = along.length();
    // Too short to trust: the toe toward the camera, turned out 10° on its side.
    let turn_out = match side {
        Side::Left => 1.0,
        Side::Right => -1.0,
    } * 10f32.to_radians();
    let facing = facing(body);
    let (sin, cos) = turn_out.sin_cos();
    let fallback = normalize_or(
        Vec3::new(
            facing.x * cos - facing.z * sin,
            0.0,
            facing.x * sin + facing.z * cos,
        ),
        Vec3::new(sin, 0.0, -cos),
    );
    // How much of an adult foot's side-on length the photo shows (see the module docs).
    let seen = px(h).distance(px(t)) / (FOOT_CM * s).max(1.0);
    let w = ((seen - 0.25) / 0.45).clamp(0.0, 1.0);
    let mut w = w * w * (3.0 - 2.0 * w);
    // Seen from behind, the toe is hidden behind the heel and the pose model puts its
    // keypoint where a foot toward the camera would have it (below the heel): a heading
    // against the body's facing is not taken, the shoe follows the body, and its heel (what
    // the photo shows) stays at the heel keypoint, raised as measured, the toe one foot
    // length ahead of it.
    // A heel keypoint above the toe's may also be a back foot's heel raised toward the
    // camera, its sole in view: the heel one foot length from the toe on the near side.
    let mut toe_floor = toe_floor;
    let mut along = along;
    if along.z < 0.0 && seen_from_behind(body) {
        w = 0.0;
        let near = raised_heel_behind(frame, px(h), toe_floor)
            .map(|heel| (heel, frame.floor_y - heel.y - HEEL_HEIGHT_CM))
            .filter(|(_, raise)| *raise > RAISE_MIN_CM);
        if let Some((heel, raise)) = near {
            let sin = (raise / FOOT_CM).min(MAX_PITCH_DEG.to_radians().sin());
            pitch_deg = sin.asin().to_degrees();
            heel_raise_cm = raise;
            let dir = Vec3::new(toe_floor.x - heel.x, 0.0, toe_floor.z - heel.z);
            let dir = normalize_or(dir, fallback);
            heel_floor = toe_floor - dir * FOOT_CM * (1.0 - sin * sin).sqrt();
            along = dir * FOOT_CM;
            w = 1.0;
        } else {
            pitch_deg = 0.0;
            heel_raise_cm = 0.0;
            heel_floor = frame.floor_point(px(h) + Vec2::new(0.0, HEEL_HEIGHT_CM * s * cos_down));
            toe_floor = heel_floor + fallback * FOOT_CM;
        }
    }
    let heading_weight = if length_cm > 4.0 { w } else { 0.0 };
    let heading = if length_cm > 4.0 {
        normalize_or(
            normalize_or(along, fallback) * w + fallback * (1.0 - w),
            fallback,
        )
    } else {
        fallback
    };
    let off = ((length_cm - FOOT_CM) / 12.0).powi(2);
    let confidence = visibility * (0.6 + 0.4 * (-off).exp());
    Ok(FootPose {
        side,
        heel: heel_floor,
        heading,
        length_cm,
        visibility,
        confidence,
        ankle_px: px(a),
        heel_px: px(h),
        toe_px: px(t),
        knee_px: knee_kp.map(px),
        leg_shift_px: leg_shift,
        toe: toe_floor,
        pitch_deg,
        heel_raise_cm,
        heading_weight,
    })
}

/// How much higher (cm) than a flat heel's the heel keypoint seen at `heel_px` stands, its
/// toe on the floor at `toe_floor` (see the module docs); 0 when the ray never comes within a
/// foot's length of the toe or the heel looks lower than flat.
pub fn heel_raise(frame: &FloorFrame, heel_px: Vec2, toe_floor: Vec3) -> f32 {
    let toe = toe_floor - Vec3::Y * TOE_HEIGHT_CM;
    let ray = frame.point_at(heel_px, 1.0).normalize_or_zero();
    let b = ray.dot(toe);
    let disc = b * b - toe.length_squared() + FOOT_CM * FOOT_CM;
    if disc < 0.0 {
        return 0.0;
    }
    // The heel keypoint's height above the floor at each of the two points one foot length
    // from the toe; the one nearer a flat heel's height is the heel.
    let height = |lambda: f32| frame.floor_y - (ray * lambda).y;
    let r = disc.sqrt();
    let best = [b - r, b + r]
        .into_iter()
        .filter(|l| *l > 0.0)
        .map(height)
        .filter(|h| *h >= 0.0)
        .min_by(|a, b| {
            (a - HEEL_HEIGHT_CM)
                .abs()
                .total_cmp(&(b - HEEL_HEIGHT_CM).abs())
        });
    best.map_or(0.0, |h| (h - HEEL_HEIGHT_CM).max(0.0))
}

/// Seen from behind, the heel seen at `heel_px` raised toward the camera with its toe on the
/// floor at `toe_floor` (see [`heel_raise`]): the point of the heel keypoint's ray one foot
/// length from the toe on the camera's side (camera space, cm), `None` when the ray never
/// comes within a foot's length of the toe or that point lies under the floor.
pub fn raised_heel_behind(frame: &FloorFrame, heel_px: Vec2, toe_floor: Vec3) -> Option<Vec3> {
    let toe = toe_floor - Vec3::Y * TOE_HEIGHT_CM;
    let ray = frame.point_at(heel_px, 1.0).normalize_or_zero();
    let b = ray.dot(toe);
    let disc = b * b - toe.length_squared() + FOOT_CM * FOOT_CM;
    let lambda = b - disc.max(0.0).sqrt();
    let heel = ray * lambda;
    (disc >= 0.0 && lambda > 0.0 && heel.y <= frame.floor_y).then_some(heel)
}

/// The body's facing on the floor (camera space, unit, y = 0): square to the line across the
/// hips (image x and the pose model's depth z, both in pixels; a third of the depth for a
/// body [`seen_from_behind`]). Away from the camera for a body seen from behind, else
/// toward it (also when the hips give no direction, or give a facing away from the camera
/// that the hips' and shoulders' order across the photo does not confirm).
pub fn facing(body: &Body) -> Vec3 {
    let behind = seen_from_behind(body);
    let default = if behind { Vec3::Z } else { Vec3::NEG_Z };
    let (Some(l), Some(r)) = (kp(body, 23), kp(body, 24)) else {
        return default;
    };
    // Seen from behind, this facing is all the heading a foot gets (its toe keypoint is not
    // taken): the pose model's depth, which overstates a turn about threefold (measured on
    // rendered subjects, see `garment::body::frame`), is taken at a third.
    let depth = if behind { 1.0 / 3.0 } else { 1.0 };
    let across = Vec3::new(l.x - r.x, 0.0, (l.z - r.z) * depth);
    if !across.is_finite() || across.length() < 1.0 {
        return default;
    }
    // The person's left on the image's right when facing the camera: forward is the
    // across direction turned a quarter towards the camera (away from it seen from behind,
    // where the left is on the image's left).
    let f = normalize_or(Vec3::new(across.z, 0.0, -across.x), default);
    if (f.z > 0.0) != behind {
        default
    } else {
        f
    }
}

/// Whether `body` is seen from behind: its left hip and its left shoulder both lie on the
/// image's left of the right ones (a person facing the camera has their left on the image's
/// right), each by more than [`BEHIND_MIN_SPAN`] of the shoulders' span, and so do its left
/// eye and ear. A profile (hips and shoulders nearly over each other) is not, nor a person
/// whose face says frontal while the pose model swapped the body's sides (the b/w dunes
/// photo: a woman facing the camera, her shoulders and hips labelled mirrored).
pub fn seen_from_behind(body: &Body) -> bool {
    let x = |i: usize| kp(body, i).map(|k| k.x);
    let (Some(ls), Some(rs)) = (kp(body, 11), kp(body, 12)) else {
        return false;
    };
    let span = px(ls).distance(px(rs));
    let least = BEHIND_MIN_SPAN * span;
    let mirrored = |l: usize, r: usize, by: f32| match (x(l), x(r)) {
        (Some(l), Some(r)) => r - l > by,
        _ => false,
    };
    span.is_finite()
        && span > 1.0
        && mirrored(11, 12, least)
        && mirrored(23, 24, least)
        && mirrored(2, 5, 0.0)
        && mirrored(7, 8, 0.0)
}

#[cfg(test)]
pub(crate) mod tests;
