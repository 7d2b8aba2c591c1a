//! The full-body test subjects (feature `testkit`): renders the standard subjects, runs the
//! real networks on them (pose, selfie segmentation, face) and prints the pose keypoints'
//! error against the ground truth (px and % of the body's height), then writes
//! `OUT_DIR/<subject>.png` and `OUT_DIR/<subject>_pose.png` (ground truth green, MediaPipe red);
//! then every sample shoe, lower garment, outfit and top on every subject, side by side with
//! the input (`OUT_DIR/<subject>_<product>.png`), and warm timings per category on a 1024²
//! subject (the whole engine: decode, vision, render, encode).
//!
//! `cargo run -p vto-render --release --features testkit --example subjects_gallery -- [OUT_DIR] [W H]`
//! (default `target/gallery/subjects`, 768×1024; models and MPFB2 assets from
//! `scripts/fetch-models.sh --test-photos`, `VTO_MODELS_DIR`).

use std::path::PathBuf;
use std::time::Instant;

use image::{Rgba, RgbaImage};
use vto_core::Category;
use vto_render::engine::{builtin_tryon, encode_png};
use vto_render::engine::{default_models_dir, Renderer};
use vto_render::math::Vec2;
use vto_render::samples::garment::SampleGarment;
use vto_render::samples::garment::SampleLower;
use vto_render::samples::product::shoes::SampleShoe;
use vto_render::testkit::{self, BaseBody, Subject};
use vto_render::tryon::{Needs, Person};

/// Every sample product: (name, category, product bytes).
fn products() -> Vec<(String, Category, Vec<u8>)> {
    let mut v: Vec<(String, Category, Vec<u8>)> = Vec::new();
    for s in [SampleShoe::Sneaker, SampleShoe::Boot] {
        v.push((s.name().into(), Category::Shoes, s.glb()));
    }
    for s in SampleLower::ALL {
        v.push((s.name().into(), s.category(), s.png()));
    }
    for s in [
        SampleGarment::PlainTee,
        SampleGarment::LongShirt,
        SampleGarment::Jacket,
    ] {
        v.push((s.name().into(), s.category(), s.png()));
    }
    v
}

/// `a` and `b` side by side.
fn side_by_side(a: &RgbaImage, b: &RgbaImage) -> RgbaImage {
    let mut out = RgbaImage::new(a.width() + b.width(), a.height().max(b.height()));
    image::imageops::replace(&mut out, a, 0, 0);
    image::imageops::replace(&mut out, b, i64::from(a.width()), 0);
    out
}

/// Every product on `person` (seen once), saved side by side with the input.
fn dress(
    renderer: &Renderer,
    out: &std::path::Path,
    s: &Subject,
    person: &Person,
) -> Result<(), Box<dyn std::error::Error>> {
    for (name, category, bytes) in products() {
        let Some(tryon) = builtin_tryon(category) else {
            continue;
        };
        let product = match tryon.product_input() {
            vto_render::tryon::ProductInput::Model => {
                vto_render::tryon::LoadedProduct::Model(vto_render::product::load(&bytes)?)
            }
            vto_render::tryon::ProductInput::Image => {
                vto_render::tryon::LoadedProduct::Image(image::load_from_memory(&bytes)?.to_rgba8())
            }
        };
        let t = Instant::now();
        match tryon.try_on(renderer.stages(), person, &product) {
            Ok(look) => {
                println!(
                    "  {name:<22} {:>5.0} ms (seen once)",
                    t.elapsed().as_secs_f64() * 1e3
                );
                side_by_side(&s.image, &look.image)
                    .save(out.join(format!("{}_{name}.png", s.spec.pose.name())))?;
            }
            Err(e) => println!("  {name:<22} FAILED: {e}"),
        }
    }
    Ok(())
}

/// The hand close-up (stretch): does MediaPipe's palm and hand-landmark pair find it?
fn hand(
    renderer: &Renderer,
    body: &BaseBody,
    out: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    for spec in testkit::standard((768, 768)).iter().take(2) {
        let shot = testkit::render_hand(body, spec, renderer.rasterizer())?;
        let seen = renderer.see(
            &shot.image,
            Needs {
                face: false,
                face_optional: false,
                body: false,
                person_mask: false,
                hands: true,
                face_of_body: false,
            },
        )?;
        let mut img = shot.image.clone();
        dot(&mut img, shot.wrist.x, shot.wrist.y, Rgba([0, 220, 0, 255]));
        dot(
            &mut img,
            shot.knuckle.x,
            shot.knuckle.y,
            Rgba([0, 220, 0, 255]),
        );
        print!(
            "\nhand close-up ({}): {} hand(s) found",
            spec.pose.name(),
            seen.hands.len()
        );
        if let Some(h) = seen.hands.first() {
            let wrist = h.landmarks.first().map(|p| Vec2::new(p[0], p[1]));
            let knuckle = h.landmarks.get(9).map(|p| Vec2::new(p[0], p[1]));
            if let (Some(wr), Some(kn)) = (wrist, knuckle) {
                let size = shot.extent.1.distance(shot.extent.0);
                println!(
                    "; wrist err {:.0} px, middle knuckle err {:.0} px (hand {:.0} px across)",
                    wr.distance(shot.wrist),
                    kn.distance(shot.knuckle),
                    size
                );
                for p in &h.landmarks {
                    dot(&mut img, p[0], p[1], Rgba([230, 0, 0, 255]));
                }
            }
        } else {
            println!();
        }
        img.save(out.join(format!("hand_{}.png", spec.pose.name())))?;
    }
    Ok(())
}

/// Warm timings of the whole engine per category on a 1024² subject.
fn timings(renderer: &Renderer, body: &BaseBody) -> Result<(), Box<dyn std::error::Error>> {
    let spec = testkit::standard((1024, 1024))[0];
    let s = testkit::render(body, &spec, renderer.rasterizer())?;
    let photo = encode_png(&s.image)?;
    println!("\nwarm timings at 1024×1024 (median of 3 after one warm-up; ms):");
    println!(
        "  {:<22} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "product", "total", "decode", "vision", "render", "encode"
    );
    for (name, category, bytes) in products() {
        let Some(tryon) = builtin_tryon(category) else {
            continue;
        };
        let _ = renderer.try_on(tryon.as_ref(), &photo, &bytes);
        let mut runs = Vec::new();
        for _ in 0..3 {
            match renderer.try_on(tryon.as_ref(), &photo, &bytes) {
                Ok(o) => runs.push(o.timings),
                Err(e) => {
                    println!("  {name:<22} FAILED: {e}");
                    break;
                }
            }
        }
        if runs.is_empty() {
            continue;
        }
        runs.sort_by_key(|t| t.decode + t.vision + t.raster + t.encode);
        let t = runs[runs.len() / 2];
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!(
            "  {name:<22} {:>6.0} {:>6.0} {:>6.0} {:>6.0} {:>6.0}",
            ms(t.decode + t.vision + t.raster + t.encode),
            ms(t.decode),
            ms(t.vision),
            ms(t.raster),
            ms(t.encode)
        );
    }
    Ok(())
}

const NAMES: [(usize, &str); 14] = [
    (11, "shoulder L"),
    (12, "shoulder R"),
    (23, "hip L"),
    (24, "hip R"),
    (25, "knee L"),
    (26, "knee R"),
    (27, "ankle L"),
    (28, "ankle R"),
    (29, "heel L"),
    (30, "heel R"),
    (31, "toe L"),
    (32, "toe R"),
    (15, "wrist L"),
    (16, "wrist R"),
];

fn dot(img: &mut RgbaImage, x: f32, y: f32, c: Rgba<u8>) {
    for dy in -3i32..=3 {
        for dx in -3i32..=3 {
            let (px, py) = (x as i32 + dx, y as i32 + dy);
            if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, c);
            }
        }
    }
}

fn name(s: &Subject) -> String {
    s.spec.pose.name().to_string()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(
        args.first()
            .cloned()
            .unwrap_or_else(|| "target/gallery/subjects".into()),
    );
    let size = match (args.get(1), args.get(2)) {
        (Some(w), Some(h)) => (w.parse()?, h.parse()?),
        _ => (768, 1024),
    };
    std::fs::create_dir_all(&out)?;
    let models = default_models_dir();
    let renderer = Renderer::new(&models)?;
    let t = Instant::now();
    let body = BaseBody::load(&testkit::assets_dir(&models))?;
    println!(
        "base mesh loaded in {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    for spec in testkit::standard(size) {
        let t = Instant::now();
        let s = testkit::render(&body, &spec, renderer.rasterizer())?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        s.image.save(out.join(format!("{}.png", name(&s))))?;
        let t = Instant::now();
        let seen = renderer.see(
            &s.image,
            Needs {
                face: true,
                face_optional: false,
                body: true,
                person_mask: true,
                hands: true,
                face_of_body: false,
            },
        )?;
        let vms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "\n{}: rendered in {ms:.0} ms, vision {vms:.0} ms; body height {:.0} px; face {}",
            name(&s),
            s.height_px,
            if seen.face.is_some() {
                "found"
            } else {
                "NOT found"
            }
        );
        if let Some(m) = &seen.mask {
            // Selfie mask against the ground-truth body pixels (IoU).
            let (mut inter, mut uni) = (0u32, 0u32);
            for (i, &b) in s.mask.iter().enumerate() {
                let p = m.data.get(i).copied().unwrap_or(0.0) > 0.5;
                inter += (p && b) as u32;
                uni += (p || b) as u32;
            }
            println!(
                "  selfie mask IoU with the body: {:.2}",
                inter as f32 / uni.max(1) as f32
            );
        }
        let Some(b) = &seen.body else {
            println!("  pose: NO BODY found");
            continue;
        };
        println!("  pose score {:.2}", b.score);
        if let (Some(l), Some(r)) = (b.keypoints.get(11), b.keypoints.get(12)) {
            let face = seen.face.as_ref().map_or(0.0, |c| c.face.width_px());
            println!(
                "  shoulders {:.0} px across, pose depth difference {:.0} px, face {face:.0} px wide",
                (l.x - r.x).hypot(l.y - r.y),
                (l.z - r.z).abs()
            );
        }
        let mut img = s.image.clone();
        for (i, label) in NAMES {
            let (Some(gt), Some(k)) = (s.point(i), b.keypoints.get(i)) else {
                continue;
            };
            let e = ((k.x - gt.x).powi(2) + (k.y - gt.y).powi(2)).sqrt();
            println!(
                "  {label:<10} err {e:5.1} px ({:4.1}% of height)  vis {:.2}",
                100.0 * e / s.height_px,
                k.visibility
            );
            dot(&mut img, gt.x, gt.y, Rgba([0, 220, 0, 255]));
            dot(&mut img, k.x, k.y, Rgba([230, 0, 0, 255]));
        }
        img.save(out.join(format!("{}_pose.png", name(&s))))?;
        if std::env::var_os("SUBJECTS_ONLY").is_none() {
            dress(&renderer, &out, &s, &seen)?;
        }
    }
    hand(&renderer, &body, &out)?;
    if std::env::var_os("SUBJECTS_ONLY").is_none() {
        timings(&renderer, &body)?;
    }
    Ok(())
}
