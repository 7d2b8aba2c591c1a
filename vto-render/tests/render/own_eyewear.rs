//! The wearer's own glasses (issue #31 item 5): found on the real portraits that have them and
//! not on the others, a rendered frame taken off again, and a photo without glasses left
//! byte-identical.
//!
//! The photos are the kept-back real inputs, `../shared/testdata/people` beside the workspace
//! (or `VTO_TESTDATA`); without them or the models each test prints why it skips.

use crate::support::{models_dir, renderer, testdata};

use image::RgbaImage;
use vto_core::{Category, RemoveOwnEyewear, RenderOptions};
use vto_render::engine::{builtin_tryon, decode_photo, encode_png};
use vto_render::samples::product::eyewear::SampleFrame;
use vto_render::tryon::own_eyewear::detect::{inside, FaceFrame};
use vto_render::tryon::own_eyewear::{take_off, AUTO_THRESHOLD};
use vto_render::tryon::Needs;

/// The people photo `name` as the engine decodes it (EXIF orientation applied), or `None`
/// (and why, printed) when it or the models are missing.
fn photo(name: &str) -> Option<RgbaImage> {
    if !models_dir().join("face_landmark.tflite").is_file() {
        eprintln!(
            "skipped: no models in {} (scripts/fetch-models.sh)",
            models_dir().display()
        );
        return None;
    }
    let path = testdata("people").join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Some(decode_photo(&bytes).expect("a test photo decodes")),
        Err(e) => {
            eprintln!(
                "skipped: {} not readable ({e}); the real test photos live in \
                 ../shared/testdata/people beside the workspace, or set VTO_TESTDATA",
                path.display()
            );
            None
        }
    }
}

/// The landmarks of the face a glasses try-on would use.
fn landmarks(img: &RgbaImage) -> Vec<[f32; 3]> {
    let person = renderer()
        .see(
            img,
            Needs {
                face: true,
                ..Needs::default()
            },
        )
        .unwrap();
    person.face.expect("a face").face.landmarks
}

/// A glasses or sunglasses try-on of `frame` on `img` through the renderer, with `mode`.
fn try_on(
    img: &RgbaImage,
    category: Category,
    frame: SampleFrame,
    mode: RemoveOwnEyewear,
) -> (Vec<u8>, serde_json::Value) {
    let tryon = builtin_tryon(category).unwrap();
    let out = renderer()
        .try_on_with(
            tryon.as_ref(),
            &encode_png(img).unwrap(),
            &frame.glb(),
            &RenderOptions {
                remove_own_eyewear: mode,
                ..RenderOptions::default()
            },
        )
        .unwrap();
    (out.png, out.metadata)
}

/// Portraits whose person wears glasses (`true`) or not, per `SOURCES.md`. Faces too small to
/// judge (eyes under 40 px apart: the full-body man, the three men, the astronaut) are left
/// out: detection gives them 0 (documented in `docs/own-eyewear.md`).
const PEOPLE: [(&str, bool); 18] = [
    ("portrait_woman_round_glasses_drinking_straw_cc0.jpg", true),
    ("portrait_man_hat_glasses_scarf_frontal_cc0.jpg", true),
    ("portrait_woman_officer_cap_glasses_pd.jpg", true),
    (
        "portrait_older_man_blue_glasses_threequarter_unsplash.jpg",
        true,
    ),
    ("portrait_man_hat_glasses_bowtie_threequarter_cc0.jpg", true),
    (
        "portrait_older_man_cowboy_hat_sunglasses_unsplash.jpg",
        true,
    ),
    (
        "halfbody_woman_hands_on_head_cap_sunglasses_sweater_pexels.jpg",
        true,
    ),
    ("portrait_man_19th_century_bw_pd.jpg", false),
    (
        "portrait_woman_curly_hair_frontal_plain_wall_unsplash.jpg",
        false,
    ),
    ("portrait_woman_frontal_smiling_curly_hair_cc0.png", false),
    ("portrait_woman_curly_hair_exif_orientation6_cc0.jpg", false),
    ("portrait_woman_headwrap_threequarter_unsplash.jpg", false),
    ("portrait_woman_face_paint_earrings_cc0.png", false),
    ("portrait_woman_hat_head_tilted_down_cc0.jpg", false),
    (
        "portrait_woman_looking_up_tilted_long_hair_unsplash.jpg",
        false,
    ),
    ("portrait_man_profile_left_unsplash.jpg", false),
    (
        "halfbody_woman_blazer_arm_across_white_bg_unsplash.png",
        false,
    ),
    (
        "halfbody_woman_arms_wrapped_fur_coat_long_hair_pexels.jpg",
        false,
    ),
];

#[test]
fn glasses_are_found_on_the_real_people_who_wear_them_and_not_on_the_others() {
    let mut wrong = Vec::new();
    for (name, wears) in PEOPLE {
        let Some(img) = photo(name) else { return };
        let lm = landmarks(&img);
        let (cleaned, report) = take_off(&img, &lm, None, RemoveOwnEyewear::Never, true);
        assert!(cleaned.is_none(), "never removed something on {name}");
        let c = report.confidence.expect("a face frame");
        println!(
            "{name:66} confidence {c:.2} found {} tinted {} ({:.1} ms)",
            report.found, report.tinted, report.detect_ms
        );
        if report.found != wears || (c >= AUTO_THRESHOLD) != wears {
            wrong.push(format!("{name}: confidence {c:.2}, wears glasses: {wears}"));
        }
    }
    assert!(wrong.is_empty(), "misjudged: {wrong:#?}");
}

#[test]
fn dark_sunglasses_come_off_for_sunglasses_and_stay_for_clear_glasses_unless_always() {
    let Some(img) = photo("portrait_older_man_cowboy_hat_sunglasses_unsplash.jpg") else {
        return;
    };
    let lm = landmarks(&img);
    let (kept, r) = take_off(&img, &lm, None, RemoveOwnEyewear::Auto, true);
    assert!(r.found && r.tinted && !r.removed && kept.is_none(), "{r:?}");
    assert!(r
        .kept_because
        .as_deref()
        .unwrap_or("")
        .contains("dark lenses"));
    let (off, r) = take_off(&img, &lm, None, RemoveOwnEyewear::Auto, false);
    assert!(r.removed && off.is_some(), "{r:?}");
    let (off, r) = take_off(&img, &lm, None, RemoveOwnEyewear::Always, true);
    assert!(r.removed && off.is_some(), "{r:?}");
    // The dark lenses are gone: the eye region is much brighter than before.
    let frame = FaceFrame::new(&lm).unwrap();
    let lum = |im: &RgbaImage, e: usize| {
        let c = frame.eyes[e];
        let p = im.get_pixel(c[0] as u32, c[1] as u32).0;
        0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2])
    };
    let off = off.unwrap();
    for e in 0..2 {
        assert!(
            lum(&off, e) > lum(&img, e) + 40.0,
            "eye {e}: {} → {}",
            lum(&img, e),
            lum(&off, e)
        );
    }
}

#[test]
fn a_photo_without_glasses_is_byte_identical_with_auto() {
    for name in [
        "portrait_woman_curly_hair_frontal_plain_wall_unsplash.jpg",
        "portrait_man_19th_century_bw_pd.jpg",
    ] {
        let Some(img) = photo(name) else { return };
        for category in [Category::Glasses, Category::Sunglasses] {
            let (auto, meta) = try_on(
                &img,
                category,
                SampleFrame::RoundBlack,
                RemoveOwnEyewear::Auto,
            );
            let (never, _) = try_on(
                &img,
                category,
                SampleFrame::RoundBlack,
                RemoveOwnEyewear::Never,
            );
            let own = &meta["own_eyewear"];
            assert_eq!(own["found"], false, "{name}: {own}");
            assert_eq!(own["removed"], false, "{name}: {own}");
            assert!(own["confidence"].as_f64().unwrap() < f64::from(AUTO_THRESHOLD));
            assert!(auto == never, "{name} {category}: auto changed the result");
        }
    }
}

/// The mean absolute difference (0–255, over RGB) of `a` and `b` in the box.
fn mae(a: &RgbaImage, b: &RgbaImage, lo: [u32; 2], hi: [u32; 2]) -> f64 {
    let (mut sum, mut n) = (0.0f64, 0usize);
    for y in lo[1]..hi[1] {
        for x in lo[0]..hi[0] {
            let (p, q) = (a.get_pixel(x, y).0, b.get_pixel(x, y).0);
            for k in 0..3 {
                sum += f64::from(p[k].abs_diff(q[k]));
            }
            n += 3;
        }
    }
    sum / n.max(1) as f64
}

/// Removal must bring the eye region at least this much closer to the face without the frame:
/// its mean absolute error after is at most this fraction of the error before. Measured:
/// round black 39 %, rectangular tortoiseshell 68 % (its wide temples and the fill's smooth
/// skin where the thick rims were), cat-eye red 72 %.
const REMOVED_ERROR_RATIO: f64 = 0.75;

#[test]
fn a_rendered_frame_is_found_and_taken_off() {
    let Some(bare) = photo("portrait_woman_curly_hair_frontal_plain_wall_unsplash.jpg") else {
        return;
    };
    let bare_lm = landmarks(&bare);
    let frame = FaceFrame::new(&bare_lm).unwrap();
    // The eye region: the box 2.2 × 1.1 eye distances around the eyes.
    let corners =
        [(-1.1, -0.55), (1.1, -0.55), (-1.1, 0.55), (1.1, 0.55)].map(|(u, v)| frame.to_image(u, v));
    let lo = [0, 1].map(|k| {
        corners
            .iter()
            .map(|p| p[k])
            .fold(f32::MAX, f32::min)
            .max(0.0) as u32
    });
    let hi = [0, 1].map(|k| {
        let m = corners.iter().map(|p| p[k]).fold(f32::MIN, f32::max);
        (m as u32).min(if k == 0 { bare.width() } else { bare.height() })
    });
    let mut worse = Vec::new();
    for sample in [
        SampleFrame::RoundBlack,
        SampleFrame::RectTortoise,
        SampleFrame::CatEyeRed,
    ] {
        let (png, _) = try_on(&bare, Category::Glasses, sample, RemoveOwnEyewear::Never);
        let worn = image::load_from_memory(&png).unwrap().to_rgba8();
        let lm = landmarks(&worn);
        let (cleaned, report) = take_off(&worn, &lm, None, RemoveOwnEyewear::Auto, true);
        assert!(report.found && report.removed, "{sample:?}: {report:?}");
        let cleaned = cleaned.unwrap();
        let before = mae(&worn, &bare, lo, hi);
        let after = mae(&cleaned, &bare, lo, hi);
        println!(
            "{sample:?}: confidence {:.2}, eye-region MAE {before:.2} with the frame → {after:.2} \
             after removal ({:.0} %), {} px filled, detect {:.1} ms, remove {:.1} ms",
            report.confidence.unwrap(),
            100.0 * after / before,
            report.filled_pixels,
            report.detect_ms,
            report.remove_ms
        );
        if after > REMOVED_ERROR_RATIO * before {
            worse.push(format!("{sample:?}: MAE {before:.2} → {after:.2}"));
        }
        // The eyes themselves (inside their contours) are never filled.
        let f = FaceFrame::new(&lm).unwrap();
        for (x, y, p) in cleaned.enumerate_pixels() {
            let c = [x as f32 + 0.5, y as f32 + 0.5];
            if f.contours.iter().any(|poly| inside(poly, c)) {
                assert_eq!(
                    p,
                    worn.get_pixel(x, y),
                    "{sample:?}: eye pixel {x},{y} changed"
                );
            }
        }
    }
}
