//! A skirt on its own in the `dress` category: told from a dress by its top edge
//! ([`reads_as_skirt`]) or by the request's `product_kind`, measured from its waistband
//! ([`measure_skirt`]), hung from the body's waist ([`hang_skirt`]) and composed as trousers
//! are ([`compose_pants`](crate::garment::lower::compose::compose_pants), through the
//! trousers' `wear_bottom`): the worn top stays over the waistband, the hands and the shoes
//! in front, the legs below the hem uncovered.

use std::time::Instant;

use image::RgbaImage;
use serde_json::{json, Value};
use vto_core::ProductKind;

use super::lower::{ms, wear_bottom, Body, Bottom, Times};
use crate::garment::body::worn_top::worn_top_hem;
use crate::garment::cutout::skirt::{measure_skirt, reads_as_skirt};
use crate::garment::cutout::Cutout;
use crate::garment::label;
use crate::garment::lower::hang::hang_skirt;
use crate::garment::PartWarp;
use crate::tryon::{Stages, TryOnError};

/// Whether the `dress` product in `cut` is worn as a skirt: as the request's `product_kind`
/// says, else by its top edge. The second value says which (`request` or `shape`).
pub(super) fn is_skirt(cut: &Cutout, kind: Option<ProductKind>) -> (bool, &'static str) {
    match kind {
        Some(ProductKind::Skirt) => (true, "request"),
        Some(ProductKind::Dress) => (false, "request"),
        _ => {
            let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
            (reads_as_skirt(&cut.fg, w, h), "shape")
        }
    }
}

/// Dresses `current` (the person photo) in the skirt of `cut`.
pub(super) fn wear_skirt(
    stages: Stages<'_>,
    b: &Body,
    current: &RgbaImage,
    cut: &Cutout,
    times: &mut Times,
) -> Result<(RgbaImage, Value), TryOnError> {
    let t = Instant::now();
    let (w0, h0) = (cut.img.width() as usize, cut.img.height() as usize);
    let (lm, labels) = measure_skirt(&cut.fg, w0, h0).ok_or_else(|| {
        TryOnError::NotFound(
            "no skirt could be measured in the product photo (no waistband across its top, or \
             the garment is far wider than tall)"
                .into(),
        )
    })?;
    let (rgba, colour) = cut.texture(&labels, |l| l == label::SKIRT);
    times.garment += ms(t);
    let t = Instant::now();
    let (w, h) = current.dimensions();
    let hung = hang_skirt(&lm, &b.frame, &b.legs)?;
    let warps = [PartWarp::solve(&hung.part, w.max(h) as f32)?];
    let top = worn_top_hem(current, &b.mask, &b.frame, &b.legs);
    times.fit += ms(t);
    let (image, compose) = wear_bottom(
        stages,
        b,
        current,
        cut,
        &Bottom {
            rgba: &rgba,
            labels: &labels,
            warps: &warps,
            top,
            replaced_top: None,
            waist_centre: hung.waist_centre,
            hem_reach: hung.hem_reach,
        },
        times,
    )?;
    Ok((
        image,
        json!({
            "kind": "skirt",
            "colour": colour,
            "length": lm.length_class(),
            "length_ratio": lm.length_ratio(),
            "scale": hung.scale,
            "waist_centre_px": [hung.waist_centre.x, hung.waist_centre.y],
            "hem_centre_px": [hung.hem_centre.x, hung.hem_centre.y],
            "hem_reach_px": hung.hem_reach,
            "worn_top_hem_px": top.map(|t| t.hem),
            "compose": compose,
        }),
    ))
}
