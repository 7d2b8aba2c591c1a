//! Debugging aid (feature `testkit`): every sample upper garment on the standard subjects
//! with the fit's control points drawn over the result (sleeve points red/blue, torso green),
//! and the fit's numbers printed, so a person can see where each part is anchored.
//!
//! `cargo run -p vto-render --release --features testkit --example garment_anchors -- [OUT_DIR]`

use std::path::PathBuf;

use image::{Rgba, RgbaImage};
use vto_render::engine::{default_models_dir, Renderer};
use vto_render::garment::upper::fit::{fit_upper_to, PersonMask};
use vto_render::garment::{cutout, label, BodyFrame};
use vto_render::samples::garment::SampleGarment;
use vto_render::testkit::{self, BaseBody};
use vto_render::tryon::{LoadedProduct, Needs, TryOn, UpperGarment};

fn dot(img: &mut RgbaImage, x: f32, y: f32, c: Rgba<u8>) {
    for dy in -2i32..=2 {
        for dx in -2i32..=2 {
            let (px, py) = (x.round() as i32 + dx, y.round() as i32 + dy);
            if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, c);
            }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("target/garment-anchors"), PathBuf::from);
    std::fs::create_dir_all(&out)?;
    let models = default_models_dir();
    let renderer = Renderer::shared(&models)?;
    let body = BaseBody::load(&testkit::assets_dir(&models))?;
    let needs = Needs {
        face: true,
        face_optional: false,
        body: true,
        person_mask: true,
        hands: true,
        face_of_body: false,
    };
    for spec in testkit::standard((600, 800)) {
        let s = testkit::render(&body, &spec, renderer.rasterizer())?;
        let person = renderer.see(&s.image, needs)?;
        let Ok(frame) = BodyFrame::new(&person) else {
            continue;
        };
        for g in [
            SampleGarment::PlainTee,
            SampleGarment::DottedTee,
            SampleGarment::LongShirt,
            SampleGarment::Jacket,
        ] {
            let photo = g.render();
            photo.save(out.join(format!("product_{}.png", g.name())))?;
            let tryon = match g.category() {
                vto_core::Category::Shirt => UpperGarment::Shirt,
                vto_core::Category::Jacket => UpperGarment::Jacket,
                _ => UpperGarment::Tshirt,
            };
            let prepared = cutout::prepare(&photo)?;
            let mask = person
                .mask
                .as_ref()
                .or(person.body.as_ref().and_then(|b| b.mask.as_ref()))
                .map(|m| PersonMask {
                    data: &m.data,
                    size: person.photo.dimensions(),
                });
            let fit = fit_upper_to(&prepared.landmarks, &frame, tryon.ease(), mask)?;
            let look = tryon.try_on(renderer.stages(), &person, &LoadedProduct::Image(photo))?;
            let mut img = look.image.clone();
            for p in &fit.parts {
                let c = match p.label {
                    label::SLEEVE_LEFT => Rgba([230, 0, 0, 255]),
                    label::SLEEVE_RIGHT => Rgba([0, 0, 230, 255]),
                    _ => Rgba([0, 200, 0, 255]),
                };
                for b in &p.body {
                    dot(&mut img, b.x, b.y, c);
                }
            }
            for a in &frame.arms {
                for q in &a.chain {
                    dot(&mut img, q.x, q.y, Rgba([255, 255, 0, 255]));
                }
            }
            let name = format!("{}_{}", spec.pose.name(), g.name());
            // Where the left sleeve's spline sends each photo pixel: magenta onto the sleeve's
            // own texels, cyan onto the torso's, nothing elsewhere.
            let mut map = look.image.clone();
            if let Some(p) = fit.parts.iter().find(|p| p.label == label::SLEEVE_LEFT) {
                let warp = vto_render::garment::PartWarp::solve(p, 800.0)?;
                for y in p.region[1].max(0.0) as u32..(p.region[3] as u32).min(799) {
                    for x in p.region[0].max(0.0) as u32..(p.region[2] as u32).min(599) {
                        let q = warp.eval(glam::Vec2::new(x as f32 + 0.5, y as f32 + 0.5));
                        if q.x < 0.0
                            || q.y < 0.0
                            || q.x >= prepared.width as f32
                            || q.y >= prepared.height as f32
                        {
                            continue;
                        }
                        let l =
                            prepared.labels[q.y as usize * prepared.width as usize + q.x as usize];
                        let px = map.get_pixel_mut(x, y);
                        if l == label::SLEEVE_LEFT {
                            px.0 = [(px.0[0] / 2) + 120, px.0[1] / 2, (px.0[2] / 2) + 120, 255];
                        } else if l == label::TORSO {
                            px.0 = [px.0[0] / 2, (px.0[1] / 2) + 100, (px.0[2] / 2) + 100, 255];
                        }
                    }
                }
            }
            map.save(out.join(format!("{name}_map.png")))?;
            if std::env::var_os("ANCHORS_VERBOSE").is_some() {
                println!("  {:?}", prepared.landmarks);
                for p in fit.parts.iter().filter(|p| p.label == label::SLEEVE_LEFT) {
                    for (b, g) in p.body.iter().zip(&p.garment) {
                        let (gx, gy) = (g.x.max(0.0) as usize, g.y.max(0.0) as usize);
                        let l = prepared.labels.get(gy * prepared.width as usize + gx);
                        println!("    body {b:?} garment {g:?} label {l:?}");
                    }
                }
            }
            println!(
                "{name}: scale {:.3} reach {:?}",
                fit.scale, fit.sleeve_reach
            );
            look.image.save(out.join(format!("{name}.png")))?;
            img.save(out.join(format!("{name}_anchors.png")))?;
        }
    }
    Ok(())
}
