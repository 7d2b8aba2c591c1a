//! Shoes try-on: the sample sneaker and boot on a synthetic full-body scene (a standing and a
//! walking pose, keypoints and person mask given, the real rasterizer), a shop-like glTF
//! (multi-node, textured, `KHR_materials_variants`, a left shoe by its extras), and the
//! engine's error path on a real photo without feet (astronaut.png, real vision).
//!
//! The engine test needs the six models (`VTO_MODELS_DIR`, default `<workspace>/models`) and
//! astronaut.png (`<models dir>/test-photos/astronaut.png`, `scripts/fetch-models.sh
//! --test-photos`); a missing file fails the test with the command to run.
//!
//! [`real`]: the same on real photos (both feet of a walking woman; the old shoes' fill).

mod real;

use crate::support::models_dir;
use std::path::PathBuf;
use std::sync::Arc;

use image::{Rgba, RgbaImage};
use vto_core::{Category, Engine, EngineError, ErrorCode, Fetched, RenderInput, RequestId};
use vto_render::engine::{BuiltinEngine, Renderer};
use vto_render::gpu::GpuContext;
use vto_render::product::write::write_gltf_embedded;
use vto_render::product::{self, Primitive, Product};
use vto_render::raster::{RasterStats, Rasterizer};
use vto_render::samples::product::shoes::SampleShoe;
use vto_render::tryon::shoes::{self, Shoes, ShoesPlacement};
use vto_render::tryon::Placed;
use vto_render::tryon::{Options, TryOnError};
use vto_render::vision::{Body, Detection, Mask, PoseKeypoint, RotatedRect};

const W: u32 = 600;
const H: u32 = 1000;
const OLD_SHOE: Rgba<u8> = Rgba([200, 30, 30, 255]);

/// Keypoints (index, x, y) of a person facing the camera, their left on the image's right.
fn standing() -> Vec<(usize, f32, f32)> {
    vec![
        (11, 350.0, 250.0),
        (12, 250.0, 250.0),
        (23, 330.0, 520.0),
        (24, 270.0, 520.0),
        (25, 332.0, 700.0),
        (26, 268.0, 700.0),
        (27, 335.0, 880.0),
        (28, 265.0, 880.0),
        (29, 332.0, 895.0),
        (30, 268.0, 895.0),
        (31, 345.0, 925.0),
        (32, 255.0, 925.0),
    ]
}

/// A walk seen from the side, toes to the image's right: the right foot ahead, the left
/// behind (farther from the camera, higher in the photo).
fn walking() -> Vec<(usize, f32, f32)> {
    vec![
        (11, 300.0, 250.0),
        (12, 290.0, 255.0),
        (23, 300.0, 520.0),
        (24, 295.0, 522.0),
        (25, 250.0, 700.0),
        (26, 340.0, 700.0),
        (27, 215.0, 870.0),
        (28, 380.0, 880.0),
        (29, 195.0, 885.0),
        (30, 360.0, 897.0),
        (31, 280.0, 893.0),
        (32, 455.0, 905.0),
    ]
}

fn distance_to_segment(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len2 = (ab[0] * ab[0] + ab[1] * ab[1]).max(1e-6);
    let t = (((p[0] - a[0]) * ab[0] + (p[1] - a[1]) * ab[1]) / len2).clamp(0.0, 1.0);
    let q = [a[0] + ab[0] * t, a[1] + ab[1] * t];
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt()
}

/// A person in trousers and red shoes on a grey floor, with the body (keypoints, mask).
fn scene(pts: &[(usize, f32, f32)]) -> (RgbaImage, Body) {
    let at = |i: usize| {
        let p = pts.iter().find(|p| p.0 == i).expect("keypoint");
        [p.1, p.2]
    };
    let mut mask = vec![0.0f32; (W * H) as usize];
    let photo = RgbaImage::from_fn(W, H, |x, y| {
        let p = [x as f32, y as f32];
        let mut c = if y < 780 {
            Rgba([215, 210, 200, 255])
        } else {
            let v = 140 + ((x * 7 + y * 3) % 11) as u8;
            Rgba([v, v - 4, v - 10, 255])
        };
        let mut person = false;
        for (hip, knee, ankle, heel, toe) in [(23, 25, 27, 29, 31), (24, 26, 28, 30, 32)] {
            if distance_to_segment(p, at(hip), at(knee)) < 26.0
                || distance_to_segment(p, at(knee), at(ankle)) < 20.0
            {
                c = Rgba([40, 50, 75, 255]);
                person = true;
            }
            let (h, t) = (at(heel), at(toe));
            let back = [h[0] - 0.1 * (t[0] - h[0]), h[1] + 4.0];
            if distance_to_segment(p, back, [t[0], t[1] + 3.0]) < 13.0 && p[1] > at(ankle)[1] - 8.0
            {
                c = OLD_SHOE;
                person = true;
            }
        }
        if distance_to_segment(p, at(11), at(23)) < 30.0
            || distance_to_segment(p, at(12), at(24)) < 30.0
        {
            c = Rgba([90, 110, 70, 255]);
            person = true;
        }
        if person {
            mask[(y * W + x) as usize] = 1.0;
        }
        c
    });
    let mut keypoints = vec![
        PoseKeypoint {
            x: W as f32 / 2.0,
            y: 100.0,
            z: 0.0,
            visibility: 0.95,
            presence: 0.95,
        };
        33
    ];
    for &(i, x, y) in pts {
        keypoints[i].x = x;
        keypoints[i].y = y;
    }
    let body = Body {
        detection: Detection {
            score: 0.9,
            xmin: 0.0,
            ymin: 0.0,
            xmax: W as f32,
            ymax: H as f32,
            keypoints: Vec::new(),
        },
        roi: RotatedRect {
            cx: 300.0,
            cy: 500.0,
            width: 600.0,
            height: 1000.0,
            rotation: 0.0,
        },
        score: 0.9,
        keypoints,
        mask_coverage: 0.1,
        mask: Some(Mask {
            width: W,
            height: H,
            data: mask,
        }),
    };
    (photo, body)
}

fn raster() -> Rasterizer {
    Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"))
}

fn render(
    raster: &Rasterizer,
    photo: &RgbaImage,
    body: &Body,
    product: &Product,
) -> (Placed<ShoesPlacement>, RgbaImage, RasterStats) {
    let prepared =
        shoes::prepare(photo, body, product, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let (image, stats) = raster
        .render(
            prepared.photo.as_ref().expect("a photo"),
            prepared.scene.as_ref().expect("a scene"),
        )
        .expect("render");
    (prepared, image, stats)
}

/// Whether the product covers the pixel `(x, y)` (any of its samples) in the scene's ids.
fn covered(raster: &Rasterizer, prepared: &Placed<ShoesPlacement>, pts: &[[f32; 2]]) -> Vec<bool> {
    let scene = prepared.scene.as_ref().expect("a scene");
    let (ids, _) = raster.ids(scene).expect("ids");
    let [x0, y0, w, h] = scene.roi;
    let ss = scene.ss;
    let ww = (w * ss) as usize;
    pts.iter()
        .map(|p| {
            let (x, y) = (
                p[0].floor() as i64 - x0 as i64,
                p[1].floor() as i64 - y0 as i64,
            );
            if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
                return false;
            }
            (0..ss).any(|dy| {
                (0..ss).any(|dx| {
                    let i = (y as usize * ss as usize + dy as usize) * ww
                        + x as usize * ss as usize
                        + dx as usize;
                    ids[i] != u32::MAX
                })
            })
        })
        .collect()
}

#[test]
fn each_visible_foot_wears_the_shoe_over_its_heel_and_toe() {
    let raster = raster();
    for (pose, pts) in [("standing", standing()), ("walking", walking())] {
        let (photo, body) = scene(&pts);
        for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
            let (prepared, image, _) = render(&raster, &photo, &body, &shoe.product());
            assert_eq!(prepared.placement.feet.len(), 2, "{pose} {}", shoe.name());
            // VTO_SHOES_DUMP=DIR keeps the renders for a person to look at.
            if let Some(dir) = std::env::var_os("VTO_SHOES_DUMP") {
                let _ = image.save(PathBuf::from(dir).join(format!("{pose}-{}.png", shoe.name())));
            }
            assert_eq!(image.dimensions(), photo.dimensions());
            let keypoints: Vec<[f32; 2]> = prepared
                .placement
                .feet
                .iter()
                .flat_map(|f| [f.pose.heel_px.to_array(), f.pose.toe_px.to_array()])
                .collect();
            let inside = covered(&raster, &prepared, &keypoints);
            assert!(
                inside.iter().all(|c| *c),
                "{pose} {}: heel/toe covered {inside:?} at {keypoints:?}",
                shoe.name()
            );
            // One model, two feet: the left foot wears the mirror image of the right shoe.
            for f in &prepared.placement.feet {
                let left = f.pose.side == shoes::feet::Side::Left;
                assert_eq!(f.mirrored, left, "{pose} {:?}", f.pose.side);
            }
        }
    }
}

#[test]
fn nothing_changes_above_mid_shin_and_renders_are_deterministic() {
    let raster = raster();
    for pts in [standing(), walking()] {
        let (photo, body) = scene(&pts);
        let kp = |i: usize| pts.iter().find(|p| p.0 == i).map(|p| p.2).unwrap();
        let mid_shin = ((kp(25) + kp(27)) / 2.0).min((kp(26) + kp(28)) / 2.0) as u32;
        for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
            let (_, a, _) = render(&raster, &photo, &body, &shoe.product());
            let (_, b, _) = render(&raster, &photo, &body, &shoe.product());
            assert_eq!(a.as_raw(), b.as_raw(), "deterministic");
            let changed_above = (0..mid_shin)
                .flat_map(|y| (0..W).map(move |x| (x, y)))
                .filter(|&(x, y)| a.get_pixel(x, y) != photo.get_pixel(x, y))
                .count();
            assert_eq!(
                changed_above,
                0,
                "{} changed pixels above mid-shin",
                shoe.name()
            );
            let changed_below = (mid_shin..H)
                .flat_map(|y| (0..W).map(move |x| (x, y)))
                .filter(|&(x, y)| a.get_pixel(x, y) != photo.get_pixel(x, y))
                .count();
            assert!(
                changed_below > 2000,
                "the shoes were drawn: {changed_below}"
            );
        }
    }
}

#[test]
fn the_old_shoes_do_not_peek_out_and_the_floor_gets_a_contact_shadow() {
    let raster = raster();
    let (photo, body) = scene(&standing());
    let red = |img: &RgbaImage| img.pixels().filter(|p| **p == OLD_SHOE).count();
    let before = red(&photo);
    assert!(before > 1500, "the scene has old shoes: {before}");
    for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
        let (prepared, image, stats) = render(&raster, &photo, &body, &shoe.product());
        let after = image
            .pixels()
            .filter(|p| p[0] > 150 && p[1] < 70 && p[2] < 70)
            .count();
        assert!(
            after * 50 < before,
            "{}: {after} red pixels left of {before}",
            shoe.name()
        );
        assert!(prepared.placement.filled_px > 1000 && prepared.placement.shadow_px > 200);
        // Floor right beside a sole is darker than the same floor far away.
        let f = &prepared.placement.feet[0];
        let [_, _, x1, y1] = f.footprint_px;
        let near = image.get_pixel((x1 + 3.0) as u32, (y1 - 4.0) as u32)[0];
        let far = photo.get_pixel((x1 + 3.0) as u32, (y1 - 4.0) as u32)[0];
        assert!(
            near + 5 < far,
            "{}: shadow {near} vs floor {far}",
            shoe.name()
        );
        // The shins hide the back of the collar.
        assert!(stats.occluded_fragments > 0, "{}", shoe.name());
        assert_eq!(prepared.placement.legs, 2);
    }
}

#[test]
fn a_hidden_foot_gets_no_shoe_and_no_visible_foot_is_not_found() {
    let raster = raster();
    let (photo, mut body) = scene(&standing());
    body.keypoints[31].visibility = 0.1;
    let (prepared, _, _) = render(&raster, &photo, &body, &SampleShoe::Sneaker.product());
    assert_eq!(prepared.placement.feet.len(), 1);
    assert_eq!(
        prepared.placement.feet[0].pose.side,
        shoes::feet::Side::Right
    );
    let meta = shoes::metadata(&prepared, &RasterStats::default());
    let hidden = &meta["feet"][1];
    assert_eq!(hidden["shoe"], false);
    assert_eq!(hidden["reason"], "not_visible");
    body.keypoints[30].y = 2000.0;
    let err = shoes::prepare(
        &photo,
        &body,
        &SampleShoe::Sneaker.product(),
        &Options::default(),
    )
    .unwrap_err();
    match err {
        TryOnError::NotFound(m) => assert!(m.contains("no foot is visible"), "{m}"),
        e => panic!("{e}"),
    }
}

/// A shop-like glTF: a root node holding the parts in child nodes (one with its own
/// transform), textured materials, `KHR_materials_variants` (two colourways, a mapping on the
/// upper), the left foot in the scene's extras, the origin 4 cm inside the heel.
fn shop_gltf() -> Vec<u8> {
    let shoe = SampleShoe::Sneaker;
    let mut prims: Vec<(Primitive, [f32; 3])> = Vec::new();
    for mut p in shoe.primitives() {
        // Mirror into a left shoe, move the origin into the heel.
        for v in &mut p.positions {
            *v = [-v[0], v[1], v[2] - 0.04];
        }
        for n in &mut p.normals {
            n[0] = -n[0];
        }
        for t in p.indices.chunks_exact_mut(3) {
            t.swap(1, 2);
        }
        prims.push((p, [0.0; 3]));
    }
    let mut materials = SampleShoe::Sneaker.product().materials;
    let mut red = materials[0].clone();
    red.name = "upper red".into();
    red.base_color = [0.8, 0.1, 0.1, 1.0];
    materials.push(red);
    let bytes = write_gltf_embedded(&prims, &materials, &shoe.textures());
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    doc["extensionsUsed"] = serde_json::json!(["KHR_materials_variants"]);
    doc["extensions"] = serde_json::json!({"KHR_materials_variants": {
        "variants": [{"name": "navy"}, {"name": "red"}]}});
    doc["meshes"][0]["primitives"][0]["extensions"] = serde_json::json!({
        "KHR_materials_variants": {"mappings": [{"material": 4, "variants": [1]}]}});
    doc["scenes"][0]["extras"] = serde_json::json!({"vto": {"foot": "left"}});
    doc["nodes"][0]["name"] = serde_json::json!("shoe");
    // The sole's node is moved down 1 cm and back up by its parent's child transform.
    doc["nodes"][2]["translation"] = serde_json::json!([0.0, -0.01, 0.0]);
    doc["nodes"][0]["translation"] = serde_json::json!([0.0, 0.0, 0.0]);
    let sole_node = doc["nodes"][2].clone();
    doc["nodes"][2] = serde_json::json!({"name": "sole group", "translation": [0.0, 0.01, 0.0], "children": [doc["nodes"].as_array().unwrap().len()]});
    doc["nodes"].as_array_mut().unwrap().push(sole_node);
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn a_shop_gltf_with_variants_and_a_left_foot_loads_and_is_worn() {
    let model = product::load(&shop_gltf()).expect("a shop glTF loads");
    assert!(model.primitives.len() >= 4 && model.textures.len() == 2);
    assert!(model
        .materials
        .iter()
        .any(|m| m.base_color_texture.is_some()));
    let (lo, _) = model.bounds();
    assert!(
        lo[1].abs() < 1e-3,
        "the nested sole node is back on the floor: {lo:?}"
    );
    let fit = shoes::model::fit(&model);
    assert!(!fit.right);
    assert_eq!(fit.side_source, shoes::model::SideSource::Extras);
    assert!(
        fit.auto_fit.as_deref().unwrap_or("").contains("origin"),
        "{:?}",
        fit.auto_fit
    );
    let raster = raster();
    let (photo, body) = scene(&standing());
    let (prepared, _, _) = render(&raster, &photo, &body, &model);
    // A left model: the right foot wears its mirror image.
    for f in &prepared.placement.feet {
        assert_eq!(f.mirrored, f.pose.side == shoes::feet::Side::Right);
    }
    let pts: Vec<[f32; 2]> = prepared
        .placement
        .feet
        .iter()
        .flat_map(|f| [f.pose.heel_px.to_array(), f.pose.toe_px.to_array()])
        .collect();
    assert!(covered(&raster, &prepared, &pts).iter().all(|c| *c));
    // A file that *requires* the variants extension is refused, naming it.
    let mut doc: serde_json::Value = serde_json::from_slice(&shop_gltf()).unwrap();
    doc["extensionsRequired"] = serde_json::json!(["KHR_materials_variants"]);
    let err = product::load(&serde_json::to_vec(&doc).unwrap()).unwrap_err();
    assert_eq!(err.code(), "product_unsupported");
    assert!(err.to_string().contains("KHR_materials_variants"));
}

#[test]
fn a_photo_without_feet_is_processing_failed_saying_so() {
    let path = models_dir().join("test-photos/astronaut.png");
    let person = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh --test-photos",
            path.display()
        )
    });
    let renderer = Renderer::shared(&models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let engine = BuiltinEngine::new(renderer, Arc::new(Shoes));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let person = Fetched {
        bytes: person,
        declared_type: None,
    };
    let product = Fetched {
        bytes: SampleShoe::Sneaker.glb(),
        declared_type: None,
    };
    let err = rt
        .block_on(
            engine.render(RenderInput {
                request_id: "00000000-0000-0000-0000-000000000012"
                    .parse::<RequestId>()
                    .unwrap(),
                category: Category::Shoes,
                person: &person,
                product: &product,
                options: Default::default(),
            }),
        )
        .expect_err("no feet in a portrait");
    let EngineError::Rejected { code, message } = err else {
        panic!("{err:?}")
    };
    assert_eq!(code, ErrorCode::ProcessingFailed);
    assert!(
        message.contains("no foot is visible") || message.contains("no body was found"),
        "{message}"
    );
}

#[test]
fn the_nearer_foot_hides_the_farther_one() {
    // A side view, toes to the right: the right foot nearer the camera (lower in the photo),
    // the left one just behind it (higher), their shoes overlapping in the image.
    let pts = vec![
        (11, 300.0, 250.0),
        (12, 295.0, 255.0),
        (23, 300.0, 520.0),
        (24, 298.0, 522.0),
        (25, 322.0, 690.0),
        (26, 330.0, 700.0),
        (27, 325.0, 860.0),
        (28, 305.0, 885.0),
        (29, 320.0, 875.0),
        (30, 300.0, 900.0),
        (31, 420.0, 882.0),
        (32, 400.0, 907.0),
    ];
    let (photo, body) = scene(&pts);
    let raster = raster();
    let (prepared, _, _) = render(&raster, &photo, &body, &SampleShoe::Sneaker.product());
    assert_eq!(prepared.placement.feet.len(), 2);
    let (left, right) = (&prepared.placement.feet[0], &prepared.placement.feet[1]);
    assert_eq!(left.pose.side, shoes::feet::Side::Left);
    assert!(
        right.pose.heel.z < left.pose.heel.z,
        "the right foot is nearer"
    );
    // Triangles: the left shoe's first, then the right shoe's.
    let per_shoe = prepared
        .scene
        .as_ref()
        .expect("a scene")
        .product
        .triangles
        .len() as u32
        / 2;
    let scene = prepared.scene.as_ref().expect("a scene");
    let (ids, _) = raster.ids(scene).expect("ids");
    let [x0, y0, w, h] = scene.roi;
    let ww = (w * scene.ss) as usize;
    // Every sample both footprints could hold: where any shoe is drawn inside the overlap of
    // the two bounding boxes, count whose it is.
    let (a, b) = (left.footprint_px, right.footprint_px);
    let (ox0, oy0, ox1, oy1) = (
        a[0].max(b[0]),
        a[1].max(b[1]),
        a[2].min(b[2]),
        a[3].min(b[3]),
    );
    assert!(ox1 > ox0 && oy1 > oy0, "the shoes overlap: {a:?} {b:?}");
    let (mut near, mut far) = (0, 0);
    for y in (oy0 as u32).max(y0)..(oy1 as u32).min(y0 + h) {
        for x in (ox0 as u32).max(x0)..(ox1 as u32).min(x0 + w) {
            let i = ((y - y0) * scene.ss) as usize * ww + ((x - x0) * scene.ss) as usize;
            match ids[i] {
                u32::MAX => {}
                id if id >= per_shoe => near += 1,
                _ => far += 1,
            }
        }
    }
    assert!(
        near > 100,
        "the nearer shoe is drawn in the overlap: {near}"
    );
    assert!(far > 0, "the farther shoe shows above it: {far}");
    // Where both shoes project (each drawn alone covers the sample), the nearer one wins.
    let alone = |keep_near: bool| {
        let mut only = scene.clone();
        let mut k = 0u32;
        only.product.triangles.retain(|_| {
            k += 1;
            ((k - 1) >= per_shoe) == keep_near
        });
        raster.ids(&only).expect("ids").0
    };
    let (near_alone, far_alone) = (alone(true), alone(false));
    let plane = near_alone.len() / 2;
    let both: Vec<usize> = (0..plane)
        .filter(|&i| near_alone[i] != u32::MAX && far_alone[i] != u32::MAX)
        .collect();
    assert!(
        both.len() > 50,
        "the shoes overlap in {} samples",
        both.len()
    );
    let near_wins = both
        .iter()
        .filter(|&&i| ids[i] >= per_shoe && ids[i] != u32::MAX)
        .count();
    assert!(
        near_wins * 100 >= both.len() * 95,
        "the nearer shoe wins {near_wins} of {} shared samples",
        both.len()
    );
}
