//! The lower-body garment gallery: every sample trousers, shorts, dress and outfit on the
//! drawn full-body figures ([`vto_render::samples::garment::figure`]) — person, product and result
//! side by side (one PNG each) and an HTML page, for a person to look at.
//!
//! `cargo run -p vto-render --release --example lower_gallery -- [OUT_DIR]` (default
//! `target/lower-gallery`). Models from `VTO_MODELS_DIR` (default `./models`): the renderer
//! is built as for any job, but the figures' keypoints and masks are given, not seen.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use image::{imageops, RgbaImage};
use vto_render::engine::{default_models_dir, Renderer};
use vto_render::samples::garment::Figure;
use vto_render::samples::garment::SampleLower;
use vto_render::tryon::{Dress, FullOutfit, LoadedProduct, Pants, TryOn};

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

fn tryon_for(s: SampleLower) -> Box<dyn TryOn> {
    match s.category() {
        vto_core::Category::Pants => Box::new(Pants),
        vto_core::Category::Dress => Box::new(Dress),
        _ => Box::new(FullOutfit),
    }
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/lower-gallery"));
    std::fs::create_dir_all(&out).expect("create the output directory");
    let renderer = Renderer::new(&default_models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut html = String::from(
        "<!doctype html><meta charset=utf-8><title>vto lower-body gallery</title>\
         <style>body{font-family:sans-serif;background:#222;color:#eee}\
         img{max-width:1400px;margin:4px}pre{font-size:11px;white-space:pre-wrap}</style>\
         <h1>vto: pants, dresses, outfits on drawn figures (person, product, result)</h1>",
    );
    let figures = [
        ("jeans", Figure::jeans(600, 1000)),
        ("wide", Figure::wide_stance(600, 1000)),
    ];
    for (fname, fig) in figures {
        let person = fig.person();
        person
            .photo
            .save(out.join(format!("{fname}-person.png")))
            .expect("write");
        for s in SampleLower::ALL {
            let tryon = tryon_for(s);
            let product = s.render();
            product
                .save(out.join(format!("product-{}.png", s.name())))
                .expect("write");
            let name = format!("{fname}-{}", s.name());
            let t = Instant::now();
            let look = tryon.try_on(
                renderer.stages(),
                &person,
                &LoadedProduct::Image(product.clone()),
            );
            let took = t.elapsed().as_secs_f64() * 1e3;
            match look {
                Ok(l) => {
                    l.image
                        .save(out.join(format!("{name}.png")))
                        .expect("write");
                    side_by_side(&[&person.photo, &product, &l.image], 640)
                        .save(out.join(format!("{name}-side.png")))
                        .expect("write");
                    println!("{name}: {took:.0} ms {}", l.metadata["stages_ms"]);
                    let meta = serde_json::to_string_pretty(&l.metadata).unwrap_or_default();
                    let _ = write!(
                        html,
                        "<h3>{name}</h3><img src=\"{name}-side.png\"><pre>{}</pre>",
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
