//! The wearer's own hat, taken off before a `hats` try-on.
//!
//! A person who already wears a hat would otherwise get the new hat drawn over the old one,
//! whose brim and crown stay round it. Before the new hat is placed, [`take_off`]:
//! 1. **detects** a worn hat ([`detect`]): what is part of the person (the selfie
//!    segmentation mask) above the brows but neither skin nor hair-like, connected to the
//!    zone above the forehead where every hat sits; a confidence 0–1;
//! 2. **decides** by the request's [`RemoveOwnHat`]: `auto` removes it when the confidence is
//!    at least [`AUTO_THRESHOLD`], `never` never does, `always` removes whatever was traced;
//! 3. **removes** it ([`remove`]): the hat's mask, grown, filled by the fill stage
//!    ([`crate::fill`]) from the background beyond the head's outline ([`outline`]: the skull
//!    and its hair, projected) and from the hair and skin inside it, so the head keeps a
//!    plausible top and no brim floats round the new hat.
//!
//! Without removal the photo is not touched: the try-on is byte-identical to one without
//! this stage.

pub mod colour;
pub mod detect;
pub mod outline;
pub mod region;
pub mod remove;

use std::time::Instant;

use image::RgbaImage;
use serde_json::json;
pub use vto_core::RemoveOwnHat;

use crate::vision::Mask;
use detect::P2;

/// `auto` removes the wearer's hat at this confidence or above (see `docs/own-hat.md` for
/// what the real portraits scored).
pub const AUTO_THRESHOLD: f32 = 0.5;

/// What happened to the wearer's own hat (the `own_hat` metadata).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnHat {
    /// The request's choice.
    pub mode: RemoveOwnHat,
    /// The detector's confidence (0–1) that the person wears a hat; `None` when it could not
    /// judge (no person mask, a face too small).
    pub confidence: Option<f32>,
    /// The share of the zone above the forehead the traced hat covers.
    pub crown_share: Option<f32>,
    /// The traced hat's area beyond the head's outline, over the head's area.
    pub beyond_share: Option<f32>,
    /// The silhouette's overhang beyond the head at a brim's height (face heights), image-left
    /// side first ([`detect::overhang`]).
    pub overhang: Option<[f32; 2]>,
    /// Whether a hat was found (confidence ≥ [`AUTO_THRESHOLD`]).
    pub found: bool,
    /// Whether it was removed.
    pub removed: bool,
    /// Why it was not removed, when found but kept.
    pub kept_because: Option<String>,
    /// The traced hat's area (pixels), before it was grown for the fill.
    pub area_px: usize,
    /// How many pixels the fill replaced.
    pub filled_pixels: usize,
    /// Milliseconds spent detecting.
    pub detect_ms: f64,
    /// Milliseconds spent masking and filling (0 without removal).
    pub remove_ms: f64,
}

impl OwnHat {
    /// The metadata object.
    pub fn to_json(&self) -> serde_json::Value {
        let r3 = |v: Option<f32>| v.map(|c| (f64::from(c) * 1000.0).round() / 1000.0);
        json!({
            "mode": self.mode.as_str(),
            "found": self.found,
            "removed": self.removed,
            "confidence": r3(self.confidence),
            "crown_share": r3(self.crown_share),
            "beyond_share": r3(self.beyond_share),
            "overhang": self.overhang.map(|o| o.map(|v| (f64::from(v) * 1000.0).round() / 1000.0)),
            "kept_because": self.kept_because,
            "area_px": self.area_px,
            "filled_pixels": self.filled_pixels,
            "timings_ms": {"detect": self.detect_ms, "remove": self.remove_ms},
        })
    }
}

/// Detects the hat on the head with landmarks `lm` in `photo` (person mask `mask`, head
/// outline `outline`: [`outline::head_outline`]) and, as `mode` decides, removes it. Returns
/// the photo without it (`None` when nothing was removed) and what happened.
pub fn take_off(
    photo: &RgbaImage,
    lm: &[[f32; 3]],
    mask: Option<&Mask>,
    outline: &[P2],
    mode: RemoveOwnHat,
) -> (Option<RgbaImage>, OwnHat) {
    let mut report = OwnHat {
        mode,
        confidence: None,
        crown_share: None,
        beyond_share: None,
        overhang: None,
        found: false,
        removed: false,
        kept_because: None,
        area_px: 0,
        filled_pixels: 0,
        detect_ms: 0.0,
        remove_ms: 0.0,
    };
    if mode == RemoveOwnHat::Never {
        report.kept_because = Some("remove_own_hat is never".into());
        return (None, report);
    }
    let t0 = Instant::now();
    let found = detect::detect(photo, lm, mask, outline);
    report.detect_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (Some(found), Some(mask)) = (found, mask) else {
        return (None, report);
    };
    report.confidence = Some(found.confidence);
    report.crown_share = Some(found.crown_share);
    report.beyond_share = Some(found.beyond_share);
    report.overhang = Some(found.overhang);
    report.found = found.confidence >= AUTO_THRESHOLD;
    report.area_px = found.hat.count();
    let remove = match mode {
        RemoveOwnHat::Never => false,
        RemoveOwnHat::Always => true,
        RemoveOwnHat::Auto => report.found,
    };
    if !remove {
        return (None, report);
    }
    if report.area_px == 0 {
        report.kept_because = Some("nothing was traced to remove".into());
        return (None, report);
    }
    let t1 = Instant::now();
    let m = remove::hat_mask(&found, outline, photo.width(), photo.height());
    let out = match remove::remove(photo, &found, &m, mask) {
        Ok(img) => {
            report.removed = true;
            report.filled_pixels = m.pixels;
            Some(img)
        }
        Err(e) => {
            report.kept_because = Some(format!("the fill failed: {e}"));
            None
        }
    };
    report.remove_ms = t1.elapsed().as_secs_f64() * 1e3;
    (out, report)
}
