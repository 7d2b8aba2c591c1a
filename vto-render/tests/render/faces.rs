//! Faces that broke eyewear on real photos: small, turned and several faces.
//!
//! The cases (`tests/render/support/face_cases.rs`) are made from the two public-domain portraits;
//! MediaPipe 0.10.14's FaceMesh ran on the same pixels (`scripts/face_cases_reference.py`):
//! static-image (`tests/data/vision/face_cases_mediapipe.json`) and tracking, the photo fed
//! three times so that its regions come from its own landmarks
//! (`face_cases_mediapipe_tracking.json`). For every face MediaPipe finds, vto must find it
//! too, and the landmarks of the face it would use must lie within a few percent of the face
//! width of MediaPipe's answer made the same way: detection → mesh against the static
//! answer, and for faces of `REFINE_FROM_PX`..`REFINE_BELOW_PX` the refined passes on the
//! regions the landmarks give against the tracking answer. The test prints both per case.
//!
//! Needs the six models and the test photos (`scripts/fetch-models.sh --test-photos`).

use crate::support::models_dir;
use std::collections::BTreeMap;
use std::path::PathBuf;

use image::RgbaImage;
use serde::Deserialize;
use vto_render::engine::Renderer;
use vto_render::gpu::GpuContext;
use vto_render::models::ModelStore;
use vto_render::vision::{Face, Networks, Vision};

#[derive(Deserialize)]
struct Reference {
    cases: BTreeMap<String, Case>,
}

#[derive(Deserialize)]
struct Case {
    width: u32,
    height: u32,
    faces: Vec<Vec<[f32; 2]>>,
}

fn photo(name: &str) -> RgbaImage {
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

fn cases() -> Vec<crate::support::face_cases::FaceCase> {
    crate::support::face_cases::face_cases(&photo("astronaut.png"), &photo("grace_hopper.jpg"))
}

/// Mean landmark distance as a percentage of the reference face's width (234–454).
fn error_pct(ours: &Face, theirs: &[[f32; 2]]) -> f32 {
    let width = ((theirs[234][0] - theirs[454][0]).powi(2)
        + (theirs[234][1] - theirs[454][1]).powi(2))
    .sqrt();
    let sum: f32 = ours
        .landmarks
        .iter()
        .zip(theirs)
        .map(|(a, b)| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt())
        .sum();
    100.0 * sum / 468.0 / width
}

fn centre(points: impl Iterator<Item = [f32; 2]>) -> [f32; 2] {
    let (mut s, mut n) = ([0.0f32; 2], 0.0);
    for p in points {
        s[0] += p[0];
        s[1] += p[1];
        n += 1.0;
    }
    [s[0] / n, s[1] / n]
}

/// The reference face of `faces` whose landmark centre is nearest `c`.
fn nearest(faces: &[Vec<[f32; 2]>], c: [f32; 2]) -> Option<&Vec<[f32; 2]>> {
    faces.iter().min_by(|a, b| {
        let d = |f: &Vec<[f32; 2]>| {
            let o = centre(f.iter().copied());
            (o[0] - c[0]).powi(2) + (o[1] - c[1]).powi(2)
        };
        d(a).total_cmp(&d(b))
    })
}

/// The error (% of the face width) of the landmarks vto would use on every face MediaPipe
/// finds in `cases`, by case name. Each pass is measured against the MediaPipe answer made
/// the same way: the first (detector's region) against the static FaceMesh of `reference`,
/// the refined one (regions from the landmarks) against the tracking FaceMesh of `tracking`.
/// Prints both per face. Panics when vto finds no face where MediaPipe did.
fn errors_against(
    cases: Vec<crate::support::face_cases::FaceCase>,
    reference: &Reference,
    tracking: &Reference,
) -> Vec<(&'static str, f32)> {
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    let store = ModelStore::open(models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut vision = Vision::new(ctx.clone(), Networks::gpu(&ctx, &store).unwrap());
    let mut errors = Vec::new();
    eprintln!("case                          face px  first vs static %  refined vs tracking %");
    for case in cases {
        let r = reference
            .cases
            .get(case.name)
            .unwrap_or_else(|| panic!("{}: no reference; rerun the reference script", case.name));
        let t = tracking.cases.get(case.name).unwrap_or_else(|| {
            panic!(
                "{}: no tracking reference; rerun the reference script",
                case.name
            )
        });
        assert_eq!(
            case.photo.dimensions(),
            (r.width, r.height),
            "{}",
            case.name
        );
        let gpu = vision.image_ops().upload(&case.photo).unwrap();
        let mut ours = Vec::new();
        for face in vision.faces(&gpu).unwrap() {
            let refined = vision.refine_face(&gpu, &face).unwrap();
            ours.push((face, refined));
        }
        for theirs in &r.faces {
            let c = centre(theirs.iter().copied());
            let (first, refined) = ours
                .iter()
                .min_by(|a, b| {
                    let d = |f: &Face| {
                        let o = centre(f.landmarks.iter().map(|p| [p[0], p[1]]));
                        (o[0] - c[0]).powi(2) + (o[1] - c[1]).powi(2)
                    };
                    d(&a.0).total_cmp(&d(&b.0))
                })
                .unwrap_or_else(|| panic!("{}: vto found no face where MediaPipe did", case.name));
            let tracked =
                nearest(&t.faces, c).unwrap_or_else(|| panic!("{}: no tracking face", case.name));
            let width = ((theirs[234][0] - theirs[454][0]).powi(2)
                + (theirs[234][1] - theirs[454][1]).powi(2))
            .sqrt();
            let e1 = error_pct(first, theirs);
            let e2 = refined.as_ref().map(|f| error_pct(f, tracked));
            eprintln!(
                "{:<30}{width:>7.0}  {e1:>16.2}  {:>20}",
                case.name,
                e2.map_or("rejected".to_string(), |e| format!("{e:.2}"))
            );
            // The face vto uses: faces of REFINE_FROM_PX..REFINE_BELOW_PX get the refined
            // passes (unless their crop was rejected), the others the first.
            let used = match e2 {
                Some(e2) if first.needs_refinement() => e2,
                _ => e1,
            };
            errors.push((case.name, used));
        }
    }
    errors
}

fn reference_named(file: &str) -> Reference {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/vision")
        .join(file);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn small_turned_and_several_faces_match_mediapipe() {
    let refined_errors = errors_against(
        cases(),
        &reference_named("face_cases_mediapipe.json"),
        &reference_named("face_cases_mediapipe_tracking.json"),
    );
    let mean = refined_errors.iter().map(|e| e.1).sum::<f32>() / refined_errors.len() as f32;
    eprintln!("mean error of the faces vto uses: {mean:.2} % of the face width");
    assert!(refined_errors.len() >= 12, "{} faces", refined_errors.len());
    for (name, e) in &refined_errors {
        assert!(
            *e < 4.0,
            "{name}: landmarks {e:.2} % of the face width off MediaPipe"
        );
    }
    assert!(mean < 1.5, "mean error {mean:.2} %");
}

/// Small turned faces of real photos (issue #30): a 52 and a 63 px profile and a
/// three-quarter face wearing its own sunglasses at 63 and 76 px, each on a canvas as a street
/// photo shows them (`small_real_faces`). MediaPipe 0.10.14 found each
/// (`tests/data/vision/small_real_faces_mediapipe.json` and `…_tracking.json`, from the same
/// pixels); vto must too, within 4 % of the face width (all four get the refined passes and
/// are measured against the tracking answer: 3.0, 0.7, 0.6, 0.5 %; the first pass against it
/// was 7.3, 5.6, 1.3, 1.6 %). Before the full-range faces' mesh regions came from the
/// short-range detector, the profiles were 9.4 and 7.9 % off, and the 76 px three-quarter
/// face was not found (its short-range box, twice the face, was rejected by the mesh and hid
/// the full-range one). Skips (and says why) without the people photos.
#[test]
fn small_turned_faces_of_real_photos_match_mediapipe() {
    let people = crate::support::testdata("people");
    let cases = match crate::support::face_cases::small_real_faces(|name| {
        image::open(people.join(name)).map(|i| i.to_rgba8())
    }) {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!(
                "skipped: a photo of {} is not readable ({e}); the real test photos live in \
                 ../shared/testdata/people beside the workspace, or set VTO_TESTDATA",
                people.display()
            );
            return;
        }
    };
    let errors = errors_against(
        cases,
        &reference_named("small_real_faces_mediapipe.json"),
        &reference_named("small_real_faces_mediapipe_tracking.json"),
    );
    assert_eq!(errors.len(), 4, "{errors:?}");
    for (name, e) in &errors {
        assert!(
            *e < 4.0,
            "{name}: landmarks {e:.2} % of the face width off MediaPipe"
        );
    }
}

#[test]
fn the_largest_face_that_yields_a_mesh_is_chosen_and_reported() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "two_people")
        .unwrap();
    let r = Renderer::shared(&models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let choice = r.choose_face(&case.photo).unwrap().expect("a face");
    assert!(choice.candidates >= 2, "{} candidates", choice.candidates);
    assert_eq!(choice.rank, 0);
    // The astronaut (left, 420 px wide) is the larger face.
    let nose = choice.face.landmarks[1];
    assert!(
        nose[0] < 500.0,
        "the small face was chosen: nose at {nose:?}"
    );
    // The small face alone is found too (it is a candidate of the full-range detector).
    let mut small = case.photo.clone();
    for y in 0..small.height() {
        for x in 0..400 {
            small.put_pixel(x, y, image::Rgba([96, 100, 106, 255]));
        }
    }
    let choice = r.choose_face(&small).unwrap().expect("the small face");
    assert!(choice.face.landmarks[1][0] > 480.0);
}

/// Small faces the short-range detector finds get the second mesh pass (issue #30): on the
/// group photo of three seated astronauts, two faces 56 and 58 px wide are found by the
/// short-range detector with boxes 1.4 times the face, and the mesh in that region put their
/// mouths on their chins (11 and 6 px off). The reference points are MediaPipe 0.10.14's
/// FaceMesh in tracking mode on the same photo (`static_image_mode=False`, the photo fed three
/// times, so its region comes from its own landmarks), in image pixels: the mouth (landmark 13)
/// and the chin (152) must lie within 5 % of MediaPipe's face width (234–454) of them (they
/// lie within 0.4 px; the old refinement, only under 40 px, left them 6–11 px off). Skips
/// without the people photos.
#[test]
fn small_short_range_faces_are_framed_by_their_landmarks() {
    let path =
        crate::support::testdata("people").join("group_three_astronauts_seated_small_faces_pd.jpg");
    let photo = match image::open(&path) {
        Ok(p) => p.to_rgba8(),
        Err(e) => {
            eprintln!("skipped: {} is not readable ({e}); the real test photos live in ../shared/testdata/people beside the workspace, or set VTO_TESTDATA", path.display());
            return;
        }
    };
    // (MediaPipe's face width, landmark 13, landmark 152), tracking FaceMesh.
    let reference = [
        (48.1f32, [430.8f32, 219.7f32], [433.7f32, 238.1f32]),
        (54.4, [289.6, 137.6], [288.3, 157.8]),
    ];
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    let store = ModelStore::open(models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut vision = Vision::new(ctx.clone(), Networks::gpu(&ctx, &store).unwrap());
    let faces = vision.inspect(&photo).unwrap().faces;
    for (width, mouth, chin) in reference {
        let face = faces
            .iter()
            .min_by(|a, b| {
                let d =
                    |f: &Face| (f.landmarks[13][0] - mouth[0]).hypot(f.landmarks[13][1] - mouth[1]);
                d(a).total_cmp(&d(b))
            })
            .expect("faces");
        for (i, want) in [(13, mouth), (152, chin)] {
            let p = face.landmarks[i];
            let off = (p[0] - want[0]).hypot(p[1] - want[1]);
            eprintln!(
                "landmark {i}: {:.1}, {:.1} vs MediaPipe {want:?}: {off:.1} px",
                p[0], p[1]
            );
            assert!(
                off < 0.05 * width,
                "landmark {i} at ({:.1}, {:.1}) is {off:.1} px from MediaPipe's {want:?} (face {width} px)",
                p[0],
                p[1]
            );
        }
    }
}
