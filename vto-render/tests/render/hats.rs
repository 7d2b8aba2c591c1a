//! Hats: placement of the sample cap, fedora and beanie on astronaut.png and grace_hopper.jpg
//! against their face landmarks, pixels outside the footprint, the forehead shadow, the
//! occluded back of the crown, determinism, and the engine's answers.
//!
//! Needs the models and the test photos (`VTO_MODELS_DIR`, default `<workspace>/models`;
//! `scripts/fetch-models.sh --test-photos`). A missing file fails the test with the command
//! to run; nothing is skipped.

use crate::support::{models_dir, render_with, renderer};
use std::sync::{Arc, OnceLock};

use image::RgbaImage;
use vto_core::{Category, EngineError, ErrorCode};
use vto_render::engine::encode_png;
use vto_render::raster::cpu_ids;
use vto_render::samples::product::hats::SampleHat;
use vto_render::tryon::hats::fit::{HatKind, HEAD_BREADTH_PER_FACE_WIDTH};
use vto_render::tryon::hats::{self, HatPlacement};
use vto_render::tryon::Placed;
use vto_render::tryon::{Hats, Options, Person, TryOn};

fn photo_bytes(name: &str) -> Vec<u8> {
    let path = models_dir().join("test-photos").join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh --test-photos",
            path.display()
        )
    })
}

/// The person (face and mask) of a test photo, seen once.
fn person(name: &'static str) -> &'static Person {
    static SEEN: OnceLock<std::sync::Mutex<Vec<(&'static str, &'static Person)>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let mut seen = seen.lock().unwrap();
    if let Some((_, p)) = seen.iter().find(|(n, _)| *n == name) {
        return p;
    }
    let photo = image::load_from_memory(&photo_bytes(name))
        .expect("the photo decodes")
        .to_rgba8();
    let p = renderer().see(&photo, Hats.needs()).unwrap();
    assert!(p.face.is_some(), "{name}: a face");
    assert!(p.mask.is_some(), "{name}: a person mask");
    let p: &'static Person = Box::leak(Box::new(p));
    seen.push((name, p));
    p
}

fn prepare(p: &Person, hat: SampleHat) -> Placed<HatPlacement> {
    let face = &p.face.as_ref().unwrap().face;
    hats::prepare(
        &p.photo,
        face,
        p.mask.as_ref(),
        &hat.product(),
        &Options::default(),
    )
    .unwrap()
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

fn dist3(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

const PHOTOS: [&str; 2] = ["astronaut.png", "grace_hopper.jpg"];

#[test]
fn the_opening_sits_above_the_forehead_and_is_as_wide_as_the_head() {
    for name in PHOTOS {
        let p = person(name);
        let lm = &p.face.as_ref().unwrap().face.landmarks;
        let face_height = dist([lm[10][0], lm[10][1]], [lm[152][0], lm[152][1]]);
        let head_width = HEAD_BREADTH_PER_FACE_WIDTH * dist3(lm[234], lm[454]);
        for hat in SampleHat::ALL {
            let pl = prepare(p, hat).placement;
            // The opening crosses the forehead's midline above the brows: caps and brimmed
            // hats 1.5 cm under the forehead top (by landmark 151), beanies lower (half-way
            // between 151 and landmark 9 at the brows' top).
            let e = if pl.kind.0 == HatKind::Beanie {
                [(lm[151][0] + lm[9][0]) / 2.0, (lm[151][1] + lm[9][1]) / 2.0]
            } else {
                [lm[151][0], lm[151][1]]
            };
            let off = dist(pl.opening_front_px, e) / face_height;
            assert!(
                off < 0.05,
                "{name} {}: opening front {:?} vs {e:?}: {:.1} % of the face height",
                hat.name(),
                pl.opening_front_px,
                100.0 * off
            );
            assert!(
                pl.opening_front_px[1] < lm[105][1].min(lm[334][1]),
                "above the brows"
            );
            // The opening's centre lies on the face's midline (the line 152 → 10).
            let (a, b) = ([lm[152][0], lm[152][1]], [lm[10][0], lm[10][1]]);
            let c = pl.opening_centre_px;
            let cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            let aside = cross.abs() / dist(a, b) / face_height;
            assert!(
                aside < 0.05,
                "{name} {}: {:.1} % off the midline",
                hat.name(),
                100.0 * aside
            );
            let width = dist(pl.opening_ends_px[0], pl.opening_ends_px[1]);
            let ratio = width / head_width;
            assert!(
                (0.85..=1.15).contains(&ratio),
                "{name} {}: opening {width:.0} px, head {head_width:.0} px",
                hat.name()
            );
        }
    }
}

/// Output pixels covered by any product sample, from the CPU reference.
pub(crate) fn footprint(p: &Placed<HatPlacement>, width: u32, height: u32) -> Vec<bool> {
    let s = p.scene.as_ref().expect("a scene");
    let (ids, _) = cpu_ids(s);
    let [x0, y0, w, _] = s.roi;
    let ww = (w * s.ss) as usize;
    let plane = ids.len() / 2;
    let mut covered = vec![false; (width * height) as usize];
    for k in 0..plane {
        if ids[k] != u32::MAX || ids[plane + k] != u32::MAX {
            let (x, y) = (x0 + (k % ww) as u32 / s.ss, y0 + (k / ww) as u32 / s.ss);
            covered[(y * width + x) as usize] = true;
        }
    }
    covered
}

fn luminance(p: &image::Rgba<u8>) -> f32 {
    0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2])
}

#[test]
fn only_the_footprint_and_its_shadow_change_and_the_forehead_darkens() {
    let p = person("grace_hopper.jpg");
    let (w, h) = p.photo.dimensions();
    for hat in SampleHat::ALL {
        let prepared = prepare(p, hat);
        let (out, stats) = renderer()
            .rasterizer()
            .render(&p.photo, prepared.scene.as_ref().expect("a scene"))
            .unwrap();
        assert_eq!(out.dimensions(), p.photo.dimensions());
        assert!(stats.occluded_fragments > 0, "the head hides the back");
        assert!(stats.drawn_fragments > 1000);
        let covered = footprint(&prepared, w, h);
        let reach = prepared.scene.as_ref().expect("a scene").shadow.reach() as i64 + 1;
        let mut near = vec![false; covered.len()];
        for y in 0..h as i64 {
            for x in 0..w as i64 {
                if !covered[(y * w as i64 + x) as usize] {
                    continue;
                }
                for dy in -reach..=reach {
                    for dx in -reach..=reach {
                        let (xx, yy) = (x + dx, y + dy);
                        if xx >= 0 && yy >= 0 && xx < w as i64 && yy < h as i64 {
                            near[(yy * w as i64 + xx) as usize] = true;
                        }
                    }
                }
            }
        }
        let mut changed_outside = 0;
        for (i, (a, b)) in out.pixels().zip(p.photo.pixels()).enumerate() {
            if a != b && !near[i] {
                changed_outside += 1;
            }
        }
        assert_eq!(
            changed_outside,
            0,
            "{}: pixels changed off the footprint",
            hat.name()
        );
        // The forehead just under the hat, on the face's midline, is darker than in the photo
        // and nowhere lighter.
        let lm = &p.face.as_ref().unwrap().face.landmarks;
        let x = lm[151][0].round() as u32;
        let bottom = (0..h)
            .rev()
            .find(|&y| covered[(y * w + x) as usize] && y < lm[9][1] as u32)
            .expect("the hat covers the forehead's midline");
        let (mut before, mut after) = (0.0, 0.0);
        for y in bottom + 1..bottom + 1 + reach as u32 {
            for xx in x - 4..=x + 4 {
                let (a, b) = (
                    luminance(out.get_pixel(xx, y)),
                    luminance(p.photo.get_pixel(xx, y)),
                );
                assert!(
                    a <= b + 1.0,
                    "{}: lighter under the hat at ({xx}, {y})",
                    hat.name()
                );
                after += a;
                before += b;
            }
        }
        assert!(
            after < before - 1.0,
            "{}: no shadow ({after} vs {before})",
            hat.name()
        );
    }
}

fn run_engine(person: Vec<u8>, model: Vec<u8>) -> Result<vto_core::Rendered, EngineError> {
    render_with(Arc::new(Hats), Category::Hats, person, model)
}

#[test]
fn the_engine_is_deterministic_keeps_the_size_and_refuses_a_photo_without_a_face() {
    let photo = photo_bytes("astronaut.png");
    let a = run_engine(photo.clone(), SampleHat::FedoraFelt.glb()).unwrap();
    let b = run_engine(photo.clone(), SampleHat::FedoraFelt.glb()).unwrap();
    assert_eq!(a.image, b.image, "deterministic");
    let img = image::load_from_memory(&a.image).unwrap();
    let input = image::load_from_memory(&photo).unwrap();
    assert_eq!(img.width(), input.width());
    assert_eq!(img.height(), input.height());
    assert_eq!(a.metadata["category"], "hats");
    assert_eq!(a.metadata["kind"], "brimmed");
    assert_eq!(a.metadata["kind_source"], "extras");
    assert_eq!(a.metadata["fit"], "conventions");

    let mut sky = RgbaImage::new(320, 240);
    for (x, y, p) in sky.enumerate_pixels_mut() {
        *p = image::Rgba([(100 + x / 4) as u8, (150 + y / 8) as u8, 230, 255]);
    }
    match run_engine(encode_png(&sky).unwrap(), SampleHat::CapNavy.glb()).unwrap_err() {
        EngineError::Rejected { code, message } => {
            assert_eq!(code, ErrorCode::ProcessingFailed);
            assert!(message.contains("no face"), "{message}");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn the_hat_turns_with_a_turned_head() {
    // camera.png: the photographer looks down and to the side (yaw ≈ 50°); the opening
    // still crosses his forehead's midline by landmark 151.
    let p = person("camera.png");
    let lm = &p.face.as_ref().unwrap().face.landmarks;
    let face_height = dist([lm[10][0], lm[10][1]], [lm[152][0], lm[152][1]]);
    let pl = prepare(p, SampleHat::CapNavy).placement;
    let off = dist(pl.opening_front_px, [lm[151][0], lm[151][1]]) / face_height;
    assert!(off < 0.08, "{:.1} % of the face height", 100.0 * off);
}

/// Covered pixels of the footprint's column through landmark 10 above the opening's front,
/// over the face height.
fn crown_above_band(p: &Person, placed: &Placed<HatPlacement>) -> f32 {
    let lm = &p.face.as_ref().unwrap().face.landmarks;
    let face_height = dist([lm[10][0], lm[10][1]], [lm[152][0], lm[152][1]]);
    let (w, h) = p.photo.dimensions();
    let covered = footprint(placed, w, h);
    let x = lm[10][0].round() as u32;
    let front = placed.placement.opening_front_px[1].max(0.0) as u32;
    let n = (0..front.min(h))
        .filter(|&y| covered[(y * w + x) as usize])
        .count();
    n as f32 / face_height
}

#[test]
fn a_cap_with_a_low_crown_still_shows_its_crown_over_the_forehead() {
    // A crown lower than the head (here the sample cap squashed to 55 % of its height, as a
    // real shop cap exported flat) was hidden inside the head: only the visor showed, as a
    // band at the brows. Its height is now stretched to reach out of the skull.
    let mut low = SampleHat::CapNavy.product();
    for prim in &mut low.primitives {
        for v in &mut prim.positions {
            v[1] *= 0.55;
        }
    }
    for name in PHOTOS {
        let p = person(name);
        let face = &p.face.as_ref().unwrap().face;
        let normal = prepare(p, SampleHat::CapNavy);
        // Made to the conventions, it reaches out of the skull unstretched; over hair
        // standing on top of the head (the astronaut's) a little more.
        let stretch = normal.placement.crown_stretch;
        assert!(
            stretch == 1.0 || (normal.placement.hair_above_cm > 0.0 && stretch < 1.15),
            "{name}: the sample's crown stretched {stretch:.3} (hair above {:.2} cm)",
            normal.placement.hair_above_cm
        );
        let placed =
            hats::prepare(&p.photo, face, p.mask.as_ref(), &low, &Options::default()).unwrap();
        let (shown, full) = (crown_above_band(p, &placed), crown_above_band(p, &normal));
        println!(
            "{name}: crown above the band {shown:.2} of the face height (the sample's {full:.2}); \
             stretch {:.2}",
            placed.placement.crown_stretch
        );
        assert!(
            shown > 0.8 * full,
            "{name}: the low crown shows {shown:.2} of the face height above the band, the \
             sample's {full:.2}"
        );
    }
}

#[test]
fn a_low_poly_cap_is_measured_round_its_wall_not_along_its_visor() {
    // The KaramellGlass cap (1,404 triangles, front along −x, arbitrary units): its wall's
    // slices hold almost no vertices, so its length fell back to 1.32 × its breadth with
    // the visor, and the crown, squeezed to 0.9 of the breadth's scale front to back, sank
    // inside the forehead (only the visor showed, at the brows).
    let path = crate::support::testdata("products").join("hat_cap_karamellglass_khabib.glb");
    let Ok(bytes) = std::fs::read(&path) else {
        println!(
            "SKIPPED: {} is missing (the real-product corpus sits beside the repo)",
            path.display()
        );
        return;
    };
    let product = vto_render::product::load(&bytes).expect("the cap loads");
    let pose =
        vto_render::product::pose::infer(&product, vto_render::product::pose::PoseCategory::Hat);
    let m = hats::fit::read_model(&pose.apply(&product)).expect("a hat");
    // Its crown is about as long as it is broad (64 × 71 units above the visor).
    let ratio = m.length / m.breadth;
    assert!(
        (0.8..1.05).contains(&ratio),
        "length {:.1} / breadth {:.1} = {ratio:.2}",
        m.length,
        m.breadth
    );
}

#[test]
fn a_cap_covers_the_hair_standing_on_top_of_the_head() {
    // The face-paint portrait's short curly hair stands about 1.7 cm above the skull model:
    // the KaramellGlass cap's crown, stretched only to clear the skull, ended 30 px (6 % of
    // the face height) below the hair's top, the hair showing above it.
    let dir = crate::support::testdata("people");
    let (photo_path, cap_path) = (
        dir.join("portrait_woman_face_paint_earrings_cc0.png"),
        crate::support::testdata("products").join("hat_cap_karamellglass_khabib.glb"),
    );
    let (Ok(photo), Ok(cap)) = (std::fs::read(&photo_path), std::fs::read(&cap_path)) else {
        println!(
            "SKIPPED: {} or {} is missing (the real-input corpus sits beside the repo)",
            photo_path.display(),
            cap_path.display()
        );
        return;
    };
    let photo = image::load_from_memory(&photo).unwrap().to_rgba8();
    let p = renderer().see(&photo, Hats.needs()).unwrap();
    let (face, mask) = (&p.face.as_ref().unwrap().face, p.mask.as_ref().unwrap());
    let product = vto_render::product::load(&cap).expect("the cap loads");
    let placed = hats::prepare(&p.photo, face, Some(mask), &product, &Options::default()).unwrap();
    let lm = &face.landmarks;
    let face_height = dist([lm[10][0], lm[10][1]], [lm[152][0], lm[152][1]]);
    let (w, h) = p.photo.dimensions();
    let covered = footprint(&placed, w, h);
    let x = lm[10][0].round() as u32;
    let hat_top = (0..h)
        .find(|&y| covered[(y * w + x) as usize])
        .expect("the cap");
    let hair_top = (0..h)
        .find(|&y| mask.data[(y * w + x) as usize] > 0.5)
        .expect("the hair");
    let gap = (hat_top as f32 - hair_top as f32) / face_height;
    println!(
        "hair above the cap: {:.1} % of the face height (hair_above_cm {:.2}, stretch {:.2})",
        100.0 * gap,
        placed.placement.hair_above_cm,
        placed.placement.crown_stretch
    );
    assert!(
        gap < 0.02,
        "the hair shows {:.1} % of the face height above the cap",
        100.0 * gap
    );
}
