//! `vto inpaint`: the fill stage on its own — fill a photo's masked pixels from the rest of
//! the photo, for checking the stage and for operators who prepare photos.

use std::path::Path;

use anyhow::Context as _;
use serde_json::json;

use vto_render::fill::{self, THRESHOLD};

/// Fills the pixels of `photo` where `mask` is white (≥ 128) and writes the result to `out`
/// (its format from the extension; PNG keeps an alpha channel). A guide, when given, limits
/// where the fill may copy from (white = may copy).
pub fn inpaint(
    photo: &Path,
    mask: &Path,
    guide: Option<&Path>,
    out: &Path,
    json_mode: bool,
) -> anyhow::Result<()> {
    let image = image::open(photo).with_context(|| format!("reading {}", photo.display()))?;
    let mask_img = image::open(mask)
        .with_context(|| format!("reading {}", mask.display()))?
        .to_luma8();
    let guide_img = guide
        .map(|g| {
            image::open(g)
                .with_context(|| format!("reading {}", g.display()))
                .map(|i| i.to_luma8())
        })
        .transpose()?;
    let filled_px = mask_img
        .as_raw()
        .iter()
        .filter(|&&m| m >= THRESHOLD)
        .count();
    let started = std::time::Instant::now();
    let result: image::DynamicImage = if image.color().has_alpha() {
        fill::fill_rgba(&image.to_rgba8(), &mask_img, guide_img.as_ref())
            .with_context(|| format!("filling {}", photo.display()))?
            .into()
    } else {
        fill::fill(&image.to_rgb8(), &mask_img, guide_img.as_ref())
            .with_context(|| format!("filling {}", photo.display()))?
            .into()
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    result
        .save(out)
        .with_context(|| format!("writing {}", out.display()))?;
    if json_mode {
        println!(
            "{}",
            json!({"output": out.display().to_string(), "width": result.width(),
                   "height": result.height(), "filled_pixels": filled_px,
                   "fill_ms": (ms * 10.0).round() / 10.0})
        );
    } else {
        println!(
            "wrote {} ({filled_px} pixels filled in {ms:.1} ms)",
            out.display()
        );
    }
    Ok(())
}
