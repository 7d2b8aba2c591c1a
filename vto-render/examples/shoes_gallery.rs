//! The shoes gallery: the sample sneaker and boot on every full-body photo given, plus studio
//! shots of each shoe on a plain floor (a synthetic body: side and three-quarter views), and
//! the warm time of each try-on; and warm timings at 1024² (vision and the shoes stage).
//!
//! `cargo run -p vto-render --release --example shoes_gallery -- [OUT_DIR] [PHOTO...]`
//! (default `target/gallery/shoes`; full-body photos: `scripts/fetch-models.sh --test-photos`
//! puts them in `models/test-photos/full-body/`). Open `OUT_DIR/index.html`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use image::{Rgba, RgbaImage};
use vto_render::engine::{default_models_dir, Renderer};
use vto_render::gpu::GpuContext;
use vto_render::math::Vec2;
use vto_render::raster::Rasterizer;
use vto_render::samples::product::shoes::SampleShoe;
use vto_render::tryon::shoes::{self, Shoes};
use vto_render::tryon::Options;
use vto_render::vision::{Body, Detection, Mask, PoseKeypoint, RotatedRect};

/// Keypoints: (index, x, y).
type Keypoints = Vec<(usize, f32, f32)>;

/// A body whose only visible keypoints are `pts` (index, x, y).
fn body(pts: &[(usize, f32, f32)]) -> Body {
    let mut keypoints = vec![
        PoseKeypoint {
            x: -1.0,
            y: -1.0,
            z: 0.0,
            visibility: 0.0,
            presence: 0.0,
        };
        33
    ];
    for &(i, x, y) in pts {
        keypoints[i] = PoseKeypoint {
            x,
            y,
            z: 0.0,
            visibility: 0.95,
            presence: 0.95,
        };
    }
    Body {
        detection: Detection {
            score: 0.9,
            xmin: 0.0,
            ymin: 0.0,
            xmax: 1.0,
            ymax: 1.0,
            keypoints: Vec::new(),
        },
        roi: RotatedRect {
            cx: 0.0,
            cy: 0.0,
            width: 1.0,
            height: 1.0,
            rotation: 0.0,
        },
        score: 0.9,
        keypoints,
        mask_coverage: 0.0,
        mask: None,
    }
}

/// A plain studio floor meeting a wall.
fn studio(w: u32, h: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |_, y| {
        let t = y as f32 / h as f32;
        let v = if t < 0.45 {
            200.0 - 30.0 * t
        } else {
            150.0 + 40.0 * (t - 0.45)
        };
        Rgba([v as u8, (v * 0.98) as u8, (v * 0.95) as u8, 255])
    })
}

fn median_ms(mut f: impl FnMut(), runs: usize) -> f64 {
    f();
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

/// Warm timings at 1024²: the body vision on a real photo (astronaut.png scaled), and the
/// shoes stage (feet, fill, light, scene, shadow; then the rasterizer) on a drawn standing
/// person with a person mask.
fn bench(raster: &Rasterizer, renderer: &Renderer, out: &std::path::Path) {
    const S: u32 = 1024;
    let astronaut = default_models_dir().join("test-photos/astronaut.png");
    if let Ok(img) = image::open(&astronaut) {
        let photo =
            image::imageops::resize(&img.to_rgba8(), S, S, image::imageops::FilterType::Triangle);
        let needs = vto_render::tryon::Needs {
            body: true,
            ..Default::default()
        };
        let ms = median_ms(
            || {
                let _ = renderer.see(&photo, needs);
            },
            5,
        );
        println!("bench 1024²: vision (pose detection + landmarks + person mask) {ms:.1} ms");
    }
    // A standing person: the test scene's keypoints scaled to 1024².
    let k = S as f32 / 1000.0;
    let pts: Keypoints = [
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
    .iter()
    .map(|&(i, x, y)| (i, x * k + 150.0, y * k))
    .collect();
    let mut b = body(&pts);
    let at = |i: usize| {
        pts.iter()
            .find(|p| p.0 == i)
            .map(|p| Vec2::new(p.1, p.2))
            .unwrap_or_default()
    };
    let mut data = vec![0.0f32; (S * S) as usize];
    let photo = RgbaImage::from_fn(S, S, |x, y| {
        let p = Vec2::new(x as f32, y as f32);
        let near = |a: Vec2, c: Vec2, r: f32| {
            let ab = c - a;
            let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            p.distance(a + ab * t) < r
        };
        let leg = [(23, 25, 27), (24, 26, 28)]
            .iter()
            .any(|&(h, kn, a)| near(at(h), at(kn), 28.0) || near(at(kn), at(a), 21.0));
        let shoe = [(29, 31), (30, 32)]
            .iter()
            .any(|&(h, t)| near(at(h), at(t), 14.0));
        if leg || shoe {
            data[(y * S + x) as usize] = 1.0;
            if shoe {
                Rgba([190, 40, 40, 255])
            } else {
                Rgba([40, 50, 75, 255])
            }
        } else {
            Rgba([150, 146, 140, 255])
        }
    });
    b.mask = Some(Mask {
        width: S,
        height: S,
        data,
    });
    for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
        let product = shoe.product();
        let options = Options::default();
        let prep = median_ms(
            || {
                let _ = shoes::prepare(&photo, &b, &product, &options);
            },
            5,
        );
        let prepared = shoes::prepare(&photo, &b, &product, &options).expect("prepare");
        let drawn = prepared.photo.as_ref().expect("a photo");
        let scene = prepared.scene.as_ref().expect("a scene");
        let draw = median_ms(
            || {
                let _ = raster.render(drawn, scene);
            },
            5,
        );
        if let Ok((img, _)) = raster.render(drawn, scene) {
            let _ = img.save(out.join(format!("drawn-{}.png", shoe.name())));
        }
        let roi = scene.roi;
        println!(
            "bench 1024²: {} shoes stage {prep:.1} ms + rasterizer {draw:.1} ms (ROI {}×{}, {}× supersampling, {} triangles)",
            shoe.name(),
            roi[2],
            roi[3],
            scene.ss * scene.ss,
            scene.product.triangles.len()
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/gallery/shoes"));
    let mut photos: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if photos.is_empty() {
        let dir = default_models_dir().join("test-photos/full-body");
        if let Ok(rd) = std::fs::read_dir(&dir) {
            photos = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            photos.sort();
        }
    }
    std::fs::create_dir_all(&out).expect("create the output directory");
    // The sample products, for `vto try-on --category shoes --product OUT_DIR/sneaker.glb`.
    for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
        std::fs::write(out.join(format!("{}.glb", shoe.name())), shoe.glb()).expect("write");
    }
    let mut html = String::from(
        "<!doctype html><meta charset=utf-8><title>vto shoes gallery</title>\
         <style>body{font-family:sans-serif;background:#222;color:#eee}\
         img{max-width:420px;margin:4px}td{vertical-align:top;padding:6px}\
         pre{font-size:11px;max-width:420px;white-space:pre-wrap}</style>\
         <h1>vto: shoes</h1><table>",
    );

    // Studio shots: a leg seen from the side (toe to the right) and turned three-quarters.
    let raster = Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"));
    let views: [(&str, Keypoints); 2] = [
        (
            "side",
            vec![
                (24, 420.0, 40.0),
                (26, 425.0, 250.0),
                (28, 430.0, 470.0),
                (30, 400.0, 492.0),
                (32, 520.0, 505.0),
            ],
        ),
        (
            "three-quarter",
            vec![
                (24, 430.0, 40.0),
                (26, 430.0, 250.0),
                (28, 430.0, 470.0),
                (30, 425.0, 490.0),
                (32, 480.0, 540.0),
            ],
        ),
    ];
    html.push_str("<tr><th colspan=4>studio: one right foot, synthetic keypoints</th></tr><tr>");
    for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
        for (view, pts) in &views {
            let photo = studio(800, 600);
            let b = body(pts);
            let product = shoe.product();
            let prepared = shoes::prepare(&photo, &b, &product, &Options::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let mut scene = prepared.scene.clone().expect("a scene");
            if std::env::var_os("SHOES_NO_OCCLUDERS").is_some() {
                scene.occluders.clear();
            }
            let (img, _) = raster
                .render(prepared.photo.as_ref().expect("a photo"), &scene)
                .expect("render");
            let name = format!("studio-{}-{view}.png", shoe.name());
            img.save(out.join(&name)).expect("save");
            let _ = write!(html, "<td><img src={name}><br>{} {view}</td>", shoe.name());
        }
    }
    html.push_str("</tr>");

    let renderer = Renderer::new(&default_models_dir()).unwrap_or_else(|e| panic!("{e}"));
    bench(&raster, &renderer, &out);
    html.push_str("<tr><th colspan=4>a drawn standing person (keypoints and mask given), 1024²</th></tr><tr><td><img src=drawn-sneaker.png></td><td><img src=drawn-boot.png></td></tr>");
    for photo in &photos {
        let Ok(person) = std::fs::read(photo) else {
            eprintln!("skipping {}: unreadable", photo.display());
            continue;
        };
        let stem = photo
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = write!(
            html,
            "<tr><td>{stem}<br><img src=\"{stem}-input.png\"></td>"
        );
        if let Ok(img) = image::load_from_memory(&person) {
            let _ = img.save(out.join(format!("{stem}-input.png")));
        }
        for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
            let glb = shoe.glb();
            // Once cold, then warm: the warm time is the one reported.
            let _ = renderer.try_on(&Shoes, &person, &glb);
            let t = Instant::now();
            match renderer.try_on(&Shoes, &person, &glb) {
                Ok(r) => {
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    let name = format!("{stem}-{}.png", shoe.name());
                    std::fs::write(out.join(&name), &r.png).expect("write");
                    println!(
                        "{stem} {} {}x{}: {ms:.0} ms warm",
                        shoe.name(),
                        r.image.width(),
                        r.image.height()
                    );
                    let meta = serde_json::to_string_pretty(&r.metadata).unwrap_or_default();
                    let _ = write!(
                        html,
                        "<td><img src={name}><br>{ms:.0} ms<pre>{}</pre></td>",
                        meta.replace('<', "&lt;")
                    );
                }
                Err(e) => {
                    println!("{stem} {}: {e}", shoe.name());
                    let _ = write!(html, "<td>{}: {e}</td>", shoe.name());
                }
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>");
    std::fs::write(out.join("index.html"), html).expect("write index.html");
    println!("open {}", out.join("index.html").display());
}
