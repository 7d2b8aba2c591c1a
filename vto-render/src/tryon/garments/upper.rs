//! Upper-body garments from a product photo: `shirt`, `tshirt`, `jacket`.
//!
//! One renderer over the [`crate::garment`] pipeline: the garment from its photo
//! ([`garment::cutout::prepare`]), the body frame ([`BodyFrame`]), the parts fitted to it
//! ([`fit_upper_hem`], each sleeve as wide as the arm in the person mask, the hem where the
//! product's length class puts it — [`length`] — and never above the hem of the top the
//! person wears unless the product is cropped), warped on the GPU ([`Warper`]) and composed
//! over the photo ([`compose`]). The three categories differ only in ease: a jacket is cut to go over what
//! the person wears, so it sits a little wider; its open front (when the photo shows one)
//! leaves the person's own top visible.

use std::time::Instant;

use serde_json::json;
use vto_core::Category;

use crate::garment::body::legs::Legs;
use crate::garment::body::outline::person_outline;
use crate::garment::body::worn_top::{worn_top_hem, worn_top_reach};
use crate::garment::upper::compose::{compose, Layers};
use crate::garment::upper::fit::{clip_to_shoulders, fit_upper_hem, PersonMask};
use crate::garment::upper::length::{self, LengthClass};
use crate::garment::upper::outside::clip_far_outside;
use crate::garment::{self, BodyFrame, PartWarp, Warper};
use crate::tryon::{LoadedProduct, Look, Needs, Person, ProductInput, Stages, TryOn, TryOnError};

/// An old top running out of a half-body photo is covered by the new one at most this many
/// shoulder widths below the hips (a tunic's hem); its own hem cannot be seen.
const UNSEEN_HEM_BELOW_HIPS: f32 = 0.4;

/// An upper-body garment category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpperGarment {
    /// `shirt`.
    Shirt,
    /// `tshirt`.
    Tshirt,
    /// `jacket`.
    Jacket,
}

impl UpperGarment {
    /// Every upper-body garment category.
    pub const ALL: [UpperGarment; 3] = [
        UpperGarment::Shirt,
        UpperGarment::Tshirt,
        UpperGarment::Jacket,
    ];

    /// How much wider than the body's shoulder seams the garment sits.
    pub fn ease(self) -> f32 {
        match self {
            UpperGarment::Jacket => 1.08,
            UpperGarment::Shirt | UpperGarment::Tshirt => 1.0,
        }
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl TryOn for UpperGarment {
    fn category(&self) -> Category {
        match self {
            UpperGarment::Shirt => Category::Shirt,
            UpperGarment::Tshirt => Category::Tshirt,
            UpperGarment::Jacket => Category::Jacket,
        }
    }

    fn engine_name(&self) -> &'static str {
        "builtin-garment"
    }

    fn needs(&self) -> Needs {
        // The face when there is one (skin tone and light; see crate::garment::body::tone
        // for where they come from without it).
        Needs {
            face: true,
            face_optional: true,
            body: true,
            person_mask: true,
            face_of_body: true,
            ..Needs::default()
        }
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
        let LoadedProduct::Image(photo) = product else {
            return Err(TryOnError::BadProduct(format!(
                "{} takes a product photo, not a 3D model",
                self.category().as_str()
            )));
        };
        let t = Instant::now();
        let g = garment::cutout::prepare_with(photo, stages.product_faces)?;
        let t_garment = ms(t);
        let t = Instant::now();
        let frame = BodyFrame::new(person)?;
        let (w, h) = person.photo.dimensions();
        let mask = person_outline(person).ok_or_else(|| {
            TryOnError::NotFound(
                "no person mask could be computed for the photo; garments need the body's outline"
                    .into(),
            )
        })?;
        // The hem from the product's length class, past the worn top's hem (when the legs
        // show, so it can be seen) unless the product is cropped.
        let ratio = length::length_ratio(&g.landmarks);
        let class = LengthClass::of(ratio);
        let mid = (frame.shoulder[0] + frame.shoulder[1]) * 0.5;
        // Without legs in the photo, as far as the top runs down the torso — but no further
        // than a tunic's length below the hips: how long an old top running out of the photo
        // is cannot be seen, and a hip-length product must not hang to the thighs for it.
        let hips_depth = (frame.hips - mid).dot(frame.down);
        let worn = match Legs::new(person, &mask) {
            Ok(legs) => worn_top_hem(&person.photo, &mask, &frame, &legs)
                .map(|t| (legs.hips_mid + legs.down * t.hem - mid).dot(frame.down)),
            Err(_) => worn_top_reach(&person.photo, &mask, &frame)
                .map(|r| r.min(hips_depth + UNSEEN_HEM_BELOW_HIPS * frame.shoulder_width)),
        };
        let hem = length::cover_worn_top(
            length::hem_depth(ratio, &frame),
            class,
            worn,
            frame.shoulder_width,
        );
        let person_mask = PersonMask {
            data: &mask,
            size: (w, h),
        };
        let fit = fit_upper_hem(
            &g.landmarks,
            &frame,
            self.ease(),
            Some(person_mask),
            Some(hem),
        )?;
        let warps = fit
            .parts
            .iter()
            .map(|p| PartWarp::solve(p, w.max(h) as f32))
            .collect::<Result<Vec<_>, _>>()?;
        let t_fit = ms(t);
        let t = Instant::now();
        let warper = Warper::for_context(stages.raster.context());
        let (mut warped, folds) = warper.warp_checked(&g, &warps, (w, h))?;
        // The garment's shoulders no further out than the person's (a pixel for the mask's
        // soft edge): a flat-lay's square corners would poke out as horns.
        clip_to_shoulders(&mut warped, person_mask, &frame, 1.0);
        // Nor a sleeve's stick carried far off the body by the spline.
        clip_far_outside(&mut warped, person_mask, &frame);
        let t_warp = ms(t);
        let t = Instant::now();
        let (image, stats) = compose(&Layers {
            photo: &person.photo,
            person: &mask,
            frame: &frame,
            warped: &warped,
            hem_depth: fit.hem_depth,
            torso_outline: &fit.torso_outline,
            sleeve_reach: fit.sleeve_reach,
            neckline_skin: !matches!(self, UpperGarment::Jacket),
            arms: stages.options.arms,
        });
        let t_compose = ms(t);
        let lm = &g.landmarks;
        let metadata = json!({
            "category": self.category().as_str(),
            "garment": {
                "size_px": [g.width, g.height],
                "mask_from_alpha": g.from_alpha,
                "long_sleeves": lm.long_sleeves,
                "open_front": lm.open_front,
                "sleeve_ratio": lm.sleeve_ratio(),
                "torso_colour": g.torso_colour,
                "length_ratio": ratio,
                "length_class": class.as_str(),
            },
            "fit": {
                "scale": fit.scale,
                "ease": self.ease(),
                "shoulder_width_px": frame.shoulder_width,
                "hem_depth_px": fit.hem_depth,
                "worn_top_hem_px": worn,
                "cuffs_px": fit.cuffs.iter().map(|c| c.map(|c| [c.x, c.y])).collect::<Vec<_>>(),
                "skin_colour": frame.skin,
                "tone": frame.tone_sources(),
                "arms": frame.arms.iter().map(|a| json!({
                    "chain_px": a.chain.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(),
                    "visibility": a.visibility,
                })).collect::<Vec<_>>(),
                "sleeve_reach_px": fit.sleeve_reach,
            },
            "warp": {
                "cells": folds.iter().map(|f| f.0.cells).sum::<usize>(),
                "folded_cells": folds.iter().map(|f| f.0.folded).sum::<usize>(),
                "folded_cells_left": folds.iter().map(|f| f.1.folded).sum::<usize>(),
            },
            "compose": {
                "covered_px": stats.covered,
                "skin_filled_px": stats.skin_filled,
                "background_filled_px": stats.background_filled,
                "kept_in_front_px": stats.kept_in_front,
                "holes_closed_px": stats.holes_closed,                "hair_kept_px": stats.hair_kept,                "hair_samples": stats.hair_samples, "arms": stats.arms,
            },
            "stages_ms": {
                "garment": t_garment,
                "fit": t_fit,
                "warp": t_warp,
                "compose": t_compose,
            },
        });
        Ok(Look { image, metadata })
    }
}
