//! The rings and bracelets gallery, and their warm timings at 1024².
//!
//! `cargo run -p vto-render --release --example gallery_hands -- [OUT_DIR] [PHOTO...]`
//! (default `target/gallery_hands`). Models from `VTO_MODELS_DIR` (default `./models`).
//!
//! - **Drawn hands** (1024², always): no permissively licensed photo of a hand ships in a
//!   package registry, so the first part draws a hand (skin-shaded capsules and a palm, the
//!   forearm, the person mask) from 21 given landmarks and renders the sample ring and bangle
//!   on it through `jewelry::hand::prepare` and the real rasterizer: the back of a left hand
//!   (the forearm from the body's elbow), the same hand turned and smaller, a hand pointing
//!   sideways (the bangle hangs with gravity), and a right palm (the stone hides behind the
//!   finger). Each as the full image and a 3× zoom.
//! - **Photos** (the PHOTO arguments): the whole engine, real hand networks included; a photo
//!   without a visible hand shows the `processing_failed` message.
//!
//! Timings (median of 5, warm): the drawn-hand scenes' placement + raster; the whole engine
//! on the first drawn hand (the real networks find it) split into decode, vision, raster and
//! encode; and the engine on the 1024² astronaut portrait, which has no hand, so the job
//! stops after vision with `processing_failed`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use image::imageops::FilterType;
use image::{Rgba, RgbaImage};
use vto_render::engine::{default_models_dir, encode_png, Renderer};
use vto_render::samples::product::jewelry::SampleJewel;
use vto_render::tryon::jewelry::hand;
use vto_render::tryon::jewelry::kind::kind_of;
use vto_render::tryon::{Jewelry, Options};
use vto_render::vision::{Body, Detection, Hand, Handedness, Mask, PoseKeypoint, RotatedRect};

const SIZE: u32 = 1024;

/// A hand held up, fingers up, the thumb on the image's right (the back of a left hand, or
/// a right palm), wrist at the origin, about 330 px tall.
const HAND: [(f32, f32); 21] = [
    (0.0, 0.0),
    (55.0, -33.0),
    (99.0, -77.0),
    (132.0, -116.0),
    (156.0, -149.0),
    (55.0, -198.0),
    (64.0, -281.0),
    (68.0, -328.0),
    (71.0, -366.0),
    (11.0, -200.0),
    (14.0, -292.0),
    (16.0, -341.0),
    (17.0, -383.0),
    (-31.0, -196.0),
    (-33.0, -281.0),
    (-35.0, -328.0),
    (-37.0, -366.0),
    (-70.0, -185.0),
    (-77.0, -262.0),
    (-82.0, -303.0),
    (-86.0, -336.0),
];

/// One drawn scene: landmarks, where the forearm goes, the side.
struct Pose {
    name: &'static str,
    wrist: [f32; 2],
    angle: f32,
    scale: f32,
    side: Handedness,
    with_body: bool,
}

fn landmarks(p: &Pose) -> Vec<[f32; 3]> {
    let (s, c) = p.angle.sin_cos();
    HAND.iter()
        .map(|&(x, y)| {
            let (x, y) = (x * p.scale, y * p.scale);
            [p.wrist[0] + c * x - s * y, p.wrist[1] + s * x + c * y, 0.0]
        })
        .collect()
}

fn dist_to_segment(q: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len2 = (ab[0] * ab[0] + ab[1] * ab[1]).max(1e-6);
    let t = (((q[0] - a[0]) * ab[0] + (q[1] - a[1]) * ab[1]) / len2).clamp(0.0, 1.0);
    ((q[0] - a[0] - ab[0] * t).powi(2) + (q[1] - a[1] - ab[1] * t).powi(2)).sqrt()
}

/// The drawn hand and forearm (towards `elbow`), and the person mask.
fn draw(lm: &[[f32; 3]], elbow: [f32; 2], scale: f32) -> (RgbaImage, Mask) {
    let p = |i: usize| [lm[i][0], lm[i][1]];
    let r = |v: f32| v * scale;
    let bones = [
        (1, 2, r(27.0)),
        (2, 3, r(24.0)),
        (3, 4, r(21.0)),
        (5, 6, r(24.0)),
        (6, 7, r(21.0)),
        (7, 8, r(18.0)),
        (9, 10, r(25.0)),
        (10, 11, r(22.0)),
        (11, 12, r(19.0)),
        (13, 14, r(23.0)),
        (14, 15, r(21.0)),
        (15, 16, r(18.0)),
        (17, 18, r(20.0)),
        (18, 19, r(18.0)),
        (19, 20, r(16.0)),
        (0, 5, r(56.0)),
        (0, 9, r(62.0)),
        (0, 13, r(58.0)),
        (0, 17, r(50.0)),
        (5, 17, r(30.0)),
        (0, 1, r(42.0)),
    ];
    let arm = r(66.0);
    let mut data = vec![0.0f32; (SIZE * SIZE) as usize];
    let img = RgbaImage::from_fn(SIZE, SIZE, |x, y| {
        let q = [x as f32, y as f32];
        // Depth-like shading: the deepest inside any part wins.
        let mut best: Option<f32> = None;
        for &(a, b, rad) in &bones {
            let d = dist_to_segment(q, p(a), p(b));
            if d < rad {
                let s = (1.0 - (d / rad).powi(2)).sqrt();
                best = Some(best.map_or(s, |v: f32| v.max(s)));
            }
        }
        let d = dist_to_segment(q, p(0), elbow);
        if d < arm {
            let s = (1.0 - (d / arm).powi(2)).sqrt();
            best = Some(best.map_or(s, |v: f32| v.max(s)));
        }
        match best {
            Some(s) => {
                data[(y * SIZE + x) as usize] = 1.0;
                // Lit from the upper left: brighter towards the light.
                let lean = 1.0 - 0.08 * (x as f32 / SIZE as f32) - 0.06 * (y as f32 / SIZE as f32);
                let k = (0.55 + 0.45 * s) * lean;
                Rgba([(226.0 * k) as u8, (176.0 * k) as u8, (146.0 * k) as u8, 255])
            }
            None => {
                let v = 150.0 - 40.0 * (y as f32 / SIZE as f32);
                Rgba([(v * 0.95) as u8, v as u8, (v * 1.05).min(255.0) as u8, 255])
            }
        }
    });
    (
        img,
        Mask {
            width: SIZE,
            height: SIZE,
            data,
        },
    )
}

fn body(side: Handedness, elbow: [f32; 2], wrist: [f32; 2], mask: Mask) -> Body {
    let mut keypoints = vec![
        PoseKeypoint {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            visibility: 0.1,
            presence: 0.1,
        };
        33
    ];
    let (e, w) = match side {
        Handedness::Left => (13, 15),
        Handedness::Right => (14, 16),
    };
    for (i, [x, y]) in [(e, elbow), (w, wrist)] {
        keypoints[i] = PoseKeypoint {
            x,
            y,
            z: 0.0,
            visibility: 0.9,
            presence: 0.9,
        };
    }
    Body {
        detection: Detection {
            score: 0.9,
            xmin: 0.0,
            ymin: 0.0,
            xmax: SIZE as f32,
            ymax: SIZE as f32,
            keypoints: Vec::new(),
        },
        roi: RotatedRect {
            cx: 512.0,
            cy: 512.0,
            width: 1024.0,
            height: 1024.0,
            rotation: 0.0,
        },
        score: 0.9,
        keypoints,
        mask_coverage: 0.2,
        mask: Some(mask),
    }
}

/// The rendered region (`roi`, with a margin) enlarged up to 3×.
fn zoom(image: &RgbaImage, roi: [u32; 4]) -> RgbaImage {
    let [x, y, w, h] = roi;
    let m = 24;
    let (x0, y0) = (x.saturating_sub(m), y.saturating_sub(m));
    let x1 = (x + w + m).min(image.width());
    let y1 = (y + h + m).min(image.height());
    let crop = image::imageops::crop_imm(image, x0, y0, x1 - x0, y1 - y0).to_image();
    let k = (480 / (x1 - x0).max(y1 - y0).max(1)).clamp(1, 3);
    image::imageops::resize(&crop, (x1 - x0) * k, (y1 - y0) * k, FilterType::Nearest)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/gallery_hands"));
    let photos: Vec<PathBuf> = args.map(PathBuf::from).collect();
    std::fs::create_dir_all(&out).expect("create the output directory");
    let models = default_models_dir();
    let renderer = Renderer::new(&models).unwrap_or_else(|e| panic!("{e}"));
    let raster = renderer.rasterizer();
    let options = Options::default();
    let poses = [
        Pose {
            name: "left_back_up",
            wrist: [512.0, 700.0],
            angle: 0.0,
            scale: 1.0,
            side: Handedness::Left,
            with_body: true,
        },
        Pose {
            name: "left_back_turned_small",
            wrist: [430.0, 720.0],
            angle: 0.6,
            scale: 0.6,
            side: Handedness::Left,
            with_body: false,
        },
        Pose {
            name: "left_back_sideways",
            wrist: [560.0, 520.0],
            angle: std::f32::consts::FRAC_PI_2,
            scale: 0.9,
            side: Handedness::Left,
            with_body: false,
        },
        Pose {
            name: "right_palm_up",
            wrist: [512.0, 700.0],
            angle: -0.15,
            scale: 1.0,
            side: Handedness::Right,
            with_body: false,
        },
    ];
    let mut html = String::from(
        "<!doctype html><meta charset=utf-8><title>vto rings and bracelets</title>\
         <style>body{font-family:sans-serif;background:#222;color:#eee}\
         img{max-width:480px;margin:4px}td{vertical-align:top;padding:6px}\
         pre{font-size:11px;max-width:480px;max-height:200px;overflow:auto;white-space:pre-wrap}</style>\
         <h1>vto: rings and bracelets</h1><p>Drawn hands with given landmarks (no hand photo \
         ships in a package registry), the real placement and rasterizer.</p><table>",
    );
    let mut raster_ms: Vec<(String, f64)> = Vec::new();
    for pose in &poses {
        let lm = landmarks(pose);
        let wrist = [lm[0][0], lm[0][1]];
        let down_arm = [lm[0][0] - lm[9][0], lm[0][1] - lm[9][1]];
        let len = (down_arm[0].powi(2) + down_arm[1].powi(2)).sqrt().max(1e-3);
        let elbow = [
            wrist[0] + down_arm[0] / len * 900.0,
            wrist[1] + down_arm[1] / len * 900.0,
        ];
        let (photo, mask) = draw(&lm, elbow, pose.scale);
        let b = pose
            .with_body
            .then(|| body(pose.side, [elbow[0], elbow[1].min(1000.0)], wrist, mask));
        let hands = [Hand::from_landmarks(lm.clone(), pose.side)];
        let input_name = format!("{}_input.png", pose.name);
        photo.save(out.join(&input_name)).expect("write");
        for jewel in [SampleJewel::RingSolitaire, SampleJewel::BangleSilver] {
            let product = jewel.product();
            let mut times = Vec::new();
            let mut place_times = Vec::new();
            let mut last = None;
            for _ in 0..5 {
                let t = Instant::now();
                let prepared = hand::prepare(
                    &photo,
                    &hands,
                    b.as_ref(),
                    &product,
                    kind_of(&product),
                    &options,
                )
                .expect("placement");
                place_times.push(t.elapsed().as_secs_f64() * 1e3);
                let (img, stats) = raster
                    .render(&photo, prepared.scene.as_ref().expect("a scene"))
                    .expect("render");
                times.push(t.elapsed().as_secs_f64() * 1e3);
                last = Some((prepared, img, stats));
            }
            let (prepared, img, stats) = last.expect("five runs");
            let scene = prepared.scene.as_ref().expect("a scene");
            raster_ms.push((
                format!(
                    "{} {} (placement {:.1} ms, roi {:?}, ss {})",
                    pose.name,
                    jewel.name(),
                    median(place_times),
                    scene.roi,
                    scene.ss
                ),
                median(times),
            ));
            let file = format!("{}_{}.png", pose.name, jewel.name());
            img.save(out.join(&file)).expect("write");
            let zname = format!("{}_{}_zoom.png", pose.name, jewel.name());
            zoom(&img, scene.roi).save(out.join(&zname)).expect("write");
            let meta = serde_json::to_string_pretty(&hand::metadata(
                &prepared.placement,
                Some(scene),
                &stats,
            ))
            .unwrap_or_default();
            let _ = write!(
                html,
                "<tr><td colspan=3><h3>{} · {}</h3></td></tr><tr><td><img src=\"{input_name}\"></td>\
                 <td><img src=\"{file}\"><pre>{meta}</pre></td><td><img src=\"{zname}\"></td></tr>",
                pose.name,
                jewel.name()
            );
            println!("{file}");
        }
    }
    for photo in &photos {
        let Ok(bytes) = std::fs::read(photo) else {
            eprintln!("skipping {}: unreadable", photo.display());
            continue;
        };
        let stem = photo
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for jewel in [SampleJewel::RingSolitaire, SampleJewel::BangleSilver] {
            let cell = match renderer.try_on(&Jewelry, &bytes, &jewel.glb()) {
                Ok(r) => {
                    let file = format!("{stem}_{}.png", jewel.name());
                    std::fs::write(out.join(&file), &r.png).expect("write");
                    format!(
                        "<img src=\"{file}\"><pre>{}</pre>",
                        serde_json::to_string_pretty(&r.metadata).unwrap_or_default()
                    )
                }
                Err(e) => format!("<p>{e}</p>"),
            };
            let _ = write!(
                html,
                "<tr><td colspan=3><h3>{stem} · {}</h3></td></tr><tr><td colspan=3>{cell}</td></tr>",
                jewel.name()
            );
        }
    }
    #[cfg(feature = "testkit")]
    cg_hands(&renderer, &models, &out, &mut html);
    html.push_str("</table>");
    std::fs::write(out.join("index.html"), html).expect("write index.html");

    println!("warm placement + raster at 1024² (median of 5):");
    for (name, ms) in &raster_ms {
        println!("  {ms:7.1} ms  {name}");
    }
    // The whole engine on the first drawn hand at 1024²: decode, hand and pose vision (the
    // real networks find the drawn hand), placement, raster, encode.
    let first = out.join(format!("{}_input.png", poses[0].name));
    if let Ok(png) = std::fs::read(&first) {
        for jewel in [SampleJewel::RingSolitaire, SampleJewel::BangleSilver] {
            let model = jewel.glb();
            let _ = renderer.try_on(&Jewelry, &png, &model);
            let mut runs = Vec::new();
            for _ in 0..5 {
                match renderer.try_on(&Jewelry, &png, &model) {
                    Ok(r) => runs.push(r.timings),
                    Err(e) => {
                        println!("  engine on {}: {e}", first.display());
                        break;
                    }
                }
            }
            if runs.len() == 5 {
                let ms = |f: &dyn Fn(&vto_render::engine::Timings) -> std::time::Duration| {
                    median(runs.iter().map(|t| f(t).as_secs_f64() * 1e3).collect())
                };
                println!(
                    "warm engine, {} on the 1024² drawn hand: total {:.1} ms (decode {:.1}, \
                     vision {:.1}, raster {:.1}, encode {:.1})",
                    jewel.name(),
                    ms(&|t| t.decode + t.vision + t.raster + t.encode),
                    ms(&|t| t.decode),
                    ms(&|t| t.vision),
                    ms(&|t| t.raster),
                    ms(&|t| t.encode),
                );
            }
        }
    }
    let portrait = models.join("test-photos").join("astronaut.png");
    if let Ok(img) = image::open(&portrait) {
        let big = image::imageops::resize(&img.to_rgba8(), SIZE, SIZE, FilterType::Triangle);
        let png = encode_png(&big).expect("encode");
        let model = SampleJewel::RingSolitaire.glb();
        let _ = renderer.try_on(&Jewelry, &png, &model);
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let r = renderer.try_on(&Jewelry, &png, &model);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            if let Err(e) = r {
                if times.len() == 1 {
                    println!("  (astronaut 1024²: {e})");
                }
            }
        }
        println!(
            "warm engine, ring on the 1024² astronaut (decode + hand and pose vision, then \
             no hand): {:.1} ms",
            median(times)
        );
    }
    println!("{}", out.join("index.html").display());
}

/// The CG hand close-ups of the test subjects (feature `testkit`): the whole engine, real hand
/// networks included, with the ring and the bangle; each output and a zoom on the jewel.
#[cfg(feature = "testkit")]
fn cg_hands(
    renderer: &Renderer,
    models: &std::path::Path,
    out: &std::path::Path,
    html: &mut String,
) {
    use vto_render::testkit;
    let body = match testkit::BaseBody::load(&testkit::assets_dir(models)) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("no CG hands: {e}");
            return;
        }
    };
    for spec in testkit::standard((768, 768)).iter().take(2) {
        let shot = match testkit::render_hand(&body, spec, renderer.rasterizer()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("CG hand: {e}");
                continue;
            }
        };
        let stem = format!("cg_hand_{}", spec.pose.name());
        // The hand networks' landmarks (the ring finger's 13–16 in red, the rest in yellow),
        // the rig's middle knuckle and wrist (green), the rig's ring finger (magenta), and the pose model's elbows and wrists (blue),
        // to judge where the ring and the bangle went.
        let needs = vto_render::tryon::Needs {
            hands: true,
            body: true,
            ..Default::default()
        };
        if let Ok(seen) = renderer.see(&shot.image, needs) {
            let mut img = shot.image.clone();
            let mut dot = |p: [f32; 2], c: Rgba<u8>| {
                for dy in -2i32..=2 {
                    for dx in -2i32..=2 {
                        let (x, y) = (p[0] as i32 + dx, p[1] as i32 + dy);
                        if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height()
                        {
                            img.put_pixel(x as u32, y as u32, c);
                        }
                    }
                }
            };
            for h in &seen.hands {
                for (i, p) in h.landmarks.iter().enumerate() {
                    let c = if (13..=16).contains(&i) {
                        Rgba([230, 0, 0, 255])
                    } else {
                        Rgba([240, 220, 0, 255])
                    };
                    dot([p[0], p[1]], c);
                }
            }
            if let Some(b) = &seen.body {
                for i in [13usize, 14, 15, 16] {
                    if let Some(k) = b.keypoints.get(i) {
                        dot([k.x, k.y], Rgba([0, 120, 255, 255]));
                    }
                }
            }
            for p in [shot.knuckle, shot.wrist] {
                dot([p.x, p.y], Rgba([0, 200, 0, 255]));
            }
            // The rig's ring finger, knuckle to middle joint (magenta): the ring's true axis.
            for i in 0..=40 {
                let p = shot.ring_mcp.lerp(shot.ring_pip, i as f32 / 40.0);
                dot([p.x, p.y], Rgba([220, 0, 220, 255]));
            }
            let _ = img.save(out.join(format!("{stem}_landmarks.png")));
        }
        let Ok(bytes) = encode_png(&shot.image) else {
            continue;
        };
        for jewel in [SampleJewel::RingSolitaire, SampleJewel::BangleSilver] {
            let cell = match renderer.try_on(&Jewelry, &bytes, &jewel.glb()) {
                Ok(r) => {
                    let file = format!("{stem}_{}.png", jewel.name());
                    std::fs::write(out.join(&file), &r.png).expect("write");
                    let roi: Option<[u32; 4]> = r
                        .metadata
                        .get("roi")
                        .and_then(|v| serde_json::from_value(v.clone()).ok());
                    let zname = format!("{stem}_{}_zoom.png", jewel.name());
                    if let (Some(roi), Ok(img)) = (roi, image::load_from_memory(&r.png)) {
                        zoom(&img.to_rgba8(), roi)
                            .save(out.join(&zname))
                            .expect("write");
                    }
                    println!("{file}");
                    format!(
                        "<img src=\"{file}\"></td><td><img src=\"{zname}\"><pre>{}</pre>",
                        serde_json::to_string_pretty(&r.metadata).unwrap_or_default()
                    )
                }
                Err(e) => format!("<p>{e}</p>"),
            };
            let _ = write!(
                html,
                "<tr><td colspan=3><h3>{stem} · {}</h3></td></tr><tr><td>{cell}</td></tr>",
                jewel.name()
            );
        }
    }
}
