//! Jewelry (`jewelry`): earrings on the ear lobes, necklaces and pendants at the neck's base,
//! rings on the ring finger and bracelets at the wrist ([`hand`]).
//!
//! The kind comes from the request's `product_kind` when it names one ([`kind::kind_for`];
//! `kind_source: request` in the metadata), else from the model ([`kind::kind_of`]: glTF
//! extras, names, else the shape).
//! Scale: a model in metres (an earring 3–80 mm, a necklace 8–40 cm across) is worn at its
//! real size (a necklace scaled with the person's face width, within ±15 %), its origin at
//! the piercing / the neck base's centre when that lies where the conventions of
//! `docs/products.md` say; otherwise it is auto-fitted (a stud 1 cm, a hoop 2.5 cm, a drop 4 cm
//! tall, from their top centre; a necklace 12 cm wide, from its top centre) and the metadata
//! says so. See [`earrings`] and [`necklace`] for the placement. Rings and bracelets are sized
//! to the hand they are worn on (see [`hand`]); only they run the hand models
//! ([`crate::tryon::TryOn::needs_for`]), and they need no face.
//!
//! Metals and gems are the model's own PBR materials: the shared rasterizer's metallic
//! Blinn–Phong with a high-contrast environment makes metal look like metal; materials
//! named as gems ([`is_gem`]) are shaded as cut stones facet by facet
//! ([`crate::raster::SHADING_GEM`]). A necklace's chain goes under the collar ([`collar`]).

pub mod collar;
pub mod earrings;
pub mod hand;
pub mod kind;
pub mod necklace;

use image::RgbaImage;
use serde_json::json;
use vto_core::Category;

use super::placer::{worn_face, Placed, Placer};
use super::{Needs, Options, Person, TryOnError};
use crate::math::{dist_xy, Vec3};
use crate::product::pose::shape::{hole, Cloud};
use crate::product::pose::{self, Pose};
use crate::product::Product;
use crate::raster::{RasterStats, Scene, Transparency};
use crate::scene::head_scene::HeadScene;
use crate::vision::{Body, Face};
use kind::{kind_for, kind_of, JewelryKind, KindSource};

/// The canonical face's width (landmarks 234–454), cm: necklaces scale with the person's.
pub const CANONICAL_FACE_WIDTH_CM: f32 = 13.2;

/// The `jewelry` category.
#[derive(Debug, Clone, Copy, Default)]
pub struct Jewelry;

impl Placer for Jewelry {
    type Placement = JewelryPlacement;

    fn category(&self) -> Category {
        Category::Jewelry
    }

    fn engine_name(&self) -> &'static str {
        "jewelry-raster"
    }

    fn needs(&self) -> Needs {
        Needs {
            face: true,
            body: true,
            ..Needs::default()
        }
    }

    fn needs_for(&self, product: &Product, options: &Options) -> Needs {
        let kind = kind_for(product, options.product_kind);
        if kind.0.is_hand_worn() {
            Needs {
                body: true,
                hands: true,
                // A guess from the shape may be earrings after all: look for the ears,
                // without failing when there is no face.
                face: kind::ear_alternative(product, kind).is_some(),
                face_optional: true,
                ..Needs::default()
            }
        } else {
            self.needs()
        }
    }

    fn place(
        &self,
        person: &Person,
        product: &Product,
        options: &Options,
    ) -> Result<Placed<JewelryPlacement>, TryOnError> {
        let mut kind = kind_for(product, options.product_kind);
        // The shape's guess of a hand-worn kind on a photo with a face and no hand: the
        // earring the shape also allows (said as `kind_source: photo`).
        if person.hands.is_empty() && person.face.is_some() {
            if let Some(ear) = kind::ear_alternative(product, kind) {
                kind = (ear, KindSource::Photo);
            }
        }
        if kind.0.is_hand_worn() {
            let body = person.body.as_ref();
            let placed = hand::prepare(&person.photo, &person.hands, body, product, kind, options)?;
            return Ok(placed.map(JewelryPlacement::Hand));
        }
        let face = worn_face(person, Category::Jewelry)?;
        let placed = prepare_as(
            &person.photo,
            face,
            person.body.as_ref(),
            product,
            kind,
            options,
        )?;
        Ok(placed.map(JewelryPlacement::Head))
    }

    fn metadata(
        &self,
        _person: &Person,
        placed: &Placed<JewelryPlacement>,
        stats: &RasterStats,
    ) -> Result<serde_json::Value, TryOnError> {
        Ok(match &placed.placement {
            JewelryPlacement::Head(head) => metadata(head, placed.scene.as_ref(), stats),
            JewelryPlacement::Hand(hand) => hand::metadata(hand, placed.scene.as_ref(), stats),
        })
    }
}

/// Where a jewel went: on the head (earrings, necklaces) or on a hand (rings, bracelets).
#[derive(Debug, Clone, PartialEq)]
pub enum JewelryPlacement {
    /// Earrings and necklaces ([`prepare`]).
    Head(HeadJewel),
    /// Rings and bracelets ([`hand::prepare`]).
    Hand(hand::HandJewel),
}

/// How a jewel is scaled and anchored: its anchor in the asset frame and asset units → cm.
#[derive(Debug, Clone, PartialEq)]
pub struct JewelPlacement {
    /// The anchor (piercing, neck base) in the asset frame.
    pub origin: Vec3,
    /// Asset units → centimetres.
    pub k: f32,
    /// `None` when the model follows the conventions, else why it was auto-fitted.
    pub auto_fit: Option<String>,
}

/// Decides the scale and anchor of a `kind` (see the module docs).
pub fn fit(product: &Product, kind: JewelryKind) -> JewelPlacement {
    let (lo, hi) = product.bounds();
    let (lo, hi) = (Vec3::from(lo), Vec3::from(hi));
    let size = hi - lo;
    let largest = size.max_element().max(1e-9);
    let top_centre = Vec3::new((lo.x + hi.x) / 2.0, hi.y, (lo.z + hi.z) / 2.0);
    let (range, target) = match kind {
        JewelryKind::Necklace => (0.08..=0.40, 12.0),
        JewelryKind::Stud => (0.003..=0.08, 1.0),
        // Drop earrings are mostly 3–6 cm long; hoops 2–4 cm across.
        JewelryKind::Drop => (0.003..=0.08, 4.0),
        _ => (0.003..=0.08, 2.5),
    };
    let real = range.contains(&largest);
    // The conventions' origin: inside the box, near its top for an earring.
    let inside = (0..3).all(|k| lo[k] - 0.1 * size[k] <= 0.0 && 0.0 <= hi[k] + 0.1 * size[k]);
    let hanging = matches!(kind, JewelryKind::Hoop | JewelryKind::Drop);
    let origin_ok = inside && (!hanging || hi.y <= 0.35 * size.y);
    match (real, origin_ok) {
        (true, true) => JewelPlacement {
            origin: Vec3::ZERO,
            k: 100.0,
            auto_fit: None,
        },
        (true, false) => JewelPlacement {
            origin: top_centre,
            k: 100.0,
            auto_fit: Some(
                "the origin is not at the piercing / the neck base; taken at the top centre".into(),
            ),
        },
        (false, _) => JewelPlacement {
            origin: top_centre,
            k: target / largest,
            auto_fit: Some(format!(
                "the model is {largest:.4} units across, not a {}–{} m {}; scaled to {target} cm \
                 and anchored at its top centre",
                range.start(),
                range.end(),
                kind.as_str()
            )),
        },
    }
}

/// Where the jewel landed.
#[derive(Debug, Clone, PartialEq)]
pub enum Worn {
    /// Earrings, per ear.
    Ears(Vec<earrings::Ear>),
    /// A necklace: the neck and the pendant (the lowest point), projected.
    Neck {
        /// The neck.
        neck: necklace::Neck,
        /// The pendant, pixels.
        pendant_px: [f32; 2],
        /// How much the chain was narrowed to the neck ([`necklace::squeeze_for`]; 1: not).
        squeeze: f32,
    },
}

/// What was decided for earrings or a necklace.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadJewel {
    /// The kind and where it came from.
    pub kind: (JewelryKind, KindSource),
    /// How the model was turned into the kind's canonical pose ([`canonical`]).
    pub pose: Pose,
    /// Scale and anchor.
    pub fit: JewelPlacement,
    /// Where it landed.
    pub worn: Worn,
    /// Pixels of the garment round the neck hiding a necklace's chain ([`collar`]; 0 for
    /// earrings, or when the photo cannot tell skin from cloth).
    pub collar_px: usize,
}

/// Words in a material's name that make it a cut gem (shaded facet by facet, see
/// [`crate::raster::SHADING_GEM`]); see `docs/products.md`.
pub const GEM_WORDS: [&str; 12] = [
    "gem", "diamond", "stone", "ruby", "sapphire", "emerald", "crystal", "zircon", "topaz",
    "amethyst", "garnet", "jewel",
];

/// Whether a material named `name` is a cut gem ([`GEM_WORDS`], case-insensitive).
pub fn is_gem(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    GEM_WORDS.iter().any(|w| name.contains(w))
}

/// Marks the scene's materials that are cut gems (by their names in `product`).
pub fn mark_gems(scene: &mut Scene, product: &Product) {
    for (raster, m) in scene.materials.iter_mut().zip(&product.materials) {
        if is_gem(&m.name) && m.alpha_mode != crate::product::AlphaMode::Blend {
            raster.flags[2] = crate::raster::SHADING_GEM;
        }
    }
}

/// `product` turned into the canonical pose of a `kind` ([`crate::product::pose`]); a
/// ring's or a bracelet's also moved so that its hole's centre is the origin (the finger
/// or the wrist runs through it) when the origin lies outside the hole.
pub fn canonical(product: &Product, kind: JewelryKind) -> (Product, Pose) {
    let pose = pose::infer(product, kind::pose_category(kind));
    let mut turned = pose.apply(product);
    if kind.is_hand_worn() {
        if let Some(h) = Cloud::of(&turned).and_then(|c| hole(&c)) {
            if h.centre.length() > 0.25 * h.inner {
                for p in &mut turned.primitives {
                    for v in &mut p.positions {
                        *v = (Vec3::from(*v) - h.centre).to_array();
                    }
                }
            }
        }
    }
    (turned, pose)
}

/// Places `product` on the person and builds the scene (`None` when there is nothing to
/// draw: every ear turned away).
pub fn prepare(
    photo: &RgbaImage,
    face: &Face,
    body: Option<&Body>,
    product: &Product,
    options: &Options,
) -> Result<Placed<HeadJewel>, TryOnError> {
    prepare_as(photo, face, body, product, kind_of(product), options)
}

/// [`prepare`] with the kind decided by the caller.
pub fn prepare_as(
    photo: &RgbaImage,
    face: &Face,
    body: Option<&Body>,
    product: &Product,
    kind: (JewelryKind, KindSource),
    options: &Options,
) -> Result<Placed<HeadJewel>, TryOnError> {
    let (canonical, pose) = canonical(product, kind.0);
    let product = &canonical;
    if kind.0.is_hand_worn() {
        return Err(TryOnError::BadProduct(format!(
            "a {} is worn on a hand: place it with jewelry::hand::prepare",
            kind.0.as_str()
        )));
    }
    let (w, h) = (photo.width(), photo.height());
    let head = HeadScene::new(photo, face)?;
    let cam = head.cam();
    let lm = head.landmarks();
    let mut fitted = fit(product, kind.0);
    let mut builder = head
        .builder(product)
        .transparency(Transparency::Material)
        .supersampling(options.supersampling.max(3))
        .contact_shadow(options.shadow_strength * 0.6, cam.scale());
    builder.occluders.push(head.head_occluder());
    let mut collar_px = 0;
    let worn = if kind.0.is_earring() {
        let hanging = kind.0 != JewelryKind::Stud;
        Worn::Ears(earrings::place(
            face,
            cam,
            product,
            &fitted,
            hanging,
            &mut builder.product,
        ))
    } else {
        let neck = necklace::neck(face, body, w, h).ok_or_else(|| {
            TryOnError::NotFound("the neck could not be located in the person photo".into())
        })?;
        let skin = collar::neck_skin(photo, face);
        let neck = neck.on_skin_midline(
            skin.as_ref(),
            necklace::MIDLINE_MAX_SHIFT * dist_xy(lm[234], lm[454]),
        );
        let face_width_cm = dist_xy(lm[234], lm[454]).max(1.0) / cam.scale();
        let neck_scale = (face_width_cm / CANONICAL_FACE_WIDTH_CM).clamp(0.85, 1.15);
        if fitted.auto_fit.is_none() || fitted.k == 100.0 {
            fitted.k *= neck_scale;
        }
        // The drape follows the chain's length: its front no lower under the chin than a
        // chain of the stated (else the default) length hangs, measured with the face's
        // width as the ruler (the anatomy's units), converted to the model frame's cm.
        let chin = crate::math::Vec2::new(lm[152][0], lm[152][1]);
        let down = (chin - crate::math::Vec2::new(lm[10][0], lm[10][1])).normalize_or_zero();
        let face_px_per_cm = dist_xy(lm[234], lm[454]) / CANONICAL_FACE_WIDTH_CM;
        let length_cm = necklace::stated_length_cm(product).unwrap_or(necklace::DEFAULT_CHAIN_CM);
        let max_px = necklace::max_below_chin_cm(length_cm) * face_px_per_cm;
        let max_drop = (max_px - (neck.base_px - chin).dot(down)) / cam.scale();
        // The chain no wider than the neck the photo shows allows (a collar round it).
        let (lo, hi) = product.bounds();
        let squeeze = skin.map_or(1.0, |s| {
            necklace::squeeze_for(s.width_px / cam.scale(), (hi[0] - lo[0]) * fitted.k)
        });
        let pendant = necklace::place(
            cam,
            product,
            &fitted,
            &neck,
            neck_scale,
            max_drop.max(necklace::PENDANT_CM + 1.0),
            squeeze,
            &mut builder.product,
            &mut builder.occluders,
        );
        // The collar (or the neckline) in front of the chain at the sides.
        let nearest = builder
            .product
            .positions
            .iter()
            .map(|p| p.z)
            .fold(f32::MAX, f32::min);
        let band = builder.footprint().and_then(|(lo, hi)| {
            collar::band(
                photo,
                face,
                body.and_then(|b| b.mask.as_ref()),
                cam.scale(),
                lo,
                hi,
            )
        });
        if let Some(band) = band {
            let depth = (nearest - 1.0).max(crate::scene::NEAR_CM + 0.1);
            let (mesh, covered) = collar::occluder(cam, &band, depth);
            if covered > 0 {
                builder.occluders.push(mesh);
                collar_px = covered;
            }
        }
        Worn::Neck {
            neck,
            pendant_px: cam.project(pendant).to_array(),
            squeeze,
        }
    };
    // No visible ear: nothing to draw.
    let scene = if builder.product.triangles.is_empty() {
        None
    } else {
        let mut scene = builder.build()?;
        mark_gems(&mut scene, product);
        Some(scene)
    };
    Ok(Placed {
        scene,
        photo: None,
        placement: HeadJewel {
            kind,
            pose,
            fit: fitted,
            worn,
            collar_px,
        },
    })
}

/// Result metadata (JSON) of earrings or a necklace drawn in `scene` (`None`: nothing drawn).
pub fn metadata(
    prepared: &HeadJewel,
    scene: Option<&Scene>,
    stats: &RasterStats,
) -> serde_json::Value {
    let worn = match &prepared.worn {
        Worn::Ears(ears) => json!({
            "ears": ears.iter().map(|e| json!({
                "side": if e.side < 0.0 { "subject_right" } else { "subject_left" },
                "lobe_px": e.lobe_px,
                "visible": e.visible,
                "turned_deg": e.turned_deg,
            })).collect::<Vec<_>>(),
        }),
        Worn::Neck {
            neck,
            pendant_px,
            squeeze,
        } => json!({
            "neck_base_px": neck.base_px.to_array(),
            "neck_source": match neck.source {
                necklace::NeckSource::Shoulders => "shoulders",
                necklace::NeckSource::Face => "face",
            },
            "neck_midline": if neck.skin_midline { "neck_skin" } else { "landmarks" },
            "pendant_px": pendant_px,
            "chain_squeeze": squeeze,
            "collar_px": prepared.collar_px,
        }),
    };
    json!({
        "category": "jewelry",
        "kind": prepared.kind.0.as_str(),
        "kind_source": prepared.kind.1.as_str(),
        "pose": prepared.pose.to_json(),
        "fit": if prepared.fit.auto_fit.is_some() { "auto_fit" } else { "conventions" },
        "auto_fit_reason": prepared.fit.auto_fit,
        "scale_to_cm": prepared.fit.k,
        "worn": worn,
        "roi": scene.map(|s| s.roi),
        "supersampling": scene.map(|s| s.ss * s.ss),
        "lighting": scene.map(|s| json!({
            "ambient": s.lighting.ambient,
            "key_dir": s.lighting.key_dir,
            "key_color": s.lighting.key_color,
        })),
        "occluded_fragments": stats.occluded_fragments,
        "drawn_fragments": stats.drawn_fragments,
    })
}
