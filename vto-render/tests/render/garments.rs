//! Shirts, t-shirts and jackets: the warp kernel against its CPU reference, and try-ons of
//! the sample garments on the test photos — face and background outside the garment
//! untouched, the torso covered in the product's colour, the sleeve length the product's —
//! plus the engine's errors.
//!
//! Needs the models and the public-domain test photos in `VTO_MODELS_DIR` (default
//! `<workspace>/models`; `scripts/fetch-models.sh --test-photos`). A missing file fails the
//! test with the command to run; nothing is skipped.

use crate::support::{colour_distance, models_dir, px, render_with, renderer};
use std::sync::OnceLock;

use glam::Vec2;
use image::RgbaImage;
use vto_core::{Category, EngineError, ErrorCode};
use vto_render::engine::{builtin_tryon, encode_png};
use vto_render::garment::cutout::prepare;
use vto_render::garment::upper::fit::{fit_upper_to, PersonMask, UpperFit};
use vto_render::garment::warp::cpu_warp;
use vto_render::garment::{BodyFrame, PartWarp, Warper};
use vto_render::gpu::GpuContext;
use vto_render::samples::garment::SampleGarment;
use vto_render::tryon::{Person, ProductInput, TryOn, UpperGarment};

fn photo_bytes(name: &str) -> Vec<u8> {
    let path = models_dir().join("test-photos").join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh --test-photos (or set VTO_MODELS_DIR)",
            path.display()
        )
    })
}

/// A person as the engine sees them, with the fit of `garment` on them.
struct Case {
    photo: RgbaImage,
    person: Person,
    frame: BodyFrame,
    fit: UpperFit,
    result: RgbaImage,
    metadata: serde_json::Value,
}

fn case(photo: &str, garment: SampleGarment) -> Case {
    let bytes = photo_bytes(photo);
    let r = renderer();
    let tryon = match garment.category() {
        Category::Shirt => UpperGarment::Shirt,
        Category::Jacket => UpperGarment::Jacket,
        _ => UpperGarment::Tshirt,
    };
    let out = r
        .try_on(&tryon, &bytes, &garment.png())
        .unwrap_or_else(|e| panic!("{photo} {}: {e}", garment.name()));
    let img = vto_render::engine::decode_photo(&bytes).unwrap();
    let person = r.see(&img, tryon.needs()).unwrap();
    let frame = BodyFrame::new(&person).unwrap();
    let g = prepare(&garment.render()).unwrap();
    // The engine's fit: sleeves as wide as the arm in the person mask.
    let mask = person.mask.as_ref().map(|m| PersonMask {
        data: &m.data,
        size: img.dimensions(),
    });
    let fit = fit_upper_to(&g.landmarks, &frame, tryon.ease(), mask).unwrap();
    Case {
        photo: img,
        person,
        frame,
        fit,
        result: out.image,
        metadata: out.metadata,
    }
}

fn cases() -> &'static Vec<(String, SampleGarment, Case)> {
    static CASES: OnceLock<Vec<(String, SampleGarment, Case)>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut v = Vec::new();
        for photo in ["astronaut.png", "grace_hopper.jpg"] {
            for g in [
                SampleGarment::PlainTee,
                SampleGarment::LongShirt,
                SampleGarment::Jacket,
            ] {
                v.push((photo.to_string(), g, case(photo, g)));
            }
        }
        v
    })
}

fn inside(poly: &[Vec2], p: Vec2) -> bool {
    let mut c = false;
    let mut j = poly.len() - 1;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[j]);
        if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x {
            c = !c;
        }
        j = i;
    }
    c
}

#[test]
fn the_warp_kernel_matches_its_cpu_reference() {
    let ctx = GpuContext::shared().expect("a wgpu adapter (lavapipe in CI)");
    let g = prepare(&SampleGarment::LogoTee.render()).unwrap();
    let (w, h) = (200u32, 160u32);
    // A body frame made up of a straight torso and two hanging arms.
    let lm = &g.landmarks;
    let s = 0.25;
    let map = |p: Vec2| Vec2::new(100.0, 20.0) + (p - Vec2::new(400.0, 150.0)) * s;
    let part = |label: u8, pts: Vec<Vec2>, bend: Vec2| vto_render::garment::Part {
        label,
        body: pts
            .iter()
            .enumerate()
            .map(|(i, p)| map(*p) + bend * (i % 3) as f32)
            .collect(),
        region: [0.0, 0.0, w as f32, h as f32],
        garment: pts,
        tube: None,
    };
    let torso = part(
        1,
        vec![
            lm.shoulder[0],
            lm.shoulder[1],
            lm.hem[0],
            lm.hem[1],
            lm.armpit[0],
            lm.neck[1],
        ],
        Vec2::new(1.5, -1.0),
    );
    let sl = lm.sleeve[0].unwrap();
    let sleeve = part(
        2,
        vec![lm.shoulder[0], lm.armpit[0], sl.cuff, sl.root],
        Vec2::new(-2.0, 3.0),
    );
    let warps: Vec<PartWarp> = [sleeve, torso]
        .iter()
        .map(|p| PartWarp::solve(p, 200.0).unwrap())
        .collect();
    let gpu = Warper::for_context(&ctx).warp(&g, &warps, (w, h)).unwrap();
    let cpu = cpu_warp(&g, &warps, (w, h));
    let mut max = 0i32;
    let mut label_diff = 0;
    let mut covered = 0;
    for i in 0..(w * h) as usize {
        for c in 0..4 {
            max = max.max((i32::from(gpu.rgba[i][c]) - i32::from(cpu.rgba[i][c])).abs());
        }
        label_diff += usize::from(gpu.top[i] != cpu.top[i]);
        covered += usize::from(cpu.rgba[i][3] > 128);
    }
    assert!(
        covered > 2000,
        "the garment covers {covered} pixels of the grid"
    );
    assert!(max <= 2, "GPU and CPU differ by {max} levels");
    assert!(
        label_diff <= 20,
        "{label_diff} pixels disagree on the front part"
    );
}

#[test]
fn face_and_background_outside_the_garment_are_untouched() {
    for (photo, g, c) in cases() {
        // The face, shrunk a little towards its centre.
        let oval = &c.frame.face_oval;
        let centre = oval.iter().copied().sum::<Vec2>() / oval.len() as f32;
        let inner: Vec<Vec2> = oval.iter().map(|p| centre + (*p - centre) * 0.9).collect();
        let mask = c.person.mask.as_ref().unwrap();
        let regions: Vec<[f32; 4]> = c.fit.parts.iter().map(|p| p.region).collect();
        let (mut face_px, mut bg_px) = (0, 0);
        for (x, y, p) in c.photo.enumerate_pixels() {
            let q = Vec2::new(x as f32, y as f32);
            let same = p.0 == c.result.get_pixel(x, y).0;
            if inside(&inner, q) {
                face_px += 1;
                assert!(same, "{photo} {}: face pixel {x},{y} changed", g.name());
            }
            let in_regions = regions
                .iter()
                .any(|r| q.x >= r[0] && q.y >= r[1] && q.x <= r[2] && q.y <= r[3]);
            if mask.data[(y * c.photo.width() + x) as usize] < 0.02 && !in_regions {
                bg_px += 1;
                assert!(
                    same,
                    "{photo} {}: background pixel {x},{y} changed",
                    g.name()
                );
            }
        }
        assert!(
            face_px > 1000 && bg_px > 1000,
            "{photo}: {face_px} face, {bg_px} background pixels checked"
        );
    }
}

#[test]
fn the_torso_is_covered_in_the_products_colour() {
    for (photo, g, c) in cases() {
        let f = &c.frame;
        let product = g.render();
        let want = prepare(&product).unwrap().torso_colour.map(f32::from);
        // The inner half of the torso between the shoulders (a little below) and the hips
        // (or the photo's bottom), away from the arms; the jacket's open front is left out.
        let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5;
        let depth = (f.hips - mid).dot(f.down).min(c.fit.hem_depth);
        let (mut n, mut near, mut was_near) = (0, 0, 0);
        for i in 0..20 {
            for j in 0..10 {
                let t = 0.25 + 0.7 * i as f32 / 19.0;
                let u = -0.3 + 0.6 * j as f32 / 9.0;
                if *g == SampleGarment::Jacket && u.abs() < 0.2 {
                    continue;
                }
                let p = mid + f.down * depth * t + f.across * f.shoulder_width * u;
                let (Some(got), Some(before)) = (px(&c.result, p), px(&c.photo, p)) else {
                    continue;
                };
                n += 1;
                near += usize::from(colour_distance(got, want) < 0.25);
                was_near += usize::from(colour_distance(before, want) < 0.25);
            }
        }
        assert!(
            n >= 15,
            "{photo} {}: {n} torso samples in the photo",
            g.name()
        );
        assert!(
            near * 100 >= n * 85 && was_near * 100 < n * 50,
            "{photo} {}: {near}/{n} torso samples in the product's colour (before: {was_near})",
            g.name()
        );
    }
}

#[test]
fn the_sleeve_length_is_the_products() {
    for (photo, g, c) in cases() {
        let want = prepare(&g.render()).unwrap().torso_colour.map(f32::from);
        for (s, arm) in c.frame.arms.iter().enumerate() {
            // An arm the pose model does not see (behind the astronaut's helmet) is neither
            // drawn in front nor checked.
            if arm.visibility < vto_render::garment::body::frame::ARM_VISIBLE {
                continue;
            }
            let Some(_cuff) = c.fit.cuffs[s] else {
                panic!("{photo} {}: no sleeve {s}", g.name())
            };
            let [shoulder, elbow, wrist, _] = arm.chain;
            let upper = |t: f32| shoulder + (elbow - shoulder) * t;
            let fore = |t: f32| elbow + (wrist - elbow) * t;
            let (mut on, mut n_on, mut below, mut n_below) = (0, 0, 0, 0);
            for k in 0..12 {
                let t = k as f32 / 11.0;
                for p in [upper(0.15 + 0.3 * t)] {
                    if let Some(v) = px(&c.result, p) {
                        n_on += 1;
                        on += usize::from(colour_distance(v, want) < 0.25);
                    }
                }
                // Along the arm from past the cuff (plus a margin) to the wrist.
                let reach = c.fit.sleeve_reach[s] + 0.12 * c.frame.shoulder_width;
                let to_wrist = shoulder.distance(elbow) + elbow.distance(wrist);
                if reach < to_wrist {
                    let (p, _) = arm.along(shoulder, reach + (to_wrist - reach) * t);
                    if let Some(v) = px(&c.result, p) {
                        n_below += 1;
                        below += usize::from(colour_distance(v, want) < 0.25);
                    }
                }
            }
            if n_on >= 4 {
                assert!(
                    on * 2 >= n_on,
                    "{photo} {} arm {s}: {on}/{n_on} upper-arm samples in the sleeve",
                    g.name()
                );
            }
            if g.long_sleeves() {
                // The sleeve reaches the wrist: the forearm is the product's too.
                let mut n = 0;
                let mut hit = 0;
                for k in 0..10 {
                    if let Some(v) = px(&c.result, fore(0.1 + 0.7 * k as f32 / 9.0)) {
                        n += 1;
                        hit += usize::from(colour_distance(v, want) < 0.25);
                    }
                }
                if n >= 4 {
                    assert!(
                        hit * 2 >= n,
                        "{photo} {} arm {s}: {hit}/{n} forearm samples in the sleeve",
                        g.name()
                    );
                }
            } else if n_below >= 4 {
                assert!(
                    below * 5 <= n_below,
                    "{photo} {} arm {s}: {below}/{n_below} samples below the short sleeve in the product's colour",
                    g.name()
                );
            }
        }
        assert_eq!(c.metadata["garment"]["long_sleeves"], g.long_sleeves());
    }
}

fn run_engine(
    category: Category,
    person: Vec<u8>,
    product: Vec<u8>,
) -> Result<vto_core::Rendered, EngineError> {
    let tryon = builtin_tryon(category).expect("a built-in garment renderer");
    render_with(tryon, category, person, product)
}

#[test]
fn the_engines_are_registered_and_render_a_png() {
    for category in [Category::Shirt, Category::Tshirt, Category::Jacket] {
        let t = builtin_tryon(category).expect("registered");
        assert_eq!(t.product_input(), ProductInput::Image);
        let n = t.needs();
        assert!(n.face && n.body && n.person_mask);
    }
    let out = run_engine(
        Category::Tshirt,
        photo_bytes("astronaut.png"),
        SampleGarment::StripedTee.png(),
    )
    .unwrap();
    assert_eq!(out.content_type, "image/png");
    let img = image::load_from_memory(&out.image).unwrap();
    assert_eq!((img.width(), img.height()), (512, 512));
    assert_eq!(out.metadata["category"], "tshirt");
    assert!(out.metadata["compose"]["covered_px"].as_u64().unwrap() > 20_000);
}

#[test]
fn a_product_photo_without_a_garment_is_processing_failed_and_says_so() {
    let blank = RgbaImage::from_pixel(400, 400, image::Rgba([240, 240, 238, 255]));
    match run_engine(
        Category::Tshirt,
        photo_bytes("astronaut.png"),
        encode_png(&blank).unwrap(),
    ) {
        Err(EngineError::Rejected { code, message }) => {
            assert_eq!(code, ErrorCode::ProcessingFailed);
            assert!(message.contains("no garment"), "{message}");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_photo_without_a_person_is_processing_failed() {
    let mut sky = RgbaImage::new(320, 240);
    for (x, y, p) in sky.enumerate_pixels_mut() {
        *p = image::Rgba([(100 + x / 4) as u8, (150 + y / 8) as u8, 230, 255]);
    }
    match run_engine(
        Category::Jacket,
        encode_png(&sky).unwrap(),
        SampleGarment::Jacket.png(),
    ) {
        Err(EngineError::Rejected { code, message }) => {
            assert_eq!(code, ErrorCode::ProcessingFailed);
            assert!(
                message.contains("no face") || message.contains("no body"),
                "{message}"
            );
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

/// camera.png's cameraman stands in profile: a front-view garment cannot be fitted, and the
/// job says so instead of pasting a flat shirt across his side.
#[test]
fn a_person_turned_sideways_is_processing_failed_and_says_so() {
    match run_engine(
        Category::Shirt,
        photo_bytes("camera.png"),
        SampleGarment::LongShirt.png(),
    ) {
        Err(EngineError::Rejected { code, message }) => {
            assert_eq!(code, ErrorCode::ProcessingFailed);
            assert!(message.contains("sideways"), "{message}");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}
