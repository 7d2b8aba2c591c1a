//! The hats and jewelry gallery: every sample hat and jewel on every test photo, as an HTML
//! page (input and output side by side, with the metadata) for a person to look at, and the
//! warm timings per category on a 1024² photo.
//!
//! `cargo run -p vto-render --release --example gallery_hats_jewelry -- [OUT_DIR] [PHOTO...]`
//! (default `target/gallery_hats_jewelry`, photos `astronaut.png`, `camera.png` and
//! `grace_hopper.jpg` from `$VTO_MODELS_DIR/test-photos`; see `scripts/fetch-models.sh
//! --test-photos`). Models from `VTO_MODELS_DIR` (default `./models`). Open
//! `OUT_DIR/index.html`; every sample is also written as `OUT_DIR/<name>.glb`. `--timings-only` skips the gallery; `GALLERY_NO_TIMINGS=1` skips
//! the timings; `GALLERY_ONLY=word` renders only the samples whose name contains it.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use image::imageops::FilterType;
use image::{Rgba, RgbaImage};
use vto_render::engine::{default_models_dir, encode_png, Renderer};
use vto_render::samples::product::hats::SampleHat;
use vto_render::samples::product::jewelry::SampleJewel;
use vto_render::tryon::jewelry::{collar, necklace};
use vto_render::tryon::{Hats, Jewelry, TryOn};

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Every sample of every category: (category engine, sample name, model bytes).
fn samples() -> Vec<(Box<dyn TryOn>, String, Vec<u8>)> {
    let mut out: Vec<(Box<dyn TryOn>, String, Vec<u8>)> = Vec::new();
    for hat in SampleHat::ALL {
        out.push((Box::new(Hats), hat.name().to_string(), hat.glb()));
    }
    for jewel in SampleJewel::ALL {
        out.push((Box::new(Jewelry), jewel.name().to_string(), jewel.glb()));
    }
    out
}

/// The rendered region (the metadata's `roi`, with a margin) enlarged 3×, for a close look.
fn zoom(image: &image::RgbaImage, roi: &serde_json::Value) -> Option<image::RgbaImage> {
    let r: Vec<u32> = roi
        .as_array()?
        .iter()
        .filter_map(|v| v.as_u64().map(|v| v as u32))
        .collect();
    let [x, y, w, h] = <[u32; 4]>::try_from(r).ok()?;
    let m = 12;
    let (x0, y0) = (x.saturating_sub(m), y.saturating_sub(m));
    let x1 = (x + w + m).min(image.width());
    let y1 = (y + h + m).min(image.height());
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let crop = image::imageops::crop_imm(image, x0, y0, x1 - x0, y1 - y0).to_image();
    let k = (480 / (x1 - x0).max(y1 - y0)).clamp(1, 3);
    Some(image::imageops::resize(
        &crop,
        (x1 - x0) * k,
        (y1 - y0) * k,
        FilterType::Nearest,
    ))
}

/// What the necklace is placed from, drawn on the photo: the face's vertical (landmarks 10 →
/// 152, grey), the chin (red), the body's shoulders (pose 11 / 12, blue) and their middle
/// (cyan, with the vertical through it), the neck's base (green) and the pendant (magenta).
fn neck_overlay(renderer: &Renderer, photo: &[u8], pendant: Option<[f32; 2]>) -> Option<RgbaImage> {
    let img = image::load_from_memory(photo).ok()?.to_rgba8();
    let needs = vto_render::tryon::Needs {
        face: true,
        body: true,
        ..Default::default()
    };
    let seen = renderer.see(&img, needs).ok()?;
    let face = &seen.face.as_ref()?.face;
    let lm = &face.landmarks;
    let face_w = ((lm[234][0] - lm[454][0]).powi(2) + (lm[234][1] - lm[454][1]).powi(2)).sqrt();
    let neck = necklace::neck(face, seen.body.as_ref(), img.width(), img.height())?
        .on_skin_midline(
            collar::neck_skin(&img, face).as_ref(),
            necklace::MIDLINE_MAX_SHIFT * face_w,
        );
    let mut out = img.clone();
    let r = (img.width().max(img.height()) / 200).max(2) as i32;
    let mut dot = |p: [f32; 2], c: [u8; 3], r: i32| {
        for dy in -r..=r {
            for dx in -r..=r {
                let (x, y) = (p[0] as i32 + dx, p[1] as i32 + dy);
                if x >= 0 && y >= 0 && (x as u32) < out.width() && (y as u32) < out.height() {
                    out.put_pixel(x as u32, y as u32, Rgba([c[0], c[1], c[2], 255]));
                }
            }
        }
    };
    let (top, chin) = (lm[10], lm[152]);
    for i in 0..=200 {
        let t = i as f32 / 100.0;
        let p = [
            top[0] + (chin[0] - top[0]) * t,
            top[1] + (chin[1] - top[1]) * t,
        ];
        dot(p, [150, 150, 150], 0);
    }
    if let Some((l, rr)) = seen
        .body
        .as_ref()
        .and_then(|b| Some((b.keypoints.get(11)?, b.keypoints.get(12)?)))
    {
        dot([l.x, l.y], [0, 90, 255], r);
        dot([rr.x, rr.y], [0, 90, 255], r);
        let mid = [(l.x + rr.x) / 2.0, (l.y + rr.y) / 2.0];
        for y in (chin[1] as i32)..(img.height() as i32) {
            dot([mid[0], y as f32], [0, 220, 220], 0);
        }
        dot(mid, [0, 220, 220], r);
    }
    dot([chin[0], chin[1]], [230, 0, 0], r);
    dot(neck.base_px.to_array(), [0, 200, 0], r);
    if let Some(p) = pendant {
        dot(p, [230, 0, 230], r);
    }
    Some(out)
}

/// Median warm time (ms) of `runs` try-ons, after one warm-up.
fn timing(renderer: &Renderer, tryon: &dyn TryOn, photo: &[u8], model: &[u8]) -> (f64, f64) {
    let _ = renderer.try_on(tryon, photo, model);
    let mut total = Vec::new();
    let mut raster = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let Ok(r) = renderer.try_on(tryon, photo, model) else {
            return (f64::NAN, f64::NAN);
        };
        total.push(t.elapsed().as_secs_f64() * 1e3);
        raster.push(r.timings.raster.as_secs_f64() * 1e3);
    }
    total.sort_by(f64::total_cmp);
    raster.sort_by(f64::total_cmp);
    (total[2], raster[2])
}

fn main() {
    let only = std::env::var("GALLERY_ONLY").unwrap_or_default();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let timings_only = args.iter().any(|a| a == "--timings-only");
    args.retain(|a| a != "--timings-only");
    let mut args = args.into_iter();
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/gallery_hats_jewelry"));
    let mut photos: Vec<PathBuf> = args.map(PathBuf::from).collect();
    let models = default_models_dir();
    if photos.is_empty() {
        photos = ["astronaut.png", "camera.png", "grace_hopper.jpg"]
            .iter()
            .map(|p| models.join("test-photos").join(p))
            .collect();
    }
    std::fs::create_dir_all(&out).expect("create the output directory");
    let renderer = Renderer::new(&models).unwrap_or_else(|e| panic!("{e}"));
    let samples = samples();
    for (_, name, model) in &samples {
        std::fs::write(out.join(format!("{name}.glb")), model).expect("write the model");
    }

    // Warm timings on a 1024² photo (the first photo, resized).
    let timings = std::env::var_os("GALLERY_NO_TIMINGS").is_none();
    if let Some(first) = photos.first().filter(|_| timings) {
        if let Ok(img) = image::open(first) {
            let big = image::imageops::resize(&img.to_rgba8(), 1024, 1024, FilterType::Triangle);
            let png = encode_png(&big).expect("encode");
            println!("warm timings, 1024² ({}), median of 5:", first.display());
            for (tryon, name, model) in &samples {
                let (total, raster) = timing(&renderer, tryon.as_ref(), &png, model);
                println!(
                    "  {:<8} {:<18} total {total:7.1} ms  raster {raster:6.1} ms",
                    tryon.category().as_str(),
                    name
                );
            }
        }
    }
    if timings_only {
        return;
    }

    let mut html = String::from(
        "<!doctype html><meta charset=utf-8><title>vto hats and jewelry gallery</title>\
         <style>body{font-family:sans-serif;background:#222;color:#eee}\
         img{max-width:480px;margin:4px}td{vertical-align:top;padding:6px}\
         pre{font-size:11px;max-width:480px;max-height:240px;overflow:auto;white-space:pre-wrap}</style>\
         <h1>vto: hats and jewelry</h1><table>",
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
        let ext = photo
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "png".into());
        let input_name = format!("{stem}.{ext}");
        std::fs::write(out.join(&input_name), &person).expect("write the input");
        for (tryon, name, model) in &samples {
            if !name.contains(only.as_str()) {
                continue;
            }
            let category = tryon.category().as_str();
            let label = format!("{stem} · {category} · {name}");
            let cell = match renderer.try_on(tryon.as_ref(), &person, model) {
                Ok(r) => {
                    let file = format!("{stem}_{category}_{name}.png");
                    std::fs::write(out.join(&file), &r.png).expect("write the output");
                    let meta = serde_json::to_string_pretty(&r.metadata).unwrap_or_default();
                    // The necklace's anchors drawn on the photo, to judge the midline.
                    let neck = r.metadata["worn"]["pendant_px"]
                        .as_array()
                        .and_then(|p| {
                            Some([p.first()?.as_f64()? as f32, p.get(1)?.as_f64()? as f32])
                        })
                        .and_then(|p| neck_overlay(&renderer, &person, Some(p)))
                        .map(|img| {
                            let name = format!("{stem}_{category}_{name}_neck.png");
                            img.save(out.join(&name)).expect("write the neck overlay");
                            format!("<img src=\"{name}\">")
                        });
                    let zoom = zoom(&r.image, &r.metadata["roi"]).map(|z| {
                        let name = format!("{stem}_{category}_{name}_zoom.png");
                        z.save(out.join(&name)).expect("write the zoom");
                        format!("<img src=\"{name}\">")
                    });
                    format!(
                        "<img src=\"{file}\">{}{}<pre>{}</pre>",
                        zoom.unwrap_or_default(),
                        neck.unwrap_or_default(),
                        escape(&meta)
                    )
                }
                Err(e) => format!("<p>{}</p>", escape(&e.to_string())),
            };
            let _ = write!(
                html,
                "<tr><td colspan=2><h3>{}</h3></td></tr><tr><td><img src=\"{input_name}\"></td><td>{cell}</td></tr>",
                escape(&label)
            );
            println!("{label}");
        }
    }
    #[cfg(feature = "testkit")]
    cg_necklaces(&renderer, &models, &out, &mut html);
    html.push_str("</table>");
    std::fs::write(out.join("index.html"), html).expect("write index.html");
    println!("{}", out.join("index.html").display());
}

/// The necklace on the CG test subjects (feature `testkit`), with the anchors drawn, and
/// the pendant's distance from the rig's shoulders' middle (ground truth) printed.
#[cfg(feature = "testkit")]
fn cg_necklaces(
    renderer: &Renderer,
    models: &std::path::Path,
    out: &std::path::Path,
    html: &mut String,
) {
    use vto_render::testkit;
    let body = match testkit::BaseBody::load(&testkit::assets_dir(models)) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("no CG subjects: {e}");
            return;
        }
    };
    let model = SampleJewel::NecklacePendant.glb();
    for spec in testkit::standard((768, 1024)) {
        let Ok(s) = testkit::render(&body, &spec, renderer.rasterizer()) else {
            continue;
        };
        let stem = format!("cg_{}", spec.pose.name());
        let Ok(bytes) = encode_png(&s.image) else {
            continue;
        };
        let cell = match renderer.try_on(&Jewelry, &bytes, &model) {
            Ok(r) => {
                let file = format!("{stem}_necklace.png");
                std::fs::write(out.join(&file), &r.png).expect("write");
                let pendant = r.metadata["worn"]["pendant_px"]
                    .as_array()
                    .and_then(|p| Some([p.first()?.as_f64()? as f32, p.get(1)?.as_f64()? as f32]));
                if let (Some(p), Some(l), Some(rr)) = (pendant, s.point(11), s.point(12)) {
                    let mid = (l.x + rr.x) / 2.0;
                    println!(
                        "{stem}: pendant x {:.1}, the rig's shoulders' middle {mid:.1} ({:.1} % of \
                         their {:.0} px)",
                        p[0],
                        100.0 * (p[0] - mid).abs() / (l.x - rr.x).abs().max(1.0),
                        (l.x - rr.x).abs()
                    );
                }
                let zoom = zoom(&r.image, &r.metadata["roi"]).map(|z| {
                    let name = format!("{stem}_necklace_zoom.png");
                    z.save(out.join(&name)).expect("write the zoom");
                    format!("<img src=\"{name}\">")
                });
                let neck = neck_overlay(renderer, &bytes, pendant).map(|img| {
                    let name = format!("{stem}_necklace_neck.png");
                    img.save(out.join(&name)).expect("write");
                    format!("<img src=\"{name}\">")
                });
                format!(
                    "<img src=\"{file}\">{}{}<pre>{}</pre>",
                    zoom.unwrap_or_default(),
                    neck.unwrap_or_default(),
                    escape(&serde_json::to_string_pretty(&r.metadata).unwrap_or_default())
                )
            }
            Err(e) => format!("<p>{}</p>", escape(&e.to_string())),
        };
        let _ = write!(
            html,
            "<tr><td colspan=2><h3>{stem} · necklace_pendant</h3></td></tr><tr><td colspan=2>{cell}</td></tr>"
        );
    }
}
