//! Shoes on real photos (issues #30 item 4, #31 item 4): both feet of a walking woman wear
//! the product, and where the old shoes were and the new ones do not cover, the photo shows
//! neither blocks (the straight axis-aligned steps a pyramid fill leaves) nor slivers of the
//! old sole.
//!
//! The photos and products are the kept-back real inputs (`../shared/testdata` beside the
//! workspace, or `VTO_TESTDATA`); without them or the models each test prints why it skips.

mod grain;

use crate::support::{models_dir, px, renderer, testdata};

use glam::Vec2;
use image::RgbaImage;
use vto_render::gpu::GpuContext;
use vto_render::product::{self, Product};
use vto_render::raster::Rasterizer;
use vto_render::tryon::shoes::{self, ShoesPlacement};
use vto_render::tryon::{Needs, Options, Placed};

const WALKING: &str = "fullbody_couple_walking_dog_field_apache2.jpg";
const HIKER: &str = "fullbody_woman_back_view_hiking_mountains_unsplash.jpg";
const DUNES: &str = "fullbody_woman_dress_sand_dunes_bw_pexels.jpg";
const HUGGING: &str = "fullbody_woman_standing_hugging_dog_grass_cc0.jpg";
const SKIER: &str = "fullbody_woman_skiing_beanie_sunglasses_ccby.jpg";

/// The real photo `name` and product `product`, or `None` (and why, printed).
fn inputs(name: &str, product: &str) -> Option<(RgbaImage, Product)> {
    if !models_dir().join("pose_landmark_full.tflite").is_file() {
        eprintln!(
            "skipped: no models in {} (scripts/fetch-models.sh)",
            models_dir().display()
        );
        return None;
    }
    let person = testdata("people").join(name);
    let model = testdata("products").join(product);
    let (Ok(img), Ok(bytes)) = (image::open(&person), std::fs::read(&model)) else {
        eprintln!(
            "skipped: {} or {} not readable; the real inputs live in ../shared/testdata beside \
             the workspace, or set VTO_TESTDATA",
            person.display(),
            model.display()
        );
        return None;
    };
    let product = product::load(&bytes).unwrap_or_else(|e| panic!("{product}: {e}"));
    Some((img.to_rgba8(), product))
}

/// One shoe try-on, the contact shadow off (so every changed pixel of the prepared photo is
/// the old shoes' fill): the placement, the rendered image and which pixels a new shoe
/// covers (any sample, grown by one pixel for the anti-aliased outline).
struct Run {
    photo: RgbaImage,
    body: vto_render::vision::Body,
    placed: Placed<ShoesPlacement>,
    image: RgbaImage,
    covered: Vec<bool>,
}

/// The body vision pass on `photo` (what the shoes need).
fn body_seen(photo: &RgbaImage) -> vto_render::tryon::Person {
    renderer()
        .see(
            photo,
            Needs {
                body: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
}

fn run(photo: RgbaImage, product: &Product) -> Run {
    let person = body_seen(&photo);
    let body = person.body.expect("a body");
    let options = Options {
        shadow_strength: 0.0,
        ..Options::default()
    };
    let placed = shoes::prepare(&photo, &body, product, &options).unwrap_or_else(|e| panic!("{e}"));
    let raster = Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"));
    let scene = placed.scene.as_ref().expect("a scene");
    let (image, _) = raster
        .render(placed.photo.as_ref().expect("a photo"), scene)
        .expect("render");
    let (ids, _) = raster.ids(scene).expect("ids");
    // VTO_SHOES_DUMP=DIR keeps the prepared photo and the render for a person to look at.
    if let Some(dir) = std::env::var_os("VTO_SHOES_DUMP") {
        let n = photo.width() * 100_000 + photo.height();
        let dir = std::path::PathBuf::from(dir);
        let _ = placed
            .photo
            .as_ref()
            .unwrap()
            .save(dir.join(format!("{n}-prepared.png")));
        let _ = image.save(dir.join(format!("{n}-render.png")));
    }
    let (w, h) = photo.dimensions();
    let [x0, y0, rw, rh] = scene.roi;
    let ss = scene.ss;
    let mut hit = vec![false; (w * h) as usize];
    for y in 0..rh * ss {
        for x in 0..rw * ss {
            if ids[(y * rw * ss + x) as usize] != u32::MAX {
                hit[((y0 + y / ss) * w + x0 + x / ss) as usize] = true;
            }
        }
    }
    let covered = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            (-1..=1).any(|dy| {
                (-1..=1).any(|dx| {
                    let (xx, yy) = (x + dx, y + dy);
                    xx >= 0
                        && yy >= 0
                        && xx < i64::from(w)
                        && yy < i64::from(h)
                        && hit[(yy * i64::from(w) + xx) as usize]
                })
            })
        })
        .collect();
    Run {
        photo,
        body,
        placed,
        image,
        covered,
    }
}

fn luma(img: &RgbaImage, x: u32, y: u32) -> f32 {
    let p = img.get_pixel(x, y).0;
    0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2])
}

/// The longest straight axis-aligned step inside `region` of `img` (pixels): a run of
/// neighbouring pixel pairs across which the luma steps by ≥ 10 the same way, while along
/// the run both sides stay flat (within 4) — the edge of a block of constant colour, which
/// a photo's texture (grass, gravel, sand) does not draw.
fn longest_block_edge(img: &RgbaImage, region: &[bool]) -> usize {
    let (w, h) = img.dimensions();
    let inr = |x: u32, y: u32| region[(y * w + x) as usize];
    let mut best = 0;
    for vertical in [false, true] {
        // Lines along which the run goes; the step is across them.
        let (lines, len) = if vertical { (w - 1, h) } else { (h - 1, w) };
        for l in 0..lines {
            let at = |t: u32| if vertical { (l, t) } else { (t, l) };
            let across = |t: u32| if vertical { (l + 1, t) } else { (t, l + 1) };
            let (mut run, mut sign) = (0usize, 0.0f32);
            for t in 0..len {
                let (a, b) = (at(t), across(t));
                let ok = inr(a.0, a.1) && inr(b.0, b.1);
                let step = luma(img, b.0, b.1) - luma(img, a.0, a.1);
                let flat = t == 0 || {
                    let (pa, pb) = (at(t - 1), across(t - 1));
                    (luma(img, a.0, a.1) - luma(img, pa.0, pa.1)).abs() <= 4.0
                        && (luma(img, b.0, b.1) - luma(img, pb.0, pb.1)).abs() <= 4.0
                };
                if ok && step.abs() >= 10.0 && (run == 0 || (flat && step.signum() == sign)) {
                    run += 1;
                    sign = step.signum();
                } else if ok && step.abs() >= 10.0 {
                    run = 1;
                    sign = step.signum();
                } else {
                    run = 0;
                }
                best = best.max(run);
            }
        }
    }
    best
}

/// A colour palette: the mean colours of the 16-level-per-channel cells holding ≥ 1 % of
/// `colours`.
fn palette(colours: &[[f32; 3]]) -> Vec<[f32; 3]> {
    let mut cells = std::collections::BTreeMap::<[u8; 3], ([f32; 3], usize)>::new();
    for c in colours {
        let e = cells
            .entry(c.map(|v| (v as u8) >> 4))
            .or_insert(([0.0; 3], 0));
        for (sum, v) in e.0.iter_mut().zip(c) {
            *sum += v;
        }
        e.1 += 1;
    }
    let least = (colours.len() / 100).max(1);
    cells
        .into_values()
        .filter(|(_, n)| *n >= least)
        .map(|(s, n)| s.map(|v| v / n as f32))
        .collect()
}

fn nearest(palette: &[[f32; 3]], c: [f32; 3]) -> f32 {
    palette
        .iter()
        .map(|p| ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt())
        .fold(f32::MAX, f32::min)
}

fn seg_dist(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// Pixels of the old shoes' colours (unlike the floor) left where no new shoe covers, and
/// how many the photo had there. The old shoes' colours: those within 2.5 cm of a foot's
/// heel → toe segment (below its ankle) that are more than 40 from every colour of the
/// floor 9–13 cm from it and of the leg (within 2 cm of ankle → knee, 4 cm above the ankle
/// and up: a sock or hem continued down is not the old shoe); counted within 7 cm of the
/// segment.
fn old_shoe_left(r: &Run) -> (usize, usize) {
    let s = r.placed.placement.frame.px_per_cm;
    let (w, h) = r.photo.dimensions();
    let (mut core, mut ring, mut leg) = (Vec::new(), Vec::new(), Vec::new());
    let feet: Vec<_> = r.placed.placement.feet.iter().map(|f| &f.pose).collect();
    let near = |p: Vec2| {
        feet.iter()
            .filter(|f| p.y >= f.ankle_px.y)
            .map(|f| seg_dist(p, f.heel_px, f.toe_px))
            .fold(f32::MAX, f32::min)
    };
    for y in 0..h {
        for x in 0..w {
            let p = Vec2::new(x as f32, y as f32);
            let d = near(p) / s;
            let c = px(&r.photo, p).unwrap();
            if d <= 2.5 {
                core.push(c);
            } else if (9.0..=13.0).contains(&d) {
                ring.push(c);
            }
            let on_leg = feet.iter().any(|f| {
                f.knee_px.is_some_and(|k| {
                    seg_dist(p, f.ankle_px, k) <= 2.0 * s && p.distance(f.ankle_px) >= 4.0 * s
                })
            });
            if on_leg {
                leg.push(c);
            }
        }
    }
    let (floor, leg) = (palette(&ring), palette(&leg));
    let unlike = |c: [f32; 3]| nearest(&floor, c) > 40.0 && nearest(&leg, c) > 40.0;
    let shoe: Vec<[f32; 3]> = palette(&core).into_iter().filter(|c| unlike(*c)).collect();
    let is_old = |c: [f32; 3]| nearest(&shoe, c) < 20.0 && unlike(c);
    let (mut before, mut after) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let p = Vec2::new(x as f32, y as f32);
            if r.covered[(y * w + x) as usize] || near(p) / s > 7.0 {
                continue;
            }
            before += usize::from(is_old(px(&r.photo, p).unwrap()));
            after += usize::from(is_old(px(&r.image, p).unwrap()));
        }
    }
    (after, before)
}

/// Regression (#30 item 4): on the walking woman both feet — the raised back foot too —
/// wear the new shoe: each foot's heel → toe is covered by a shoe and mostly changed.
#[test]
fn both_feet_of_the_walking_woman_wear_the_shoe() {
    let Some((photo, product)) = inputs(WALKING, "shoe_sneaker_hyper_specgloss_gabrieldesk.glb")
    else {
        return;
    };
    let r = run(photo, &product);
    let p = &r.placed.placement;
    let sides: Vec<&str> = p.feet.iter().map(|f| f.pose.side.name()).collect();
    assert_eq!(sides, ["left", "right"], "hidden: {:?}", p.hidden);
    let s = p.frame.px_per_cm;
    let (w, _) = r.photo.dimensions();
    for f in &p.feet {
        let (a, b) = (f.pose.heel_px, f.pose.toe_px);
        let (mut n, mut changed, mut covered) = (0, 0, 0);
        for (x, y, _) in r.photo.enumerate_pixels() {
            let q = Vec2::new(x as f32, y as f32);
            if seg_dist(q, a, b) > 1.5 * s {
                continue;
            }
            n += 1;
            covered += usize::from(r.covered[(y * w + x) as usize]);
            let (c0, c1) = (px(&r.photo, q).unwrap(), px(&r.image, q).unwrap());
            changed += usize::from((0..3).any(|k| (c0[k] - c1[k]).abs() > 40.0));
        }
        let foot = f.pose.side.name();
        // Three quarters at least: the raised back foot's shoe, pitched about its toe, covers
        // 80 % of its band (measured), the front foot's all of it.
        assert!(covered * 4 >= n * 3, "{foot}: {covered} of {n} covered");
        // A third at least: the product has white parts, like the old white shoes.
        assert!(changed * 3 >= n, "{foot}: {changed} of {n} changed");
    }
    // The back foot is raised (heel up) and says so.
    let meta = shoes::metadata(&r.placed, &Default::default());
    let placed: Vec<&str> = meta["feet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["placed"].as_str().unwrap_or("?"))
        .collect();
    assert!(placed.contains(&"raised_heel"), "{meta}");
}

/// Where the old shoes were and the new ones do not cover on `names`: the failures (block
/// edges as long as 1.5 cm, old-shoe colour left, too little filled to judge). Every changed
/// pixel of the prepared photo (the contact shadow off) is the old shoes' fill.
fn fill_failures(names: &[&str]) -> Vec<String> {
    let mut failures = Vec::new();
    for name in names {
        let Some((photo, product)) = inputs(name, "shoe_sneaker_rtfkt_gabrieldesk.glb") else {
            return failures;
        };
        let r = run(photo, &product);
        let prepared = r.placed.photo.as_ref().unwrap();
        let (w, h) = r.photo.dimensions();
        let region: Vec<bool> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                !r.covered[i as usize] && prepared.get_pixel(x, y) != r.photo.get_pixel(x, y)
            })
            .collect();
        let filled = region.iter().filter(|b| **b).count();
        let s = r.placed.placement.frame.px_per_cm;
        // A block edge: as long as a centimetre and a half, at least 6 px.
        let longest = longest_block_edge(&r.image, &region);
        let limit = (1.5 * s).max(6.0);
        let (after, before) = old_shoe_left(&r);
        eprintln!(
            "{name}: {filled} filled px show; longest block edge {longest} px (limit {limit:.1}); \
             old-shoe pixels uncovered {after} (the photo had {before})"
        );
        if filled <= 50 {
            failures.push(format!("{name}: only {filled} filled pixels show"));
        }
        if longest as f32 >= limit {
            failures.push(format!("{name}: a block edge {longest} px long"));
        }
        // At most 5 % of what the photo had there, or 3 px: on the walking woman 2 px of her
        // front leg's white sock above its cut stay since the raised back foot's hole no
        // longer takes the front shin (it took the jeans with it, filled as a grey patch);
        // her feet are ~20 px long, and which patches the fill copies beside them moves the
        // count between 2 and 8 (3 with the converged smooth fill; looked at: no old sole
        // shows, the pixels are the sock's).
        if after * 20 > before.max(60) {
            failures.push(format!("{name}: {after} old-shoe pixels left of {before}"));
        }
    }
    failures
}

/// Regression (#30 item 4, #31 item 4): on the walking woman and the back-view hiker, where
/// the old shoes were and the new ones do not cover, neither the blocks of a pyramid fill
/// nor slivers of the old sole show.
#[test]
fn the_old_shoes_leave_no_blocks_and_no_sole() {
    let failures = fill_failures(&[WALKING, HIKER]);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The same on the b/w dunes photo (#30 item 4): the person mask there takes in the legs'
/// shadows on the sand and the hole follows it; filled from anything but the old shoes with
/// the stage's default detail, the filled shadow had a straight step 13 px long (limit 7.9).
/// Filled from the ground only, with its grain, it has none.
#[test]
fn the_old_shoes_leave_no_blocks_on_the_dunes() {
    let failures = fill_failures(&[DUNES]);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Regression (#30): the hiker seen from behind wears her shoes with the toes away from the
/// camera. The pose model puts a hidden toe's keypoint where a foot toward the camera would
/// have it (below the heel), and the body's facing was forced toward the camera for every
/// photo: both shoes pointed at the camera (headings 0.84 and 0.95 toward it), showing
/// their toe caps on a woman walking away. Each shod foot now points within 60° of
/// straight away from the camera and its heel stays at the heel keypoint (her raised back
/// foot, its sole toward the camera, pitched heel up).
#[test]
fn the_hiker_seen_from_behind_wears_her_shoes_toes_away() {
    let Some((photo, product)) = inputs(HIKER, "shoe_sneaker_rtfkt_gabrieldesk.glb") else {
        return;
    };
    let person = body_seen(&photo);
    let body = person.body.as_ref().expect("a body");
    assert!(shoes::feet::seen_from_behind(body), "seen from behind");
    // The woman on the dunes faces the camera though the pose model swaps her shoulders' and
    // hips' sides: her face's keypoints say frontal.
    if let Some((dunes, _)) = inputs(DUNES, "shoe_sneaker_rtfkt_gabrieldesk.glb") {
        let seen = body_seen(&dunes);
        let body = seen.body.as_ref().expect("a body");
        assert!(!shoes::feet::seen_from_behind(body), "the dunes: frontal");
    }
    let r = run(photo, &product);
    let p = &r.placed.placement;
    assert!(!p.feet.is_empty(), "hidden: {:?}", p.hidden);
    for f in &p.feet {
        let foot = f.pose.side.name();
        assert!(
            f.pose.heading.z > 0.5,
            "{foot}: heading {:?} (yaw {:.0}°) is not away from the camera",
            f.pose.heading,
            f.pose.yaw_deg()
        );
        let heel = p.frame.camera.project(f.pose.heel);
        assert!(
            (heel.x - f.pose.heel_px.x).abs() < 2.0 * p.frame.px_per_cm,
            "{foot}: the shoe's heel at x {:.0}, the heel keypoint at {:.0}",
            heel.x,
            f.pose.heel_px.x
        );
    }
}

/// Regression (#30 item 4): on the b/w dunes photo each shoe stands under its own leg. The
/// pose model put both ankles 3.5–4 cm inside the legs (the bare feet sunk in the sand), and
/// both shoes stood together between the legs: the left shoe's heel 16 px (3 cm) from the
/// centre of its 50 px shin, on its inner edge (measured on the code before the change). Each shoe's heel (its floor point, projected) now lies within a quarter
/// of its shin's width of the shin's centre, the shin measured on the person mask 10 cm
/// above the ankle keypoint the pose model gave.
#[test]
fn each_shoe_on_the_dunes_stands_under_its_leg() {
    let Some((photo, product)) = inputs(DUNES, "shoe_sneaker_rtfkt_gabrieldesk.glb") else {
        return;
    };
    let r = run(photo, &product);
    let p = &r.placed.placement;
    let s = p.frame.px_per_cm;
    let mask = r.body.mask.as_ref().expect("a person mask");
    assert_eq!(p.feet.len(), 2, "hidden: {:?}", p.hidden);
    for f in &p.feet {
        let [_, _, ankle, _, _] = f.pose.side.keypoints();
        let k = r.body.keypoints[ankle];
        let (l, rr) = mask
            .run_across_row(
                (k.y - 10.0 * s).round() as i64,
                k.x.round() as i64,
                (2.0 * s).ceil() as i64,
            )
            .map(|(l, r)| (l as f32, r as f32))
            .expect("the shin in the mask");
        let (centre, width) = ((l + rr) / 2.0, rr - l + 1.0);
        let heel = p.frame.camera.project(f.pose.heel);
        let foot = f.pose.side.name();
        eprintln!(
            "{foot}: shin {l:.0}–{rr:.0} (centre {centre:.0}), heel at {:.0}, footprint {:?}",
            heel.x, f.footprint_px
        );
        assert!(
            (heel.x - centre).abs() <= 0.25 * width,
            "{foot}: the shoe's heel at x {:.0}, the shin {l:.0}–{rr:.0}",
            heel.x
        );
    }
}

/// Regression (#30 item 4, the grey patch the lead saw): on the walking woman the raised
/// back foot's hole took the front leg's jeans between the two ankles (they lie within
/// reach of the back foot's heel → toe), and the fill painted them over as a grey patch
/// beside the front shoe (all of those pixels changed). Now no more than a fifth of the front
/// shin's pixels (the ring grown through the old shoe's colour may take a white sock's or
/// the mask edge's; 5 of 44 measured) between the back
/// ankle and 6 cm above the front ankle (the highest the front foot's own old shoe may be
/// cut from, `old_shoe::old_shoe_top`) change (within 1.5 cm of the knee → ankle axis, the
/// person mask's; the contact shadow off, so every change is the fill).
#[test]
fn the_back_foots_hole_leaves_the_front_shin_alone() {
    let Some((photo, product)) = inputs(WALKING, "shoe_sneaker_rtfkt_gabrieldesk.glb") else {
        return;
    };
    let r = run(photo, &product);
    let p = &r.placed.placement;
    let s = p.frame.px_per_cm;
    let kp = |i: usize| Vec2::new(r.body.keypoints[i].x, r.body.keypoints[i].y);
    // Knee and ankle of each leg; the front foot is the lower ankle.
    let (front, back) = if kp(27).y > kp(28).y {
        ((kp(25), kp(27)), kp(28))
    } else {
        ((kp(26), kp(28)), kp(27))
    };
    let mask = r.body.mask.as_ref().expect("a person mask");
    let prepared = r.placed.photo.as_ref().unwrap();
    let (w, _) = r.photo.dimensions();
    let (mut n, mut changed) = (0, 0);
    for (x, y, c) in r.photo.enumerate_pixels() {
        let q = Vec2::new(x as f32, y as f32);
        let on_shin = q.y >= back.y
            && q.y < front.1.y - 6.0 * s
            && seg_dist(q, front.0, front.1) <= 1.5 * s
            && mask.data[(y * w + x) as usize] >= 0.5;
        if on_shin {
            n += 1;
            changed += usize::from(prepared.get_pixel(x, y) != c);
        }
    }
    eprintln!("front shin: {changed} of {n} pixels changed");
    assert!(n >= 10, "only {n} front-shin pixels");
    assert!(
        changed * 5 <= n,
        "{changed} of {n} front-shin pixels changed"
    );
}
