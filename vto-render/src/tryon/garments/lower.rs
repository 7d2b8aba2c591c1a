//! Lower-body garments and outfits from a product photo: `pants`, `dress`, `full_outfit`.
//!
//! The same [`crate::garment`] pipeline as the tops ([`UpperGarment`]), with the
//! legs ([`Legs`]: hip → knee → ankle from pose keypoints 23–28, the feet from 29–32):
//! - [`Pants`]: trousers' two halves fitted along the legs ([`fit_pants`]), warped by the
//!   same kernel, composed with the top the person wears kept over the waistband, the shoes
//!   in front of the hems and the legs below a short hem uncovered as skin.
//! - [`Dress`]: the bodice fitted as a top ([`fit_upper_to`]), the skirt hung from the waist to
//!   the dress's own length ([`fit_skirt`]), composed as a top (face, hands, bare arms) and
//!   then the legs below the hem uncovered and the shoes kept in front.
//! - [`FullOutfit`]: the photo split into its pieces ([`split_outfit_with`]); the bottom (trousers,
//!   dress or a jumpsuit's legs) is dressed first; the top, by the tops' own renderer on the
//!   photo as it was, is laid over it (every pixel the top changed), so the new top hangs
//!   over the new waistband and takes its light from the person, not from the new bottom.
//!   The metadata lists what the photo held.

use std::time::Instant;

use glam::Vec2;
use image::RgbaImage;
use serde_json::{json, Value};
use vto_core::Category;

use super::skirt::{is_skirt, wear_skirt};
use crate::garment::body::legs::Legs;
use crate::garment::body::outline::person_outline;
use crate::garment::body::worn_top::{worn_top_hem, WornTop};
use crate::garment::body::Feet;
use crate::garment::colour::FALLBACK_SKIN;
use crate::garment::cutout::lower::{
    measure_pants, measure_pants_closed, split_dress, waist_row, PantsLandmarks,
};
use crate::garment::cutout::outfit::{split_outfit_with, PieceKind};
use crate::garment::cutout::{cutout, cutout_with, measure, Cutout, GarmentImage};
use crate::garment::geom::seg_dist;
use crate::garment::lower::compose::{arm_in_front, compose_pants, PantsLayers};
use crate::garment::lower::fit::{fit_pants, fit_skirt, waist_on_body};
use crate::garment::lower::uncover::{uncover_legs, Bared};
use crate::garment::upper::compose::{compose, Layers};
use crate::garment::upper::fit::{clip_to_shoulders, fit_upper_to, PersonMask};
use crate::garment::{label, BodyFrame, PartWarp, Warper};
use crate::tryon::{
    LoadedProduct, Look, Needs, Person, ProductInput, Stages, TryOn, TryOnError, UpperGarment,
};

/// `pants`: trousers and shorts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pants;

/// `dress`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dress;

/// `full_outfit`: a top and a bottom in one photo, or a one-piece.
#[derive(Debug, Clone, Copy, Default)]
pub struct FullOutfit;

pub(super) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The body, its mask, and the face when there is one (skin tone and light; see
/// [`crate::garment::body::tone`] for where they come from without it).
const NEEDS: Needs = Needs {
    face: true,
    face_optional: true,
    body: true,
    person_mask: true,
    hands: false,
    face_of_body: true,
};

fn photo_of(category: Category, product: &LoadedProduct) -> Result<&RgbaImage, TryOnError> {
    match product {
        LoadedProduct::Image(p) => Ok(p),
        LoadedProduct::Model(_) => Err(TryOnError::BadProduct(format!(
            "{} takes a product photo, not a 3D model",
            category.as_str()
        ))),
    }
}

/// The person as the lower garments see them.
pub(super) struct Body {
    pub(super) mask: Vec<f32>,
    pub(super) frame: BodyFrame,
    pub(super) legs: Legs,
}

/// The body; `legs_only` for a garment worn on the legs alone (trousers: a body turned
/// three-quarters is accepted, [`BodyFrame::for_legs`]).
pub(super) fn body(person: &Person, legs_only: bool) -> Result<Body, TryOnError> {
    let frame = if legs_only {
        BodyFrame::for_legs(person)?
    } else {
        BodyFrame::new(person)?
    };
    let mask = person_outline(person).ok_or_else(|| {
        TryOnError::NotFound(
            "no person mask could be computed for the photo; garments need the body's outline"
                .into(),
        )
    })?;
    let legs = Legs::new(person, &mask)?;
    Ok(Body { mask, frame, legs })
}

/// Trousers measured in a cut-out product photo.
struct PantsGarment {
    lm: PantsLandmarks,
    labels: Vec<u8>,
}

fn pants_of(cut: &Cutout) -> Result<PantsGarment, TryOnError> {
    let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
    let (lm, labels) = measure_pants_closed(&cut.fg, w, h).ok_or_else(|| {
        TryOnError::NotFound(
            "no trousers were found in the product photo (no crotch with two legs below it, \
             and the garment is far wider than tall)"
                .into(),
        )
    })?;
    Ok(PantsGarment { lm, labels })
}

/// Stage timings (milliseconds).
#[derive(Debug, Default)]
pub(super) struct Times {
    pub(super) garment: f64,
    pub(super) fit: f64,
    pub(super) warp: f64,
    pub(super) compose: f64,
}

impl Times {
    pub(super) fn json(&self) -> Value {
        json!({
            "garment": self.garment,
            "fit": self.fit,
            "warp": self.warp,
            "compose": self.compose,
        })
    }
}

/// Dresses `current` (the photo or an earlier layer) in trousers.
#[allow(clippy::too_many_arguments)]
fn wear_pants(
    stages: Stages<'_>,
    b: &Body,
    current: &RgbaImage,
    cut: &Cutout,
    g: &PantsGarment,
    top: Option<WornTop>,
    waist: Option<[Vec2; 2]>,
    times: &mut Times,
) -> Result<(RgbaImage, Value), TryOnError> {
    let t = Instant::now();
    let (rgba, colour) = cut.texture(&g.labels, |l| l == label::LEG_LEFT || l == label::LEG_RIGHT);
    times.garment += ms(t);
    let t = Instant::now();
    let (w, h) = current.dimensions();
    let mut fit = fit_pants(&g.lm, &b.legs, waist)?;
    if waist.is_none() {
        if let Some(corners) = waist_on_body(&fit, &b.mask, (w, h), b.legs.hip_width) {
            fit = fit_pants(&g.lm, &b.legs, Some(corners))?;
        }
    }
    let warps = fit
        .parts
        .iter()
        .map(|p| PartWarp::solve(p, w.max(h) as f32))
        .collect::<Result<Vec<_>, _>>()?;
    times.fit += ms(t);
    let replaced_top = if top.is_none() {
        worn_top_hem(current, &b.mask, &b.frame, &b.legs)
    } else {
        None
    };
    let (image, compose) = wear_bottom(
        stages,
        b,
        current,
        cut,
        &Bottom {
            rgba: &rgba,
            labels: &g.labels,
            warps: &warps,
            top,
            replaced_top,
            waist_centre: fit.waist_centre,
            hem_reach: fit.hem_reach,
        },
        times,
    )?;
    let meta = json!({
        "kind": "pants",
        "colour": colour,
        "length": g.lm.length_class(),
        "length_fraction": g.lm.length_fraction(),
        "scale": fit.scale,
        "hems_px": fit.hems.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(),
        "hem_reach_px": fit.hem_reach,
        "worn_top_hem_px": top.map(|t| t.hem),
        "compose": compose,
    });
    Ok((image, meta))
}

/// A lower garment worn as trousers are ([`wear_bottom`]): its texture and part labels (the
/// cut-out's), the parts' warps, the worn top kept over it (or replaced with it) and where
/// its waistband and hems lie on the photo.
pub(super) struct Bottom<'a> {
    pub(super) rgba: &'a [[u8; 4]],
    pub(super) labels: &'a [u8],
    pub(super) warps: &'a [PartWarp],
    pub(super) top: Option<WornTop>,
    pub(super) replaced_top: Option<WornTop>,
    pub(super) waist_centre: Vec2,
    pub(super) hem_reach: [f32; 2],
}

/// Warps `g` (textured from `cut`) onto `current` and composes it as trousers
/// ([`compose_pants`]): the image and the composition's metadata.
pub(super) fn wear_bottom(
    stages: Stages<'_>,
    b: &Body,
    current: &RgbaImage,
    cut: &Cutout,
    g: &Bottom<'_>,
    times: &mut Times,
) -> Result<(RgbaImage, Value), TryOnError> {
    let t = Instant::now();
    let warped = Warper::for_context(stages.raster.context()).warp_texture(
        (cut.img.width(), cut.img.height()),
        g.rgba,
        g.labels,
        g.warps,
        current.dimensions(),
    )?;
    times.warp += ms(t);
    let t = Instant::now();
    let (image, stats) = compose_pants(&PantsLayers {
        photo: current,
        person: &b.mask,
        frame: &b.frame,
        legs: &b.legs,
        warped: &warped,
        top: g.top,
        replaced_top: g.replaced_top,
        waist_centre: g.waist_centre,
        hem_reach: g.hem_reach,
    });
    times.compose += ms(t);
    let compose = json!({
        "covered_px": stats.covered,
        "skin_filled_px": stats.skin_filled,
        "background_filled_px": stats.background_filled,
        "kept_in_front_px": stats.kept_in_front,
    });
    Ok((image, compose))
}

/// Dresses `current` in a dress.
fn wear_dress(
    stages: Stages<'_>,
    b: &Body,
    current: &RgbaImage,
    cut: &Cutout,
    times: &mut Times,
) -> Result<(RgbaImage, Value), TryOnError> {
    let t = Instant::now();
    let (w0, h0) = (cut.img.width() as usize, cut.img.height() as usize);
    let (lm, labels) = split_dress(&cut.fg, w0, h0)?;
    let (rgba, colour) = cut.texture(&labels, label::is_body);
    let g = GarmentImage {
        width: w0 as u32,
        height: h0 as u32,
        rgba,
        labels,
        landmarks: lm.bodice,
        torso_colour: colour,
        from_alpha: cut.from_alpha,
    };
    times.garment += ms(t);
    let t = Instant::now();
    let (w, h) = current.dimensions();
    let upper = fit_upper_to(&lm.bodice, &b.frame, 1.0, Some(person_mask(b, (w, h))))?;
    let skirt = fit_skirt(&lm, &upper, &b.frame, &b.legs)?;
    let mut parts = upper.parts.clone();
    parts.push(skirt.part.clone());
    let warps = parts
        .iter()
        .map(|p| PartWarp::solve(p, w.max(h) as f32))
        .collect::<Result<Vec<_>, _>>()?;
    times.fit += ms(t);
    let t = Instant::now();
    let mut warped = Warper::for_context(stages.raster.context()).warp(&g, &warps, (w, h))?;
    clip_to_shoulders(&mut warped, person_mask(b, (w, h)), &b.frame, 1.0);
    times.warp += ms(t);
    let t = Instant::now();
    let (mut image, stats) = compose(&Layers {
        photo: current,
        person: &b.mask,
        frame: &b.frame,
        warped: &warped,
        hem_depth: skirt.hem_depth,
        torso_outline: &skirt.outline,
        sleeve_reach: upper.sleeve_reach,
        neckline_skin: true,
        arms: stages.options.arms,
    });
    // The shoes stay in front of a long hem, unless the skirt hangs past the middle of the
    // foot: then the foot is under it (a walking subject's back foot).
    let wu = w as usize;
    let feet = Feet::new(current, &b.legs, b.frame.skin.unwrap_or(FALLBACK_SKIN));
    let mid = (b.frame.shoulder[0] + b.frame.shoulder[1]) * 0.5;
    let down = b.frame.down;
    let hem = skirt.hem_depth;
    let under = b.legs.legs.map(|l| {
        let depth = |p: Vec2| (p - mid).dot(down);
        let sole = depth(l.heel).max(depth(l.toe));
        hem > (depth(l.chain[2]) + sole) * 0.5
    });
    let shows = |q: Vec2| {
        let [a, c] = &b.legs.legs;
        let near_a = seg_dist(q, a.heel, a.toe).0 <= seg_dist(q, c.heel, c.toe).0;
        !under[if near_a { 0 } else { 1 }]
    };
    let alpha: Vec<f32> = warped
        .rgba
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let q = Vec2::new((i % wu) as f32, (i / wu) as f32);
            let c = current.get_pixel(q.x as u32, q.y as u32).0;
            if p[3] > 0 && feet.in_front(q, [0, 1, 2].map(|k| f32::from(c[k]))) && shows(q) {
                image.put_pixel(
                    q.x as u32,
                    q.y as u32,
                    *current.get_pixel(q.x as u32, q.y as u32),
                );
                0.0
            } else {
                f32::from(p[3]) / 255.0
            }
        })
        .collect();
    let bared = Bared {
        photo: current,
        person: &b.mask,
        alpha: &alpha,
        legs: &b.legs,
        frame: &b.frame,
        skin_from: None,
    };
    let (skin_n, bg_n) = uncover_legs(&mut image, &bared, |p: Vec2| {
        (p - mid).dot(down) > hem - 2.0 && !arm_in_front(&b.frame, p, true)
    });
    times.compose += ms(t);
    let meta = json!({
        "kind": "dress",
        "colour": colour,
        "length": lm.length_class(),
        "length_ratio": lm.length_ratio(),
        "long_sleeves": lm.bodice.long_sleeves,
        "scale": upper.scale,
        "hem_depth_px": skirt.hem_depth,
        "hem_centre_px": [skirt.hem_centre.x, skirt.hem_centre.y],
        "compose": {
            "covered_px": stats.covered,
            "skin_filled_px": stats.skin_filled + skin_n,
            "background_filled_px": stats.background_filled + bg_n,
            "kept_in_front_px": stats.kept_in_front,
            "holes_closed_px": stats.holes_closed,            "hair_kept_px": stats.hair_kept,            "hair_samples": stats.hair_samples, "arms": stats.arms,
        },
    });
    Ok((image, meta))
}

/// Dresses `current` in a jumpsuit: trouser legs below its waist, then its bodice as a top.
fn wear_jumpsuit(
    stages: Stages<'_>,
    b: &Body,
    current: &RgbaImage,
    cut: &Cutout,
    times: &mut Times,
) -> Result<(RgbaImage, Value), TryOnError> {
    let t = Instant::now();
    let (w0, h0) = (cut.img.width() as usize, cut.img.height() as usize);
    let no = || TryOnError::NotFound("the jumpsuit's waist and legs could not be measured".into());
    let waist = waist_row(&cut.fg, w0, h0).ok_or_else(no)?;
    let (bodice, upper_labels) = measure(&cut.fg[..(waist + 1) * w0], w0, waist + 1)?;
    let mut lower_fg = cut.fg.clone();
    lower_fg[..(waist + 1) * w0]
        .iter_mut()
        .for_each(|v| *v = false);
    let (plm, mut labels) = measure_pants(&lower_fg, w0, h0).ok_or_else(no)?;
    labels[..(waist + 1) * w0].copy_from_slice(&upper_labels);
    times.garment += ms(t);
    let upper = fit_upper_to(
        &bodice,
        &b.frame,
        1.0,
        Some(person_mask(b, current.dimensions())),
    )?;
    let sim = upper.similarity;
    let pants = PantsGarment {
        lm: plm,
        labels: labels.clone(),
    };
    let (after_legs, legs_meta) = wear_pants(
        stages,
        b,
        current,
        cut,
        &pants,
        None,
        Some([sim.apply(bodice.hem[0]), sim.apply(bodice.hem[1])]),
        times,
    )?;
    let t = Instant::now();
    let (rgba, colour) = cut.texture(&labels, |l| l == label::TORSO);
    let g = GarmentImage {
        width: w0 as u32,
        height: h0 as u32,
        rgba,
        labels,
        landmarks: bodice,
        torso_colour: colour,
        from_alpha: cut.from_alpha,
    };
    let (w, h) = current.dimensions();
    let warps = upper
        .parts
        .iter()
        .map(|p| PartWarp::solve(p, w.max(h) as f32))
        .collect::<Result<Vec<_>, _>>()?;
    times.garment += ms(t);
    let t = Instant::now();
    let mut warped = Warper::for_context(stages.raster.context()).warp(&g, &warps, (w, h))?;
    clip_to_shoulders(&mut warped, person_mask(b, (w, h)), &b.frame, 1.0);
    times.warp += ms(t);
    let t = Instant::now();
    // The legs just dressed are the new garment, not old clothing: the bodice uncovers (and
    // takes its light from) only what the trousers left as it was, so no background is
    // continued over the new waistband below a tilted bodice's hem.
    let unchanged: Vec<f32> = b
        .mask
        .iter()
        .zip(current.pixels().zip(after_legs.pixels()))
        .map(|(&m, (p, q))| if p == q { m } else { 0.0 })
        .collect();
    let (image, _) = compose(&Layers {
        photo: &after_legs,
        person: &unchanged,
        frame: &b.frame,
        warped: &warped,
        hem_depth: upper.hem_depth,
        torso_outline: &upper.torso_outline,
        sleeve_reach: upper.sleeve_reach,
        neckline_skin: true,
        arms: stages.options.arms,
    });
    times.compose += ms(t);
    Ok((
        image,
        json!({ "kind": "jumpsuit", "colour": colour, "legs": legs_meta }),
    ))
}

impl TryOn for Pants {
    fn category(&self) -> Category {
        Category::Pants
    }

    fn engine_name(&self) -> &'static str {
        "builtin-garment"
    }

    fn needs(&self) -> Needs {
        NEEDS
    }

    fn product_input(&self) -> ProductInput {
        ProductInput::Image
    }

    fn try_on(
        &self,
        stages: Stages<'_>,
        person: &Person,
        product: &LoadedProduct,
    ) -> Result<Look, TryOnError> {
        let photo = photo_of(self.category(), product)?;
        let mut times = Times::default();
        let t = Instant::now();
        let cut = cutout_with(photo, stages.product_faces)?;
        let g = pants_of(&cut)?;
        times.garment += ms(t);
        let t = Instant::now();
        let b = body(person, true)?;
        let top = worn_top_hem(&person.photo, &b.mask, &b.frame, &b.legs);
        times.fit += ms(t);
        let (image, garment) =
            wear_pants(stages, &b, &person.photo, &cut, &g, top, None, &mut times)?;
        Ok(Look {
            image,
            metadata: json!({
                "category": "pants",
                "garment": garment,
                "hip_width_px": b.legs.hip_width,
                "hip_width_from_mask": b.legs.hip_width_measured,
                "ankles_estimated": b.legs.ankles_estimated,
                "tone": b.frame.tone_sources(),
                "stages_ms": times.json(),
            }),
        })
    }
}

impl TryOn for Dress {
    fn category(&self) -> Category {
        Category::Dress
    }

    fn engine_name(&self) -> &'static str {
        "builtin-garment"
    }

    fn needs(&self) -> Needs {
        NEEDS
    }

    fn product_input(&self) -> ProductInput {
        ProductInput::Image
    }

    fn try_on(
        &self,
        stages: Stages<'_>,
        person: &Person,
        product: &LoadedProduct,
    ) -> Result<Look, TryOnError> {
        let photo = photo_of(self.category(), product)?;
        let mut times = Times::default();
        let t = Instant::now();
        let cut = cutout_with(photo, stages.product_faces)?;
        let (skirt, kind_source) = is_skirt(&cut, stages.options.product_kind);
        times.garment += ms(t);
        let t = Instant::now();
        // A skirt is worn on the legs alone (a body turned three-quarters carries it).
        let b = body(person, skirt)?;
        times.fit += ms(t);
        let (image, garment) = if skirt {
            wear_skirt(stages, &b, &person.photo, &cut, &mut times)?
        } else {
            wear_dress(stages, &b, &person.photo, &cut, &mut times)?
        };
        Ok(Look {
            image,
            metadata: json!({
                "category": "dress",
                "garment": garment,
                "kind_source": kind_source,
                "ankles_estimated": b.legs.ankles_estimated,
                "tone": b.frame.tone_sources(),
                "stages_ms": times.json(),
            }),
        })
    }
}

impl TryOn for FullOutfit {
    fn category(&self) -> Category {
        Category::FullOutfit
    }

    fn engine_name(&self) -> &'static str {
        "builtin-garment"
    }

    fn needs(&self) -> Needs {
        NEEDS
    }

    fn product_input(&self) -> ProductInput {
        ProductInput::Image
    }

    fn try_on(
        &self,
        stages: Stages<'_>,
        person: &Person,
        product: &LoadedProduct,
    ) -> Result<Look, TryOnError> {
        let photo = photo_of(self.category(), product)?;
        let mut times = Times::default();
        let t = Instant::now();
        let pieces = split_outfit_with(photo, stages.product_faces)?;
        times.garment += ms(t);
        let held: Vec<Value> = pieces
            .iter()
            .map(|p| json!({ "kind": p.kind.as_str(), "bbox_px": p.bbox }))
            .collect();
        let first = |k: PieceKind| pieces.iter().find(|p| p.kind == k);
        // A photo holding one piece that reads as a top is a one-piece whose legs or skirt
        // the outline does not show apart (a romper lying with its legs folded together):
        // it is worn as a dress, from the shoulders down to its own hem.
        let lone_top = match pieces.as_slice() {
            [only] if only.kind == PieceKind::Top => Some(only),
            _ => None,
        };
        let bottom = first(PieceKind::Jumpsuit)
            .or_else(|| first(PieceKind::Dress))
            .or_else(|| first(PieceKind::Pants))
            .or(lone_top);
        let bottom_kind = bottom.map(|p| match p.kind {
            PieceKind::Top => PieceKind::Dress,
            k => k,
        });
        let top = match bottom_kind {
            Some(PieceKind::Jumpsuit) | Some(PieceKind::Dress) => None,
            _ => first(PieceKind::Top),
        };
        if bottom.is_none() {
            return Err(TryOnError::NotFound(format!(
                "the outfit photo holds no bottom, dress or one-piece (found: {}); a top alone \
                 is a shirt, t-shirt or jacket",
                pieces
                    .iter()
                    .map(|p| p.kind.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let b = body(person, false)?;
        let mut image = person.photo.clone();
        let mut worn = Vec::new();
        if let Some(p) = bottom {
            let t = Instant::now();
            let cut = cutout(&p.photo)?;
            times.garment += ms(t);
            let (img, meta) = match bottom_kind.unwrap_or(p.kind) {
                PieceKind::Jumpsuit => wear_jumpsuit(stages, &b, &image, &cut, &mut times)?,
                PieceKind::Dress => wear_dress(stages, &b, &image, &cut, &mut times)?,
                _ => {
                    let g = pants_of(&cut)?;
                    // The new top goes over the waistband: the old top is not kept.
                    wear_pants(stages, &b, &image, &cut, &g, None, None, &mut times)?
                }
            };
            image = img;
            worn.push(meta);
        }
        if let Some(p) = top {
            let kind = if p.open_front {
                UpperGarment::Jacket
            } else {
                UpperGarment::Shirt
            };
            // The top is fitted, shaded and composed on the photo as it was (its light and
            // the old clothes it uncovers are the photo's), then laid over the bottom:
            // every pixel the top changed comes from it, the rest from the bottom.
            // The piece is a crop of the photo the faces were found on (checked above).
            let piece_stages = Stages {
                product_faces: &[],
                ..stages
            };
            let look = kind.try_on(piece_stages, person, &LoadedProduct::Image(p.photo.clone()))?;
            let t = Instant::now();
            for ((out, top), was) in image
                .pixels_mut()
                .zip(look.image.pixels())
                .zip(person.photo.pixels())
            {
                if top != was {
                    *out = *top;
                }
            }
            times.compose += ms(t);
            if let Some(s) = look.metadata.get("stages_ms") {
                for (k, v) in [
                    ("garment", &mut times.garment),
                    ("fit", &mut times.fit),
                    ("warp", &mut times.warp),
                    ("compose", &mut times.compose),
                ] {
                    *v += s[k].as_f64().unwrap_or(0.0);
                }
            }
            worn.push(json!({ "kind": "top", "as": kind.category().as_str(), "garment": look.metadata["garment"] }));
        }
        Ok(Look {
            image,
            metadata: json!({
                "category": "full_outfit",
                "outfit": {
                    "pieces": held,
                    "one_piece": bottom_kind.is_some_and(|k| matches!(k, PieceKind::Jumpsuit | PieceKind::Dress)) && top.is_none(),
                    "lone_top_worn_as_dress": lone_top.is_some(),
                },
                "worn": worn,
                "ankles_estimated": b.legs.ankles_estimated,
                "tone": b.frame.tone_sources(),
                "stages_ms": times.json(),
            }),
        })
    }
}

/// The person mask of `b` on a `size` photo, for the upper-garment fit and clip.
fn person_mask(b: &Body, size: (u32, u32)) -> PersonMask<'_> {
    PersonMask {
        data: &b.mask,
        size,
    }
}
