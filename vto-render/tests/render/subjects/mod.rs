//! The full-body categories with the real networks on rendered full-body subjects (feature
//! `testkit`: the MakeHuman base mesh posed, dressed and lit; see `vto_render::testkit`).
//!
//! Every expectation comes from the subject's ground truth (the rig's joints, the feet's heel
//! and toe vertices, the body's pixels, the colours it wears), never from the code under
//! test. The vision runs once per subject (pose, person mask, face, hands: what the engines
//! ask for), then each category's `TryOn` dresses that person.
//!
//! Needs the models and the MPFB2 assets (`scripts/fetch-models.sh --test-photos`,
//! `VTO_MODELS_DIR`, default `<workspace>/models`); without them every test prints why and
//! passes without checking.
#![cfg(feature = "testkit")]

use crate::support::models_dir;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use glam::Vec2;
use image::RgbaImage;
use vto_render::engine::{builtin_tryon, Renderer};
use vto_render::product;
use vto_render::samples::garment::SampleGarment;
use vto_render::samples::garment::SampleLower;
use vto_render::samples::product::jewelry::SampleJewel;
use vto_render::samples::product::shoes::SampleShoe;
use vto_render::testkit::{self, BaseBody, Subject};
use vto_render::tryon::{LoadedProduct, Needs, Person};

mod hands;
mod lower;
mod shoes;
mod upper;
mod vision;

/// The renderer and the subjects seen by the real networks, or why there are none.
struct World {
    renderer: Arc<Renderer>,
    subjects: Vec<(Subject, Person)>,
}

fn world() -> Option<&'static World> {
    static WORLD: OnceLock<Result<World, String>> = OnceLock::new();
    let w = WORLD.get_or_init(|| {
        let models = models_dir();
        let assets = testkit::assets_dir(&models);
        if !models.join("pose_landmark_full.tflite").is_file() || !assets.join("base.obj").is_file()
        {
            return Err(format!(
                "models or MPFB2 assets missing in {} (run scripts/fetch-models.sh --test-photos)",
                models.display()
            ));
        }
        let renderer = Renderer::shared(&models).map_err(|e| e.to_string())?;
        let body = BaseBody::load(&assets).map_err(|e| e.to_string())?;
        let needs = Needs {
            face: true,
            face_optional: false,
            body: true,
            person_mask: true,
            face_of_body: false,
            hands: true,
        };
        let mut subjects = Vec::new();
        for spec in testkit::standard((600, 800)) {
            let s =
                testkit::render(&body, &spec, renderer.rasterizer()).map_err(|e| e.to_string())?;
            let person = renderer.see(&s.image, needs).map_err(|e| e.to_string())?;
            subjects.push((s, person));
        }
        Ok(World { renderer, subjects })
    });
    match w {
        Ok(w) => Some(w),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

fn try_on(
    w: &World,
    s: &Subject,
    person: &Person,
    category: vto_core::Category,
    product: LoadedProduct,
) -> RgbaImage {
    let tryon = builtin_tryon(category).expect("a built-in try-on");
    let look = tryon
        .try_on(w.renderer.stages(), person, &product)
        .unwrap_or_else(|e| panic!("{} on {}: {e}", category.as_str(), s.spec.pose.name()));
    look.image
}

fn rgb(img: &RgbaImage, p: Vec2) -> Option<[f32; 3]> {
    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
    if x < 0 || y < 0 || x >= i64::from(img.width()) || y >= i64::from(img.height()) {
        return None;
    }
    let c = img.get_pixel(x as u32, y as u32).0;
    Some([f32::from(c[0]), f32::from(c[1]), f32::from(c[2])])
}

/// Chromaticity and lightness distance (shading is not a different colour).
fn colour_distance(a: [f32; 3], b: [u8; 3]) -> f32 {
    let b = b.map(f32::from);
    let sa = a[0] + a[1] + a[2] + 1.0;
    let sb = b[0] + b[1] + b[2] + 1.0;
    let chroma = ((a[0] / sa - b[0] / sb).powi(2) + (a[1] / sa - b[1] / sb).powi(2)).sqrt();
    chroma * 4.0 + ((sa - sb) / 765.0).abs()
}

/// The share of `pts` whose colour is nearer `want` than every colour in `others`.
fn share_nearest(img: &RgbaImage, pts: &[Vec2], want: [u8; 3], others: &[[u8; 3]]) -> f32 {
    let got: Vec<[f32; 3]> = pts.iter().filter_map(|p| rgb(img, *p)).collect();
    let near = got
        .iter()
        .filter(|c| {
            let d = colour_distance(**c, want);
            others.iter().all(|o| colour_distance(**c, *o) > d)
        })
        .count();
    near as f32 / got.len().max(1) as f32
}

fn gt(s: &Subject, i: usize) -> Vec2 {
    s.point(i).expect("the ground truth has this joint")
}

/// Points along leg `side` (0 left, 1 right) from fraction `a` to `b` of hip → knee → ankle
/// (ground truth).
fn along_leg(s: &Subject, side: usize, a: f32, b: f32) -> Vec<Vec2> {
    let (hip, knee, ankle) = (gt(s, 23 + side), gt(s, 25 + side), gt(s, 27 + side));
    let thigh = hip.distance(knee);
    let len = thigh + knee.distance(ankle);
    (0..10)
        .map(|i| {
            let t = (a + (b - a) * i as f32 / 9.0) * len;
            if t <= thigh {
                hip + (knee - hip) * (t / thigh)
            } else {
                knee + (ankle - knee) * ((t - thigh) / (len - thigh))
            }
        })
        .collect()
}

/// The subjects the garment engines accept today: `garment::body::frame::BodyFrame` refuses the
/// 35° three-quarter turn as "turned sideways" (owned by the upper-garment pipeline; see
/// `garments_refuse_a_three_quarter_turn`).
fn frontal(s: &Subject) -> bool {
    s.spec.pose != testkit::Pose::ThreeQuarter
}

fn changed(a: &RgbaImage, b: &RgbaImage, x: u32, y: u32) -> bool {
    let (p, q) = (a.get_pixel(x, y).0, b.get_pixel(x, y).0);
    (0..3).any(|k| p[k].abs_diff(q[k]) > 6)
}

fn luma(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// More subjects seen by the real networks: barefoot subjects in trousers (the feet are
/// skin; the front and contrapposto poses with the standard looks, their shoes painted in
/// their skin tone) at 600×800, and the standard front subject at the gallery's 768×1024.
struct Extra {
    barefoot: Vec<(Subject, Person)>,
    front_large: (Subject, Person),
}

fn extra() -> Option<&'static Extra> {
    static EXTRA: OnceLock<Option<Extra>> = OnceLock::new();
    EXTRA
        .get_or_init(|| {
            let w = world()?;
            let body = BaseBody::load(&testkit::assets_dir(&models_dir())).ok()?;
            let needs = Needs {
                face: true,
                face_optional: false,
                body: true,
                person_mask: true,
                face_of_body: false,
                hands: false,
            };
            let see = |spec: &testkit::SubjectSpec| -> Option<(Subject, Person)> {
                let s = testkit::render(&body, spec, w.renderer.rasterizer()).ok()?;
                let person = w.renderer.see(&s.image, needs).ok()?;
                Some((s, person))
            };
            let mut barefoot = Vec::new();
            for mut spec in testkit::standard((600, 800)) {
                if !matches!(
                    spec.pose,
                    testkit::Pose::Front | testkit::Pose::Contrapposto
                ) {
                    continue;
                }
                spec.look.bottom = testkit::Bottom::Trousers;
                spec.look.shoes = spec.look.skin;
                barefoot.push(see(&spec)?);
            }
            let front_large = see(testkit::standard((768, 1024)).first()?)?;
            Some(Extra {
                barefoot,
                front_large,
            })
        })
        .as_ref()
}

/// CIE L*a*b* of an sRGB colour (D65).
fn lab(c: [f32; 3]) -> [f32; 3] {
    let lin = |v: f32| {
        let v = v / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let [r, g, b] = c.map(lin);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.9505;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.089;
    let f = |t: f32| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

fn mean(cs: &[[f32; 3]]) -> [f32; 3] {
    let n = cs.len().max(1) as f32;
    [0, 1, 2].map(|k| cs.iter().map(|c| c[k]).sum::<f32>() / n)
}

/// The wall: the photo's mean colour away from the body in the top tenth of the rows.
fn wall_colour(s: &Subject) -> [u8; 3] {
    let (wd, ht) = s.image.dimensions();
    let px: Vec<[f32; 3]> = (0..wd)
        .flat_map(|x| (0..ht / 10).map(move |y| (x, y)))
        .filter(|&(x, y)| !s.is_body(x, y))
        .filter_map(|(x, y)| rgb(&s.image, Vec2::new(x as f32, y as f32)))
        .collect();
    let n = px.len().max(1) as f32;
    [0, 1, 2].map(|k| (px.iter().map(|c| c[k]).sum::<f32>() / n).round() as u8)
}
