//! The full-body test subjects (feature `testkit`): renders the standard subjects, runs the
//! real networks on them (pose, selfie segmentation, face) and prints the pose keypoints'
//! error against the ground truth (px and % of the body's height), then writes
//! `OUT_DIR/<subject>.png` and `OUT_DIR/<subject>_pose.png` (ground truth green, MediaPipe red).
//!
//! `cargo run -p vto-render --release --features testkit --example subjects_gallery -- [OUT_DIR] [W H]`
//! (default `target/gallery/subjects`, 768×1024; models and MPFB2 assets from
//! `scripts/fetch-models.sh --test-photos`, `VTO_MODELS_DIR`).

use std::path::PathBuf;
use std::time::Instant;

use image::{Rgba, RgbaImage};
use vto_render::engine::{default_models_dir, Renderer};
use vto_render::testkit::{self, BaseBody, Subject};
use vto_render::tryon::Needs;

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
    println!("base mesh loaded in {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
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
                body: true,
                person_mask: true,
                hands: false,
            },
        )?;
        let vms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "\n{}: rendered in {ms:.0} ms, vision {vms:.0} ms; body height {:.0} px; face {}",
            name(&s),
            s.height_px,
            if seen.face.is_some() { "found" } else { "NOT found" }
        );
        if let Some(m) = &seen.mask {
            // Selfie mask against the ground-truth body pixels (IoU).
            let (mut inter, mut uni) = (0u32, 0u32);
            for (i, &b) in s.mask.iter().enumerate() {
                let p = m.data.get(i).copied().unwrap_or(0.0) > 0.5;
                inter += (p && b) as u32;
                uni += (p || b) as u32;
            }
            println!("  selfie mask IoU with the body: {:.2}", inter as f32 / uni.max(1) as f32);
        }
        let Some(b) = &seen.body else {
            println!("  pose: NO BODY found");
            continue;
        };
        println!("  pose score {:.2}", b.score);
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
    }
    Ok(())
}
