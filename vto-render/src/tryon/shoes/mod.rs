//! Shoes: one 3D shoe model on each visible foot of a full-body photo.
//!
//! 1. **Feet** ([`feet`]): a camera matched to the photo, a level floor, and each foot's
//!    pose from pose keypoints 27–32 (heel's floor point, heading heel → toe, scale from the
//!    legs). A foot that is out of the frame or not visible gets no shoe; with no foot
//!    visible the job fails (`processing_failed`) saying so.
//! 2. **One model, two feet** ([`model`]): the model is a left or a right shoe (extras, else
//!    its shape); the other foot wears its mirror image. Side-view feet, whose length the
//!    keypoints measure well, scale the shoe by up to ±15–20 % to cover the foot.
//! 3. **Around the shoes**: the old shoes are cut out ([`old_shoe`]) and filled by the fill
//!    stage, the floor from the ground with its grain and the leg continued below the cut
//!    ([`hole_fill`], [`crate::fill`]); ([`ground`]) a contact shadow
//!    darkens the floor under each sole, and each shin is a depth-only
//!    occluder (trouser hems and ankles in front of the collar; a leg in front of the other
//!    foot hides it). Both shoes share one depth buffer, so one foot in front of the other
//!    hides it.
//! 4. **Light** from the legs and the floor around the feet ([`light::from_region`]), most
//!    of the floor's colour cast taken out of the key light (`ground_light`).

pub mod feet;
pub mod ground;
pub mod hole_fill;
pub mod model;
pub mod old_shoe;
pub mod on_leg;

use image::RgbaImage;
use serde_json::json;
use vto_core::Category;

use super::placer::{Placed, Placer};
use super::{Needs, Options, Person, TryOnError};
use crate::math::{Vec2, Vec3};
use crate::product::Product;
use crate::raster::{Lighting, RasterStats};
use crate::scene::{light, SceneBuilder};
use crate::vision::Body;
use feet::{FloorFrame, FootPose, Hidden, Side};
use model::{ShoeFit, SideSource};

/// The shoes category.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shoes;

impl Placer for Shoes {
    type Placement = ShoesPlacement;

    fn category(&self) -> Category {
        Category::Shoes
    }

    fn engine_name(&self) -> &'static str {
        "shoes-raster"
    }

    fn needs(&self) -> Needs {
        Needs {
            body: true,
            ..Needs::default()
        }
    }

    fn place(
        &self,
        person: &Person,
        product: &Product,
        options: &Options,
    ) -> Result<Placed<ShoesPlacement>, TryOnError> {
        let body = person.body.as_ref().ok_or_else(|| {
            TryOnError::NotFound(
                "no body was found in the person photo; shoes need a full-body photo with the \
                 feet visible"
                    .into(),
            )
        })?;
        prepare(&person.photo, body, product, options)
    }

    fn metadata(
        &self,
        _person: &Person,
        placed: &Placed<ShoesPlacement>,
        stats: &RasterStats,
    ) -> Result<serde_json::Value, TryOnError> {
        Ok(metadata(placed, stats))
    }
}

/// One foot that wears a shoe.
#[derive(Debug, Clone, PartialEq)]
pub struct ShodFoot {
    /// The foot's pose.
    pub pose: FootPose,
    /// Whether it wears the model's mirror image.
    pub mirrored: bool,
    /// The shoe's size against the model's (1 = as fitted).
    pub size: f32,
    /// The shoe's projected bounding box: x0, y0, x1, y1 (pixels).
    pub footprint_px: [f32; 4],
    /// The shoe's height above the floor (cm).
    pub top_cm: f32,
}

/// Where the shoes went (the scene and the photo to draw it on, with the old feet filled and
/// the contact shadows drawn, are the [`Placed`] around it).
#[derive(Debug, Clone)]
pub struct ShoesPlacement {
    /// Camera and floor.
    pub frame: FloorFrame,
    /// How the model was read.
    pub fit: ShoeFit,
    /// The feet that wear a shoe.
    pub feet: Vec<ShodFoot>,
    /// The feet that do not, and why.
    pub hidden: Vec<(Side, Hidden)>,
    /// Pixels of old feet filled from their surroundings.
    pub filled_px: usize,
    /// Those pixels per shod foot (in the order of [`ShoesPlacement::feet`]).
    pub filled_per_foot: Vec<usize>,
    /// The filled pixels (255) of the whole photo.
    pub filled_mask: image::GrayImage,
    /// Pixels darkened by the contact shadows.
    pub shadow_px: usize,
    /// Shin occluders built.
    pub legs: usize,
    /// The light.
    pub lighting: Lighting,
}

/// The shoe frame of one foot in camera space: the model point `q` (asset units) → camera.
struct FootFrame<'a> {
    fit: &'a ShoeFit,
    anchor: Vec3,
    x: Vec3,
    up: Vec3,
    forward: Vec3,
    mirror: f32,
    size: f32,
    /// The raised heel's pivot (the toe's floor point) and the pitch (radians, heel up).
    pivot: Vec3,
    pitch: f32,
}

impl FootFrame<'_> {
    /// Turns a camera-space direction about the shoe's x axis by the pitch (heel up).
    fn pitched(&self, v: Vec3) -> Vec3 {
        if self.pitch == 0.0 {
            return v;
        }
        let (sin, cos) = self.pitch.sin_cos();
        let k = self.x;
        v * cos + k.cross(v) * sin + k * k.dot(v) * (1.0 - cos)
    }

    fn shoe(&self, q: Vec3) -> Vec3 {
        let m = self.fit.point(q) * self.size;
        Vec3::new(m.x * self.mirror, m.y, m.z)
    }

    fn point(&self, q: Vec3) -> Vec3 {
        let m = self.shoe(q);
        let flat = self.anchor + self.x * m.x + self.up * m.y + self.forward * m.z;
        self.pivot + self.pitched(flat - self.pivot)
    }

    fn dir(&self, n: Vec3) -> Vec3 {
        let d = self.fit.dir(n);
        self.pitched(self.x * d.x * self.mirror + self.up * d.y + self.forward * d.z)
            .normalize_or_zero()
    }
}

/// The shoe's back sits this far (cm) behind the heel keypoint's floor point.
pub const HEEL_BACK_CM: f32 = 0.8;

/// Places `product` on the visible feet of `body` in `photo` and builds the scene (always
/// drawn: its [`Placed::scene`] and [`Placed::photo`] are `Some`).
pub fn prepare(
    photo: &RgbaImage,
    body: &Body,
    product: &Product,
    options: &Options,
) -> Result<Placed<ShoesPlacement>, TryOnError> {
    let (w, h) = (photo.width(), photo.height());
    let mut hidden = Vec::new();
    for side in [Side::Left, Side::Right] {
        if let Err(why) = feet::visible(body, side, (w, h)) {
            hidden.push((side, why));
        }
    }
    if hidden.len() == 2 {
        let why: Vec<String> = hidden
            .iter()
            .map(|(s, h)| match h {
                Hidden::OutOfFrame => format!("the {} foot is out of the frame", s.name()),
                Hidden::LowVisibility(v) => {
                    format!("the {} foot is not visible (visibility {v:.2})", s.name())
                }
            })
            .collect();
        return Err(TryOnError::NotFound(format!(
            "no foot is visible in the person photo ({}); shoes need a full-body photo with \
             the feet in it",
            why.join(", ")
        )));
    }
    let frame = FloorFrame::new(body, w, h).ok_or_else(|| {
        TryOnError::NotFound(
            "the body's legs and torso are not visible enough to measure it; shoes need a \
             full-body photo"
                .into(),
        )
    })?;
    let mut poses = Vec::new();
    for side in [Side::Left, Side::Right] {
        if let Ok(p) = feet::foot(body, &frame, side, (w, h)) {
            poses.push(p);
        }
    }
    let fit = model::fit(product);
    let mut out = photo.clone();
    let erased = match body.mask.as_ref() {
        Some(m) => old_shoe::erase_old_feet(&mut out, m, &poses, frame.px_per_cm),
        None => old_shoe::Erased {
            per_foot: vec![0; poses.len()],
            mask: image::GrayImage::new(w, h),
        },
    };
    let region = feet_region(&poses, &frame, w, h);
    let lighting = ground_light(light::from_region(&out, region, body.mask.as_ref()));

    let mut builder = SceneBuilder::new(frame.camera, w, h, product)
        .lighting(lighting)
        .supersampling(options.supersampling)
        .contact_shadow(0.0, frame.px_per_cm);
    let mut shod = Vec::new();
    let mut soles = Vec::new();
    for pose in &poses {
        // A right model on the right foot as it is; on the left foot mirrored, and so on.
        let mirrored = (pose.side == Side::Right) != fit.right;
        let side_view = pose.heading.x.abs();
        let measured = ((pose.length_cm + 2.5) / fit.length_cm.max(1.0)).clamp(0.85, 1.2);
        let size = 1.0 + side_view * side_view * (measured - 1.0);
        let up = frame.up();
        let ff = FootFrame {
            fit: &fit,
            anchor: pose.heel - pose.heading * HEEL_BACK_CM,
            x: up.cross(pose.heading),
            up,
            forward: pose.heading,
            mirror: if mirrored { -1.0 } else { 1.0 },
            size,
            pivot: pose.toe,
            pitch: pose.pitch_deg.to_radians(),
        };
        let before = builder.product.positions.len();
        builder
            .product
            .push_product(product, |q, n| (ff.point(q), ff.dir(n)));
        let mut lo = Vec2::splat(f32::MAX);
        let mut hi = Vec2::splat(f32::MIN);
        let mut sole = Vec::new();
        let mut top_cm = 0.0f32;
        let mut k = 0usize;
        for prim in &product.primitives {
            for q in &prim.positions {
                let c = builder.product.positions[before + k];
                k += 1;
                let p = frame.camera.project(c);
                lo = lo.min(p);
                hi = hi.max(p);
                let m = ff.shoe(Vec3::from(*q));
                top_cm = top_cm.max(m.y);
                // The contact shadow lies under the sole where it touches the floor (a
                // raised heel's sole is in the air).
                let grounded = pose.pitch_deg == 0.0 || frame.floor_y - c.y < 1.5;
                if m.y < 1.0 && k % 3 == 0 && grounded {
                    sole.push(p);
                }
            }
        }
        soles.push(sole);
        shod.push(ShodFoot {
            pose: pose.clone(),
            mirrored,
            size,
            footprint_px: [lo.x, lo.y, hi.x, hi.y],
            top_cm,
        });
    }
    let light_x = lighting.key_dir[0];
    let shadow_px = ground::contact_shadow(
        &mut out,
        &soles,
        frame.px_per_cm,
        light_x,
        (options.shadow_strength * 1.6).min(0.7),
    );
    let mut legs = 0;
    for (pose, foot) in poses.iter().zip(&shod) {
        if let Some(mesh) = ground::leg(pose, &frame, body.mask.as_ref(), foot.top_cm) {
            builder.occluders.push(mesh);
            legs += 1;
        }
    }
    let scene = builder.build()?;
    Ok(Placed {
        scene: Some(scene),
        photo: Some(out),
        placement: ShoesPlacement {
            frame,
            fit,
            feet: shod,
            hidden,
            filled_px: erased.total(),
            filled_per_foot: erased.per_foot,
            filled_mask: erased.mask,
            shadow_px,
            legs,
            lighting,
        },
    })
}

/// How much of the feet region's colour cast the key light keeps (the ambient keeps
/// [`GROUND_AMBIENT_TINT`]): see `ground_light`.
pub const GROUND_KEY_TINT: f32 = 0.25;
/// How much of the feet region's colour cast the ambient light keeps.
pub const GROUND_AMBIENT_TINT: f32 = 0.6;

/// The light around the feet with the ground's colour taken mostly out of the key: the
/// region is mostly floor, and a floor's colour is mostly its own (grass, sand, a carpet),
/// not the light's. The sun or a lamp over green grass lights a white shoe white, the grass
/// tints only what it bounces (the ambient). With the whole cast a white sneaker on the
/// grass of the hugging-dog photo rendered pale green.
fn ground_light(l: Lighting) -> Lighting {
    let keep = |c: [f32; 3], k: f32| {
        let y = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
        c.map(|v| y + k * (v - y))
    };
    Lighting {
        ambient: keep(l.ambient, GROUND_AMBIENT_TINT),
        key_color: keep(l.key_color, GROUND_KEY_TINT),
        ..l
    }
}

/// The legs and floor around the feet: from 30 cm above the ankles to the bottom of the
/// photo, 20 cm either side of the feet.
fn feet_region(poses: &[FootPose], frame: &FloorFrame, w: u32, h: u32) -> [u32; 4] {
    let s = frame.px_per_cm;
    let (lo, hi) = poses.iter().fold(
        (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
        |(lo, hi), p| {
            let l = p.ankle_px.min(p.heel_px).min(p.toe_px);
            let u = p.ankle_px.max(p.heel_px).max(p.toe_px);
            (lo.min(l), hi.max(u))
        },
    );
    let clamp = |v: f32, max: u32| v.clamp(0.0, max as f32) as u32;
    [
        clamp(lo.x - 20.0 * s, w),
        clamp(lo.y - 30.0 * s, h),
        clamp(hi.x + 20.0 * s, w),
        clamp(hi.y + 10.0 * s, h),
    ]
}

/// Result metadata (JSON) for a placement and a render's counts.
pub fn metadata(placed: &Placed<ShoesPlacement>, stats: &RasterStats) -> serde_json::Value {
    let p = &placed.placement;
    let s = placed.scene.as_ref();
    let f = &p.fit;
    let feet: Vec<serde_json::Value> = p
        .feet
        .iter()
        .zip(&p.filled_per_foot)
        .map(|(s, &filled)| {
            let q = &s.pose;
            let heading_from = match q.heading_weight {
                w if w >= 0.99 => "keypoints",
                w if w <= 0.01 => "body",
                _ => "keypoints_and_body",
            };
            json!({
                "side": q.side.name(),
                "shoe": true,
                "placed": if q.pitch_deg > 0.0 { "raised_heel" } else { "flat" },
                "heading_from": heading_from,
                "mirrored": s.mirrored,
                "visibility": q.visibility,
                "fit_confidence": q.confidence,
                "ankle_px": q.ankle_px.to_array(),
                "heel_px": q.heel_px.to_array(),
                "toe_px": q.toe_px.to_array(),
                "moved_onto_leg_px": q.leg_shift_px.to_array(),
                "yaw_deg": q.yaw_deg(),
                "pitch_deg": q.pitch_deg,
                "heel_raise_cm": q.heel_raise_cm,
                "measured_length_cm": q.length_cm,
                "size": s.size,
                "footprint_px": s.footprint_px,
                "old_shoe_filled_px": filled,
            })
        })
        .chain(p.hidden.iter().map(|(side, why)| {
            let (reason, vis, text) = match why {
                Hidden::OutOfFrame => (
                    "out_of_frame",
                    None,
                    "its ankle, heel or toe keypoint is outside the photo".to_string(),
                ),
                Hidden::LowVisibility(v) => (
                    "not_visible",
                    Some(*v),
                    format!(
                        "hidden (behind the other leg, a garment or the frame's edge): its \
                         keypoints' visibility {v:.2} is under {:.2}",
                        feet::MIN_VISIBILITY
                    ),
                ),
            };
            json!({"side": side.name(), "shoe": false, "reason": reason, "why": text,
                   "visibility": vis})
        }))
        .collect();
    let confidence = p
        .feet
        .iter()
        .map(|s| s.pose.confidence)
        .fold(1.0f32, f32::min);
    json!({
        "category": "shoes",
        "feet": feet,
        "fit_confidence": confidence,
        "model": {
            "pose": f.pose.to_json(),
            "foot": if f.right { "right" } else { "left" },
            "foot_from": match f.side_source {
                SideSource::Extras => "extras",
                SideSource::Shape => "shape",
                SideSource::Assumed => "assumed",
            },
            "fit": if f.auto_fit.is_some() { "auto_fit" } else { "real_units" },
            "auto_fit_reason": f.auto_fit,
            "scale_to_cm": f.scale_to_cm,
            "length_cm": f.length_cm,
        },
        "camera": {
            "focal_px": p.frame.camera.focal,
            "px_per_cm": p.frame.px_per_cm,
            "scale_from": p.frame.scale_source,
            "view_down_deg": p.frame.view_down_deg,
            "focal_from": p.frame.focal_source,
            "assumption": "level camera, flat floor, adult proportions (leg 85 cm, foot 25 cm)",
        },
        "old_feet_filled_px": p.filled_px,
        "old_feet_fill": "patchmatch",
        "contact_shadow_px": p.shadow_px,
        "leg_occluders": p.legs,
        "roi": s.map(|s| s.roi),
        "supersampling": s.map(|s| s.ss * s.ss),
        "lighting": {
            "ambient": p.lighting.ambient,
            "key_dir": p.lighting.key_dir,
            "key_color": p.lighting.key_color,
        },
        "occluded_fragments": stats.occluded_fragments,
        "drawn_fragments": stats.drawn_fragments,
    })
}
