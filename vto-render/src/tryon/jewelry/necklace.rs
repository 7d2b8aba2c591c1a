//! Necklaces and pendants: the chain round the neck's base, the pendant on the chest.
//!
//! # The neck's base
//! From the body when its shoulders (pose keypoints 11, 12) are in the photo: from the chin
//! (landmark 152) along the neck (half-way between the face's vertical and the line to the
//! shoulders' midpoint), 70 % of the way down to the shoulders' level; the body's x axis
//! along the shoulders. On a portrait cropped at the chest (shoulders outside the photo or
//! not found), from the face: [`NECK_BELOW_CHIN`] face heights under the chin along the
//! face's vertical, the x axis the face's. The neck's centre lies [`NECK_BEHIND_CM`] deeper
//! than the nose bridge. When the photo shows the neck's bare skin, the base moves along
//! the shoulders' line onto its midline ([`Neck::on_skin_midline`]), and the chain is
//! narrowed to that neck's width ([`squeeze_for`]).
//!
//! # Occluders
//! The neck (an elliptic cylinder from under the base up to the jaw) hides the chain's back;
//! the head occluder puts the chin in front of it. Hair over the chest is not detected.

use super::JewelPlacement;
use crate::math::{Vec2, Vec3};
use crate::scene::camera::HeadCamera;
use crate::scene::CameraMesh;
use crate::vision::{Body, Face};

/// Face heights (landmarks 10–152) from the chin down to the neck's base, when the
/// shoulders are not seen.
pub const NECK_BELOW_CHIN: f32 = 0.62;
/// The neck's centre is this much deeper (cm) than the nose bridge.
pub const NECK_BEHIND_CM: f32 = 7.0;
/// The neck's half-width and half-depth (cm) for a face 13.2 cm wide (scaled with it).
pub const NECK_RADII_CM: [f32; 2] = [5.6, 5.2];
/// Adult chin (menton) → suprasternal notch along the neck, head upright, in units of a
/// face 13.2 cm wide (ANSUR II: menton height − suprasternale height ≈ 8–9 cm).
pub const CHIN_TO_NOTCH_CM: f32 = 8.5;
/// A chain's length when the model does not state it (`extras.vto.length_cm`): 45 cm, the
/// common "princess" length.
pub const DEFAULT_CHAIN_CM: f32 = 45.0;
/// How far (cm) under the notch a chain's front hangs per cm of length past
/// [`CHAIN_AT_NOTCH_CM`] (necklace length charts: 40 cm at the base of the neck, 45 cm on
/// the collarbones, 50 cm a few cm under them, 60 cm at the top of the bust).
pub const DROP_PER_CM: f32 = 0.55;
/// A chain this long (cm) lies at the notch.
pub const CHAIN_AT_NOTCH_CM: f32 = 40.0;
/// The bottom of a necklace model kept rigid when its drape is shortened, and allowed under
/// the chain's front: the pendant (cm).
pub const PENDANT_CM: f32 = 2.5;

/// How far (cm) under the chin a necklace whose chain is `length_cm` long reaches at most,
/// pendant included (see [`CHIN_TO_NOTCH_CM`], [`DROP_PER_CM`], [`PENDANT_CM`]), in units of
/// a face 13.2 cm wide.
pub fn max_below_chin_cm(length_cm: f32) -> f32 {
    CHIN_TO_NOTCH_CM + (DROP_PER_CM * (length_cm - CHAIN_AT_NOTCH_CM)).max(0.0) + PENDANT_CM
}

/// The chain length a model states ([`ProductMeta::length_cm`](crate::product::ProductMeta),
/// `{"vto": {"length_cm": ...}}` in its extras), if it is a believable one (20–120 cm).
pub fn stated_length_cm(product: &crate::product::Product) -> Option<f32> {
    product
        .meta
        .length_cm
        .filter(|l| (20.0..=120.0).contains(l))
}

/// Shortens a drape: a model point `y` cm under the anchor (negative below it) whose lowest
/// point is `low` cm (negative) is raised so that the lowest lands at `-max_drop`: the chain
/// above the bottom [`PENDANT_CM`] is compressed vertically, the pendant moved up whole.
/// Points above the anchor and drapes already short enough are unchanged.
pub fn shorten(y: f32, low: f32, max_drop: f32) -> f32 {
    let depth = -low;
    if y >= 0.0 || depth <= max_drop || depth <= PENDANT_CM {
        return y;
    }
    let chain = depth - PENDANT_CM;
    let c = ((max_drop - PENDANT_CM) / chain).clamp(0.2, 1.0);
    if y >= -chain {
        y * c
    } else {
        -chain * c + (y + chain)
    }
}

/// A chain around the neck's base is this much wider than the neck's bare skin is on
/// average under the chin (the base flares into the shoulders).
pub const CHAIN_OVER_NECK: f32 = 1.2;
/// The most a chain is narrowed to its neck ([`squeeze_x`]).
pub const MIN_SQUEEZE: f32 = 0.7;

/// How much a chain is narrowed on a neck whose bare skin is `neck_cm` wide on average
/// under the chin, for a model `model_cm` wide: to [`CHAIN_OVER_NECK`] × the neck, within
/// [`MIN_SQUEEZE`]–1 (never widened). A collar standing round the neck shows less of it, so
/// the chain stays inside the collar's opening rather than coming out over the lapels.
pub fn squeeze_for(neck_cm: f32, model_cm: f32) -> f32 {
    if !(neck_cm > 0.0 && model_cm > 0.0) {
        return 1.0;
    }
    (CHAIN_OVER_NECK * neck_cm / model_cm).clamp(MIN_SQUEEZE, 1.0)
}

/// The horizontal scale of a necklace point `y` cm under the anchor (negative below it),
/// whose lowest point is `low`: `squeeze` along the chain, 1 on the pendant (the bottom
/// [`PENDANT_CM`]), blended over the [`PENDANT_CM`] above it (the chain is near the middle
/// there, so the pendant keeps its shape without a step).
pub fn squeeze_x(y: f32, low: f32, squeeze: f32) -> f32 {
    let t = ((y - low - PENDANT_CM) / PENDANT_CM).clamp(0.0, 1.0);
    1.0 + (squeeze - 1.0) * t
}

/// Least keypoint presence for a shoulder to count.
pub const SHOULDER_PRESENCE: f32 = 0.5;

/// Where the neck's base came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeckSource {
    /// The shoulders and the chin.
    Shoulders,
    /// The face alone (a portrait cropped at the chest).
    Face,
}

/// The neck's frame in the photo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neck {
    /// The base's centre, pixels.
    pub base_px: Vec2,
    /// Unit image direction of the body's +x (the subject's left, image right when facing
    /// the camera).
    pub x_dir: Vec2,
    /// Where it came from.
    pub source: NeckSource,
    /// Whether the base was moved onto the midline of the neck's bare skin
    /// ([`Neck::on_skin_midline`]).
    pub skin_midline: bool,
}

/// The most the neck's skin may move the base sideways, in face widths (landmarks 234–454):
/// further, the skin found is not the neck's.
pub const MIDLINE_MAX_SHIFT: f32 = 0.25;

impl Neck {
    /// The base moved along the shoulders' line onto the midline of the neck's bare skin
    /// (see [`super::collar::neck_skin`]), when there is one within `max_shift` pixels. The
    /// chin and the shoulders' middle both miss the neck when the head tilts or the torso
    /// turns (the shoulder joints lie behind the sternum); the neck itself does not.
    pub fn on_skin_midline(self, skin: Option<&super::collar::NeckSkin>, max_shift: f32) -> Neck {
        let Some(skin) = skin else { return self };
        if self.x_dir.x.abs() < 0.5 {
            return self;
        }
        let shift = (skin.midline_x - self.base_px.x) / self.x_dir.x;
        if shift.abs() > max_shift {
            return self;
        }
        Neck {
            base_px: self.base_px + self.x_dir * shift,
            skin_midline: true,
            ..self
        }
    }
}

/// The neck of a person (see the module docs).
pub fn neck(face: &Face, body: Option<&Body>, width: u32, height: u32) -> Option<Neck> {
    let lm = &face.landmarks;
    let chin = Vec2::new(lm.get(152)?[0], lm.get(152)?[1]);
    let top = Vec2::new(lm.get(10)?[0], lm.get(10)?[1]);
    let inside = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x < width as f32 && p.y < height as f32;
    let shoulders = body.and_then(|b| {
        let (l, r) = (b.keypoints.get(11)?, b.keypoints.get(12)?);
        let (l2, r2) = (Vec2::new(l.x, l.y), Vec2::new(r.x, r.y));
        (l.presence >= SHOULDER_PRESENCE
            && r.presence >= SHOULDER_PRESENCE
            && inside(l2)
            && inside(r2)
            && (l2 - r2).length() > 0.5 * (chin - top).length())
        .then_some((l2, r2))
    });
    Some(match shoulders {
        Some((left, right)) => {
            // The neck runs from the chin down between the face's vertical and the line to
            // the shoulders' midpoint; its base lies 70 % of the way down to the shoulders.
            let mid = (left + right) / 2.0;
            let face_down = (chin - top).normalize_or(Vec2::Y);
            let axis = (face_down + (mid - chin).normalize_or(face_down)).normalize_or(face_down);
            Neck {
                base_px: chin + axis * (0.7 * (mid - chin).dot(axis)).max(0.0),
                x_dir: (left - right).normalize_or(Vec2::X),
                source: NeckSource::Shoulders,
                skin_midline: false,
            }
        }
        None => {
            let down = (chin - top).normalize_or(Vec2::Y);
            Neck {
                base_px: chin + down * NECK_BELOW_CHIN * (chin - top).length(),
                x_dir: Vec2::new(-down.y, down.x),
                source: NeckSource::Face,
                skin_midline: false,
            }
        }
    })
}

/// The neck's frame in camera space: the base's centre, and the x, up and front axes.
pub fn frame(neck: &Neck, cam: &HeadCamera) -> (Vec3, [Vec3; 3]) {
    let depth = cam.focal() / cam.scale() + NECK_BEHIND_CM;
    let centre = cam.camera().unproject(neck.base_px, depth);
    let x = Vec3::new(neck.x_dir.x, neck.x_dir.y, 0.0);
    // Up in the image is −y; perpendicular to x in the image plane, pointing up.
    let mut up = Vec3::new(neck.x_dir.y, -neck.x_dir.x, 0.0);
    if up.y > 0.0 {
        up = -up;
    }
    let front = x.cross(up);
    (centre, [x, up, front])
}

/// Appends the necklace to `mesh` and the neck occluder to `occluders`; returns where the
/// product's lowest point (the pendant) landed, in camera space.
///
/// `max_drop_cm` caps how far under the anchor the model reaches ([`shorten`]); `squeeze`
/// (≤ 1) narrows the chain ([`squeeze_x`]) and the neck with it.
#[allow(clippy::too_many_arguments)]
pub fn place(
    cam: &HeadCamera,
    product: &crate::product::Product,
    place: &JewelPlacement,
    neck: &Neck,
    neck_scale: f32,
    max_drop_cm: f32,
    squeeze: f32,
    mesh: &mut CameraMesh,
    occluders: &mut Vec<CameraMesh>,
) -> Vec3 {
    let (centre, [x, up, front]) = frame(neck, cam);
    let to_cam = |d: Vec3| centre + x * d.x + up * d.y + front * d.z;
    let mut lowest = (f32::MAX, centre);
    let low = (product.bounds().0[1] - place.origin.y) * place.k;
    mesh.push_product(product, |q, n| {
        let mut d = (q - place.origin) * place.k;
        let sx = squeeze_x(d.y, low, squeeze);
        d.x *= sx;
        d.y = shorten(d.y, low, max_drop_cm);
        if d.y < lowest.0 {
            lowest = (d.y, to_cam(d));
        }
        let n = Vec3::new(n.x / sx, n.y, n.z).normalize_or(n);
        (to_cam(d), x * n.x + up * n.y + front * n.z)
    });
    // The neck: an elliptic cylinder from 3 cm under the base up to 12 cm above it.
    let (rx, rz) = (
        NECK_RADII_CM[0] * neck_scale * squeeze,
        NECK_RADII_CM[1] * neck_scale,
    );
    let mut cyl = CameraMesh::default();
    const SIDES: usize = 32;
    for y in [-3.0f32, 12.0] {
        for i in 0..SIDES {
            let a = i as f32 / SIDES as f32 * std::f32::consts::TAU;
            let d = Vec3::new(rx * a.cos(), y, rz * a.sin());
            cyl.push_vertex(to_cam(d), Vec3::NEG_Z, [0.0; 2], 0.0);
        }
    }
    for i in 0..SIDES as u32 {
        let k = (i + 1) % SIDES as u32;
        let n = SIDES as u32;
        cyl.triangles.push([i, n + i, k, 0]);
        cyl.triangles.push([k, n + i, n + k, 0]);
    }
    occluders.push(cyl);
    lowest.1
}
