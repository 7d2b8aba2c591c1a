//! Pants, dresses and outfits on drawn full-body figures (no permissively licensed full-body
//! photo is available; [`Figure`] gives the keypoints, masks and face landmarks the vision
//! stage would): the legs or hips-to-hem covered in the product's colour, the hem where the
//! product's length puts it, skin below short hems, the worn top over the waistband, shoes in
//! front, face and background untouched, an outfit split into its pieces — plus the
//! engines' errors on real photos through the real vision (a portrait shows no legs).
//!
//! The error tests need the models and the public-domain test photos in `VTO_MODELS_DIR`
//! (default `<workspace>/models`; `scripts/fetch-models.sh --test-photos`).

use crate::support::{colour_distance, models_dir, px, render_with, renderer};
use std::sync::OnceLock;

use glam::Vec2;
use image::RgbaImage;
use vto_core::{Category, EngineError, ErrorCode};
use vto_render::engine::{builtin_tryon, encode_png};
use vto_render::samples::garment::Figure;
use vto_render::samples::garment::SampleLower;
use vto_render::tryon::{
    Dress, FullOutfit, LoadedProduct, Look, Pants, Person, ProductInput, TryOn,
};

/// A figure dressed in a sample.
struct Case {
    fig: Figure,
    person: Person,
    look: Look,
    keypoints: Vec<Vec2>,
}

fn dress_up(fig: Figure, s: SampleLower) -> Case {
    let person = fig.person();
    let tryon: Box<dyn TryOn> = match s.category() {
        Category::Pants => Box::new(Pants),
        Category::Dress => Box::new(Dress),
        _ => Box::new(FullOutfit),
    };
    let r = renderer();
    let look = tryon
        .try_on(r.stages(), &person, &LoadedProduct::Image(s.render()))
        .unwrap_or_else(|e| panic!("{}: {e}", s.name()));
    Case {
        keypoints: fig.keypoints(),
        fig,
        person,
        look,
    }
}

fn cases() -> &'static Vec<(&'static str, SampleLower, Case)> {
    static CASES: OnceLock<Vec<(&'static str, SampleLower, Case)>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut v = Vec::new();
        for (name, fig) in [
            ("jeans", Figure::jeans(480, 800)),
            ("wide", Figure::wide_stance(480, 800)),
        ] {
            for s in SampleLower::ALL {
                v.push((name, s, dress_up(fig, s)));
            }
        }
        v
    })
}

fn case(fig: &str, s: SampleLower) -> &'static Case {
    &cases()
        .iter()
        .find(|c| c.0 == fig && c.1 == s)
        .expect("a case")
        .2
}

/// The share of `pts` whose colour in `img` is within 0.25 of `want` (and how many were in
/// the photo).
fn share_near(img: &RgbaImage, pts: &[Vec2], want: [f32; 3]) -> (f32, usize) {
    let got: Vec<[f32; 3]> = pts.iter().filter_map(|p| px(img, *p)).collect();
    let near = got
        .iter()
        .filter(|c| colour_distance(**c, want) < 0.25)
        .count();
    (near as f32 / got.len().max(1) as f32, got.len())
}

/// Points along a leg (hip 23/24 → knee → ankle) between fractions `a` and `b` of it.
fn along_leg(k: &[Vec2], side: usize, a: f32, b: f32) -> Vec<Vec2> {
    let (hip, knee, ankle) = (k[23 + side], k[25 + side], k[27 + side]);
    let thigh = hip.distance(knee);
    let len = thigh + knee.distance(ankle);
    (0..12)
        .map(|i| {
            let s = (a + (b - a) * i as f32 / 11.0) * len;
            if s <= thigh {
                hip + (knee - hip) * (s / thigh)
            } else {
                knee + (ankle - knee) * ((s - thigh) / (len - thigh))
            }
        })
        .collect()
}

fn colour(meta: &serde_json::Value) -> [f32; 3] {
    let c = &meta["colour"];
    [0, 1, 2].map(|i| c[i].as_f64().expect("a colour") as f32)
}

#[test]
fn trousers_cover_both_legs_in_the_products_colour_to_the_ankle() {
    for fig in ["jeans", "wide"] {
        let c = case(fig, SampleLower::Trousers);
        let want = colour(&c.look.metadata["garment"]);
        assert_eq!(c.look.metadata["garment"]["length"], "full");
        for side in 0..2 {
            let pts = along_leg(&c.keypoints, side, 0.1, 0.95);
            let (after, n) = share_near(&c.look.image, &pts, want);
            let (before, _) = share_near(&c.person.photo, &pts, want);
            assert!(n >= 10, "{fig}: {n} samples");
            assert!(
                after >= 0.9 && before < 0.5,
                "{fig} leg {side}: {after} of the leg in the product's colour (before {before})"
            );
        }
    }
}

#[test]
fn shorts_end_at_their_hem_and_leave_skin_below() {
    for fig in ["jeans", "wide"] {
        let c = case(fig, SampleLower::Shorts);
        let g = &c.look.metadata["garment"];
        assert_eq!(g["length"], "shorts");
        let want = colour(g);
        for side in 0..2 {
            let k = &c.keypoints;
            let len = k[23 + side].distance(k[25 + side]) + k[25 + side].distance(k[27 + side]);
            let reach = g["hem_reach_px"][side].as_f64().unwrap() as f32 / len;
            assert!(
                reach > 0.15 && reach < 0.5,
                "{fig}: the shorts reach {reach} of the leg"
            );
            // From below the worn top's hem (it stays over the waistband) to the hem.
            let under_top = (c.fig.top_hem * c.fig.height as f32 - k[23 + side].y) / len + 0.03;
            let (on, _) = share_near(
                &c.look.image,
                &along_leg(k, side, under_top.max(0.08), reach - 0.04),
                want,
            );
            assert!(
                on >= 0.85,
                "{fig} leg {side}: {on} of the thigh in the shorts"
            );
            let below = along_leg(k, side, reach + 0.06, 0.92);
            let (skin, _) = share_near(&c.look.image, &below, c.fig.skin);
            let (old, _) = share_near(&c.look.image, &below, c.fig.trousers);
            assert!(
                skin >= 0.85 && old <= 0.1,
                "{fig} leg {side}: below the hem {skin} skin, {old} old trousers"
            );
        }
    }
}

#[test]
fn the_worn_top_stays_over_the_waistband_and_shoes_in_front_of_the_hems() {
    for fig in ["jeans", "wide"] {
        let c = case(fig, SampleLower::Trousers);
        let u = c.fig.height as f32;
        let cx = c.fig.width as f32 / 2.0;
        // Just above the top's hem: still the top; a little below: the trousers.
        let above: Vec<Vec2> = (-3..=3)
            .map(|i| Vec2::new(cx + i as f32 * 0.02 * u, (c.fig.top_hem - 0.02) * u))
            .collect();
        let (top, _) = share_near(&c.look.image, &above, c.fig.top);
        assert!(top >= 0.85, "{fig}: {top} of the top's lower edge kept");
        let below: Vec<Vec2> = (-3..=3)
            .map(|i| Vec2::new(cx + i as f32 * 0.02 * u, (c.fig.top_hem + 0.03) * u))
            .collect();
        let (pants, _) = share_near(&c.look.image, &below, colour(&c.look.metadata["garment"]));
        assert!(
            pants >= 0.7,
            "{fig}: {pants} of the hips below the top in the trousers"
        );
        for side in 0..2 {
            let toe = c.keypoints[31 + side];
            let heel = c.keypoints[29 + side];
            for p in [toe, (toe + heel) * 0.5] {
                assert_eq!(
                    px(&c.look.image, p),
                    px(&c.person.photo, p),
                    "{fig}: the shoe at {p} changed"
                );
            }
        }
    }
}

#[test]
fn dresses_end_at_their_own_length_and_flare_from_the_hips() {
    for fig in ["jeans", "wide"] {
        for (s, class) in [
            (SampleLower::KneeDress, "knee"),
            (SampleLower::MaxiDress, "maxi"),
        ] {
            let c = case(fig, s);
            let g = &c.look.metadata["garment"];
            assert_eq!(g["length"], class, "{fig} {}", s.name());
            let want = colour(g);
            let k = &c.keypoints;
            let knee_y = (k[25].y + k[26].y) * 0.5;
            let ankle_y = (k[27].y + k[28].y) * 0.5;
            let hem_y = g["hem_centre_px"][1].as_f64().unwrap() as f32;
            let u = c.fig.height as f32;
            if class == "knee" {
                assert!(
                    (hem_y - knee_y).abs() < 0.06 * u,
                    "{fig}: the knee dress ends at {hem_y}, knees at {knee_y}"
                );
            } else {
                assert!(
                    hem_y > knee_y + 0.6 * (ankle_y - knee_y),
                    "{fig}: the maxi dress ends at {hem_y}, ankles at {ankle_y}"
                );
            }
            // Hips to hem down the centre, and across between the legs above the knees
            // (the skirt spans the gap rather than following each leg).
            let cx = c.fig.width as f32 / 2.0;
            let hips_y = (k[23].y + k[24].y) * 0.5;
            let centre: Vec<Vec2> = (0..10)
                .map(|i| Vec2::new(cx, hips_y + (hem_y - 0.02 * u - hips_y) * i as f32 / 9.0))
                .collect();
            let (on, _) = share_near(&c.look.image, &centre, want);
            assert!(
                on >= 0.8,
                "{fig} {}: {on} of hips-to-hem in the dress",
                s.name()
            );
            // Below the hem: no product, and for the knee dress the shins are skin.
            if class == "knee" {
                for side in 0..2 {
                    let shin: Vec<Vec2> = along_leg(k, side, 0.7, 0.92)
                        .into_iter()
                        .filter(|p| p.y > hem_y + 0.03 * u)
                        .collect();
                    let (dress, n) = share_near(&c.look.image, &shin, want);
                    let (skin, _) = share_near(&c.look.image, &shin, c.fig.skin);
                    assert!(
                        n >= 4 && dress <= 0.1 && skin >= 0.8,
                        "{fig} leg {side}: below the knee dress {dress} dress, {skin} skin of {n}"
                    );
                }
            }
        }
    }
}

#[test]
fn face_and_background_away_from_the_garment_are_untouched() {
    for (fig, s, c) in cases() {
        let u = c.fig.height as f32;
        let face = Vec2::new(c.fig.width as f32 / 2.0, 0.1 * u);
        let mask = c.person.mask.as_ref().unwrap();
        let (mut face_px, mut bg_px) = (0, 0);
        for (x, y, p) in c.person.photo.enumerate_pixels() {
            let q = Vec2::new(x as f32, y as f32);
            let same = p.0 == c.look.image.get_pixel(x, y).0;
            if ((q - face) / Vec2::new(0.035 * u, 0.045 * u)).length() < 1.0 {
                face_px += 1;
                assert!(same, "{fig} {}: face pixel {x},{y} changed", s.name());
            }
            // The background beside the body: further than a fifth of the height from
            // the body's centre line (the widest skirt's reach).
            let far = (q.x - c.fig.width as f32 / 2.0).abs() > 0.23 * u;
            if mask.data[(y * c.fig.width + x) as usize] < 0.02 && far {
                bg_px += 1;
                assert!(same, "{fig} {}: background pixel {x},{y} changed", s.name());
            }
        }
        assert!(
            face_px > 500 && bg_px > 1000,
            "{face_px} face, {bg_px} background"
        );
    }
}

#[test]
fn an_outfit_photo_is_split_and_each_piece_worn() {
    for fig in ["jeans", "wide"] {
        let c = case(fig, SampleLower::TwoPiece);
        let m = &c.look.metadata;
        let kinds: Vec<&str> = m["outfit"]["pieces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap())
            .collect();
        assert!(
            kinds.contains(&"top") && kinds.contains(&"pants") && kinds.len() == 2,
            "{kinds:?}"
        );
        assert_eq!(m["outfit"]["one_piece"], false);
        let u = c.fig.height as f32;
        let cx = c.fig.width as f32 / 2.0;
        let chest: Vec<Vec2> = (-2..=2)
            .map(|i| Vec2::new(cx + i as f32 * 0.025 * u, 0.32 * u))
            .collect();
        let red = [176.0, 42.0, 48.0];
        let (top, _) = share_near(&c.look.image, &chest, red);
        assert!(top >= 0.8, "{fig}: {top} of the chest in the outfit's top");
        let khaki = SampleLower::TwoPiece.base_colour().map(f32::from);
        for side in 0..2 {
            let (legs, _) = share_near(
                &c.look.image,
                &along_leg(&c.keypoints, side, 0.2, 0.9),
                khaki,
            );
            assert!(
                legs >= 0.85,
                "{fig} leg {side}: {legs} in the outfit's trousers"
            );
        }
    }
}

#[test]
fn a_jumpsuit_is_worn_as_one_piece() {
    let c = case("wide", SampleLower::Jumpsuit);
    let m = &c.look.metadata;
    assert_eq!(m["outfit"]["pieces"][0]["kind"], "jumpsuit", "{m}");
    assert_eq!(m["outfit"]["one_piece"], true);
    let olive = SampleLower::Jumpsuit.base_colour().map(f32::from);
    let u = c.fig.height as f32;
    let cx = c.fig.width as f32 / 2.0;
    let chest: Vec<Vec2> = (-2..=2)
        .map(|i| Vec2::new(cx + i as f32 * 0.025 * u, 0.32 * u))
        .collect();
    let (top, _) = share_near(&c.look.image, &chest, olive);
    assert!(top >= 0.8, "{top} of the chest in the jumpsuit");
    for side in 0..2 {
        let (legs, _) = share_near(
            &c.look.image,
            &along_leg(&c.keypoints, side, 0.2, 0.9),
            olive,
        );
        assert!(legs >= 0.85, "leg {side}: {legs} in the jumpsuit");
    }
}

fn run_engine(
    category: Category,
    person: Vec<u8>,
    product: Vec<u8>,
) -> Result<vto_core::Rendered, EngineError> {
    let tryon = builtin_tryon(category).expect("a built-in renderer");
    render_with(tryon, category, person, product)
}

fn photo_bytes(name: &str) -> Vec<u8> {
    let path = models_dir().join("test-photos").join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh --test-photos (or set VTO_MODELS_DIR)",
            path.display()
        )
    })
}

#[test]
fn the_engines_are_registered_and_a_portrait_shows_no_legs() {
    for (category, sample) in [
        (Category::Pants, SampleLower::Trousers),
        (Category::Dress, SampleLower::KneeDress),
        (Category::FullOutfit, SampleLower::TwoPiece),
    ] {
        let t = builtin_tryon(category).expect("registered");
        assert_eq!(t.product_input(), ProductInput::Image);
        let n = t.needs();
        assert!(n.face && n.body && n.person_mask);
        for photo in ["astronaut.png", "grace_hopper.jpg"] {
            match run_engine(category, photo_bytes(photo), sample.png()) {
                Err(EngineError::Rejected { code, message }) => {
                    assert_eq!(code, ErrorCode::ProcessingFailed);
                    assert!(message.contains("legs are not visible"), "{message}");
                }
                other => panic!("{photo} {category:?}: expected a rejection, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_product_photo_without_trousers_is_processing_failed_and_says_so() {
    let fig = Figure::jeans(300, 500);
    let person = fig.person();
    let r = renderer();
    let blank = RgbaImage::from_pixel(400, 400, image::Rgba([240, 240, 238, 255]));
    let err = Pants
        .try_on(r.stages(), &person, &LoadedProduct::Image(blank))
        .expect_err("a blank photo");
    assert!(err.to_string().contains("no garment"), "{err}");
    let dress = SampleLower::KneeDress.render();
    let err = Pants
        .try_on(r.stages(), &person, &LoadedProduct::Image(dress))
        .expect_err("a dress is no trousers");
    assert!(err.to_string().contains("no trousers"), "{err}");
    // The engine reports it as processing_failed.
    match run_engine(
        Category::Pants,
        photo_bytes("astronaut.png"),
        encode_png(&RgbaImage::from_pixel(64, 64, image::Rgba([9, 9, 9, 255]))).unwrap(),
    ) {
        Err(EngineError::Rejected { code, .. }) => assert_eq!(code, ErrorCode::ProcessingFailed),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

/// The cutout of a dress photo ends at its hem: no hairline of the drop shadow under it
/// stays in the mask (1–3 px spikes, worn as white ticks hanging from the hem; seven on the
/// maxi dress before the mask's opening).
#[test]
fn no_shadow_spike_hangs_below_a_dress_hem_in_its_cutout() {
    use vto_render::garment::cutout::cutout;
    for sample in [SampleLower::MaxiDress, SampleLower::KneeDress] {
        let cut = cutout(&sample.render()).expect("a garment");
        let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
        let row = |y: usize| cut.fg[y * w..(y + 1) * w].iter().filter(|&&v| v).count();
        let widest = (0..h).map(row).max().unwrap_or(0);
        // The hem: the lowest row at least half as wide as the garment's widest.
        let hem = (0..h).rev().find(|&y| row(y) * 2 >= widest).expect("a hem");
        let below: usize = (hem + 3..h).map(row).sum();
        assert_eq!(
            below,
            0,
            "{}: {below} mask pixels more than 2 rows below the hem (row {hem})",
            sample.name()
        );
    }
}
