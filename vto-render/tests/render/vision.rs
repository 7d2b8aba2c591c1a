//! Integration tests of the image kernels and the vision pipelines.
//!
//! - Each image kernel runs on the GPU (lavapipe in CI) and is compared with its CPU reference.
//! - Detector decoding runs on LiteRT's raw outputs for astronaut.png (committed numbers made
//!   by `scripts/vision_reference.py golden`) and must land on MediaPipe 0.10.14's boxes.
//! - End to end: astronaut.png through [`Vision::inspect`] against MediaPipe 0.10.14's own
//!   pipeline (`tests/data/vision/astronaut_mediapipe.json`, made by
//!   `scripts/mediapipe_reference.py`), and a generated landscape with no person.
//!
//! The end-to-end tests need the six models and the test photos:
//! `scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR"` (default dir `./models` at the
//! workspace root). They run the models through [`networks`], the one place that picks the
//! [`Infer`](vto_render::vision::Infer) implementation.

use crate::support::models_dir;
use std::path::PathBuf;
use std::sync::Arc;

use image::{Rgba, RgbaImage};
use serde::Deserialize;
use vto_render::gpu::GpuContext;
use vto_render::image_ops::{self, Affine2, Border, ImageOps, TensorSpec};
use vto_render::models::ModelStore;
use vto_render::vision::anchors::{self, AnchorOptions};
use vto_render::vision::detection::DecodeOptions;
use vto_render::vision::face::{decode_detector_outputs, FaceDetector};
use vto_render::vision::{Networks, RotatedRect, Vision};

fn ctx() -> Arc<GpuContext> {
    GpuContext::shared().expect("a wgpu adapter (lavapipe in CI)")
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A deterministic, textured test image.
fn pattern(w: u32, h: u32, seed: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        let v = x
            .wrapping_mul(2654435761)
            .wrapping_add(y.wrapping_mul(40503))
            ^ seed;
        Rgba([
            (x * 255 / w.max(1)) as u8,
            (y * 255 / h.max(1)) as u8,
            (v >> 13) as u8,
            128 + ((v >> 7) as u8 >> 1),
        ])
    })
}

// ---------------------------------------------------------------------------------------------
// Shaders

#[test]
fn upload_download_round_trips_exactly() {
    let ops = ImageOps::new(ctx());
    let img = pattern(37, 21, 7);
    let back = ops.download(&ops.upload(&img).unwrap()).unwrap();
    assert_eq!(back, img);
}

/// Tolerance: one 8-bit level (the GPU may round an exact .5 differently).
#[test]
fn resize_matches_cpu_within_one_level() {
    let ops = ImageOps::new(ctx());
    let img = pattern(97, 61, 3);
    let src = ops.upload(&img).unwrap();
    for (w, h) in [(48, 30), (200, 123), (97, 61)] {
        let gpu = ops.download(&ops.resize(&src, w, h).unwrap()).unwrap();
        let cpu = image_ops::cpu_resize(&img, w, h);
        let max = gpu
            .as_raw()
            .iter()
            .zip(cpu.as_raw())
            .map(|(a, b)| (i16::from(*a) - i16::from(*b)).abs())
            .max()
            .unwrap();
        assert!(max <= 1, "{w}x{h}: max diff {max}");
    }
    let same = ops.download(&ops.resize(&src, 97, 61).unwrap()).unwrap();
    assert_eq!(same, img, "resizing to the same size is the identity");
}

/// Tolerance: one 8-bit level for ≥ 99.5 % of the values, eight levels for all. Both sides round
/// the sample position to 1/32 pixel and the value to a level (as OpenCV does); where f32
/// arithmetic puts a position or value on the other side of a rounding boundary, GPU and CPU
/// differ by one level, or by up to 1/32 of the neighbouring texels' difference.
#[test]
fn rotated_crop_matches_cpu_for_both_borders_and_ranges() {
    let ops = ImageOps::new(ctx());
    let img = pattern(120, 90, 11);
    let src = ops.upload(&img).unwrap();
    let roi = RotatedRect {
        cx: 100.0,
        cy: 20.0,
        width: 80.0,
        height: 80.0,
        rotation: 0.6,
    };
    for (border, (lo, hi)) in [(Border::Zero, (-1.0, 1.0)), (Border::Replicate, (0.0, 1.0))] {
        let spec = TensorSpec {
            width: 64,
            height: 48,
            range_min: lo,
            range_max: hi,
            border,
        };
        let map = roi.tensor_to_image(64, 48);
        let gpu = ops.crop_to_tensor(&src, &map, &spec).unwrap();
        let cpu = image_ops::cpu_crop_to_tensor(&img, &map, &spec);
        assert_eq!(gpu.len(), 64 * 48 * 3);
        let level = (hi - lo) / 255.0;
        let diffs: Vec<f32> = gpu
            .iter()
            .zip(&cpu)
            .map(|(a, b)| (a - b).abs() / level)
            .collect();
        let max = diffs.iter().copied().fold(0.0, f32::max);
        let over = diffs.iter().filter(|&&d| d > 1.001).count();
        assert!(max <= 8.001, "{border:?}: max diff {max} levels");
        assert!(
            over * 200 <= diffs.len(),
            "{border:?}: {over} of {} values off by > 1 level",
            diffs.len()
        );
        // The ROI reaches past the top-right corner: zero border gives the range minimum there.
        let corner = &gpu[(63 * 3)..(63 * 3 + 3)];
        match border {
            Border::Zero => assert!(corner.iter().all(|&v| v == lo), "{corner:?}"),
            Border::Replicate => assert!(corner.iter().all(|&v| v >= lo && v <= hi)),
        }
    }
    // Identity map at integer positions copies pixels exactly.
    let spec = TensorSpec {
        width: 120,
        height: 90,
        range_min: 0.0,
        range_max: 255.0,
        border: Border::Zero,
    };
    let t = ops.crop_to_tensor(&src, &Affine2::IDENTITY, &spec).unwrap();
    let p = img.get_pixel(5, 7);
    let i = (7 * 120 + 5) * 3;
    assert_eq!(
        [t[i], t[i + 1], t[i + 2]],
        [p[0], p[1], p[2]].map(f32::from)
    );
}

/// Tolerance: one 8-bit level.
#[test]
fn composite_matches_cpu_within_one_level() {
    let ops = ImageOps::new(ctx());
    let dst = pattern(50, 40, 1);
    let src = pattern(50, 40, 99);
    let g = ops
        .composite(&ops.upload(&dst).unwrap(), &ops.upload(&src).unwrap(), 0.7)
        .unwrap();
    let gpu = ops.download(&g).unwrap();
    let cpu = image_ops::cpu_composite(&dst, &src, 0.7);
    let max = gpu
        .as_raw()
        .iter()
        .zip(cpu.as_raw())
        .map(|(a, b)| (i16::from(*a) - i16::from(*b)).abs())
        .max()
        .unwrap();
    assert!(max <= 1, "max diff {max}");
    // Opaque source at full opacity replaces the destination.
    let opaque = RgbaImage::from_pixel(50, 40, Rgba([9, 8, 7, 255]));
    let g = ops
        .composite(
            &ops.upload(&dst).unwrap(),
            &ops.upload(&opaque).unwrap(),
            1.0,
        )
        .unwrap();
    assert_eq!(ops.download(&g).unwrap(), opaque);
    assert!(ops
        .composite(
            &ops.upload(&dst).unwrap(),
            &ops.upload(&pattern(5, 5, 0)).unwrap(),
            1.0
        )
        .is_err());
}

/// Tolerance: one 8-bit level (both sides quantize to n / 255).
#[test]
fn mask_warp_matches_cpu() {
    let ops = ImageOps::new(ctx());
    let mask: Vec<f32> = (0..32 * 32)
        .map(|i| ((i * 37) % 101) as f32 / 100.0)
        .collect();
    let roi = RotatedRect {
        cx: 40.0,
        cy: 30.0,
        width: 50.0,
        height: 50.0,
        rotation: -0.3,
    };
    let to_mask = roi.tensor_to_image(32, 32).inverse().unwrap();
    let gpu = ops.warp_mask(&mask, (32, 32), &to_mask, (90, 70)).unwrap();
    let cpu = image_ops::cpu_warp_mask(&mask, (32, 32), &to_mask, (90, 70));
    assert_eq!(
        gpu.len(),
        90 * 70,
        "a width that is not a multiple of 4 unpacks right"
    );
    let max = gpu
        .iter()
        .zip(&cpu)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(max <= 1.0 / 255.0 + 1e-6, "max diff {max}");
    assert_eq!(gpu[69 * 90 + 89], 0.0, "far corner is outside the ROI");
    assert!(gpu.iter().any(|&v| v > 0.0));
    assert!(ops
        .warp_mask(&mask[1..], (32, 32), &to_mask, (9, 7))
        .is_err());
}

// ---------------------------------------------------------------------------------------------
// Decoding on LiteRT's raw outputs

#[derive(Deserialize)]
struct DetectorGolden {
    num_anchors: usize,
    num_coords: usize,
    /// Rows kept: `[anchor index, raw score, raw regressors...]`; the rest scored -100.
    rows: Vec<Vec<f32>>,
}

#[derive(Deserialize)]
struct Goldens {
    face_detection_short_range: DetectorGolden,
    face_detection_full_range: DetectorGolden,
    pose_detection: DetectorGolden,
}

#[derive(Deserialize)]
struct MpDetection {
    score: f32,
    #[serde(rename = "box")]
    bbox: [f32; 4],
    keypoints: Vec<[f32; 2]>,
}

#[derive(Deserialize)]
struct MpFace {
    landmarks: Vec<[f32; 3]>,
    landmark_box: [f32; 4],
}

#[derive(Deserialize)]
struct MpPose {
    keypoints: Vec<[f32; 5]>,
    mask_coverage: f32,
}

#[derive(Deserialize)]
struct MpReference {
    width: u32,
    height: u32,
    face_mesh: Vec<MpFace>,
    face_detection_short_range: Vec<MpDetection>,
    face_detection_full_range: Vec<MpDetection>,
    pose: Option<MpPose>,
    selfie_mask_coverage: f32,
}

fn mp_reference() -> MpReference {
    let path = manifest().join("tests/data/vision/astronaut_mediapipe.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn expand(g: &DetectorGolden) -> Vec<Vec<f32>> {
    let mut regs = vec![0.0f32; g.num_anchors * g.num_coords];
    let mut scores = vec![-100.0f32; g.num_anchors];
    for row in &g.rows {
        let i = row[0] as usize;
        scores[i] = row[1];
        regs[i * g.num_coords..(i + 1) * g.num_coords].copy_from_slice(&row[2..]);
    }
    // Scores first: decoding must find outputs by size, not by position.
    vec![scores, regs]
}

#[test]
fn detector_decoding_on_litert_outputs_lands_on_mediapipe_boxes() {
    let goldens: Goldens = serde_json::from_str(
        &std::fs::read_to_string(manifest().join("tests/data/vision/astronaut_detectors.json"))
            .unwrap(),
    )
    .unwrap();
    let mp = mp_reference();
    let letterbox = RotatedRect::letterbox(mp.width, mp.height, 1.0);
    for (golden, anchors, opts, reference) in [
        (
            &goldens.face_detection_short_range,
            anchors::generate(&AnchorOptions::face_short_range()),
            DecodeOptions::face_short_range(),
            &mp.face_detection_short_range,
        ),
        (
            &goldens.face_detection_full_range,
            anchors::generate(&AnchorOptions::face_full_range()),
            DecodeOptions::face_full_range(),
            &mp.face_detection_full_range,
        ),
    ] {
        assert_eq!(golden.num_anchors, anchors.len());
        let dets = decode_detector_outputs(&expand(golden), &anchors, &opts).unwrap();
        assert_eq!(dets.len(), reference.len(), "one face, as MediaPipe finds");
        let d = letterbox.project_detection(&dets[0]);
        let r = &reference[0];
        let width = r.bbox[2] - r.bbox[0];
        // Tolerance: 2 % of the box width on every coordinate, 0.02 on the score (the input
        // tensors differ by resampling only).
        for (a, b) in [d.xmin, d.ymin, d.xmax, d.ymax].iter().zip(r.bbox) {
            assert!((a - b).abs() <= 0.02 * width, "box {d:?} vs {:?}", r.bbox);
        }
        for (k, rk) in d.keypoints.iter().zip(&r.keypoints) {
            assert!(
                (k[0] - rk[0]).hypot(k[1] - rk[1]) <= 0.02 * width,
                "{k:?} vs {rk:?}"
            );
        }
        assert!(
            (d.score - r.score).abs() <= 0.02,
            "{} vs {}",
            d.score,
            r.score
        );
    }
    // Pose: one body, its hips' centre (keypoint 0) near MediaPipe's hip midpoint.
    let g = &goldens.pose_detection;
    let anchors = anchors::generate(&AnchorOptions::pose());
    assert_eq!(g.num_anchors, anchors.len());
    let dets = decode_detector_outputs(&expand(g), &anchors, &DecodeOptions::pose()).unwrap();
    assert!(!dets.is_empty());
    let d = letterbox.project_detection(&dets[0]);
    let kp = mp.pose.as_ref().unwrap().keypoints.clone();
    let hip = [(kp[23][0] + kp[24][0]) / 2.0, (kp[23][1] + kp[24][1]) / 2.0];
    let torso = torso_height(&kp);
    let off = (d.keypoints[0][0] - hip[0]).hypot(d.keypoints[0][1] - hip[1]);
    assert!(
        off <= 0.15 * torso,
        "hip centre {:?} vs {hip:?}",
        d.keypoints[0]
    );
}

fn torso_height(kp: &[[f32; 5]]) -> f32 {
    let sh = [(kp[11][0] + kp[12][0]) / 2.0, (kp[11][1] + kp[12][1]) / 2.0];
    let hip = [(kp[23][0] + kp[24][0]) / 2.0, (kp[23][1] + kp[24][1]) / 2.0];
    (sh[0] - hip[0]).hypot(sh[1] - hip[1])
}

// ---------------------------------------------------------------------------------------------
// End to end

/// The six networks for the end-to-end tests: the one place that picks the [`Infer`](vto_render::vision::Infer)
/// implementation. Until the wgpu TFLite executor is wired here, LiteRT (the reference
/// interpreter, `VTO_LITERT_PYTHON`) runs the models.
fn networks() -> Networks {
    let store = ModelStore::open(models_dir()).unwrap_or_else(|e| panic!("{e}"));
    Networks::gpu(&ctx(), &store).unwrap()
}

fn test_photo(name: &str) -> RgbaImage {
    let path = models_dir().join("test-photos").join(name);
    image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/fetch-models.sh --test-photos <models dir>",
                path.display()
            )
        })
        .to_rgba8()
}

#[test]
fn astronaut_end_to_end_matches_mediapipe() {
    let mp = mp_reference();
    let img = test_photo("astronaut.png");
    assert_eq!((img.width(), img.height()), (mp.width, mp.height));
    let mut vision = Vision::new(ctx(), networks());
    let report = vision.inspect(&img).unwrap();

    // Faces: one, 468 landmarks, mean error ≤ 2 % of the face-box width.
    assert_eq!(report.faces.len(), mp.face_mesh.len());
    let face = &report.faces[0];
    let reference = &mp.face_mesh[0];
    assert_eq!(face.landmarks.len(), 468);
    let width = reference.landmark_box[2] - reference.landmark_box[0];
    let mean = face
        .landmarks
        .iter()
        .zip(&reference.landmarks)
        .map(|(a, b)| (a[0] - b[0]).hypot(a[1] - b[1]))
        .sum::<f32>()
        / 468.0;
    eprintln!(
        "face: mean landmark error {mean:.3} px = {:.3} % of {width:.1} px",
        100.0 * mean / width
    );
    assert!(
        mean <= 0.02 * width,
        "mean landmark error {mean} px, box width {width}"
    );
    assert!(face.score > 0.9, "face score {}", face.score);
    let pose = face.head_pose.as_ref().expect("a head pose");
    let [yaw, pitch, roll] = pose.yaw_pitch_roll_deg;
    eprintln!(
        "head pose: yaw {yaw:.1} pitch {pitch:.1} roll {roll:.1}, {:.2} px/cm, rms {:.3} cm",
        pose.scale, pose.rms_error_cm
    );
    assert!(yaw.abs() < 45.0 && pitch.abs() < 45.0 && roll.abs() < 30.0);
    // Face width ~15 cm at this scale is about the landmark box width.
    assert!(
        (pose.scale * 15.0 - width).abs() < 0.35 * width,
        "scale {}",
        pose.scale
    );
    assert!(pose.rms_error_cm < 1.0, "rms {}", pose.rms_error_cm);

    // Body: visible keypoints within 2 % of the torso height.
    let body = report.body.as_ref().expect("a body");
    let mpk = &mp.pose.as_ref().unwrap().keypoints;
    let torso = torso_height(mpk);
    let mut checked = 0;
    let mut worst = 0.0f32;
    for (i, (k, r)) in body.keypoints.iter().zip(mpk).enumerate() {
        eprintln!(
            "keypoint {i:2}: ({:7.2}, {:7.2}) vs ({:7.2}, {:7.2}) vis {:.3} vs {:.3}",
            k.x, k.y, r[0], r[1], k.visibility, r[3]
        );
    }
    eprintln!("body roi {:?} score {}", body.roi, body.score);
    for (k, r) in body.keypoints.iter().zip(mpk) {
        if r[3] > 0.5 {
            let d = (k.x - r[0]).hypot(k.y - r[1]);
            worst = worst.max(d);
            assert!(
                d <= 0.02 * torso,
                "keypoint {k:?} vs {r:?}: {d} px, torso {torso}"
            );
            assert!(k.visibility > 0.5, "{k:?}");
            checked += 1;
        }
    }
    eprintln!("body: {checked} visible keypoints, worst {worst:.2} px, torso {torso:.1} px");
    assert!(checked >= 10);
    // Masks: coverage within 0.03 of MediaPipe's.
    let mpc = mp.pose.as_ref().unwrap().mask_coverage;
    assert!(
        (body.mask_coverage - mpc).abs() < 0.03,
        "{} vs {mpc}",
        body.mask_coverage
    );
    assert!(
        (report.selfie_mask_coverage - mp.selfie_mask_coverage).abs() < 0.03,
        "{} vs {}",
        report.selfie_mask_coverage,
        mp.selfie_mask_coverage
    );

    // The overlay draws something and keeps the size.
    let overlay = vto_render::vision::draw_overlay(&img, &report);
    assert_eq!(overlay.dimensions(), img.dimensions());
    assert_ne!(overlay, img);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["faces"][0]["landmarks"].as_array().unwrap().len(), 468);
    assert_eq!(json["body"]["keypoints"].as_array().unwrap().len(), 33);
}

/// A generated landscape: sky gradient, sun, hills, a lake. No person.
fn landscape(w: u32, h: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
        let hill = 0.55 + 0.08 * (fx * 9.0).sin() + 0.04 * (fx * 23.0 + 1.0).sin();
        let sun = ((fx - 0.75).powi(2) + (fy - 0.2).powi(2)).sqrt() < 0.06;
        let px = if sun {
            [255.0, 230.0, 150.0]
        } else if fy < hill {
            [90.0 + 100.0 * fy, 150.0 + 80.0 * fy, 235.0]
        } else if fy < 0.8 {
            let t = ((x * 7 + y * 13) % 17) as f32;
            [40.0 + t, 110.0 + 2.0 * t, 40.0]
        } else {
            [
                30.0,
                80.0 + 40.0 * (fx * 40.0 + fy * 30.0).sin().abs(),
                140.0,
            ]
        };
        Rgba([px[0] as u8, px[1] as u8, px[2] as u8, 255])
    })
}

#[test]
fn a_landscape_has_no_face_and_no_body() {
    let img = landscape(640, 427);
    let mut vision = Vision::new(ctx(), networks());
    let report = vision.inspect(&img).unwrap();
    assert!(report.faces.is_empty(), "{} faces", report.faces.len());
    assert!(report.body.is_none(), "{:?}", report.body.map(|b| b.score));
    assert!(
        report.selfie_mask_coverage < 0.05,
        "{}",
        report.selfie_mask_coverage
    );
}

/// Two copies of the astronaut, one at 300 px beside it (MediaPipe 0.10.14 finds this one with the full-range detector only): two faces, largest first, the
/// small one in its place.
#[test]
fn two_faces_come_largest_first() {
    let big = test_photo("astronaut.png");
    let small = image::imageops::resize(&big, 300, 300, image::imageops::FilterType::Triangle);
    let mut canvas = RgbaImage::from_pixel(700, 512, Rgba([120, 120, 120, 255]));
    image::imageops::overlay(&mut canvas, &big, 0, 0);
    image::imageops::overlay(&mut canvas, &small, 400, 200);
    let mut vision = Vision::new(ctx(), networks());
    let gpu = vision.image_ops().upload(&canvas).unwrap();
    let faces = vision.faces(&gpu).unwrap();
    let summary: Vec<_> = faces
        .iter()
        .map(|f| (f.detector, f.landmark_box()))
        .collect();
    assert_eq!(faces.len(), 2, "{summary:?}");
    assert!(faces[0].detection.area() > 2.0 * faces[1].detection.area());
    assert_eq!(faces[1].detector, FaceDetector::FullRange, "{summary:?}");
    let [x0, y0, x1, y1] = faces[1].landmark_box();
    let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    assert!(
        (400.0..700.0).contains(&cx) && (200.0..500.0).contains(&cy),
        "{summary:?}"
    );
    let [x0, _, x1, _] = faces[0].landmark_box();
    assert!(x1 < 512.0 && x0 > 0.0, "{summary:?}");
}

/// A network that answers with outputs of the wrong size.
struct Broken;

impl vto_render::vision::Infer for Broken {
    fn run(
        &mut self,
        _inputs: &[&[f32]],
    ) -> Result<Vec<Vec<f32>>, vto_render::vision::VisionError> {
        Ok(vec![vec![0.0; 7]])
    }
}

#[test]
fn wrong_model_outputs_are_a_typed_error_not_a_panic() {
    let nets = Networks::from_fn(|_| Ok(Box::new(Broken))).unwrap();
    let mut vision = Vision::new(ctx(), nets);
    let err = vision.inspect(&pattern(64, 48, 5)).unwrap_err();
    assert!(
        matches!(err, vto_render::vision::VisionError::BadOutput(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("regressors"), "{err}");
}
