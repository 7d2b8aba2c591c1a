//! Hats (`hats`): caps, brimmed hats and beanies, their head opening fitted to the head.
//!
//! # The head
//! The skull under the hair is an ellipsoid in the head frame of [`crate::scene::camera`]
//! ([`fit::Skull`]): as broad as [`fit::HEAD_BREADTH_PER_FACE_WIDTH`] × the face width
//! (landmarks 234–454, measured in 3D so a turned head does not shrink it), as long as
//! [`fit::HEAD_LENGTH_PER_FACE_WIDTH`] × it, its front through the forehead top (landmark 10,
//! taken into the head frame through the head pose), its top half a face height above it.
//! Hair adds its thickness on every side: measured on the selfie-segmentation person mask
//! ([`hair_thickness`]: the silhouette's width at the band against the skull's), else
//! [`fit::HAIR_CM`].
//!
//! # Placement
//! A hat's opening rests on a band round the hair ([`fit::band`]): for caps and brimmed hats
//! from just under landmark 10 at the front (the visor or brim then sits above the brows) to
//! the skull's mid height at the back; beanies sit lower. The opening's centre goes to the
//! band's centre, its plane tilted like the band (front up), and the hat is scaled so that
//! its outer breadth just above the opening equals the band's breadth on the hair (hats
//! come in sizes, the shop shows the one that fits), its length the band's length within
//! 0.9–1.25 × that scale, its height stretched (by at most [`fit::MAX_CROWN_STRETCH`]) when
//! the crown's top would lie inside the skull or below the hair standing on top of it
//! ([`fit::crown_scale`], [`hair_above`]: a crown inside the head is hidden, leaving only the
//! visor or brim; one under thick hair leaves the hair showing above it). Everything then
//! turns with the head.
//!
//! The kind (which sets the band) comes from the request's `product_kind` when it names one,
//! else the model's extras, its names or its shape ([`fit::read_model`]); a model that does not follow the conventions of `docs/products.md`
//! is auto-fitted (its opening at the bottom of its bounding box, a rim sloping from back to
//! front levelled first: [`fit::MIN_OPENING_TILT`]), and the metadata says so.
//!
//! # The wearer's own hat
//! A hat the person already wears is detected and, as the request's `remove_own_hat` says,
//! taken off first ([`own_hat`]); the new hat is then put on the cleaned photo, resting on
//! the assumed hair ([`fit::HAIR_CM`]: the person mask measured the old hat, not the hair).
//!
//! # Occlusion and shadow
//! The skull (under the hair) and the face's head occluder hide the back of the
//! crown and the brim behind the head; the hat's contact shadow, wider than the eyewear's,
//! darkens the forehead and the hair under the brim.

pub mod fit;
pub mod own_hat;

use image::RgbaImage;
use serde_json::json;
use vto_core::Category;

use super::placer::{worn_face, Placed, Placer};
use super::{Needs, Options, Person, TryOnError};
use crate::math::{Mat3, Vec3};
use crate::product::pose::{self, Pose, PoseCategory};
use crate::product::Product;
use crate::raster::{RasterStats, Transparency};
use crate::scene::camera::{HeadCamera, NoHeadPose};
use crate::scene::head_scene::HeadScene;
use crate::scene::occluder;
use crate::vision::{Face, Mask};
use fit::{
    band, crown_scale, read_model, HatKind, KindSource, Skull, HAIR_CM, HAIR_RANGE_CM,
    HEAD_BREADTH_PER_FACE_WIDTH,
};
use own_hat::outline::head_outline;
use own_hat::{take_off, OwnHat};

/// The share of the hair's measured thickness a hat rests on (see [`hair_thickness`]).
pub const HAIR_SHARE: f32 = 0.6;

/// The hat's contact shadow spreads this many times farther than the eyewear's.
pub const SHADOW_SPREAD: f32 = 2.5;

/// How far (cm) the skull occluder lies inside the skull estimated from the face. The
/// occluder is there to hide the back of the crown and the brim behind the head; the skull
/// is an ellipsoid, rounder at the forehead than a head, and a real hat's front wall tapers
/// to its own shape: at the full estimate the skull poked through the front of every real
/// hat tried (a beanie, a cap, a top hat) on the cowboy, the painted-face woman and the
/// bowtie man, and the forehead — or the flat fill of a removed hat — showed where the
/// hat's front should be. One centimetre inside, the fronts show and the backs stay hidden
/// (a hat's back is a head's length behind). The face's head occluder keeps its size: taken
/// in too, it let a cap's side walls show as dark wedges over the temples.
pub const SKULL_OCCLUDER_INSET_CM: f32 = 1.0;

/// The `hats` category.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hats;

impl Placer for Hats {
    type Placement = HatPlacement;

    fn category(&self) -> Category {
        Category::Hats
    }

    fn engine_name(&self) -> &'static str {
        "hats-raster"
    }

    fn needs(&self) -> Needs {
        Needs {
            face: true,
            person_mask: true,
            ..Needs::default()
        }
    }

    fn place(
        &self,
        person: &Person,
        product: &Product,
        options: &Options,
    ) -> Result<Placed<HatPlacement>, TryOnError> {
        let face = worn_face(person, Category::Hats)?;
        prepare(&person.photo, face, person.mask.as_ref(), product, options)
    }

    fn metadata(
        &self,
        person: &Person,
        placed: &Placed<HatPlacement>,
        stats: &RasterStats,
    ) -> Result<serde_json::Value, TryOnError> {
        let face = worn_face(person, Category::Hats)?;
        Ok(metadata(placed, stats, face))
    }
}

/// Where the hat landed, in image pixels unless said otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct HatPlacement {
    /// The kind and where it came from.
    pub kind: (HatKind, KindSource),
    /// `None` for a model that follows the conventions, else why it was auto-fitted.
    pub auto_fit: Option<String>,
    /// Asset units → centimetres.
    pub scale_to_cm: f32,
    /// The crown's height scale over [`Self::scale_to_cm`] (1: none; more when a crown too
    /// low for the head was stretched to reach out of the skull and the hair on top,
    /// [`fit::crown_scale`]).
    pub crown_stretch: f32,
    /// Hair between the skull and the hat (cm), measured on the person mask or assumed.
    pub hair_cm: f32,
    /// Hair above the skull's top the crown clears (cm, [`hair_above`]).
    pub hair_above_cm: f32,
    /// The band's tilt, front up (degrees).
    pub tilt_deg: f32,
    /// The centre of the head opening, projected.
    pub opening_centre_px: [f32; 2],
    /// The front of the opening (where it crosses the forehead's midline, on the hair),
    /// projected.
    pub opening_front_px: [f32; 2],
    /// The opening's ends (±x of the hat frame), projected.
    pub opening_ends_px: [[f32; 2]; 2],
    /// The head's breadth expected from the face: [`HEAD_BREADTH_PER_FACE_WIDTH`] × the 3D
    /// distance of landmarks 234–454, pixels.
    pub head_width_px: f32,
    /// The face height (landmarks 10–152 in 3D), pixels.
    pub face_height_px: f32,
    /// The region that was rendered: x0, y0, width, height.
    pub roi: [u32; 4],
    /// How the model was turned into the hat pose (crown up +Y, visor toward +Z).
    pub pose: Pose,
    /// What happened to the hat the person already wore.
    pub own_hat: OwnHat,
}

fn dist3(a: [f32; 3], b: [f32; 3]) -> f32 {
    (Vec3::from(a) - Vec3::from(b)).length()
}

/// Landmark `i` of `face` in the head frame (cm), through the head pose.
fn landmark_in_head_frame(face: &Face, i: usize) -> Result<Vec3, NoHeadPose> {
    let pose = face.head_pose.as_ref().ok_or(NoHeadPose)?;
    let l = face.landmarks.get(i).ok_or(NoHeadPose)?;
    let r = Mat3::from_cols_array_2d(&pose.rotation).transpose();
    let p = Vec3::new(l[0], -l[1], -l[2]) - Vec3::from(pose.translation);
    Ok(r.transpose() * p / pose.scale)
}

/// Rotation about x by `-tilt`: the hat frame's front (+Z) turns up by `tilt`.
fn tilt_rotation(tilt: f32) -> Mat3 {
    Mat3::from_rotation_x(-tilt)
}

/// How thick the hair is round the head (cm): along the image line through the skull's
/// centre at the band's height (1.5 cm under the forehead top), in the direction of the
/// head's x axis, how far the person mask reaches beyond the skull's projected outline on
/// each side; [`HAIR_SHARE`] of the mean of the two (a hat presses the hair down, and the
/// mask bleeds a little), within [`HAIR_RANGE_CM`]. `None` without a usable mask or when the
/// line leaves the photo inside the silhouette.
pub fn hair_thickness(mask: &Mask, cam: &HeadCamera, skull: &Skull, forehead: Vec3) -> Option<f32> {
    if mask.data.len() != (mask.width as usize) * (mask.height as usize) {
        return None;
    }
    let y = forehead.y - 1.5;
    let centre = Vec3::new(skull.centre.x, y, skull.centre.z);
    let c = cam.project_model(centre);
    let e = cam.project_model(centre + Vec3::new(1.0, 0.0, 0.0)) - c;
    let dir = e.try_normalize()?;
    // The skull's outline along `dir`: its horizontal section at y, projected.
    let half = skull.breadth_at(y) / 2.0;
    let depth = half * skull.radii.z / skull.radii.x;
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for i in 0..64 {
        let a = i as f32 / 64.0 * std::f32::consts::TAU;
        let p = centre + Vec3::new(half * a.cos(), 0.0, depth * a.sin());
        let t = (cam.project_model(p) - c).dot(dir);
        lo = lo.min(t);
        hi = hi.max(t);
    }
    let mut beyond = [0.0f32; 2];
    for (k, (sign, outline)) in [(-1.0f32, -lo), (1.0, hi)].into_iter().enumerate() {
        let last_in = mask_reach(mask, c, dir * sign, (3.0 * outline) as i32)?;
        beyond[k] = last_in as f32 - outline;
    }
    let hair = HAIR_SHARE * (beyond[0] + beyond[1]) / 2.0 / cam.scale();
    Some(hair.clamp(HAIR_RANGE_CM.0, HAIR_RANGE_CM.1))
}

/// The most hair above the skull's top a crown is raised over (cm, after [`HAIR_SHARE`]).
pub const TOP_HAIR_MAX_CM: f32 = 4.0;

/// How high the hair stands above the skull's top (cm): along the image line from the
/// skull's top in the direction of the head's up axis, how far the person mask reaches beyond
/// it; [`HAIR_SHARE`] of that (a hat presses the hair down), at most [`TOP_HAIR_MAX_CM`].
/// 0 where the mask ends below the skull's top; `None` without a usable mask or when the
/// line leaves the photo inside the silhouette. Thick curly hair or a bun stands several
/// centimetres above the skull, where the sides measured by [`hair_thickness`] hold less: a
/// crown that only clears the skull left the hair showing above the cap.
pub fn hair_above(mask: &Mask, cam: &HeadCamera, skull: &Skull) -> Option<f32> {
    if mask.data.len() != (mask.width as usize) * (mask.height as usize) {
        return None;
    }
    let top = skull.centre + Vec3::new(0.0, skull.radii.y, 0.0);
    let c = cam.project_model(top);
    let dir = (cam.project_model(top + Vec3::new(0.0, 1.0, 0.0)) - c).try_normalize()?;
    let reach = (TOP_HAIR_MAX_CM / HAIR_SHARE * cam.scale()).ceil() as i32 + 3;
    let last_in = mask_reach(mask, c, dir, reach)?;
    Some((HAIR_SHARE * last_in as f32 / cam.scale()).min(TOP_HAIR_MAX_CM))
}

/// How many whole steps of `dir` from `from` the person `mask` (above one half) reaches,
/// looking at most `steps` steps out and across gaps of up to two pixels; `None` when the
/// line leaves the photo first.
fn mask_reach(
    mask: &Mask,
    from: crate::math::Vec2,
    dir: crate::math::Vec2,
    steps: i32,
) -> Option<i32> {
    let inside = |p: crate::math::Vec2| {
        let (x, y) = (p.x.round(), p.y.round());
        if x < 0.0 || y < 0.0 || x >= mask.width as f32 || y >= mask.height as f32 {
            return None;
        }
        Some(mask.data[y as usize * mask.width as usize + x as usize] > 0.5)
    };
    let (mut outside, mut last_in) = (0, 0);
    for step in 0..steps {
        if inside(from + dir * step as f32)? {
            last_in = step;
            outside = 0;
        } else {
            outside += 1;
            if outside >= 3 {
                break;
            }
        }
    }
    Some(last_in)
}

/// Places `product` on `face` in `photo` (whose person mask, when given, measures the hair)
/// and builds the scene (always drawn: its [`Placed::scene`] is `Some`).
pub fn prepare(
    photo: &RgbaImage,
    face: &Face,
    mask: Option<&Mask>,
    product: &Product,
    options: &Options,
) -> Result<Placed<HatPlacement>, TryOnError> {
    let head = HeadScene::new(photo, face)?;
    let cam = head.cam();
    let lm = head.landmarks();
    let s = cam.scale();
    let face_width_px = dist3(lm[234], lm[454]);
    let face_height_px = dist3(lm[10], lm[152]);
    let forehead = landmark_in_head_frame(face, 10)?;
    let centre_x =
        (landmark_in_head_frame(face, 234)?.x + landmark_in_head_frame(face, 454)?.x) / 2.0;
    let skull = Skull::new(face_width_px / s, face_height_px / s, forehead, centre_x);
    let pose = pose::infer(product, PoseCategory::Hat);
    let canonical = pose.apply(product);
    let product = &canonical;
    let mut model = read_model(product)
        .ok_or_else(|| TryOnError::BadProduct("the hat model has no extent".into()))?;
    // The request's product_kind overrides what the model says.
    if let Some(k) = options.product_kind.and_then(HatKind::from_request) {
        model.kind = (k, KindSource::Request);
    }
    let measured = mask
        .and_then(|m| hair_thickness(m, cam, &skull, forehead))
        .unwrap_or(HAIR_CM);
    // The wearer's own hat off first (the photo untouched when none is removed).
    let outline = head_outline(cam, &skull.grown(measured));
    let (cleaned, own_hat) = take_off(photo, lm, mask, &outline, options.remove_own_hat);
    // Under a removed hat the mask measured the hat, not the hair.
    let hair = if own_hat.removed { HAIR_CM } else { measured };
    let cleaned_head = cleaned
        .as_ref()
        .map(|c| HeadScene::new(c, face))
        .transpose()?;
    let head = cleaned_head.as_ref().unwrap_or(&head);
    let band = band(model.kind.0, &skull, forehead, hair);
    // The hair above the skull's top (none measured under a removed hat).
    let hair_top = if own_hat.removed {
        0.0
    } else {
        mask.and_then(|m| hair_above(m, cam, &skull)).unwrap_or(0.0)
    };
    let reach = Skull {
        centre: skull.centre,
        radii: skull.radii + Vec3::new(0.0, hair_top, 0.0),
    };
    // Breadth to the head's; the length follows the head's too, within 0.9–1.25 × the
    // breadth's scale (a hat stretches a little front to back, it does not deform).
    let k = band.breadth / model.breadth.max(1e-9);
    let kz = (band.length / model.length.max(1e-9)).clamp(0.9 * k, 1.25 * k);
    let rot = tilt_rotation(band.tilt);
    // The height: a crown too low to reach out of the skull and the hair on top is
    // stretched (else hidden, or the hair shows above it).
    let ky = crown_scale(k, model.crown, band.centre, rot * Vec3::Y, &reach);
    let scale = Vec3::new(k, ky, kz);
    let level = tilt_rotation(-model.opening_tilt);
    let to_model = |q: Vec3| band.centre + rot * ((level * (q - model.origin)) * scale);

    let mut builder = head
        .builder(product)
        .transparency(Transparency::Material)
        .supersampling(options.supersampling)
        .contact_shadow(options.shadow_strength, s * SHADOW_SPREAD);
    builder.product.push_product(product, |q, n| {
        let n = ((level * n) / scale).normalize_or(n);
        (cam.to_camera(to_model(q)), cam.dir_to_camera(rot * n))
    });
    let under = skull.grown(-SKULL_OCCLUDER_INSET_CM);
    builder
        .occluders
        .push(occluder::ellipsoid(cam, under.centre, under.radii));
    builder.occluders.push(head.head_occluder());

    let half = Vec3::new(band.breadth / 2.0, 0.0, 0.0);
    let ends = [
        cam.project_model(band.centre - rot * half).to_array(),
        cam.project_model(band.centre + rot * half).to_array(),
    ];
    let scene = builder.build()?;
    Ok(Placed {
        placement: HatPlacement {
            kind: model.kind,
            auto_fit: model.auto_fit,
            scale_to_cm: k,
            crown_stretch: ky / k,
            hair_cm: hair,
            hair_above_cm: hair_top,
            tilt_deg: band.tilt.to_degrees(),
            opening_centre_px: cam.project_model(band.centre).to_array(),
            opening_front_px: cam.project_model(band.front).to_array(),
            opening_ends_px: ends,
            head_width_px: HEAD_BREADTH_PER_FACE_WIDTH * face_width_px,
            face_height_px,
            roi: scene.roi,
            pose,
            own_hat,
        },
        scene: Some(scene),
        photo: cleaned,
    })
}

/// Result metadata (JSON).
pub fn metadata(
    placed: &Placed<HatPlacement>,
    stats: &RasterStats,
    face: &Face,
) -> serde_json::Value {
    let p = &placed.placement;
    let s = placed.scene.as_ref();
    json!({
        "category": "hats",
        "kind": p.kind.0.as_str(),
        "kind_source": p.kind.1.as_str(),
        "pose": p.pose.to_json(),
        "fit": if p.auto_fit.is_some() { "auto_fit" } else { "conventions" },
        "auto_fit_reason": p.auto_fit,
        "scale_to_cm": p.scale_to_cm,
        "crown_stretch": p.crown_stretch,
        "tilt_deg": p.tilt_deg,
        "hair_cm": p.hair_cm,
        "hair_above_cm": p.hair_above_cm,
        "head_pose_deg": face.head_pose.as_ref().map(|h| json!({
            "yaw": h.yaw_pitch_roll_deg[0], "pitch": h.yaw_pitch_roll_deg[1], "roll": h.yaw_pitch_roll_deg[2],
        })),
        "opening_centre_px": p.opening_centre_px,
        "opening_front_px": p.opening_front_px,
        "opening_ends_px": p.opening_ends_px,
        "head_width_px": p.head_width_px,
        "face_height_px": p.face_height_px,
        "roi": p.roi,
        "supersampling": s.map(|s| s.ss * s.ss),
        "lighting": s.map(|s| json!({
            "ambient": s.lighting.ambient,
            "key_dir": s.lighting.key_dir,
            "key_color": s.lighting.key_color,
        })),
        "occluded_fragments": stats.occluded_fragments,
        "drawn_fragments": stats.drawn_fragments,
        "own_hat": p.own_hat.to_json(),
    })
}
