//! How the hats and jewels look, not where they sit: polished metal shows dark and bright
//! reflections (not a porcelain haze) and gold is coloured; a cut gem breaks into bright and
//! dark facets with a dark outline; a knit seen small does not alias into moiré; the cap's
//! crown and visor meet without a crack; a stud earring is big enough to read; a necklace
//! goes under a shirt's collar.
//!
//! The material tests render the sample products on a plain grey photo through the real
//! rasterizer (no models needed); the cap, stud and necklace tests use the portraits (`VTO_MODELS_DIR`,
//! default `<workspace>/models`; `scripts/fetch-models.sh --test-photos`).

use crate::support::{models_dir, renderer};
use std::path::PathBuf;

use image::{Rgba, RgbaImage};
use vto_render::gpu::GpuContext;
use vto_render::math::{Mat3, Vec3};
use vto_render::product::Product;
use vto_render::raster::{cpu_ids, Rasterizer, Scene};
use vto_render::samples::product::hats::SampleHat;
use vto_render::samples::product::jewelry::SampleJewel;
use vto_render::scene::camera::PhotoCamera;
use vto_render::scene::{light, SceneBuilder};
use vto_render::tryon::jewelry::{self, Worn};
use vto_render::tryon::{hats, Hats, Jewelry, Options, TryOn};

const SIZE: u32 = 512;

fn raster() -> Rasterizer {
    Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"))
}

/// A plain mid-grey photo with a faint vertical gradient.
fn grey() -> RgbaImage {
    RgbaImage::from_fn(SIZE, SIZE, |_, y| {
        let v = 120 + (y * 20 / SIZE) as u8;
        Rgba([v, v, v, 255])
    })
}

/// `product` (metres) at `depth` cm in front of the camera, scaled to cm, turned by `rot`
/// (in the product's frame, y up), under the neutral light, supersampled `ss`.
fn scene(product: &Product, rot: Mat3, depth: f32, ss: u32) -> Scene {
    let cam = PhotoCamera::new(SIZE, SIZE);
    let flip = |v: Vec3| Vec3::new(v.x, -v.y, v.z);
    let (lo, hi) = product.bounds();
    let mid = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let mut b = SceneBuilder::new(cam, SIZE, SIZE, product)
        .lighting(light::neutral())
        .supersampling(ss);
    b.product.push_product(product, |q, n| {
        (
            flip(rot * ((q - mid) * 100.0)) + Vec3::new(0.0, 0.0, depth),
            flip(rot * n),
        )
    });
    let mut s = b.build().expect("the scene builds");
    jewelry::mark_gems(&mut s, product);
    s
}

/// Writes `img` as `<VTO_LOOKS_DIR>/<name>.png` when that variable is set (to look at).
fn dump(img: &RgbaImage, name: &str) {
    if let Some(dir) = std::env::var_os("VTO_LOOKS_DIR") {
        let path = PathBuf::from(dir).join(format!("{name}.png"));
        img.save(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn luminance(p: &Rgba<u8>) -> f32 {
    0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2])
}

/// Output pixels whose every sample shows material `mat` (any material if `None`), as
/// image coordinates.
fn full_pixels(s: &Scene, mat: Option<u32>) -> Vec<(u32, u32)> {
    let (ids, _) = cpu_ids(s);
    let [x0, y0, w, h] = s.roi;
    let ww = (w * s.ss) as usize;
    let hit = |k: usize| {
        ids[k] != u32::MAX && mat.is_none_or(|m| s.product.triangles[ids[k] as usize][3] == m)
    };
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let all = (0..s.ss).all(|j| {
                (0..s.ss).all(|i| hit(((y * s.ss + j) as usize) * ww + (x * s.ss + i) as usize))
            });
            if all {
                out.push((x0 + x, y0 + y));
            }
        }
    }
    out
}

fn percentile(mut v: Vec<f32>, p: f32) -> f32 {
    v.sort_by(f32::total_cmp);
    v[((v.len() - 1) as f32 * p).round() as usize]
}

#[test]
fn polished_silver_reflects_dark_and_bright_and_gold_is_coloured() {
    let r = raster();
    let photo = grey();
    // The bangle seen a little from above, as on a wrist held in front of the body.
    let bangle = SampleJewel::BangleSilver.product();
    let s = scene(&bangle, Mat3::from_rotation_x(0.35), 30.0, 3);
    let (out, _) = r.render(&photo, &s).unwrap();
    dump(&out, "bangle");
    let lum: Vec<f32> = full_pixels(&s, None)
        .iter()
        .map(|&(x, y)| luminance(out.get_pixel(x, y)))
        .collect();
    assert!(lum.len() > 2000, "the bangle covers {} pixels", lum.len());
    let (lo, hi) = (percentile(lum.clone(), 0.05), percentile(lum, 0.95));
    assert!(
        lo < 60.0 && hi > 200.0 && hi - lo > 150.0,
        "silver: 5th–95th percentile luminance {lo:.0}–{hi:.0}: a mirror shows dark and bright"
    );

    // Gold: its reflections are yellow, not grey.
    let ring = SampleJewel::RingSolitaire.product();
    let s = scene(&ring, Mat3::from_rotation_x(0.3), 6.0, 3);
    let (out, _) = r.render(&photo, &s).unwrap();
    let px: Vec<[f32; 3]> = full_pixels(&s, Some(0))
        .iter()
        .map(|&(x, y)| {
            let p = out.get_pixel(x, y);
            [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])]
        })
        .collect();
    assert!(px.len() > 2000, "the band covers {} pixels", px.len());
    let mean = |c: usize| px.iter().map(|p| p[c]).sum::<f32>() / px.len() as f32;
    assert!(
        mean(0) > 1.4 * mean(2) && mean(1) > 1.15 * mean(2),
        "gold's mean colour {:.0} {:.0} {:.0}",
        mean(0),
        mean(1),
        mean(2)
    );
    let lum: Vec<f32> = px
        .iter()
        .map(|p| 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2])
        .collect();
    let (lo, hi) = (percentile(lum.clone(), 0.05), percentile(lum, 0.95));
    assert!(hi - lo > 120.0, "gold: luminance {lo:.0}–{hi:.0}");
}

/// Luminance statistics of `lum`: the median, the share of bright pixels (> 170) and of
/// dark ones (< 50).
fn metal_stats(mut lum: Vec<f32>) -> (f32, f32, f32) {
    let n = lum.len().max(1) as f32;
    let bright = lum.iter().filter(|&&l| l > 170.0).count() as f32 / n;
    let dark = lum.iter().filter(|&&l| l < 50.0).count() as f32 / n;
    (percentile(std::mem::take(&mut lum), 0.5), bright, dark)
}

#[test]
fn a_bangle_facing_the_camera_reads_as_silver_not_as_a_dark_ring() {
    // A bangle whose axis points at the camera (a forearm held towards it) sees, in its
    // lower half, what lies under the horizon: a customer must still see polished silver
    // (bright highlights and a range of greys, dark only in narrow bands), not a dark ring.
    let r = raster();
    let photo = grey();
    let bangle = SampleJewel::BangleSilver.product();
    for (name, rot) in [
        (
            "face-on",
            Mat3::from_rotation_x(std::f32::consts::FRAC_PI_2),
        ),
        (
            "face-on, turned",
            Mat3::from_rotation_y(0.4) * Mat3::from_rotation_x(1.3),
        ),
    ] {
        let s = scene(&bangle, rot, 30.0, 3);
        let (out, _) = r.render(&photo, &s).unwrap();
        dump(&out, &format!("bangle_{}", name.replace([' ', ','], "")));
        let lum: Vec<f32> = full_pixels(&s, None)
            .iter()
            .map(|&(x, y)| luminance(out.get_pixel(x, y)))
            .collect();
        assert!(
            lum.len() > 2000,
            "{name}: the bangle covers {} pixels",
            lum.len()
        );
        let lo = percentile(lum.clone(), 0.05);
        let (median, bright, dark) = metal_stats(lum);
        println!(
            "{name}: median {median:.0}, bright {:.0} %, dark {:.0} %, 5th percentile {lo:.0}",
            bright * 100.0,
            dark * 100.0
        );
        assert!(
            bright > 0.2 && dark < 0.1,
            "{name}: median luminance {median:.0}, {:.0} % bright, {:.0} % dark: reads as a dark \
             ring, not silver",
            bright * 100.0,
            dark * 100.0
        );
        assert!(lo < 60.0, "{name}: a mirror keeps some dark ({lo:.0})");
    }
}

#[test]
fn a_cut_gem_sparkles_facet_by_facet_inside_a_dark_outline() {
    let r = raster();
    let photo = grey();
    let ring = SampleJewel::RingSolitaire.product();
    // The stone facing the camera, seen a little from above, big (the ring 4 cm away).
    let rot = Mat3::from_rotation_x(0.35) * Mat3::from_rotation_y(std::f32::consts::PI);
    let s = scene(&ring, rot, 4.0, 3);
    assert_eq!(s.materials[1].flags[2], vto_render::raster::SHADING_GEM);
    let (out, _) = r.render(&photo, &s).unwrap();
    dump(&out, "gem");
    let gem = full_pixels(&s, Some(1));
    assert!(gem.len() > 1500, "the stone covers {} pixels", gem.len());
    let lum: Vec<f32> = gem
        .iter()
        .map(|&(x, y)| luminance(out.get_pixel(x, y)))
        .collect();
    let n = lum.len() as f32;
    let peak = percentile(lum.clone(), 0.95);
    let dark = lum.iter().filter(|&&l| l < 0.45 * peak).count() as f32 / n;
    let bright = lum.iter().filter(|&&l| l > 0.8 * peak).count() as f32 / n;
    assert!(
        peak > 170.0 && dark > 0.1 && bright > 0.1,
        "facets: peak {peak:.0}, {:.0} % dark, {:.0} % bright — not a flat white disc",
        dark * 100.0,
        bright * 100.0
    );
    // Colour fringes: some facets are not grey.
    let chroma = gem
        .iter()
        .filter(|&&(x, y)| {
            let p = out.get_pixel(x, y);
            let (mx, mn) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
            mx - mn > 30
        })
        .count() as f32
        / n;
    assert!(
        chroma > 0.03,
        "{:.1} % of the stone shows fire",
        chroma * 100.0
    );
    // The outline (stone pixels next to the metal or the photo) is darker than the stone
    // (the solitaire's prongs, polished metal gripping the girdle, brighten it a little:
    // 0.82 of the stone).
    let inside: std::collections::HashSet<(u32, u32)> = gem.iter().copied().collect();
    let edge: Vec<f32> = gem
        .iter()
        .filter(|&&(x, y)| {
            [(1, 0), (-1, 0), (0, 1), (0, -1)]
                .iter()
                .any(|(dx, dy)| !inside.contains(&((x as i32 + dx) as u32, (y as i32 + dy) as u32)))
        })
        .map(|&(x, y)| luminance(out.get_pixel(x, y)))
        .collect();
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    assert!(
        mean(&edge) < 0.86 * mean(&lum),
        "outline {:.0} vs stone {:.0}",
        mean(&edge),
        mean(&lum)
    );
}

/// Sum of squared 4-neighbour Laplacians of the luminance over `pixels` (those whose
/// neighbours are all in the set), per pixel.
fn high_frequency(img: &RgbaImage, pixels: &[(u32, u32)]) -> f32 {
    let set: std::collections::HashSet<(u32, u32)> = pixels.iter().copied().collect();
    let l = |x: u32, y: u32| luminance(img.get_pixel(x, y));
    let mut e = 0.0;
    let mut n = 0;
    for &(x, y) in pixels {
        let nb = [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)];
        if nb.iter().all(|p| set.contains(p)) {
            let lap = 4.0 * l(x, y) - nb.iter().map(|&(a, b)| l(a, b)).sum::<f32>();
            e += lap * lap;
            n += 1;
        }
    }
    e / n.max(1) as f32
}

#[test]
fn a_knit_seen_small_does_not_alias_into_moire() {
    let r = raster();
    let photo = grey();
    let beanie = SampleHat::BeanieKnit.product();
    // About 150 px across: each pixel spans several knit texels.
    let rot = Mat3::from_rotation_x(0.25);
    let (one, _) = r.render(&photo, &scene(&beanie, rot, 75.0, 1)).unwrap();
    let fine = scene(&beanie, rot, 75.0, 4);
    assert!(fine.roi[2] > 100 && fine.roi[2] < 220, "roi {:?}", fine.roi);
    let (four, _) = r.render(&photo, &fine).unwrap();
    dump(&one, "knit_1");
    dump(&four, "knit_16");
    let pixels = full_pixels(&fine, None);
    assert!(pixels.len() > 5000);
    let (e1, e4) = (
        high_frequency(&one, &pixels),
        high_frequency(&four, &pixels),
    );
    // One sample per pixel, filtered over its footprint, is about as smooth as 16 samples.
    assert!(
        e1 < 1.6 * e4 + 4.0,
        "high-frequency energy at 1 sample {e1:.1} vs 16 samples {e4:.1}: moiré"
    );
    let diff = pixels
        .iter()
        .map(|&(x, y)| (luminance(one.get_pixel(x, y)) - luminance(four.get_pixel(x, y))).abs())
        .sum::<f32>()
        / pixels.len() as f32;
    assert!(diff < 6.0, "1 vs 16 samples differ by {diff:.1} on average");
}

fn portrait(name: &str) -> RgbaImage {
    let path = models_dir().join("test-photos").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh --test-photos",
            path.display()
        )
    });
    image::load_from_memory(&bytes).unwrap().to_rgba8()
}

/// Runs of at most `max` uncovered samples with product samples on both sides, along the
/// columns of the supersampled id plane: cracks through the product.
fn cracks(s: &Scene, max: usize) -> Vec<(u32, u32)> {
    let (ids, _) = cpu_ids(s);
    let [x0, y0, w, h] = s.roi;
    let (ww, hh) = ((w * s.ss) as usize, (h * s.ss) as usize);
    let hit = |x: usize, y: usize| ids[y * ww + x] != u32::MAX;
    let mut out = Vec::new();
    for x in 0..ww {
        let mut y = 0;
        while y < hh {
            if hit(x, y) {
                y += 1;
                continue;
            }
            let start = y;
            while y < hh && !hit(x, y) {
                y += 1;
            }
            if start > 0 && y < hh && y - start <= max {
                out.push((x0 + (x as u32) / s.ss, y0 + (start as u32) / s.ss));
            }
        }
    }
    out
}

#[test]
fn the_caps_crown_and_visor_meet_without_a_crack() {
    for name in ["astronaut.png", "grace_hopper.jpg"] {
        let photo = portrait(name);
        let p = renderer().see(&photo, Hats.needs()).unwrap();
        let face = &p.face.as_ref().expect("a face").face;
        let prepared = hats::prepare(
            &p.photo,
            face,
            p.mask.as_ref(),
            &SampleHat::CapNavy.product(),
            &Options::default(),
        )
        .unwrap();
        let s = prepared.scene.as_ref().expect("a scene");
        let found = cracks(s, 2 * s.ss as usize);
        assert!(
            found.len() <= 2,
            "{name}: {} crack samples through the cap, e.g. {:?}",
            found.len(),
            &found[..found.len().min(8)]
        );
    }
}

#[test]
fn studs_are_real_size_and_readable() {
    let photo = portrait("astronaut.png");
    let p = renderer().see(&photo, Jewelry.needs()).unwrap();
    let face = &p.face.as_ref().expect("a face").face;
    let prepared = jewelry::prepare(
        &p.photo,
        face,
        p.body.as_ref(),
        &SampleJewel::StudRuby.product(),
        &Options::default(),
    )
    .unwrap();
    let Worn::Ears(ears) = &prepared.placement.worn else {
        panic!("studs are worn on the ears")
    };
    assert!(!ears.is_empty());
    let s = prepared.scene.as_ref().expect("a visible ear");
    let lm = &face.landmarks;
    let face_w = ((lm[234][0] - lm[454][0]).powi(2) + (lm[234][1] - lm[454][1]).powi(2)).sqrt();
    // A stud 4–8 mm across on a face about 14 cm wide.
    let (ids, _) = cpu_ids(s);
    let drawn = ids[..ids.len() / 2]
        .iter()
        .filter(|&&i| i != u32::MAX)
        .count() as f32
        / (s.ss * s.ss) as f32;
    let per_ear = drawn / ears.len() as f32;
    let mm = face_w / 140.0;
    let (lo, hi) = (
        0.5 * std::f32::consts::PI * (2.0 * mm).powi(2),
        std::f32::consts::PI * (4.5 * mm).powi(2),
    );
    assert!(
        per_ear > lo && per_ear < hi,
        "a stud covers {per_ear:.0} px (face {face_w:.0} px wide: 4–8 mm is {lo:.0}–{hi:.0} px)"
    );
    // Readable: a bright highlight and a darker rim within the stud.
    let (out, _) = renderer().rasterizer().render(&p.photo, s).unwrap();
    let lum: Vec<f32> = full_pixels(s, None)
        .iter()
        .map(|&(x, y)| luminance(out.get_pixel(x, y)))
        .collect();
    assert!(lum.len() >= 8, "{} fully covered stud pixels", lum.len());
    let (lo, hi) = (percentile(lum.clone(), 0.0), percentile(lum, 1.0));
    assert!(
        hi > 170.0 && hi - lo > 100.0,
        "the stud's luminance spans {lo:.0}–{hi:.0}: no glint"
    );
}

#[test]
fn a_necklace_goes_under_the_collar() {
    let photo = portrait("grace_hopper.jpg");
    let p = renderer().see(&photo, Jewelry.needs()).unwrap();
    let face = &p.face.as_ref().expect("a face").face;
    let product = SampleJewel::NecklacePendant.product();
    let prepared = jewelry::prepare(
        &p.photo,
        face,
        p.body.as_ref(),
        &product,
        &Options::default(),
    )
    .unwrap();
    assert!(
        prepared.placement.collar_px > 500,
        "collar {} px",
        prepared.placement.collar_px
    );
    let s = prepared.scene.as_ref().expect("a necklace");
    let (out, _) = renderer().rasterizer().render(&p.photo, s).unwrap();
    dump(&out, "necklace_gh");
    // Chain samples on the white shirt collar (bright, grey) under the chin.
    let (ids, _) = cpu_ids(s);
    let [x0, y0, w, _] = s.roi;
    let ww = (w * s.ss) as usize;
    let plane = ids.len() / 2;
    // The collar's zone: from the chin down half a face height (the shirt's front further
    // down, under the tie, is not the collar).
    let chin_y = face.landmarks[152][1];
    let below = chin_y + 0.5 * (chin_y - face.landmarks[10][1]);
    let (mut on_collar, mut drawn) = (0, 0);
    let mut overlay = p.photo.clone();
    for (k, &id) in ids[..plane].iter().enumerate() {
        if id == u32::MAX {
            continue;
        }
        drawn += 1;
        let (x, y) = (x0 + (k % ww) as u32 / s.ss, y0 + (k / ww) as u32 / s.ss);
        let px = p.photo.get_pixel(x, y);
        let (mx, mn) = (px[0].max(px[1]).max(px[2]), px[0].min(px[1]).min(px[2]));
        if luminance(px) > 185.0 && mx - mn < 40 && (y as f32) > chin_y && (y as f32) < below {
            on_collar += 1;
            overlay.put_pixel(x, y, Rgba([255, 0, 0, 255]));
        }
    }
    dump(&overlay, "necklace_gh_on_collar");
    assert!(drawn > 500, "{drawn} chain samples drawn");
    // A grey-scale photo cannot tell skin from cloth: nothing is hidden.
    let grey_photo = portrait("camera.png");
    let q = renderer().see(&grey_photo, Jewelry.needs()).unwrap();
    let grey_necklace = jewelry::prepare(
        &q.photo,
        &q.face.as_ref().expect("a face").face,
        q.body.as_ref(),
        &product,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        grey_necklace.placement.collar_px, 0,
        "camera.png is grey-scale"
    );
    // Drawn over the collar, 74 samples lie on it; hidden under it, the chain's anti-aliased
    // edges leave about 15 (31 with the drape shortened to the chain's 42 cm).
    assert!(
        on_collar <= 35,
        "{on_collar} of {drawn} chain samples lie on the white collar"
    );
}
