//! The wearer's own glasses, taken off before a `glasses` or `sunglasses` try-on.
//!
//! A person who wears glasses would otherwise get the new frame drawn over their own. Before
//! the product is placed, [`take_off`]:
//! 1. **detects** worn eyewear on the chosen face ([`detect`]): rims traced around each eye,
//!    a bar across the nose, the temples, and whether the lenses are dark; a confidence 0–1;
//! 2. **decides** by the request's [`RemoveOwnEyewear`]: `auto` removes when the confidence
//!    is at least [`AUTO_THRESHOLD`] (and the lenses are clear, or the new product is
//!    sunglasses: see below; and the head is turned at most [`AUTO_MAX_YAW_DEG`]), `never`
//!    never does, `always` removes whatever was traced;
//! 3. **removes** ([`remove`]): the frame's mask (rims, bridge, temples; the lenses' insides
//!    too when they are dark) filled with the fill stage ([`crate::fill`]) from the face's
//!    skin. Through clear lenses the eyes are the wearer's own, so they are never in the mask
//!    and never a source.
//!
//! **Dark lenses** hide the eyes: nothing in the photo says what they look like, so the fill
//! puts skin there (a face without eyes under the lenses). Under new sunglasses that is
//! hidden by the new tinted lenses; under new clear glasses it would show, so `auto` keeps
//! dark glasses on for a `glasses` try-on (the metadata says why) and only `always` takes
//! them off.
//!
//! Without removal the photo is not touched at all: the try-on is byte-identical to one
//! without this stage.

pub mod detect;
pub mod remove;

use std::time::Instant;

use image::RgbaImage;
use serde_json::json;
pub use vto_core::RemoveOwnEyewear;

/// `auto` keeps the glasses of a head turned further than this (degrees of yaw): the far
/// rim and the temple are foreshortened and partly hidden, the traced frame misses them and
/// the fill has little face to copy from (a near-profile portrait came out damaged).
pub const AUTO_MAX_YAW_DEG: f32 = 35.0;

/// `auto` removes the wearer's glasses at this confidence or above. On the real portraits of
/// `../shared/testdata/people` every face with glasses scored 0.83 or more and every face
/// without 0.26 or less (`docs/own-eyewear.md`).
pub const AUTO_THRESHOLD: f32 = 0.5;

/// What happened to the wearer's own glasses (the `own_eyewear` metadata).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnEyewear {
    /// The request's choice.
    pub mode: RemoveOwnEyewear,
    /// The detector's confidence (0–1) that the face wears glasses; `None` when the face's
    /// landmarks could not be measured.
    pub confidence: Option<f32>,
    /// Whether glasses were found (confidence ≥ [`AUTO_THRESHOLD`]).
    pub found: bool,
    /// Whether their lenses are dark.
    pub tinted: bool,
    /// Whether they were removed.
    pub removed: bool,
    /// Why they were not removed, when found but kept.
    pub kept_because: Option<String>,
    /// How many pixels the fill replaced.
    pub filled_pixels: usize,
    /// Milliseconds spent detecting and removing.
    pub detect_ms: f64,
    /// Milliseconds spent masking and filling (0 without removal).
    pub remove_ms: f64,
}

impl OwnEyewear {
    /// The metadata object.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "mode": self.mode.as_str(),
            "found": self.found,
            "removed": self.removed,
            "confidence": self.confidence.map(|c| (f64::from(c) * 1000.0).round() / 1000.0),
            "tinted": self.tinted,
            "kept_because": self.kept_because,
            "filled_pixels": self.filled_pixels,
            "timings_ms": {"detect": self.detect_ms, "remove": self.remove_ms},
        })
    }
}

/// Detects the glasses on the face with landmarks `lm` (head yaw `yaw_deg`, when measured)
/// in `photo` and, as `mode` decides, removes them. `new_lenses_clear`: the product about to
/// be put on has clear lenses (`glasses`). Returns the photo without them (`None` when
/// nothing was removed) and what happened.
pub fn take_off(
    photo: &RgbaImage,
    lm: &[[f32; 3]],
    yaw_deg: Option<f32>,
    mode: RemoveOwnEyewear,
    new_lenses_clear: bool,
) -> (Option<RgbaImage>, OwnEyewear) {
    let t0 = Instant::now();
    let found = detect::detect(photo, lm);
    let detect_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut report = OwnEyewear {
        mode,
        confidence: found.as_ref().map(|f| f.confidence),
        found: found
            .as_ref()
            .is_some_and(|f| f.confidence >= AUTO_THRESHOLD),
        tinted: found.as_ref().is_some_and(|f| f.tinted),
        removed: false,
        kept_because: None,
        filled_pixels: 0,
        detect_ms,
        remove_ms: 0.0,
    };
    let Some(found) = found else {
        return (None, report);
    };
    let remove = match mode {
        RemoveOwnEyewear::Never => {
            if report.found {
                report.kept_because = Some("remove_own_eyewear is never".into());
            }
            false
        }
        RemoveOwnEyewear::Always => true,
        RemoveOwnEyewear::Auto if report.found && found.tinted && new_lenses_clear => {
            report.kept_because = Some(
                "dark lenses: the eyes behind them are not in the photo, and new clear \
                 lenses would show the fill (remove_own_eyewear=always removes them)"
                    .into(),
            );
            false
        }
        RemoveOwnEyewear::Auto
            if report.found && yaw_deg.is_some_and(|y| y.abs() > AUTO_MAX_YAW_DEG) =>
        {
            report.kept_because = Some(format!(
                "the head is turned {:.0}° (more than {AUTO_MAX_YAW_DEG}°): the frame cannot be \
                 traced reliably (remove_own_eyewear=always removes it)",
                yaw_deg.unwrap_or(0.0).abs()
            ));
            false
        }
        RemoveOwnEyewear::Auto => report.found,
    };
    if !remove {
        return (None, report);
    }
    let t1 = Instant::now();
    let mask = remove::frame_mask(photo, &found, lm);
    let out = if mask.pixels == 0 {
        report.kept_because = Some("nothing was traced to remove".into());
        None
    } else {
        match remove::remove(photo, &mask) {
            Ok(img) => {
                report.removed = true;
                report.filled_pixels = mask.pixels;
                Some(img)
            }
            Err(e) => {
                report.kept_because = Some(format!("the fill failed: {e}"));
                None
            }
        }
    };
    report.remove_ms = t1.elapsed().as_secs_f64() * 1e3;
    (out, report)
}
