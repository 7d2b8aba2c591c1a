//! Glasses and sunglasses try-on: the rasterizer against its CPU reference, placement on
//! astronaut.png with the sample frames, pixels outside the footprint, tinted lenses, the
//! face policy and the error paths.
//!
//! Needs the six models (`VTO_MODELS_DIR`, default `<workspace>/models`; fetch with
//! `scripts/fetch-models.sh`) and astronaut.png (`VTO_ASTRONAUT`, default
//! `<workspace>/target/testdata/astronaut.png`, fetched by `scripts/fetch-testdata.sh`, else
//! `<models dir>/test-photos/astronaut.png` from `scripts/fetch-models.sh --test-photos`).
//! A missing file fails the test with the command to run; nothing is skipped.

use crate::support::{models_dir, render_with, renderer, workspace};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use image::RgbaImage;
use vto_core::{Category, EngineError, ErrorCode};
use vto_render::engine::{encode_png, Renderer};
use vto_render::gpu::GpuContext;
use vto_render::product::write::write_glb;
use vto_render::product::{self, AlphaMode};
use vto_render::raster::{
    cpu_ids, Mesh, RasterMaterial, RasterVertex, Rasterizer, Scene, Shadow, Transparency,
};
use vto_render::samples::product::eyewear::SampleFrame;
use vto_render::scene::camera::HeadCamera;
use vto_render::scene::light;
use vto_render::tryon::eyewear::{self, Eyewear, EyewearPlacement, Fit};
use vto_render::tryon::Placed;
use vto_render::tryon::{Options, TryOn};
use vto_render::vision::Face;

fn astronaut_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        // VTO_ASTRONAUT, else target/testdata (scripts/fetch-testdata.sh), else the models
        // directory's test-photos (scripts/fetch-models.sh --test-photos).
        let path = match std::env::var_os("VTO_ASTRONAUT") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => {
                let testdata = workspace().join("target/testdata/astronaut.png");
                let models = models_dir().join("test-photos/astronaut.png");
                if !testdata.exists() && models.exists() {
                    models
                } else {
                    testdata
                }
            }
        };
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/fetch-testdata.sh (or set VTO_ASTRONAUT)",
                path.display()
            )
        })
    })
}

fn astronaut() -> RgbaImage {
    image::load_from_memory(astronaut_bytes())
        .expect("astronaut.png decodes")
        .to_rgba8()
}

/// The astronaut's faces, computed once.
fn astronaut_face() -> &'static Face {
    static FACE: OnceLock<Face> = OnceLock::new();
    FACE.get_or_init(|| {
        let faces = renderer().faces(&astronaut()).unwrap();
        faces.into_iter().next().expect("a face in astronaut.png")
    })
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// Output pixels (x, y) covered by any product sample (opaque or lens), from the CPU reference.
fn footprint(p: &Placed<EyewearPlacement>, width: u32, height: u32) -> (Vec<bool>, Vec<u8>) {
    let s = p.scene.as_ref().expect("a scene");
    let (ids, _) = cpu_ids(s);
    let [x0, y0, w, _h] = s.roi;
    let ww = (w * s.ss) as usize;
    let plane = ids.len() / 2;
    let mut covered = vec![false; (width * height) as usize];
    // Per output pixel: 0 none, 1 lens only on every sample, 2 anything else.
    let mut lens_only = vec![0u8; (width * height) as usize];
    let mut counts = std::collections::HashMap::<usize, (u32, u32)>::new();
    for k in 0..plane {
        let (sx, sy) = ((k % ww) as u32, (k / ww) as u32);
        let (x, y) = (x0 + sx / s.ss, y0 + sy / s.ss);
        let i = (y * width + x) as usize;
        let opaque = ids[k] != u32::MAX;
        let lens = ids[plane + k] != u32::MAX;
        if opaque || lens {
            covered[i] = true;
        }
        let e = counts.entry(i).or_default();
        if lens && !opaque {
            e.0 += 1;
        }
        e.1 += 1;
    }
    for (i, (l, n)) in counts {
        lens_only[i] = if l == n { 1 } else { 2 };
    }
    (covered, lens_only)
}

fn dilate(mask: &[bool], width: u32, height: u32, r: i64) -> Vec<bool> {
    let mut out = vec![false; mask.len()];
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            if !mask[(y * width as i64 + x) as usize] {
                continue;
            }
            for dy in -r..=r {
                for dx in -r..=r {
                    let (xx, yy) = (x + dx, y + dy);
                    if xx >= 0 && yy >= 0 && xx < width as i64 && yy < height as i64 {
                        out[(yy * width as i64 + xx) as usize] = true;
                    }
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Shaders and the rasterizer against its CPU reference

fn quad(mesh: &mut Mesh, corners: [[f32; 3]; 4], material: u32) {
    let base = mesh.vertices.len() as u32;
    for c in corners {
        mesh.vertices.push(RasterVertex {
            pos: [c[0], c[1], c[2], 1.0 / c[2]],
            view: [c[0], c[1], c[2], 0.5],
            normal: [0.0, 0.0, -1.0, 0.0],
            uv: [0.0; 4],
            color: [1.0; 4],
        });
    }
    mesh.triangles.push([base, base + 1, base + 2, material]);
    mesh.triangles.push([base, base + 2, base + 3, material]);
}

fn material(alpha_mode: u32) -> RasterMaterial {
    RasterMaterial {
        base: [0.8, 0.1, 0.1, if alpha_mode == 2 { 0.5 } else { 1.0 }],
        pbr: [0.0, 0.5, 0.5, 0.0],
        tex: [0; 4],
        flags: [alpha_mode, 1, 0, 0],
        ..bytemuck::Zeroable::zeroed()
    }
}

fn synthetic_scene() -> Scene {
    let mut product = Mesh::default();
    // Two overlapping, tilted opaque quads and a lens quad partly in front of them.
    quad(
        &mut product,
        [
            [10.0, 10.0, 50.0],
            [90.0, 12.0, 52.0],
            [88.0, 70.0, 55.0],
            [12.0, 66.0, 51.0],
        ],
        0,
    );
    quad(
        &mut product,
        [
            [40.0, 30.0, 49.0],
            [120.0, 35.0, 58.0],
            [118.0, 100.0, 60.0],
            [42.0, 95.0, 47.0],
        ],
        0,
    );
    quad(
        &mut product,
        [
            [20.0, 50.0, 45.0],
            [70.0, 50.0, 45.0],
            [70.0, 110.0, 45.0],
            [20.0, 110.0, 45.0],
        ],
        1,
    );
    let mut occluder = Mesh::default();
    quad(
        &mut occluder,
        [
            [80.0, 0.0, 53.0],
            [128.0, 0.0, 53.0],
            [128.0, 128.0, 53.0],
            [80.0, 128.0, 53.0],
        ],
        0,
    );
    Scene {
        roi: [0, 0, 64, 64],
        ss: 2,
        product,
        occluders: vec![occluder],
        materials: vec![material(0), material(2)],
        texels: vec![],
        lighting: crate::support::studio_light(),
        transparency: Transparency::Clear,
        shadow: Shadow {
            offset: [1.0, 2.0],
            radius: 2.0,
            strength: 0.3,
        },
        near: 1.0,
    }
}

#[test]
fn gpu_depth_and_ids_match_the_cpu_reference() {
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    let raster = Rasterizer::new(ctx);
    let scene = synthetic_scene();
    let (gpu, gpu_stats) = raster.ids(&scene).unwrap();
    let (cpu, cpu_stats) = cpu_ids(&scene);
    assert_eq!(gpu.len(), cpu.len());
    let differ = gpu.iter().zip(&cpu).filter(|(a, b)| a != b).count();
    // Samples exactly on a shared edge may go either way under a different float rounding.
    assert!(
        differ * 200 < gpu.len(),
        "{differ} of {} samples differ",
        gpu.len()
    );
    let covered = cpu.iter().filter(|&&i| i != u32::MAX).count();
    assert!(
        covered > 1000,
        "the synthetic scene covers samples: {covered}"
    );
    assert!(
        cpu_stats.occluded_fragments > 0,
        "the occluder hides part of quad 2"
    );
    let close = |a: u32, b: u32| (a as f64 - b as f64).abs() <= 0.01 * b as f64 + 4.0;
    assert!(
        close(gpu_stats.occluded_fragments, cpu_stats.occluded_fragments)
            && close(gpu_stats.drawn_fragments, cpu_stats.drawn_fragments),
        "gpu {gpu_stats:?} cpu {cpu_stats:?}"
    );
}

#[test]
fn synthetic_render_touches_only_its_roi_and_footprint() {
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    let raster = Rasterizer::new(ctx);
    let mut photo = RgbaImage::new(100, 90);
    for (x, y, p) in photo.enumerate_pixels_mut() {
        *p = image::Rgba([(x * 2) as u8, (y * 2) as u8, 90, 255]);
    }
    let mut scene = synthetic_scene();
    scene.roi = [20, 10, 64, 64];
    let (out, _) = raster.render(&photo, &scene).unwrap();
    assert_eq!(out.dimensions(), photo.dimensions());
    for (x, y, p) in out.enumerate_pixels() {
        let inside = (20..84).contains(&x) && (10..74).contains(&y);
        if !inside {
            assert_eq!(
                p,
                photo.get_pixel(x, y),
                "({x}, {y}) outside the ROI changed"
            );
        }
    }
    // An opaque red sample area: the shaded quad is reddish.
    let p = out.get_pixel(20 + 10, 10 + 10);
    assert!(p[0] > p[2], "{p:?}");
}

// ---------------------------------------------------------------------------------------------
// astronaut.png with the sample frames

#[test]
fn sample_frames_sit_on_the_astronaut() {
    let photo = astronaut();
    let face = astronaut_face();
    let r = renderer();
    for frame in SampleFrame::ALL {
        let product = product::load(&frame.glb()).unwrap();
        let kind = if frame.tinted() {
            Eyewear::Sunglasses
        } else {
            Eyewear::Glasses
        };
        let prepared = eyewear::prepare(&photo, face, &product, kind, &Options::default()).unwrap();
        let p = &prepared.placement;
        let name = frame.name();
        assert_eq!(p.fit, Fit::RealUnits, "{name}");
        let fw = p.face_width_px;
        assert!(fw > 50.0, "{name}: face width {fw}");
        let d = dist(p.anchor_px, p.landmark_168_px);
        let l = p.lens_centres_px.unwrap_or_default();
        eprintln!(
            "{name}: face width {fw:.1} px; bridge {:.2} % of it from landmark 168; lenses {:.2} %, {:.2} % from the eye centres",
            100.0 * d / fw,
            100.0 * dist(l[0], p.eye_centres_px[0]) / fw,
            100.0 * dist(l[1], p.eye_centres_px[1]) / fw,
        );
        assert!(
            d <= 0.02 * fw,
            "{name}: bridge {d:.2} px from landmark 168 (face {fw:.1} px)"
        );
        let lens = p.lens_centres_px.expect("sample frames have lenses");
        for (k, (l, e)) in lens.iter().zip(p.eye_centres_px).enumerate() {
            let d = dist(*l, e);
            assert!(
                d <= 0.03 * fw,
                "{name}: lens {k} {d:.2} px from the eye centre"
            );
        }

        let (out, stats) = r
            .rasterizer()
            .render(&photo, prepared.scene.as_ref().expect("a scene"))
            .unwrap();
        assert_eq!(out.dimensions(), photo.dimensions(), "{name}");
        assert!(
            stats.occluded_fragments > 0,
            "{name}: no temple fragment was rejected by the head occluder ({stats:?})"
        );
        eprintln!(
            "{name}: {} fragments rejected by the occluder, {} drawn",
            stats.occluded_fragments, stats.drawn_fragments
        );

        // Pixels farther than the shadow's reach from the footprint are untouched.
        let (covered, _) = footprint(&prepared, photo.width(), photo.height());
        let margin = prepared.scene.as_ref().expect("a scene").shadow.reach() as i64 + 1;
        let near = dilate(&covered, photo.width(), photo.height(), margin);
        let mut changed_inside = 0;
        for (i, (a, b)) in out.pixels().zip(photo.pixels()).enumerate() {
            if near[i] {
                changed_inside += usize::from(a != b);
            } else {
                assert_eq!(a, b, "{name}: pixel {i} beyond the footprint changed");
            }
        }
        assert!(
            changed_inside > 500,
            "{name}: only {changed_inside} pixels changed"
        );

        // Same input, same output.
        let (again, stats2) = r
            .rasterizer()
            .render(&photo, prepared.scene.as_ref().expect("a scene"))
            .unwrap();
        assert!(again == out, "{name}: a second render differs");
        assert_eq!(stats, stats2);
    }
}

fn luminance(p: &image::Rgba<u8>) -> f64 {
    0.2126 * f64::from(p[0]) + 0.7152 * f64::from(p[1]) + 0.0722 * f64::from(p[2])
}

fn lens_check(frame: SampleFrame, expect: Transparency) {
    lens_check_model(frame.name(), &frame.glb(), expect);
}

fn lens_check_model(name: &str, model: &[u8], expect: Transparency) -> RgbaImage {
    let photo = astronaut();
    let face = astronaut_face();
    let product = product::load(model).unwrap();
    let prepared = eyewear::prepare(
        &photo,
        face,
        &product,
        Eyewear::Sunglasses,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        prepared.scene.as_ref().expect("a scene").transparency,
        expect
    );
    let (out, _) = renderer()
        .rasterizer()
        .render(&photo, prepared.scene.as_ref().expect("a scene"))
        .unwrap();
    let (_, lens_only) = footprint(&prepared, photo.width(), photo.height());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, &l) in lens_only.iter().enumerate() {
        if l == 1 {
            let (x, y) = (i as u32 % photo.width(), i as u32 / photo.width());
            a.push(luminance(photo.get_pixel(x, y)));
            b.push(luminance(out.get_pixel(x, y)));
        }
    }
    assert!(a.len() > 500, "{}: {} lens pixels", name, a.len());
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    let corr = cov / (va * vb).sqrt();
    eprintln!(
        "{}: lens mean luminance {ma:.1} → {mb:.1}, correlation {corr:.3}",
        name
    );
    assert!(mb < 0.75 * ma, "{}: lenses not darker ({ma} → {mb})", name);
    assert!(corr > 0.6, "{}: lenses not see-through (r = {corr})", name);
    out
}

#[test]
fn sunglasses_lenses_are_tinted_and_see_through() {
    lens_check(SampleFrame::AviatorGoldTinted, Transparency::Material);
    lens_check(SampleFrame::RoundBlack, Transparency::DefaultGradient);
}

#[test]
fn a_model_in_other_units_is_auto_fitted_and_says_so() {
    let photo = astronaut();
    let face = astronaut_face();
    let frame = SampleFrame::RectTortoise.product();
    // Centimetres, origin at a corner: not the conventions.
    let (lo, _) = frame.bounds();
    let meshes: Vec<_> = frame
        .primitives
        .iter()
        .map(|p| {
            let mut p = p.clone();
            for v in &mut p.positions {
                *v = [
                    (v[0] - lo[0]) * 100.0,
                    (v[1] - lo[1]) * 100.0,
                    (v[2] - lo[2]) * 100.0,
                ];
            }
            (p, [0.0f32; 3])
        })
        .collect();
    let glb = write_glb(&meshes, &frame.materials, &frame.textures);
    let product = product::load(&glb).unwrap();
    let prepared = eyewear::prepare(
        &photo,
        face,
        &product,
        Eyewear::Glasses,
        &Options::default(),
    )
    .unwrap();
    let p = &prepared.placement;
    assert!(matches!(p.fit, Fit::AutoFit(_)), "{:?}", p.fit);
    let fw = p.face_width_px;
    assert!(dist(p.anchor_px, p.landmark_168_px) <= 0.03 * fw);
    let lens = p.lens_centres_px.unwrap();
    for (k, (l, e)) in lens.iter().zip(p.eye_centres_px).enumerate() {
        let d = dist(*l, e);
        assert!(d <= 0.06 * fw, "auto-fit lens {k}: {d:.1} px from the eye");
    }
    let (_, stats) = renderer()
        .rasterizer()
        .render(&photo, prepared.scene.as_ref().expect("a scene"))
        .unwrap();
    let meta = eyewear::metadata(Eyewear::Glasses, &prepared, &stats, face);
    assert_eq!(meta["fit"], "auto_fit");
    assert!(meta["auto_fit_reason"].as_str().unwrap().contains("width"));
}

// ---------------------------------------------------------------------------------------------
// The engine: end to end, face policy, errors

fn run_engine(
    category: Category,
    person: Vec<u8>,
    model: Vec<u8>,
) -> Result<vto_core::Rendered, EngineError> {
    let tryon: Arc<dyn TryOn> = match category {
        Category::Sunglasses => Arc::new(Eyewear::Sunglasses),
        _ => Arc::new(Eyewear::Glasses),
    };
    render_with(tryon, category, person, model)
}

#[test]
fn the_engine_returns_a_png_of_the_photo_size_with_metadata() {
    let out = run_engine(
        Category::Sunglasses,
        astronaut_bytes().to_vec(),
        SampleFrame::AviatorGoldTinted.gltf_embedded(),
    )
    .unwrap();
    assert_eq!(out.content_type, "image/png");
    let img = image::load_from_memory(&out.image).unwrap();
    let photo = astronaut();
    assert_eq!((img.width(), img.height()), photo.dimensions());
    assert_eq!(out.metadata["category"], "sunglasses");
    assert_eq!(out.metadata["fit"], "real_units");
    assert_eq!(out.metadata["lens"], "tinted_material");
    assert!(out.metadata["occluded_fragments"].as_u64().unwrap() > 0);
}

#[test]
fn no_face_is_processing_failed_and_says_so() {
    let mut sky = RgbaImage::new(320, 240);
    for (x, y, p) in sky.enumerate_pixels_mut() {
        *p = image::Rgba([(100 + x / 4) as u8, (150 + y / 8) as u8, 230, 255]);
    }
    let err = run_engine(
        Category::Glasses,
        encode_png(&sky).unwrap(),
        SampleFrame::RoundBlack.glb(),
    )
    .unwrap_err();
    match err {
        EngineError::Rejected { code, message } => {
            assert_eq!(code, ErrorCode::ProcessingFailed);
            assert!(message.contains("no face"), "{message}");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn with_two_faces_the_largest_wears_the_glasses() {
    let big = astronaut();
    let small = image::imageops::resize(&big, 300, 300, image::imageops::FilterType::Triangle);
    let mut canvas = RgbaImage::from_pixel(812, 512, image::Rgba([30, 30, 30, 255]));
    image::imageops::overlay(&mut canvas, &big, 0, 0);
    image::imageops::overlay(&mut canvas, &small, 512, 106);
    let all = renderer().faces(&canvas).unwrap();
    assert!(
        all.len() >= 2,
        "the photo holds two faces, vision found {}",
        all.len()
    );
    let out = run_engine(
        Category::Glasses,
        encode_png(&canvas).unwrap(),
        SampleFrame::CatEyeRed.glb(),
    )
    .unwrap();
    eprintln!("face candidates: {}", out.metadata["face_candidates"]);
    assert!(
        out.metadata["face_candidates"].as_u64().unwrap() >= 1,
        "{}",
        out.metadata
    );
    let anchor = &out.metadata["anchor_px"];
    let x = anchor[0].as_f64().unwrap();
    let face = astronaut_face();
    assert!(
        (x - f64::from(face.landmarks[168][0])).abs() < 10.0,
        "the glasses went to the small face: anchor x {x}"
    );
    // The small face is untouched.
    let img = image::load_from_memory(&out.image).unwrap().to_rgba8();
    for y in 106..406 {
        for x in 520..812 {
            assert_eq!(img.get_pixel(x, y), canvas.get_pixel(x, y));
        }
    }
}

#[test]
fn malformed_products_are_typed_errors_never_panics() {
    let good = SampleFrame::RoundBlack.glb();
    let mut lying = good.clone();
    // Claim a huge accessor count in the JSON chunk (same length).
    let json_len = u32::from_le_bytes([good[12], good[13], good[14], good[15]]) as usize;
    let json = String::from_utf8(good[20..20 + json_len].to_vec()).unwrap();
    let needle = "\"count\":";
    let at = json.find(needle).unwrap() + needle.len();
    let digits = json[at..].chars().take_while(char::is_ascii_digit).count();
    let replaced = format!(
        "{}{}{}",
        &json[..at],
        "9".repeat(digits),
        &json[at + digits..]
    );
    lying[20..20 + json_len].copy_from_slice(replaced.as_bytes());
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated GLB",
            good[..good.len() / 2].to_vec(),
            "product_malformed",
        ),
        ("lying accessor", lying, "product_malformed"),
        (
            "random bytes",
            (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect(),
            "product_malformed",
        ),
        (
            "OBJ face index out of range",
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99\n".to_vec(),
            "product_malformed",
        ),
        (
            "OBJ negative index before the first vertex",
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -7\n".to_vec(),
            "product_malformed",
        ),
        (
            "empty OBJ",
            b"# nothing\no empty\n".to_vec(),
            "product_empty",
        ),
        (
            "external buffer",
            br#"{"asset":{"version":"2.0"},"buffers":[{"uri":"x.bin","byteLength":4}]}"#.to_vec(),
            "product_unsupported",
        ),
    ];
    for (name, bytes, code) in cases {
        let e = product::load(&bytes).expect_err(name);
        assert_eq!(e.code(), code, "{name}: {e}");
    }
    let err = run_engine(
        Category::Glasses,
        astronaut_bytes().to_vec(),
        good[..100].to_vec(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Rejected {
                code: ErrorCode::UnsupportedMedia,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn every_alpha_mode_and_format_loads() {
    let p = product::load(&SampleFrame::RectTortoise.gltf_embedded()).unwrap();
    assert_eq!(p.format, product::Format::Gltf);
    assert!(p.materials.iter().any(|m| m.alpha_mode == AlphaMode::Blend));
    assert!(p.materials.iter().any(|m| m.base_color_texture.is_some()));
    let obj = vto_render::product::write::write_obj(&SampleFrame::RoundBlack.product());
    let o = product::load(obj.as_bytes()).unwrap();
    assert_eq!(o.format, product::Format::Obj);
    assert_eq!(
        o.triangle_count(),
        SampleFrame::RoundBlack.product().triangle_count()
    );
}

#[test]
fn the_key_light_comes_from_the_bright_side_of_the_face() {
    let face = astronaut_face();
    let photo = astronaut();
    let cam = HeadCamera::new(face, photo.width(), photo.height()).unwrap();
    let [x0, _, x1, _] = face.landmark_box();
    let [_, y0, _, y1] = face.landmark_box();
    // A face lit from image left (bright left, dark right), then from above.
    for (axis, name) in [(0usize, "left"), (1, "above")] {
        let mut lit = photo.clone();
        for (x, y, p) in lit.enumerate_pixels_mut() {
            let t = if axis == 0 {
                (x as f32 - x0) / (x1 - x0)
            } else {
                (y as f32 - y0) / (y1 - y0)
            };
            let v = (230.0 - 180.0 * t.clamp(0.0, 1.0)) as u8;
            *p = image::Rgba([
                v,
                (f32::from(v) * 0.8) as u8,
                (f32::from(v) * 0.7) as u8,
                255,
            ]);
        }
        let l = light::from_face(&lit, face, &cam);
        eprintln!("lit from {name}: {l:?}");
        assert!(
            l.key_dir[axis] < -0.3,
            "light from {name}: key direction {:?}",
            l.key_dir
        );
        assert!(l.key_dir[2] < 0.0, "the key light is in front of the face");
        assert!(
            l.ambient[0] > l.ambient[2],
            "the warm tint carries into the ambient"
        );
    }
}

#[test]
fn masked_materials_drop_their_transparent_texels() {
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    let raster = Rasterizer::new(ctx);
    let mut scene = synthetic_scene();
    scene.occluders.clear();
    // One opaque quad, uv 0..1 across it, with a 2×2 checkerboard of alpha 0 / 1.
    let mut product = Mesh::default();
    quad(
        &mut product,
        [
            [0.0, 0.0, 50.0],
            [128.0, 0.0, 50.0],
            [128.0, 128.0, 50.0],
            [0.0, 128.0, 50.0],
        ],
        0,
    );
    for (v, uv) in product
        .vertices
        .iter_mut()
        .zip([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    {
        v.uv = [uv[0], uv[1], 0.0, 0.0];
    }
    scene.product = product;
    let (full, _) = raster.ids(&scene).unwrap();
    let opaque_full = full[..full.len() / 2]
        .iter()
        .filter(|&&i| i != u32::MAX)
        .count();
    scene.materials[0] = RasterMaterial {
        tex: [0, 2, 2, 1],
        flags: [1, 1, 0, 0],
        pbr: [0.0, 0.5, 0.5, 0.0],
        ..material(1)
    };
    scene.texels = vec![0xffff_ffff, 0x00ff_ffff, 0x00ff_ffff, 0xffff_ffff];
    let (masked, _) = raster.ids(&scene).unwrap();
    let opaque_masked = masked[..masked.len() / 2]
        .iter()
        .filter(|&&i| i != u32::MAX)
        .count();
    assert_eq!(opaque_full, 128 * 128);
    // Bilinear alpha crosses the 0.5 cutoff half-way between texel centres: about half stays.
    let frac = opaque_masked as f64 / opaque_full as f64;
    assert!(
        (0.4..0.6).contains(&frac),
        "{opaque_masked} of {opaque_full} kept"
    );
}

// ---------------------------------------------------------------------------------------------
// Real photos: EXIF orientation, turned heads, real shop models

/// A minimal little-endian TIFF block with one tag: Orientation = `o`.
fn exif_orientation(o: u16) -> Vec<u8> {
    let mut t = b"II*\0".to_vec();
    t.extend_from_slice(&8u32.to_le_bytes());
    t.extend_from_slice(&1u16.to_le_bytes());
    t.extend_from_slice(&0x0112u16.to_le_bytes());
    t.extend_from_slice(&3u16.to_le_bytes());
    t.extend_from_slice(&1u32.to_le_bytes());
    t.extend_from_slice(&u32::from(o).to_le_bytes());
    t.extend_from_slice(&0u32.to_le_bytes());
    t
}

#[test]
fn an_exif_rotated_phone_photo_comes_back_upright_with_the_glasses_on_the_eyes() {
    use image::ImageEncoder;
    // What a phone held upright stores: the pixels turned 90° counter-clockwise, and EXIF
    // orientation 6 ("rotate 90° clockwise to display").
    let upright = image::imageops::crop_imm(&astronaut(), 0, 0, 512, 448).to_image();
    let stored = image::DynamicImage::ImageRgba8(image::imageops::rotate270(&upright)).to_rgb8();
    let mut jpeg = Vec::new();
    let mut enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95);
    enc.set_exif_metadata(exif_orientation(6)).unwrap();
    enc.write_image(
        stored.as_raw(),
        stored.width(),
        stored.height(),
        image::ExtendedColorType::Rgb8,
    )
    .unwrap();
    let out = run_engine(Category::Glasses, jpeg, SampleFrame::RoundBlack.glb()).unwrap();
    let img = image::load_from_memory(&out.image).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (512, 448), "the displayed size, upright");
    // Upright: away from the glasses the result is the upright photo (up to JPEG loss).
    let mut diff = 0u64;
    for y in 380..448 {
        for x in 0..512 {
            let (a, b) = (img.get_pixel(x, y).0, upright.get_pixel(x, y).0);
            diff += (0..3).map(|k| u64::from(a[k].abs_diff(b[k]))).sum::<u64>();
        }
    }
    let mean = diff as f64 / (68.0 * 512.0 * 3.0);
    assert!(
        mean < 6.0,
        "the output is not upright: mean difference {mean:.1}"
    );
    // The glasses sit on the upright face's bridge.
    let anchor = &out.metadata["anchor_px"];
    let (x, y) = (anchor[0].as_f64().unwrap(), anchor[1].as_f64().unwrap());
    let l = astronaut_face().landmarks[168];
    let d = ((x - f64::from(l[0])).powi(2) + (y - f64::from(l[1])).powi(2)).sqrt();
    assert!(
        d < 4.0,
        "bridge {d:.1} px from the upright face's landmark 168"
    );
}

/// The angle (radians) of the eye line 33 → 263 and the brow top in the face's own frame
/// (rotated so the eyes are level), with the rotation to apply to image points.
fn face_frame(face: &Face) -> impl Fn(f32, f32) -> [f32; 2] {
    let lm = &face.landmarks;
    let roll = (lm[263][1] - lm[33][1]).atan2(lm[263][0] - lm[33][0]);
    let (s, c) = (-roll).sin_cos();
    let o = lm[168];
    move |x: f32, y: f32| {
        let (dx, dy) = (x - o[0], y - o[1]);
        [c * dx - s * dy, s * dx + c * dy]
    }
}

#[test]
fn frames_stay_below_the_brows_and_temples_run_to_the_ears_on_turned_and_small_faces() {
    let photos = models_dir().join("test-photos");
    let hopper = image::open(photos.join("grace_hopper.jpg"))
        .expect("grace_hopper.jpg: run scripts/fetch-models.sh --test-photos")
        .to_rgba8();
    let r = renderer();
    let cases = crate::support::face_cases::face_cases(&astronaut(), &hopper);
    let mut checked = 0;
    for case in cases.iter().filter(|c| c.name != "two_people") {
        let choice = r.choose_face(&case.photo).unwrap().expect(case.name);
        let face = &choice.face;
        let to_face = face_frame(face);
        let brow_top = [70, 63, 105, 66, 107, 336, 296, 334, 293, 300]
            .iter()
            .map(|&i| to_face(face.landmarks[i][0], face.landmarks[i][1])[1])
            .fold(f32::MAX, f32::min);
        let fw = {
            let (a, b) = (face.landmarks[234], face.landmarks[454]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
        };
        for frame in [SampleFrame::RoundBlack, SampleFrame::AviatorGoldTinted] {
            let product = product::load(&frame.glb()).unwrap();
            let prepared = eyewear::prepare(
                &case.photo,
                face,
                &product,
                Eyewear::Glasses,
                &Options::default(),
            )
            .unwrap();
            let droop = prepared.placement.temple_droop_deg.expect("temples");
            for d in droop {
                assert!(
                    (0.0..=25.0).contains(&d),
                    "{} {}: temple droop {d}°",
                    case.name,
                    frame.name()
                );
            }
            let (w, h) = case.photo.dimensions();
            let (covered, _) = footprint(&prepared, w, h);
            let top = covered
                .iter()
                .enumerate()
                .filter(|(_, c)| **c)
                .map(|(i, _)| to_face((i as u32 % w) as f32 + 0.5, (i as u32 / w) as f32 + 0.5)[1])
                .fold(f32::MAX, f32::min);
            eprintln!(
                "{} · {}: face {fw:.0} px, frame top {:.1} % of the face width above the brow top, temples {droop:?}°",
                case.name,
                frame.name(),
                100.0 * (brow_top - top) / fw,
            );
            assert!(
                top >= brow_top - 0.03 * fw,
                "{} {}: the frame reaches {:.1} px above the brows",
                case.name,
                frame.name(),
                brow_top - top
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} renders checked");
}

/// Rewrites a GLB's JSON chunk with `edit` (the BIN chunk is kept).
fn edit_glb(glb: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let word = |at: usize| u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    let json_len = word(12);
    let mut doc: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    edit(&mut doc);
    let mut json = serde_json::to_vec(&doc).unwrap();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let bin = &glb[20 + json_len..];
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + json.len() + bin.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(bin);
    out
}

/// Sunglasses laid out the way a shop's exported model often is (the layout of Khronos'
/// SunglassesKhronos sample): authored Z-up with a Z-up → Y-up matrix on the root node, the
/// origin at the bottom of the frame instead of the bridge, several nodes, a textured part,
/// and lenses made with `KHR_materials_transmission` over a near-black base colour (plus
/// `KHR_materials_volume`, which vto ignores).
fn shop_style_sunglasses() -> Vec<u8> {
    use vto_render::product::write::write_glb;
    let frame = SampleFrame::AviatorGoldTinted.product();
    let tortoise = SampleFrame::RectTortoise.product();
    let (lo, _) = frame.bounds();
    // Scene (x, y, z) with y from the frame's bottom ← file (x, -z, y) under the node matrix.
    let to_file = |v: [f32; 3], shift: f32| [v[0], -v[2], v[1] - shift];
    let mut parts = Vec::new();
    for p in &frame.primitives {
        let mut q = p.clone();
        q.positions = q.positions.iter().map(|v| to_file(*v, lo[1])).collect();
        q.normals = q.normals.iter().map(|v| to_file(*v, 0.0)).collect();
        parts.push((q, [0.0; 3]));
    }
    // A textured part: the tortoiseshell frame's first primitive, with its own material.
    let mut textured = tortoise.primitives[0].clone();
    textured.positions = textured
        .positions
        .iter()
        .map(|v| to_file([v[0] * 0.2, v[1] * 0.2 + lo[1] * 0.5, v[2] - 0.08], lo[1]))
        .collect();
    textured.normals = textured.normals.iter().map(|v| to_file(*v, 0.0)).collect();
    textured.material = frame.materials.len();
    parts.push((textured, [0.0; 3]));
    let mut materials = frame.materials.clone();
    materials.push(tortoise.materials[tortoise.primitives[0].material].clone());
    materials.last_mut().unwrap().base_color_texture = Some(0);
    let glb = write_glb(&parts, &materials, &tortoise.textures);
    edit_glb(&glb, |doc| {
        doc["nodes"][0]["matrix"] = serde_json::json!([
            1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0
        ]);
        doc["extensionsUsed"] =
            serde_json::json!(["KHR_materials_transmission", "KHR_materials_volume"]);
        for m in doc["materials"].as_array_mut().unwrap() {
            if m["alphaMode"] == "BLEND" {
                m.as_object_mut().unwrap().remove("alphaMode");
                m["pbrMetallicRoughness"]["baseColorFactor"] =
                    serde_json::json!([0.009, 0.009, 0.009, 1.0]);
                m["extensions"] = serde_json::json!({
                    "KHR_materials_transmission": {"transmissionFactor": 1.0},
                    "KHR_materials_volume": {"thicknessFactor": 0.01},
                });
            }
        }
    })
}

#[test]
fn a_shop_style_model_sits_on_the_eyes_with_see_through_lenses() {
    let model = shop_style_sunglasses();
    let product = product::load(&model).unwrap();
    assert!(product.primitives.len() >= 3, "several nodes");
    assert!(!product.textures.is_empty(), "a textured part");
    assert!(
        product
            .materials
            .iter()
            .any(|m| m.alpha_mode == AlphaMode::Blend),
        "transmission lenses join the transparent layer"
    );
    let photo = astronaut();
    let face = astronaut_face();
    let prepared = eyewear::prepare(
        &photo,
        face,
        &product,
        Eyewear::Sunglasses,
        &Options::default(),
    )
    .unwrap();
    let p = &prepared.placement;
    eprintln!("shop-style model: {:?}", p.fit);
    match &p.fit {
        Fit::AutoFit(reason) => assert!(reason.contains("origin"), "{reason}"),
        other => panic!("an origin at the frame's bottom must not pass as the bridge: {other:?}"),
    }
    assert_eq!(
        p.scale_to_cm, 100.0,
        "the width says metres: real scale kept"
    );
    let fw = p.face_width_px;
    let lens = p.lens_centres_px.expect("lenses");
    for (l, e) in lens.iter().zip(p.eye_centres_px) {
        let d = dist(*l, e);
        eprintln!(
            "shop-style model: lens centre {:.1} % of the face width from the eye",
            100.0 * d / fw
        );
        assert!(
            d <= 0.06 * fw,
            "lens {d:.1} px from the eye centre (face {fw:.0} px)"
        );
    }
    let out = lens_check_model("shop-style", &model, Transparency::Material);
    // For a person to look at (the gallery of this case).
    let dir = workspace().join("target/test-gallery");
    std::fs::create_dir_all(&dir).unwrap();
    out.save(dir.join("shop_style_sunglasses.png")).unwrap();
}

#[test]
fn required_extensions_we_cannot_decode_are_refused_by_name() {
    let glb = SampleFrame::RoundBlack.glb();
    // Decoded since #29 (see `tests/render/products.rs` for files that use them): required,
    // they load.
    for ext in [
        "KHR_draco_mesh_compression",
        "EXT_meshopt_compression",
        "KHR_mesh_quantization",
        "KHR_materials_pbrSpecularGlossiness",
        "KHR_texture_basisu",
    ] {
        let required = edit_glb(&glb, |doc| {
            doc["extensionsUsed"] = serde_json::json!([ext]);
            doc["extensionsRequired"] = serde_json::json!([ext]);
        });
        if let Err(e) = product::load(&required) {
            panic!("{ext}: {e}");
        }
    }
    for ext in ["EXT_mesh_gpu_instancing", "EXT_some_future_thing"] {
        let bad = edit_glb(&glb, |doc| {
            doc["extensionsUsed"] = serde_json::json!([ext]);
            doc["extensionsRequired"] = serde_json::json!([ext]);
        });
        let err = product::load(&bad).unwrap_err();
        assert_eq!(err.code(), "product_unsupported", "{ext}: {err}");
        assert!(err.to_string().contains(ext), "{ext}: {err}");
        let rejected = run_engine(Category::Glasses, astronaut_bytes().to_vec(), bad).unwrap_err();
        match rejected {
            EngineError::Rejected { code, message } => {
                assert_eq!(code, ErrorCode::UnsupportedMedia);
                assert!(
                    message.starts_with("product_unsupported") && message.contains(ext),
                    "{message}"
                );
            }
            other => panic!("{ext}: expected a rejection, got {other:?}"),
        }
    }
    // Merely used (not required), an unknown extension is ignored.
    let used = edit_glb(&glb, |doc| {
        doc["extensionsUsed"] = serde_json::json!(["KHR_materials_volume"]);
    });
    assert!(product::load(&used).is_ok());
}

/// A renderer with a pool of two renders two try-ons at once, each the same as one rendered
/// alone, after a warm-up; nothing is left in flight afterwards.
#[test]
fn two_try_ons_render_at_once_on_a_pool_of_two_and_match_one_at_a_time() {
    use vto_render::engine::RendererConfig;
    use vto_render::vision::VisionBackend;
    let r = Renderer::with_config(
        &models_dir(),
        RendererConfig {
            backend: VisionBackend::from_env().unwrap(),
            concurrency: 2,
            ..RendererConfig::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.concurrency(), 2);
    r.warm_up().unwrap();
    let tryon = Eyewear::Sunglasses;
    let glb = SampleFrame::AviatorGoldTinted.glb();
    let alone = r.try_on(&tryon, astronaut_bytes(), &glb).unwrap();
    let both: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| r.try_on(&tryon, astronaut_bytes(), &glb).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &both {
        assert_eq!(out.image.dimensions(), alone.image.dimensions());
        let differing = out
            .image
            .pixels()
            .zip(alone.image.pixels())
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            differing, 0,
            "a concurrent render differs from the one rendered alone"
        );
    }
    assert_eq!(r.in_flight(), 0);
}

#[test]
fn a_photo_over_the_side_limit_is_scaled_down_first_and_says_so() {
    // #34: a 4000 × 4000 photo was carried at full size through every stage (690 MB RSS with
    // 8 clients); the longer side is now cut to `RendererConfig::max_photo_side` (2048 by
    // default) right after decoding, and the result's metadata says so.
    let big = image::imageops::resize(
        &astronaut(),
        3000,
        3000,
        image::imageops::FilterType::Triangle,
    );
    let mut png = Vec::new();
    big.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let glb = SampleFrame::AviatorGoldTinted.glb();
    let r = renderer();
    let out = r.try_on(&Eyewear::Sunglasses, &png, &glb).unwrap();
    assert_eq!(out.image.dimensions(), (2048, 2048));
    assert_eq!(
        out.metadata["photo"]["received"],
        serde_json::json!([3000, 3000])
    );
    assert_eq!(
        out.metadata["photo"]["rendered"],
        serde_json::json!([2048, 2048])
    );
    // A photo within the limit keeps its size, with no note.
    let small = r
        .try_on(&Eyewear::Sunglasses, astronaut_bytes(), &glb)
        .unwrap();
    assert_eq!(small.image.dimensions(), astronaut().dimensions());
    assert!(small.metadata.get("photo").is_none());
}
