//! Runs the vision stack on a photo and prints the report.
//!
//! ```text
//! cargo run -p vto-render --example inspect -- PHOTO [--json OUT.json] [--overlay OUT.png]
//! ```
//!
//! Models from `VTO_MODELS_DIR` (default `./models`; fetch them with
//! `scripts/fetch-models.sh`). The models run on vto's wgpu TFLite executor.

use std::path::PathBuf;

use vto_render::gpu::GpuContext;
use vto_render::models::ModelStore;
use vto_render::vision::{draw_overlay, Networks, Vision};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let photo = args
        .next()
        .ok_or("usage: inspect PHOTO [--json OUT] [--overlay OUT.png]")?;
    let (mut json, mut overlay) = (None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = args.next().map(PathBuf::from),
            "--overlay" => overlay = args.next().map(PathBuf::from),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let dir = std::env::var_os("VTO_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("models"));
    let store = ModelStore::open(&dir)?;
    let ctx = GpuContext::shared()?;
    let nets = Networks::gpu(&ctx, &store)?;
    let mut vision = Vision::new(ctx, nets);
    let image = image::open(&photo)?.to_rgba8();
    let report = vision.inspect(&image)?;
    for (i, f) in report.faces.iter().enumerate() {
        let d = &f.detection;
        println!(
            "face {i}: box ({:.0}, {:.0})-({:.0}, {:.0}) score {:.3} via {:?}",
            d.xmin, d.ymin, d.xmax, d.ymax, f.score, f.detector
        );
        if let Some(p) = &f.head_pose {
            let [y, pi, r] = p.yaw_pitch_roll_deg;
            println!(
                "  head pose: yaw {y:.1}° pitch {pi:.1}° roll {r:.1}°, {:.2} px/cm",
                p.scale
            );
        }
    }
    match &report.body {
        Some(b) => println!(
            "body: score {:.3}, {} visible keypoints, mask coverage {:.3}",
            b.score,
            b.keypoints.iter().filter(|k| k.visibility > 0.5).count(),
            b.mask_coverage
        ),
        None => println!("body: none"),
    }
    println!("selfie mask coverage {:.3}", report.selfie_mask_coverage);
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    if let Some(path) = overlay {
        draw_overlay(&image, &report).save(path)?;
    }
    Ok(())
}
