//! Eyewear (`glasses`, `sunglasses`): a 3D frame on the nose bridge, turned with the head.
//!
//! # Placement
//! The product's origin goes onto landmark 168 (the nose bridge between the eyes),
//! [`BRIDGE_OFFSET_CM`] in front of the skin along the head's forward axis, in the head frame
//! of [`crate::scene::camera`]. Scale:
//! - **real units** when the model follows the conventions of `docs/products.md` (metres, +Y
//!   up, front +Z, origin at the bridge; recognised by a 10–20 cm wide frame whose origin is
//!   centred and at its front): 1 m in the file is 100 cm on the canonical face;
//! - **auto-fit** otherwise: the front is scaled to [`AUTO_FIT_WIDTH`] × the face width
//!   (landmarks 234–454, measured in the head frame, so a turned head does not shrink it: the
//!   head pose turns the frame, and its projected width foreshortens with the head's yaw once)
//!   and the bridge is taken at the front's horizontal centre, 15 % of its height above its
//!   middle. The result metadata says which, and why.
//!
//! # Temples
//! Real temples rest on the ears, which sit lower than the hinges. Each temple (the part of
//! the frame more than [`HINGE_DEPTH_CM`] behind its front, per side) is turned about its
//! hinge so that it runs toward the ear point of the canonical face
//! ([`crate::scene::head::ear_point`]), within ±[`MAX_DROOP_DEG`]. The skull occluder
//! ([`crate::scene::occluder::temple_head`]) then hides what passes behind the head: on a
//! turned head, the far temple and the far hinge's back.
//!
//! # Lenses
//! BLEND materials are the lenses (the rasterizer's transparent layer): clear with a faint
//! reflection for `glasses`; for `sunglasses` the lens material's own tint when it has one,
//! else a default grey gradient.

use image::RgbaImage;
use serde_json::json;
use vto_core::Category;

use super::own_eyewear::{take_off, OwnEyewear};
use super::placer::{worn_face, Placed, Placer};
use super::{Needs, Options, Person, TryOnError};
use crate::math::{dist_xy, Vec2, Vec3};
use crate::product::pose::{self, unit_to_cm, Pose, PoseCategory};
use crate::product::{AlphaMode, Product};
use crate::raster::{RasterStats, Transparency};
use crate::scene::camera::FOCAL_FACTOR;
use crate::scene::head::ear_point;
use crate::scene::head_scene::HeadScene;
use crate::scene::occluder::head_frame_distance;
use crate::scene::NEAR_CM;
use crate::vision::Face;

/// Auto-fit: frame width as a fraction of the face width (landmarks 234–454).
pub const AUTO_FIT_WIDTH: f32 = 0.88;
/// The bridge anchor sits this far (cm) in front of landmark 168.
pub const BRIDGE_OFFSET_CM: f32 = 0.4;
/// Parts of the frame more than this far (cm) behind its front are temples.
pub const HINGE_DEPTH_CM: f32 = 1.5;
/// The most a temple is turned at its hinge, degrees either way.
pub const MAX_DROOP_DEG: f32 = 25.0;

/// Glasses or sunglasses: decides how lenses are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eyewear {
    /// Clear lenses with a faint reflection.
    Glasses,
    /// Tinted lenses: the lens material's tint, else a default grey gradient.
    Sunglasses,
}

impl Eyewear {
    /// `glasses` or `sunglasses`.
    pub fn name(self) -> &'static str {
        self.category().as_str()
    }
}

impl Placer for Eyewear {
    type Placement = EyewearPlacement;

    fn category(&self) -> Category {
        match self {
            Eyewear::Glasses => Category::Glasses,
            Eyewear::Sunglasses => Category::Sunglasses,
        }
    }

    fn engine_name(&self) -> &'static str {
        "glasses-raster"
    }

    fn needs(&self) -> Needs {
        Needs {
            face: true,
            ..Needs::default()
        }
    }

    fn place(
        &self,
        person: &Person,
        product: &Product,
        options: &Options,
    ) -> Result<Placed<EyewearPlacement>, TryOnError> {
        let face = worn_face(person, Placer::category(self))?;
        prepare(&person.photo, face, product, *self, options)
    }

    fn metadata(
        &self,
        person: &Person,
        placed: &Placed<EyewearPlacement>,
        stats: &RasterStats,
    ) -> Result<serde_json::Value, TryOnError> {
        let face = worn_face(person, Placer::category(self))?;
        Ok(metadata(*self, placed, stats, face))
    }
}

/// How the product was scaled.
#[derive(Debug, Clone, PartialEq)]
pub enum Fit {
    /// The model follows the asset conventions: real units.
    RealUnits,
    /// The model does not: auto-fit to the face width, with the reason.
    AutoFit(String),
}

/// Where things landed, in image pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct EyewearPlacement {
    /// Real units or auto-fit.
    pub fit: Fit,
    /// Asset units → centimetres.
    pub scale_to_cm: f32,
    /// The focal length used (pixels).
    pub focal_px: f32,
    /// The product's anchor (bridge) projected.
    pub anchor_px: [f32; 2],
    /// Landmark 168.
    pub landmark_168_px: [f32; 2],
    /// The lens boxing centres (middle of each lens's bounding box) projected, image left
    /// first, when the product has BLEND lenses.
    pub lens_centres_px: Option<[[f32; 2]; 2]>,
    /// Eye centres from the landmarks (image left first).
    pub eye_centres_px: [[f32; 2]; 2],
    /// Face width (landmarks 234–454), pixels on the image.
    pub face_width_px: f32,
    /// Face width (landmarks 234–454), centimetres in the head frame (what auto-fit scales to).
    pub face_width_cm: f32,
    /// How far each temple was turned down at its hinge (degrees; the asset's −X side first),
    /// `None` for a frame without temples.
    pub temple_droop_deg: Option<[f32; 2]>,
    /// The region that was rendered: x0, y0, width, height.
    pub roi: [u32; 4],
    /// How the model was turned into the eyewear pose (across +X, up +Y, front +Z).
    pub pose: Pose,
    /// What happened to the glasses the person already wore.
    pub own_eyewear: OwnEyewear,
}

/// Decides the scale and the anchor; returns (fit, asset units → cm, asset-frame anchor).
///
/// Scale and anchor are decided apart: a frame 10–20 cm wide in metres, centimetres or
/// millimetres (tried in that order) is in real units
/// even when its origin is elsewhere, and an origin is the bridge only when it is centred
/// across the front, within the front's vertical band (20 %–95 % of its height from the
/// bottom) and near its front face. Otherwise the bridge is estimated on the front (its
/// horizontal centre, 15 % of its height above its middle), and the reason is reported.
pub fn fit_product(product: &Product, face_width_cm: f32) -> (Fit, f32, Vec3) {
    let (lo, hi) = product.bounds();
    let width = hi[0] - lo[0];
    // The front: the 20 % of the depth nearest +Z.
    let depth = hi[2] - lo[2];
    let zcut = hi[2] - 0.2 * depth.max(width * 0.1);
    let mut flo = Vec3::splat(f32::MAX);
    let mut fhi = Vec3::splat(f32::MIN);
    for p in product.primitives.iter().flat_map(|p| &p.positions) {
        if p[2] >= zcut {
            flo = flo.min(Vec3::from(*p));
            fhi = fhi.max(Vec3::from(*p));
        }
    }
    let fw = (fhi.x - flo.x).max(1e-9);
    let fh = fhi.y - flo.y;
    let unit = unit_to_cm(width, 10.0..=20.0);
    let metres = unit.is_some();
    let to_cm = unit.unwrap_or(100.0);
    let centred = (lo[0] + hi[0]).abs() * to_cm < 0.5;
    let in_band = flo.y + 0.2 * fh <= 0.0 && 0.0 <= flo.y + 0.95 * fh;
    let at_front = (-0.5..=3.0).contains(&(hi[2] * to_cm));
    let origin_is_bridge = centred && in_band && at_front;
    let estimated = Vec3::new(
        (flo.x + fhi.x) / 2.0,
        (flo.y + fhi.y) / 2.0 + 0.15 * fh,
        fhi.z - 0.05 * fh,
    );
    match (metres, origin_is_bridge) {
        (true, true) => (Fit::RealUnits, to_cm, Vec3::ZERO),
        (true, false) => (
            Fit::AutoFit(format!(
                "the origin is not at the bridge (centred on the front, {:.0} % of its height \
                 from the bottom); real units kept (frame width {width:.4} units read as {}), \
                 the bridge estimated on the front",
                (100.0 * -flo.y / fh.max(1e-9)).max(0.0),
                match to_cm {
                    k if k >= 100.0 => "metres",
                    k if k >= 1.0 => "centimetres",
                    _ => "millimetres",
                }
            )),
            to_cm,
            estimated,
        ),
        (false, _) => (
            Fit::AutoFit(format!(
                "frame width {width:.4} units is not 10–20 cm in metres, centimetres or \
                 millimetres"
            )),
            AUTO_FIT_WIDTH * face_width_cm / fw,
            estimated,
        ),
    }
}

/// The temple turn of one side: the hinge (y, z in the head frame) and the angle (radians,
/// positive turns the temple's far end down).
#[derive(Debug, Clone, Copy, PartialEq)]
struct TempleBend {
    hinge: Vec2,
    angle: f32,
}

impl TempleBend {
    /// Turns a head-frame point or direction of a temple about the hinge's x axis.
    fn point(&self, m: Vec3) -> Vec3 {
        let d = Vec2::new(m.y, m.z) - self.hinge;
        let (s, c) = self.angle.sin_cos();
        Vec3::new(
            m.x,
            self.hinge.x + d.x * c + d.y * s,
            self.hinge.y + d.y * c - d.x * s,
        )
    }

    fn dir(&self, n: Vec3) -> Vec3 {
        let (s, c) = self.angle.sin_cos();
        Vec3::new(n.x, n.y * c + n.z * s, n.z * c - n.y * s)
    }
}

/// Per side (−X first): how to turn the temples of a frame placed at `points` (head frame)
/// toward the ears, `None` when the frame has no temples (less than 4 cm deep).
fn temple_bends(points: &[Vec3], anchor_x: f32) -> Option<[TempleBend; 2]> {
    let front = points.iter().map(|p| p.z).fold(f32::MIN, f32::max);
    let back = points.iter().map(|p| p.z).fold(f32::MAX, f32::min);
    if front - back < 4.0 {
        return None;
    }
    let hinge_z = front - HINGE_DEPTH_CM;
    let bend = |side: f32| -> Option<TempleBend> {
        let temple: Vec<Vec3> = points
            .iter()
            .copied()
            .filter(|p| p.z < hinge_z && (p.x - anchor_x) * side > 0.0)
            .collect();
        let tip_z = temple.iter().map(|p| p.z).fold(f32::MAX, f32::min);
        if temple.is_empty() || hinge_z - tip_z < 3.0 {
            return None;
        }
        let mean_y = |lo: f32, hi: f32| {
            let ys: Vec<f32> = temple
                .iter()
                .filter(|p| p.z >= lo && p.z <= hi)
                .map(|p| p.y)
                .collect();
            ys.iter().sum::<f32>() / ys.len().max(1) as f32
        };
        let hinge = Vec2::new(mean_y(hinge_z - 1.0, hinge_z), hinge_z);
        let tip = Vec2::new(mean_y(tip_z, tip_z + 1.0), tip_z);
        let ear = ear_point(side)?;
        let now = (hinge.x - tip.x).atan2(hinge.y - tip.y);
        let want = (hinge.x - ear.y).atan2(hinge.y - ear.z);
        let limit = MAX_DROOP_DEG.to_radians();
        Some(TempleBend {
            hinge,
            angle: (want - now).clamp(-limit, limit),
        })
    };
    let none = TempleBend {
        hinge: Vec2::ZERO,
        angle: 0.0,
    };
    let (a, b) = (bend(-1.0), bend(1.0));
    (a.is_some() || b.is_some()).then(|| [a.unwrap_or(none), b.unwrap_or(none)])
}

/// Per side (−X first): the head-frame x of the temple's inner side between its hinge
/// (`hinge_z`) and the ear ([`ear_point`]), for the temple skull's near side
/// ([`crate::scene::occluder::temple_head`]); `None` when a side has no temple there.
fn temples_inner_x(points: &[Vec3], anchor_x: f32, hinge_z: f32) -> Option<[f32; 2]> {
    let side = |s: f32| -> Option<f32> {
        let ear_z = ear_point(s)?.z;
        points
            .iter()
            .filter(|p| p.z < hinge_z && p.z >= ear_z && (p.x - anchor_x) * s > 0.0)
            .map(|p| p.x)
            .reduce(|a, b| if s < 0.0 { a.max(b) } else { a.min(b) })
    };
    Some([side(-1.0)?, side(1.0)?])
}

/// Places `product` on `face` in a `photo` and builds the scene (always drawn: its
/// [`Placed::scene`] is `Some`).
pub fn prepare(
    photo: &RgbaImage,
    face: &Face,
    product: &Product,
    kind: Eyewear,
    options: &Options,
) -> Result<Placed<EyewearPlacement>, TryOnError> {
    let pose = pose::infer(product, PoseCategory::Eyewear);
    let canonical = pose.apply(product);
    let product = &canonical;
    // The wearer's own glasses off first (the photo untouched when none are removed).
    let (cleaned, own_eyewear) = take_off(
        photo,
        &face.landmarks,
        face.head_pose.as_ref().map(|h| h.yaw_pitch_roll_deg[0]),
        options.remove_own_eyewear,
        kind == Eyewear::Glasses,
    );
    let photo = cleaned.as_ref().unwrap_or(photo);
    let head = HeadScene::new(photo, face)?;
    let cam = head.cam();
    let lm = head.landmarks();
    let face_width_px = dist_xy(lm[234], lm[454]);
    let face_width_cm = head_frame_distance(face, cam, 234, 454);
    let (fit, k, origin) = fit_product(product, face_width_cm);
    let anchor = cam.anchor_model() + Vec3::new(0.0, 0.0, BRIDGE_OFFSET_CM);
    let to_model = |p: Vec3| anchor + k * (p - origin);

    let placed: Vec<Vec3> = product
        .primitives
        .iter()
        .flat_map(|p| &p.positions)
        .map(|q| to_model(Vec3::from(*q)))
        .collect();
    let bends = temple_bends(&placed, anchor.x);
    let hinge_z = placed.iter().map(|p| p.z).fold(f32::MIN, f32::max) - HINGE_DEPTH_CM;
    let bend_of = |m: Vec3| {
        bends
            .filter(|_| m.z < hinge_z)
            .map(|b| b[usize::from(m.x >= anchor.x)])
    };

    let mut builder = head
        .builder(product)
        .transparency(transparency(kind, product))
        .supersampling(options.supersampling)
        .contact_shadow(options.shadow_strength, cam.scale());
    builder.product.push_product(product, |q, n| {
        let m = to_model(q);
        match bend_of(m) {
            Some(b) => (cam.to_camera(b.point(m)), cam.dir_to_camera(b.dir(n))),
            None => (cam.to_camera(m), cam.dir_to_camera(n)),
        }
    });
    let temples_x = bends.and_then(|_| temples_inner_x(&placed, anchor.x, hinge_z));
    builder.occluders.push(head.temple_occluder(temples_x));

    // Lens boxing centres: the bounding box of each side's lens vertices (asset x < 0, ≥ 0).
    let mut lens_box = [(Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)); 2];
    for p in &product.primitives {
        let blend = product
            .materials
            .get(p.material)
            .is_some_and(|m| m.alpha_mode == AlphaMode::Blend);
        if !blend {
            continue;
        }
        for q in &p.positions {
            let m = to_model(Vec3::from(*q));
            if cam.to_camera(m).z < NEAR_CM {
                continue;
            }
            let b = &mut lens_box[usize::from(q[0] - origin.x >= 0.0)];
            *b = (b.0.min(m), b.1.max(m));
        }
    }
    let mut lens_centres_px = lens_box
        .iter()
        .all(|b| b.0.x <= b.1.x)
        .then(|| lens_box.map(|b| cam.project_model((b.0 + b.1) / 2.0).to_array()));
    if let Some(c) = lens_centres_px.as_mut() {
        if c[0][0] > c[1][0] {
            c.swap(0, 1);
        }
    }
    let eye = |a: usize, b: usize| [(lm[a][0] + lm[b][0]) / 2.0, (lm[a][1] + lm[b][1]) / 2.0];
    let mut eyes = [eye(33, 133), eye(362, 263)];
    if eyes[0][0] > eyes[1][0] {
        eyes.swap(0, 1);
    }
    let scene = builder.build()?;
    Ok(Placed {
        placement: EyewearPlacement {
            fit,
            scale_to_cm: k,
            focal_px: cam.focal(),
            anchor_px: cam.project_model(to_model(origin)).to_array(),
            landmark_168_px: [lm[168][0], lm[168][1]],
            lens_centres_px,
            eye_centres_px: eyes,
            face_width_px,
            face_width_cm,
            temple_droop_deg: bends.map(|b| b.map(|t| t.angle.to_degrees())),
            roi: scene.roi,
            pose,
            own_eyewear,
        },
        scene: Some(scene),
        photo: cleaned,
    })
}

/// Clear lenses for glasses; for sunglasses the lens material's tint when it has one (a BLEND
/// material that is visibly coloured or dark), else the default gradient.
fn transparency(kind: Eyewear, product: &Product) -> Transparency {
    match kind {
        Eyewear::Glasses => Transparency::Clear,
        Eyewear::Sunglasses => {
            let tinted = product.materials.iter().any(|m| {
                let c = m.base_color;
                let lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
                m.alpha_mode == AlphaMode::Blend && c[3] >= 0.3 && lum < 0.8
            });
            if tinted {
                Transparency::Material
            } else {
                Transparency::DefaultGradient
            }
        }
    }
}

/// Result metadata (JSON) for a placement and a render's counts.
pub fn metadata(
    kind: Eyewear,
    placed: &Placed<EyewearPlacement>,
    stats: &RasterStats,
    face: &Face,
) -> serde_json::Value {
    let p = &placed.placement;
    let s = placed.scene.as_ref();
    let (fit, reason) = match &p.fit {
        Fit::RealUnits => ("real_units", None),
        Fit::AutoFit(r) => ("auto_fit", Some(r.clone())),
    };
    json!({
        "category": kind.name(),
        "fit": fit,
        "auto_fit_reason": reason,
        "pose": p.pose.to_json(),
        "scale_to_cm": p.scale_to_cm,
        "head_pose_deg": face.head_pose.as_ref().map(|h| json!({
            "yaw": h.yaw_pitch_roll_deg[0], "pitch": h.yaw_pitch_roll_deg[1], "roll": h.yaw_pitch_roll_deg[2],
        })),
        "focal_px": p.focal_px,
        "focal_assumption": format!("{FOCAL_FACTOR} × the longer image side"),
        "anchor_px": p.anchor_px,
        "landmark_168_px": p.landmark_168_px,
        "lens_centres_px": p.lens_centres_px,
        "eye_centres_px": p.eye_centres_px,
        "face_width_px": p.face_width_px,
        "face_width_cm": p.face_width_cm,
        "temple_droop_deg": p.temple_droop_deg,
        "roi": p.roi,
        "own_eyewear": p.own_eyewear.to_json(),
        "supersampling": s.map(|s| s.ss * s.ss),
        "lens": s.map(|s| match s.transparency {
            Transparency::Clear => "clear",
            Transparency::Material => "tinted_material",
            Transparency::DefaultGradient => "tinted_default_gradient",
        }),
        "lighting": s.map(|s| json!({
            "ambient": s.lighting.ambient,
            "key_dir": s.lighting.key_dir,
            "key_color": s.lighting.key_color,
        })),
        "occluded_fragments": stats.occluded_fragments,
        "drawn_fragments": stats.drawn_fragments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::product::eyewear::SampleFrame;

    #[test]
    fn samples_are_real_units_and_rescaled_copies_auto_fit() {
        let p = SampleFrame::RoundBlack.product();
        let (fit, k, o) = fit_product(&p, 15.0);
        assert_eq!(fit, Fit::RealUnits);
        assert_eq!(k, 100.0);
        assert_eq!(o, Vec3::ZERO);
        let mut cm = p.clone();
        for prim in &mut cm.primitives {
            for v in &mut prim.positions {
                *v = [v[0] * 100.0 + 3.0, v[1] * 100.0 - 2.0, v[2] * 100.0];
            }
        }
        let (fit, k, o) = fit_product(&cm, 15.0);
        assert!(matches!(fit, Fit::AutoFit(_)));
        // The front is ~13 cm wide (in file units): scaled to 0.88 × 15 cm, so k ≈ 1.
        assert!((0.9..1.1).contains(&k), "{k}");
        // The bridge is estimated within 3 mm of the true one (3, -2, 0).
        assert!((o.x - 3.0).abs() < 0.05 && (o.y + 2.0).abs() < 0.3, "{o:?}");
    }

    #[test]
    fn temples_turn_down_toward_the_ears_and_keep_their_length() {
        // A frame in the head frame: a front at z = 1 (y = 3.6) and two straight, level
        // temples 12 cm long at the hinge height.
        let mut pts = Vec::new();
        for x in [-7.0f32, 7.0] {
            for i in 0..=24 {
                pts.push(Vec3::new(x, 3.6, 1.0 - 0.5 * i as f32));
            }
        }
        pts.push(Vec3::new(0.0, 3.4, 1.2));
        let bends = temple_bends(&pts, 0.0).expect("a frame with temples");
        for (side, b) in [-1.0f32, 1.0].iter().zip(bends) {
            let deg = b.angle.to_degrees();
            assert!((5.0..=20.0).contains(&deg), "side {side}: droop {deg}°");
            let tip = b.point(Vec3::new(7.0 * side, 3.6, -11.0));
            let ear = ear_point(*side).unwrap();
            // The tip comes down to the ear's height, and the temple keeps its length.
            assert!(
                tip.y < 3.0 && tip.y > ear.y - 1.5,
                "tip {tip:?} ear {ear:?}"
            );
            let len = (Vec2::new(tip.y, tip.z) - b.hinge).length();
            let before = (Vec2::new(3.6, -11.0) - b.hinge).length();
            assert!((len - before).abs() < 1e-3);
        }
        // A flat front (no temples) is left alone.
        let flat: Vec<Vec3> = (0..10)
            .map(|i| Vec3::new(i as f32 - 5.0, 3.0, 1.0))
            .collect();
        assert!(temple_bends(&flat, 0.0).is_none());
    }

    #[test]
    fn the_temples_inner_sides_are_read_between_hinge_and_ear() {
        // Temples at x = ±7 (inner side), 3 mm thick, converging to ±6 behind the ear.
        let mut pts = Vec::new();
        for side in [-1.0f32, 1.0] {
            for i in 0..=24 {
                let z = 1.0 - 0.5 * i as f32;
                let behind = z < ear_point(side).unwrap().z - 0.5;
                let x = if behind { 6.0 } else { 7.0 };
                pts.push(Vec3::new(side * x, 3.6, z));
                pts.push(Vec3::new(side * (x + 0.3), 3.6, z));
            }
            // The lens rim at the front reaches further in: not a temple.
            pts.push(Vec3::new(side * 1.0, 3.6, 2.0));
        }
        let hinge_z = 2.0 - HINGE_DEPTH_CM;
        let x = temples_inner_x(&pts, 0.0, hinge_z).expect("both temples");
        assert_eq!(x, [-7.0, 7.0]);
        // A frame without temples on one side has none to read.
        let one: Vec<Vec3> = pts.iter().copied().filter(|p| p.x > 0.0).collect();
        assert!(temples_inner_x(&one, 0.0, hinge_z).is_none());
    }
}
