//! Hair and arms under a new top on real photos (issue #32 items 1 and 2): long hair over
//! the shoulders stays in front of the new garment (no garment and no "background continued"
//! over it), and an arm a shorter sleeve uncovers is either painted from the photo (its light
//! and folds) or keeps its old sleeve — never a flat tube.
//!
//! The hair is checked at points marked by hand on the photos
//! (`tests/data/hair_points.json`), not with the renderer's own hair mask. The photos are the
//! kept-back real inputs (`../shared/testdata` or `VTO_TESTDATA`); without them or the models
//! each test prints why it skips.

use std::path::Path;

use glam::Vec2;
use image::RgbaImage;
use vto_core::{Category, EngineError};
use vto_render::engine::{builtin_tryon, encode_png};

use crate::support::{colour_distance, models_dir, px, render_with, testdata};

/// The people photo `name`, or `None` (and why, printed) when it or the models are missing.
fn photo(name: &str) -> Option<RgbaImage> {
    if !models_dir().join("pose_landmark_full.tflite").is_file() {
        eprintln!("skipped: no models in {}", models_dir().display());
        return None;
    }
    let path = testdata("people").join(name);
    match image::open(&path) {
        Ok(img) => Some(img.to_rgba8()),
        Err(e) => {
            eprintln!(
                "skipped: {} not readable ({e}); the real photos live in ../shared/testdata",
                path.display()
            );
            None
        }
    }
}

/// The garment photo `name` (bytes), or `None` (and why, printed).
fn garment(name: &str) -> Option<Vec<u8>> {
    let path = testdata("garments").join(name);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("skipped: {} not readable ({e})", path.display());
            None
        }
    }
}

/// `category` with the garment photo `product` on `person`: the result and its metadata.
fn wear(
    category: Category,
    person: &RgbaImage,
    product: Vec<u8>,
) -> Result<(RgbaImage, serde_json::Value), EngineError> {
    let tryon = builtin_tryon(category).expect("a built-in renderer");
    let out = render_with(tryon, category, encode_png(person).unwrap(), product)?;
    let image = image::load_from_memory(&out.image).unwrap().to_rgba8();
    Ok((image, out.metadata))
}

/// The hand-marked hair points per photo.
fn hair_points() -> Vec<(String, Vec<Vec2>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hair_points.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<(String, Vec<Vec2>)> = v["photos"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, pts)| {
            let pts = pts
                .as_array()
                .unwrap()
                .iter()
                .map(|p| Vec2::new(p[0].as_f64().unwrap() as f32, p[1].as_f64().unwrap() as f32))
                .collect();
            (name.clone(), pts)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The share of `pts` whose colour in `after` is still the photo's (a 3×3 neighbourhood's
/// best match, so a strand's soft edge a pixel off still counts).
fn kept(before: &RgbaImage, after: &RgbaImage, pts: &[Vec2]) -> f32 {
    let ok = pts
        .iter()
        .filter(|p| {
            let want = px(before, **p).unwrap();
            let ok = (-1..=1).any(|dy| {
                (-1..=1).any(|dx| {
                    let q = **p + Vec2::new(dx as f32, dy as f32);
                    px(after, q).is_some_and(|c| colour_distance(c, want) < 0.06)
                })
            });
            if !ok {
                eprintln!("  lost at {p}: {want:?} → {:?}", px(after, **p).unwrap());
            }
            ok
        })
        .count();
    ok as f32 / pts.len().max(1) as f32
}

/// Long hair over the old top: the hair at the hand-marked points stays as it was under a new
/// tank top and a new cardigan — on every photo at least 70 % of the points (before #32 the
/// tank top covered or "continued the background" over them: 33 % kept on the fur-coat photo).
#[test]
fn long_hair_over_the_shoulders_stays_in_front_of_a_new_top() {
    let products = [
        (Category::Tshirt, "tanktop_black_white_apache2.jpg"),
        (Category::Jacket, "cardigan_burgundy_hanger-cream_cc0.jpg"),
    ];
    let mut rendered = 0;
    for (name, pts) in hair_points() {
        let Some(person) = photo(&name) else { return };
        for (category, product) in products {
            let Some(bytes) = garment(product) else {
                return;
            };
            let (out, meta) = match wear(category, &person, bytes) {
                Ok(r) => r,
                Err(e) => {
                    // A refusal (a body turned sideways) covers no hair.
                    eprintln!("{name} + {product}: refused ({e})");
                    continue;
                }
            };
            rendered += 1;
            let share = kept(&person, &out, &pts);
            eprintln!(
                "{name} + {product}: {:.0} % of the hair points kept, hair_kept_px {}, samples {}",
                share * 100.0,
                meta["compose"]["hair_kept_px"],
                meta["compose"]["hair_samples"]
            );
            assert!(
                share >= 0.7,
                "{name} + {product}: only {:.0} % of the hair points kept",
                share * 100.0
            );
        }
    }
    assert!(
        rendered >= 2,
        "only {rendered} try-ons rendered: nothing to judge"
    );
}

/// The pixels along arm `k`'s forearm (elbow → wrist, within 6 % of the shoulders' width of
/// its axis) past the new sleeve's end, from the metadata's chain and sleeve reach.
fn forearm_pixels(meta: &serde_json::Value, k: usize, size: (u32, u32)) -> Vec<(u32, u32)> {
    let fit = &meta["fit"];
    let sw = fit["shoulder_width_px"].as_f64().unwrap() as f32;
    let chain: Vec<Vec2> = fit["arms"][k]["chain_px"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Vec2::new(p[0].as_f64().unwrap() as f32, p[1].as_f64().unwrap() as f32))
        .collect();
    let reach = fit["sleeve_reach_px"][k].as_f64().unwrap() as f32;
    let (s, e, w) = (chain[0], chain[1], chain[2]);
    let upper = s.distance(e);
    let mut out = Vec::new();
    for y in 0..size.1 {
        for x in 0..size.0 {
            let p = Vec2::new(x as f32, y as f32);
            let ew = w - e;
            let t = ((p - e).dot(ew) / ew.length_squared().max(1.0)).clamp(0.0, 1.0);
            let d = p.distance(e + ew * t);
            let along = upper + t * ew.length();
            if d < 0.06 * sw && along > reach + 0.08 * sw && t < 0.9 {
                out.push((x, y));
            }
        }
    }
    out
}

fn luma(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// Pearson's correlation of two equally long series.
fn correlation(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().max(1) as f32;
    let (ma, mb) = (a.iter().sum::<f32>() / n, b.iter().sum::<f32>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    sab / (saa * sbb).sqrt().max(1e-6)
}

/// A tee on people in long sleeves: each visible forearm past the new sleeve either keeps its
/// old sleeve (unchanged: the layered alternative) or is painted with the photo's light and
/// folds — the painted arm's luminance follows the photo's there (correlation ≥ 0.35; the
/// flat tube before #32 had 0.22 on the leather-jacket photo).
#[test]
fn an_uncovered_forearm_is_the_photos_not_a_flat_tube() {
    let people = [
        "halfbody_man_beanie_sweater_arm_extended_side_view_pexels.jpg",
        "halfbody_woman_long_hair_leather_jacket_arms_down_pexels.jpg",
        "halfbody_woman_blazer_arm_across_white_bg_unsplash.png",
        "halfbody_woman_hands_on_head_cap_sunglasses_sweater_pexels.jpg",
        "fullbody_couple_walking_dog_field_apache2.jpg",
        "fullbody_woman_back_view_hiking_mountains_unsplash.jpg",
    ];
    let mut painted_arms = 0;
    for name in people {
        let Some(person) = photo(name) else { return };
        let Some(bytes) = garment("tanktop_black_white_apache2.jpg") else {
            return;
        };
        let (out, meta) = match wear(Category::Tshirt, &person, bytes) {
            Ok(r) => r,
            Err(e) => {
                // A refusal (a body turned sideways) paints no arm at all.
                eprintln!("{name}: refused ({e})");
                continue;
            }
        };
        for k in 0..2 {
            if meta["fit"]["arms"][k]["visibility"].as_f64().unwrap_or(0.0) < 0.25 {
                continue;
            }
            let pix = forearm_pixels(&meta, k, person.dimensions());
            let changed: Vec<(u32, u32)> = pix
                .iter()
                .copied()
                .filter(|&(x, y)| {
                    let a = person.get_pixel(x, y).0;
                    let b = out.get_pixel(x, y).0;
                    (0..3).any(|c| a[c].abs_diff(b[c]) > 12)
                })
                .collect();
            let share = changed.len() as f32 / pix.len().max(1) as f32;
            eprintln!(
                "{name} arm {k}: {} forearm px past the sleeve, {:.0} % repainted ({})",
                pix.len(),
                share * 100.0,
                meta["compose"]["arms"][k]
            );
            if pix.len() < 400 || share < 0.25 {
                // Layered (or nothing uncovered): the old sleeve is the photo's; or too
                // small an arm to measure light and folds on.
                continue;
            }
            painted_arms += 1;
            let photo_l: Vec<f32> = changed
                .iter()
                .map(|&(x, y)| luma(px(&person, Vec2::new(x as f32, y as f32)).unwrap()))
                .collect();
            let out_l: Vec<f32> = changed
                .iter()
                .map(|&(x, y)| luma(px(&out, Vec2::new(x as f32, y as f32)).unwrap()))
                .collect();
            let r = correlation(&photo_l, &out_l);
            eprintln!("{name} arm {k}: luminance correlation with the photo {r:.2}");
            assert!(
                r >= 0.35,
                "{name} arm {k}: the painted forearm ignores the photo's light and folds (r = {r:.2})"
            );
        }
    }
    eprintln!("{painted_arms} painted forearms checked");
}

/// A leopard-print coat's arms wrapped round the body, under a new polo: the print's
/// skin-coloured spots are no bare forearm. Kept one by one in front of the polo, they
/// floated on its torso as brown specks (18 % of a box on the lower torso, x 640–760,
/// y 1255–1340, clear of the forearm, showed the photo); a forearm in front must be skin
/// all over, and at most 8 % of that box shows the photo now.
#[test]
fn a_prints_skin_coloured_spots_do_not_show_through_a_new_top() {
    let Some(person) = photo("halfbody_woman_arms_wrapped_fur_coat_long_hair_pexels.jpg") else {
        return;
    };
    let Some(polo) = garment("polo_cyan_lightgrey_cc0.jpg") else {
        return;
    };
    let (out, meta) = wear(Category::Shirt, &person, polo).expect("a polo on the fur coat");
    let (mut n, mut kept) = (0, 0);
    for y in 1255..1340 {
        for x in 640..760 {
            let p = Vec2::new(x as f32, y as f32);
            let (Some(a), Some(b)) = (px(&person, p), px(&out, p)) else {
                continue;
            };
            n += 1;
            let diff = (0..3).map(|c| (a[c] - b[c]).abs()).fold(0.0, f32::max);
            kept += usize::from(diff < 8.0);
        }
    }
    assert!(n > 9000, "the box lies in the photo");
    assert!(
        kept * 100 <= n * 8,
        "{kept} of {n} pixels of the polo's lower torso show the coat's print ({})",
        meta["compose"]
    );
}
