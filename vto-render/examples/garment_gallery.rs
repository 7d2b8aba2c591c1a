//! The garment gallery: for every sample garment on every photo, the person, the product and
//! the result side by side (one PNG each) and an HTML page, for a person to look at.
//!
//! `cargo run -p vto-render --release --example garment_gallery -- [OUT_DIR] [PHOTO...]`
//! (default `target/garment-gallery`, photos from `<models dir>/test-photos`). Models from
//! `VTO_MODELS_DIR` (default `./models`). Open `OUT_DIR/index.html`.

use std::fmt::Write as _;
use std::path::PathBuf;

use image::{imageops, RgbaImage};
use vto_render::engine::{default_models_dir, Renderer};
use vto_render::samples::garment::SampleGarment;
use vto_render::tryon::{TryOn, UpperGarment};

fn tryon_for(g: SampleGarment) -> UpperGarment {
    match g.category() {
        vto_core::Category::Shirt => UpperGarment::Shirt,
        vto_core::Category::Jacket => UpperGarment::Jacket,
        _ => UpperGarment::Tshirt,
    }
}

/// `images` scaled to `height` and placed side by side on grey.
fn side_by_side(images: &[&RgbaImage], height: u32) -> RgbaImage {
    let scaled: Vec<RgbaImage> = images
        .iter()
        .map(|im| {
            let w = (im.width() as f32 * height as f32 / im.height() as f32).round() as u32;
            imageops::resize(*im, w.max(1), height, imageops::FilterType::Triangle)
        })
        .collect();
    let width = scaled.iter().map(|s| s.width() + 8).sum::<u32>();
    let mut out = RgbaImage::from_pixel(width, height, image::Rgba([60, 60, 60, 255]));
    let mut x = 0;
    for s in &scaled {
        imageops::overlay(&mut out, s, i64::from(x), 0);
        x += s.width() + 8;
    }
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/garment-gallery"));
    let mut photos: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if photos.is_empty() {
        let dir = default_models_dir().join("test-photos");
        photos = ["astronaut.png", "grace_hopper.jpg", "camera.png"]
            .iter()
            .map(|f| dir.join(f))
            .collect();
    }
    std::fs::create_dir_all(&out).expect("create the output directory");
    let renderer = Renderer::new(&default_models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let only: Option<String> = std::env::var("GALLERY_ONLY").ok();
    let mut html = String::from(
        "<!doctype html><meta charset=utf-8><title>vto garment gallery</title>\
         <style>body{font-family:sans-serif;background:#222;color:#eee}\
         img{max-width:1400px;margin:4px}pre{font-size:11px;white-space:pre-wrap}</style>\
         <h1>vto: shirts, t-shirts, jackets (person, product, result)</h1>",
    );
    for photo in &photos {
        let Ok(person) = std::fs::read(photo) else {
            eprintln!("skipping {}: unreadable", photo.display());
            continue;
        };
        let stem = photo
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(person_img) = image::load_from_memory(&person).map(|i| i.to_rgba8()) else {
            eprintln!("skipping {}: not an image", photo.display());
            continue;
        };
        for g in SampleGarment::ALL {
            if only.as_deref().is_some_and(|o| !g.name().contains(o)) {
                continue;
            }
            let product_png = g.png();
            let product_img = g.render();
            let tryon = tryon_for(g);
            let name = format!("{stem}-{}", g.name());
            match renderer.try_on(&tryon, &person, &product_png) {
                Ok(r) => {
                    r.image
                        .save(out.join(format!("{name}.png")))
                        .expect("write");
                    side_by_side(&[&person_img, &product_img, &r.image], 512)
                        .save(out.join(format!("{name}-side.png")))
                        .expect("write");
                    let meta = serde_json::to_string_pretty(&r.metadata).unwrap_or_default();
                    println!(
                        "{name}: {} total {:.0} ms (decode {:.0}, vision {:.0}, render {:.0}, encode {:.0}) {}",
                        tryon.category().as_str(),
                        (r.timings.decode + r.timings.vision + r.timings.raster + r.timings.encode)
                            .as_secs_f64()
                            * 1e3,
                        r.timings.decode.as_secs_f64() * 1e3,
                        r.timings.vision.as_secs_f64() * 1e3,
                        r.timings.raster.as_secs_f64() * 1e3,
                        r.timings.encode.as_secs_f64() * 1e3,
                        r.metadata["stages_ms"],
                    );
                    let _ = write!(
                        html,
                        "<h3>{name} ({})</h3><img src=\"{name}-side.png\"><pre>{}</pre>",
                        tryon.category().as_str(),
                        meta.replace('<', "&lt;")
                    );
                }
                Err(e) => {
                    println!("{name}: error: {e}");
                    let _ = write!(html, "<h3>{name}</h3><pre>error: {e}</pre>");
                }
            }
        }
    }
    std::fs::write(out.join("index.html"), html).expect("write index.html");
    println!("open {}", out.join("index.html").display());
}
