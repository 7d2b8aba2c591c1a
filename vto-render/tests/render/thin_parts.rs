//! Thin parts stay visible (issue 35, item 3): a fine chain and a thin wire frame rendered so
//! small that their wire is a fraction of a pixel keep their coverage along their whole
//! length, as a continuous line, not scattered dots; parts a sample spacing wide or more are
//! untouched.
//!
//! The expected coverage comes from the same product rendered 16× larger (where its wire is
//! several samples wide), scaled down: per output column for the chain, per angular sector of
//! each rim for the frame. Coverage is read from the render over a white photo as `1 − linear
//! luminance` (the product is black and matte), so the small and the large render share one
//! bias. Needs only a GPU (no models, no photos).

use std::f32::consts::TAU;
use std::sync::OnceLock;

use image::{Rgba, RgbaImage};
use vto_render::gpu::GpuContext;
use vto_render::math::Vec3;
use vto_render::product::{Format, Material, Product, ProductMeta};
use vto_render::raster::{Lighting, Rasterizer};
use vto_render::samples::product::build::Builder;
use vto_render::scene::camera::PhotoCamera;
use vto_render::scene::SceneBuilder;

/// How much larger the reference render is (rendered without the thin layer: there the wire
/// is two pixels wide or more and point sampling is exact enough).
const REF: u32 = 16;
/// The same for the chain, whose wire is finer.
const CHAIN_REF: u32 = 32;

fn rasterizer() -> &'static Rasterizer {
    static R: OnceLock<Rasterizer> = OnceLock::new();
    R.get_or_init(|| {
        Rasterizer::new(GpuContext::shared().expect("a GPU device (lavapipe is enough)"))
    })
}

/// Black, matte, not metallic: coverage reads straight off the luminance.
fn matte_black() -> Material {
    Material {
        base_color: [0.0, 0.0, 0.0, 1.0],
        metallic: 0.0,
        roughness: 1.0,
        ..Material::default()
    }
}

fn product(builder: Builder) -> Product {
    Product {
        format: Format::Glb,
        primitives: vec![builder.primitive(0)],
        materials: vec![matte_black()],
        textures: Vec::new(),
        meta: ProductMeta::default(),
    }
}

/// A chain of interlocking oval links (cm): `n` links along +x from the origin, `pitch`
/// apart, each `len` × `wid` outside with a wire of `wire` diameter, every other link turned
/// a quarter turn about the chain's axis.
fn chain(n: usize, pitch: f32, len: f32, wid: f32, wire: f32) -> Builder {
    let mut b = Builder::default();
    for i in 0..n {
        let (a, c) = ((len - wire) / 2.0, (wid - wire) / 2.0);
        let path: Vec<Vec3> = (0..24)
            .map(|k| {
                let t = TAU * k as f32 / 24.0;
                let (x, y) = (a * t.cos(), c * t.sin());
                let x = x + i as f32 * pitch;
                if i % 2 == 0 {
                    Vec3::new(x, y, 0.0)
                } else {
                    Vec3::new(x, 0.0, y)
                }
            })
            .collect();
        b.tube(&path, wire / 2.0, 6, true);
    }
    b
}

/// A wire frame (cm): two round rims of radius `r` centred at x = ±`half_gap`, a bridge
/// between them, a wire of `wire` diameter.
fn wire_frame(r: f32, half_gap: f32, wire: f32) -> Builder {
    let mut b = Builder::default();
    for side in [-1.0f32, 1.0] {
        let path: Vec<Vec3> = (0..64)
            .map(|k| {
                let t = TAU * k as f32 / 64.0;
                Vec3::new(side * half_gap + r * t.cos(), r * t.sin(), 0.0)
            })
            .collect();
        b.tube(&path, wire / 2.0, 6, true);
    }
    let bridge: Vec<Vec3> = (0..=8)
        .map(|k| {
            let x = -(half_gap - r) + 2.0 * (half_gap - r) * k as f32 / 8.0;
            Vec3::new(x, -0.3 * r, 0.0)
        })
        .collect();
    b.tube(&bridge, wire / 2.0, 6, false);
    b
}

/// Renders `product` (cm, centred by `centre`, tilted by `tilt` radians in the image plane) at
/// `px_per_cm` over a white `w`×`h` photo, supersampling `ss`, the thin layer on or off;
/// returns the coverage per pixel (`1 − linear luminance`) and the photo's size.
fn coverage(
    product: &Product,
    centre: Vec3,
    tilt: f32,
    px_per_cm: f32,
    (w, h): (u32, u32),
    thin: bool,
) -> Vec<f32> {
    let photo = RgbaImage::from_pixel(w, h, Rgba([255, 255, 255, 255]));
    let camera = PhotoCamera::new(w, h);
    let depth = camera.focal / px_per_cm;
    let (s, c) = tilt.sin_cos();
    let mut b = SceneBuilder::new(camera, w, h, product)
        .lighting(Lighting {
            ambient: [1.0; 3],
            key_dir: [0.0, 0.0, -1.0],
            key_color: [0.0; 3],
        })
        .supersampling(2)
        .thin_parts(thin);
    b.product.push_product(product, |q, n| {
        let p = q - centre;
        let p = Vec3::new(c * p.x - s * p.y, s * p.x + c * p.y, p.z);
        let n = Vec3::new(c * n.x - s * n.y, s * n.x + c * n.y, n.z);
        // Camera space: y down, z forward; the product faces the camera (−z).
        (
            Vec3::new(p.x, -p.y, depth - p.z),
            Vec3::new(n.x, -n.y, -n.z),
        )
    });
    let scene = b.build().expect("a scene");
    let (img, _) = rasterizer().render(&photo, &scene).expect("render");
    img.pixels()
        .map(|p| {
            let lin = |v: u8| {
                let v = f32::from(v) / 255.0;
                if v <= 0.04045 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            let l = 0.2126 * lin(p[0]) + 0.7152 * lin(p[1]) + 0.0722 * lin(p[2]);
            1.0 - l
        })
        .collect()
}

/// Bins of a coverage image: `bin(x, y)` names the bin of a pixel centre (or `None`).
fn binned(cov: &[f32], w: u32, n_bins: usize, bin: impl Fn(f32, f32) -> Option<usize>) -> Vec<f32> {
    let mut out = vec![0.0f32; n_bins];
    for (i, c) in cov.iter().enumerate() {
        let (x, y) = ((i as u32 % w) as f32 + 0.5, (i as u32 / w) as f32 + 0.5);
        if let Some(b) = bin(x, y) {
            out[b] += c;
        }
    }
    out
}

/// (total coverage / expected, share of bins within 0.5–1.6 × their expected coverage).
fn compare(small: &[f32], expected: &[f32]) -> (f32, f32) {
    let total = small.iter().sum::<f32>() / expected.iter().sum::<f32>();
    let even = small
        .iter()
        .zip(expected)
        .filter(|(s, e)| **s >= 0.5 * **e && **s <= 1.6 * **e)
        .count() as f32
        / expected.len() as f32;
    (total, even)
}

#[test]
fn a_fine_chain_stays_a_continuous_chain_at_a_small_scale() {
    // 26 cm of chain: 3 mm × 2 mm links of 0.6 mm wire, 2.2 mm apart; at 1 px/cm (a necklace
    // on a small photo) its wire is 0.06 px and a link 0.3 px.
    let p = product(chain(118, 0.22, 0.3, 0.2, 0.06));
    let centre = Vec3::new(13.0, 0.0, 0.0);
    let tilt = 0.12;
    let scale = 1.0;
    let (w, h) = (40u32, 16u32);
    let (rw, rh) = (w * CHAIN_REF, h * CHAIN_REF);
    let reference = coverage(&p, centre, tilt, scale * CHAIN_REF as f32, (rw, rh), false);
    // Columns the chain spans fully (its ends trimmed by a pixel).
    let half = 13.0 * tilt.cos() * scale;
    let (x_lo, x_hi) = (
        (w as f32 / 2.0 - half + 1.0) as usize,
        (w as f32 / 2.0 + half - 1.0) as usize,
    );
    let n = x_hi - x_lo;
    let col = |x: f32| {
        let c = x.floor() as usize;
        (x_lo..x_hi).contains(&c).then(|| c - x_lo)
    };
    let expected: Vec<f32> = binned(&reference, rw, n, |x, _| col(x / CHAIN_REF as f32))
        .into_iter()
        .map(|v| v / (CHAIN_REF * CHAIN_REF) as f32)
        .collect();
    let mut results = Vec::new();
    for thin in [false, true] {
        let small = coverage(&p, centre, tilt, scale, (w, h), thin);
        let got = binned(&small, w, n, |x, _| col(x));
        let (total, even) = compare(&got, &expected);
        if std::env::var_os("VTO_DEBUG_CHAIN").is_some() {
            eprintln!("got {got:?}\nexpected {expected:?}");
        }
        eprintln!(
            "chain at {scale} px/cm, thin layer {}: coverage {:.0} % of expected, {:.0} % of {n} columns within 0.5–1.6× (expected {:.3} px² per column)",
            if thin { "on" } else { "off" },
            100.0 * total,
            100.0 * even,
            expected.iter().sum::<f32>() / n as f32
        );
        results.push((total, even));
    }
    let (total, even) = results[1];
    assert!(
        (0.8..=1.25).contains(&total),
        "chain coverage {total:.2} of expected"
    );
    assert!(
        even >= 0.9,
        "only {:.0} % of the chain's columns are covered evenly",
        100.0 * even
    );
}

#[test]
fn a_thin_wire_frame_stays_connected_on_a_small_face() {
    // Round rims of 2.4 cm radius, 1 mm wire; 2 px/cm is the scale of a ~30 px wide face, where
    // the wire is 0.2 px wide.
    let (r, gap, wire) = (2.4f32, 3.2f32, 0.1f32);
    let p = product(wire_frame(r, gap, wire));
    let scale = 2.0;
    let (w, h) = (24u32, 16u32);
    let (rw, rh) = (w * REF, h * REF);
    const SECTORS: usize = 12;
    // (rim, distance from the rim's centreline in px, sector) of a pixel centre at `k` px/cm.
    let locate = |x: f32, y: f32, k: f32, cx: f32, cy: f32| -> Option<(f32, usize)> {
        for (i, side) in [-1.0f32, 1.0].iter().enumerate() {
            let (dx, dy) = ((x - cx) / k - side * gap, (y - cy) / k);
            let d = (dx * dx + dy * dy).sqrt();
            if (d - r).abs() * scale <= 1.5 {
                let a = dy.atan2(dx).rem_euclid(TAU);
                let s = ((a / TAU * SECTORS as f32) as usize).min(SECTORS - 1);
                return Some(((d - r).abs() * scale, i * SECTORS + s));
            }
        }
        None
    };
    let reference = coverage(&p, Vec3::ZERO, 0.0, scale * REF as f32, (rw, rh), false);
    let k_ref = scale * REF as f32;
    let expected: Vec<f32> = binned(&reference, rw, 2 * SECTORS, |x, y| {
        locate(x, y, k_ref, rw as f32 / 2.0, rh as f32 / 2.0).map(|l| l.1)
    })
    .into_iter()
    .map(|v| v / (REF * REF) as f32)
    .collect();
    let mut results = Vec::new();
    for thin in [false, true] {
        let small = coverage(&p, Vec3::ZERO, 0.0, scale, (w, h), thin);
        let at = |x: f32, y: f32| locate(x, y, scale, w as f32 / 2.0, h as f32 / 2.0);
        let got = binned(&small, w, 2 * SECTORS, |x, y| at(x, y).map(|l| l.1));
        let (total, even) = compare(&got, &expected);
        // Holes: pixels the rim's centreline crosses (centre within 0.35 px of it) with less
        // than a quarter of the wire's true coverage.
        let on_line: Vec<f32> = small
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let (x, y) = ((*i as u32 % w) as f32 + 0.5, (*i as u32 / w) as f32 + 0.5);
                at(x, y).is_some_and(|l| l.0 <= 0.35)
            })
            .map(|(_, c)| *c)
            .collect();
        let holes = on_line.iter().filter(|&&c| c < 0.25 * wire * scale).count() as f32
            / on_line.len() as f32;
        eprintln!(
            "wire frame at {scale} px/cm (wire {:.2} px), thin layer {}: coverage {:.0} % of expected, {:.0} % of {} rim sectors within 0.5–1.6×, {:.0} % of {} pixels on the rims are holes",
            wire * scale,
            if thin { "on" } else { "off" },
            100.0 * total,
            100.0 * even,
            2 * SECTORS,
            100.0 * holes,
            on_line.len()
        );
        results.push((total, even, holes));
    }
    let (total, even, holes) = results[1];
    assert!(
        (0.8..=1.25).contains(&total),
        "rim coverage {total:.2} of expected"
    );
    assert!(
        even >= 0.9,
        "only {:.0} % of the rim sectors are covered evenly",
        100.0 * even
    );
    assert!(
        holes <= 0.05,
        "{:.0} % of the rims' pixels are holes",
        100.0 * holes
    );
}

#[test]
fn parts_a_pixel_wide_or_more_render_as_before() {
    // The same wire frame at 40 px/cm: its wire is 4 px wide, so nothing goes to the thin
    // layer and the render is the plain one, pixel for pixel.
    let p = product(wire_frame(2.4, 3.2, 0.1));
    let (w, h) = (400u32, 240u32);
    let on = coverage(&p, Vec3::ZERO, 0.0, 40.0, (w, h), true);
    let off = coverage(&p, Vec3::ZERO, 0.0, 40.0, (w, h), false);
    let moved = on
        .iter()
        .zip(&off)
        .filter(|(a, b)| (*a - *b).abs() > 1e-6)
        .count();
    assert_eq!(moved, 0, "{moved} pixels moved");
}

#[test]
fn sample_products_at_portrait_scale_barely_move() {
    // Every sample frame and jewel at 25 px/cm (a frame ~350 px wide) and at 6 px/cm (a
    // small face): the share of pixels the thin layer changes. At portrait scale no frame has
    // a part thinner than a pixel; a jewel's fine chain or prong may.
    use vto_render::samples::product::eyewear::SampleFrame;
    use vto_render::samples::product::jewelry::SampleJewel;
    let mut products: Vec<(String, Product)> = SampleFrame::ALL
        .iter()
        .map(|f| (f.name().to_string(), f.product()))
        .collect();
    products.extend(
        SampleJewel::ALL
            .iter()
            .map(|j| (format!("{j:?}"), j.product())),
    );
    for (name, p) in &products {
        let (lo, hi) = p.bounds();
        let size_cm = 100.0 * (hi[0] - lo[0]).max(hi[1] - lo[1]);
        let centre = Vec3::new(
            (lo[0] + hi[0]) / 2.0,
            (lo[1] + hi[1]) / 2.0,
            (lo[2] + hi[2]) / 2.0,
        );
        // The samples are in metres: render them in centimetres.
        let mut cm = p.clone();
        for prim in &mut cm.primitives {
            for v in &mut prim.positions {
                *v = [
                    100.0 * (v[0] - centre.x),
                    100.0 * (v[1] - centre.y),
                    100.0 * (v[2] - centre.z),
                ];
            }
        }
        for scale in [25.0f32, 6.0] {
            let side = ((size_cm * scale) as u32 + 16).max(32);
            let on = coverage(&cm, Vec3::ZERO, 0.0, scale, (side, side), true);
            let off = coverage(&cm, Vec3::ZERO, 0.0, scale, (side, side), false);
            let drawn = off
                .iter()
                .zip(&on)
                .filter(|(a, b)| **a > 0.02 || **b > 0.02)
                .count();
            let moved = on
                .iter()
                .zip(&off)
                .filter(|(a, b)| (*a - *b).abs() > 0.05)
                .count();
            let share = moved as f32 / drawn.max(1) as f32;
            eprintln!(
                "{name} at {scale} px/cm: {moved} of {drawn} product pixels moved by more than 5 % coverage ({:.1} %)",
                100.0 * share
            );
            // Frames have nothing thinner than a pixel at portrait scale; jewels' fine chains
            // and prongs do, and only they move.
            let limit = if name.contains('_') { 0.0 } else { 0.10 };
            if scale >= 25.0 {
                assert!(
                    share <= limit,
                    "{name}: {:.1} % of its pixels moved",
                    100.0 * share
                );
            }
        }
    }
}

/// A thin part in front of a lens is drawn over the glass, not under it (issue 35): a white
/// wire 0.3 px wide crossing 5 mm in front of a dark lens, over a white photo. Under the
/// glass a white wire on a white photo is lost in the tint (the glass darkens both alike);
/// over it, the wire's row is brighter than the lens around it by its coverage. Behind the
/// lens (the same wire 5 mm further back) it stays under the glass: its row matches the lens.
#[test]
fn a_thin_part_in_front_of_a_lens_is_drawn_over_the_glass() {
    use vto_render::product::AlphaMode;
    let (px_per_cm, wire) = (2.0f32, 0.15f32);
    let (w, h) = (40u32, 40u32);
    // Rows' mean linear luminance with the wire `dz` cm in front of the lens (at z = 0).
    let rows = |dz: f32| -> Vec<f32> {
        let mut b = Builder::default();
        let path: Vec<Vec3> = (0..=16)
            .map(|k| Vec3::new(-4.0 + 0.5 * k as f32, 0.0, dz))
            .collect();
        b.tube(&path, wire / 2.0, 6, false);
        let mut lens = Builder::default();
        lens.ellipsoid(Vec3::ZERO, Vec3::new(6.0, 6.0, 0.02), 12, 24);
        let white = Material {
            base_color: [1.0, 1.0, 1.0, 1.0],
            metallic: 0.0,
            roughness: 1.0,
            ..Material::default()
        };
        let glass = Material {
            base_color: [0.05, 0.05, 0.05, 0.85],
            metallic: 0.0,
            roughness: 0.1,
            alpha_mode: AlphaMode::Blend,
            ..Material::default()
        };
        let p = Product {
            format: Format::Glb,
            primitives: vec![b.primitive(0), lens.primitive(1)],
            materials: vec![white, glass],
            textures: Vec::new(),
            meta: ProductMeta::default(),
        };
        let photo = RgbaImage::from_pixel(w, h, Rgba([255, 255, 255, 255]));
        let camera = PhotoCamera::new(w, h);
        let depth = camera.focal / px_per_cm;
        let mut sb = SceneBuilder::new(camera, w, h, &p)
            .lighting(Lighting {
                ambient: [1.0; 3],
                key_dir: [0.0, 0.0, -1.0],
                key_color: [0.0; 3],
            })
            .transparency(vto_render::raster::Transparency::Material)
            .supersampling(2)
            .thin_parts(true);
        sb.product.push_product(&p, |q, n| {
            (
                Vec3::new(q.x, -q.y, depth - q.z),
                Vec3::new(n.x, -n.y, -n.z),
            )
        });
        let scene = sb.build().expect("a scene");
        let (img, _) = rasterizer().render(&photo, &scene).expect("render");
        let lin = |v: u8| {
            let v = f32::from(v) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        (0..h)
            .map(|y| {
                (10..30)
                    .map(|x| {
                        let p = img.get_pixel(x, y);
                        0.2126 * lin(p[0]) + 0.7152 * lin(p[1]) + 0.0722 * lin(p[2])
                    })
                    .sum::<f32>()
                    / 20.0
            })
            .collect()
    };
    let (mid, clear) = ((h / 2) as usize, (h / 2 + 6) as usize);
    let front = rows(0.5);
    let behind = rows(-0.5);
    // The wire's centre line is the boundary of rows mid − 1 and mid: the brighter of them.
    let wire_row = |r: &[f32]| r[mid - 1].max(r[mid]);
    let lens = front[clear];
    eprintln!(
        "lens alone {lens:.3}; wire in front {:.3}, behind {:.3}",
        wire_row(&front),
        wire_row(&behind)
    );
    assert!(lens < 0.5, "the lens is dark: {lens}");
    // Behind it, under the glass: a white wire on the white photo hardly shows.
    let behind_rise = wire_row(&behind) - behind[clear];
    assert!(
        behind_rise.abs() < 0.02,
        "behind the lens: {behind_rise:.3}"
    );
    // Over the glass: its row (0.15 of it covered) rises by that share of the wire's own
    // shade (about 0.5 under this ambient light) over the lens's 0.19: about 0.05; under the
    // glass it would rise no more than behind it.
    let rise = wire_row(&front) - lens;
    assert!(
        rise >= 0.03 && rise >= 2.0 * behind_rise.abs(),
        "the wire in front of the lens is lost under the glass: {rise:.3} over the lens \
         ({behind_rise:.3} behind it)"
    );
}
