//! The same product in any convention lands in the same place: every sample product and
//! every corpus product that loads (`../shared/testdata/products`, skipped with a message
//! when missing) is re-exported under each of the 24 proper axis rotations — wrapped in one
//! root node with that matrix — reloaded, and placed by its category's
//! fit (the cheap path every render takes before the rasterizer: the canonical pose, the
//! scale and the anchor, with a fixed head / finger). The placed points (cm, anchor at the
//! origin) must match the original's: centroid, box and second moments within 3 % of the
//! product's size, except for turns about the vertical axis when the pose says the shape
//! cannot tell (`yaw_free`). The even rotations are also tried in the units × 100 or × 1000
//! (m → cm → mm) and 3 × the product's size away from the origin (reported, not asserted:
//! units and origins are the categories' fits). A table of passes per rotation and product
//! is printed; the test fails when a sample whose up and front the shape reads lands
//! elsewhere under a rotation, or when fewer rotations pass than the floors below.

use vto_render::math::{Mat3, Vec3};
use vto_render::product::pose::{self, Pose, PoseCategory, PoseSource};
use vto_render::product::write::{write_glb_with_root, GlbRoot};
use vto_render::product::{self, Product};
use vto_render::samples::product::{
    eyewear::SampleFrame, hats::SampleHat, jewelry::SampleJewel, shoes::SampleShoe,
};
use vto_render::tryon::eyewear::fit_product;
use vto_render::tryon::hats::fit::read_model;
use vto_render::tryon::jewelry::{self, hand::inner_radius, kind::kind_of};
use vto_render::tryon::shoes::model;

/// The category a product is placed as.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cat {
    Eyewear,
    Hat,
    Shoe,
    Jewel,
}

/// The most triangles kept of a corpus model (an even stride), so the test runs in seconds.
const MAX_TRIANGLES: usize = 1500;

/// `product` with at most `max` triangles (every n-th), its vertices compacted, textures
/// dropped (placement does not read them).
fn decimate(product: &Product, max: usize) -> Product {
    let total = product.triangle_count().max(1);
    let stride = total.div_ceil(max).max(1);
    let mut out = product.clone();
    out.textures.clear();
    for m in &mut out.materials {
        m.base_color_texture = None;
    }
    let mut i = 0usize;
    for p in &mut out.primitives {
        let mut map = vec![u32::MAX; p.positions.len()];
        let (mut pos, mut nor, mut uv, mut idx) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut uv1, mut rgba) = (Vec::new(), Vec::new());
        for t in p.indices.chunks_exact(3) {
            i += 1;
            if i % stride != 0 {
                continue;
            }
            for &v in t {
                let v = v as usize;
                if map[v] == u32::MAX {
                    map[v] = pos.len() as u32;
                    pos.push(p.positions[v]);
                    nor.push(p.normals.get(v).copied().unwrap_or([0.0, 0.0, 1.0]));
                    uv.push(p.uvs.get(v).copied().unwrap_or([0.0; 2]));
                    uv1.extend(p.uvs1.get(v).copied());
                    rgba.extend(p.colors.get(v).copied());
                }
                idx.push(map[v]);
            }
        }
        p.positions = pos;
        p.normals = nor;
        p.uvs = uv;
        p.uvs1 = uv1;
        p.colors = rgba;
        p.indices = idx;
    }
    out.primitives.retain(|p| !p.indices.is_empty());
    out
}

/// `product` written as GLB under one root node with `matrix` (column-major), reloaded.
fn reexport(product: &Product, matrix: Option<[f32; 16]>) -> Product {
    let meshes: Vec<_> = product
        .primitives
        .iter()
        .map(|p| (p.clone(), [0.0f32; 3]))
        .collect();
    let root = GlbRoot {
        name: "variant".into(),
        extras: serde_json::Value::Null,
        matrix,
    };
    let mut materials = product.materials.clone();
    for m in &mut materials {
        m.base_color_texture = None;
    }
    let glb = write_glb_with_root(&meshes, &materials, &[], &root);
    let mut p = product::load(&glb).expect("a re-exported product loads");
    // Keep what the file said about itself (kind, names): only the geometry moves.
    p.meta = product.meta.clone();
    p
}

/// The 24 proper axis rotations.
fn rotations() -> Vec<Mat3> {
    let mut out = Vec::new();
    for up in pose::Dir::ALL {
        for front in pose::Dir::ALL {
            if front.axis() == up.axis() {
                continue;
            }
            let x = up.vec().cross(front.vec());
            out.push(Mat3::from_cols(x, up.vec(), front.vec()));
        }
    }
    out
}

/// The placed points (cm, anchor at the origin) and the pose.
fn place(cat: Cat, p: &Product) -> Option<(Vec<Vec3>, Pose)> {
    let pts = |p: &Product| -> Vec<Vec3> {
        p.primitives
            .iter()
            .flat_map(|q| &q.positions)
            .map(|v| Vec3::from(*v))
            .collect()
    };
    match cat {
        Cat::Eyewear => {
            let pose = pose::infer(p, PoseCategory::Eyewear);
            let c = pose.apply(p);
            let (_, k, origin) = fit_product(&c, 14.0);
            Some((
                pts(&c).into_iter().map(|q| (q - origin) * k).collect(),
                pose,
            ))
        }
        Cat::Hat => {
            let pose = pose::infer(p, PoseCategory::Hat);
            let c = pose.apply(p);
            let m = read_model(&c)?;
            let k = 15.5 / m.breadth.max(1e-9);
            let kz = (19.5 / m.length.max(1e-9)).clamp(0.9 * k, 1.25 * k);
            let s = Vec3::new(k, k, kz);
            Some((
                pts(&c).into_iter().map(|q| (q - m.origin) * s).collect(),
                pose,
            ))
        }
        Cat::Shoe => {
            let f = model::fit(p);
            Some((pts(p).into_iter().map(|q| f.point(q)).collect(), f.pose))
        }
        Cat::Jewel => {
            let kind = kind_of(p);
            let (c, pose) = jewelry::canonical(p, kind.0);
            if kind.0.is_hand_worn() {
                let k = 1.0 / inner_radius(&c)?;
                Some((pts(&c).into_iter().map(|q| q * k).collect(), pose))
            } else {
                let f = jewelry::fit(&c, kind.0);
                Some((
                    pts(&c).into_iter().map(|q| (q - f.origin) * f.k).collect(),
                    pose,
                ))
            }
        }
    }
}

/// Centroid, box and second moments of placed points.
#[derive(Debug, Clone, Copy)]
struct Signature {
    centroid: Vec3,
    lo: Vec3,
    hi: Vec3,
    moments: [f32; 6],
}

fn signature(pts: &[Vec3]) -> Signature {
    let n = pts.len().max(1) as f32;
    let centroid = pts.iter().copied().sum::<Vec3>() / n;
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    let mut m = [0.0f32; 6];
    for p in pts {
        lo = lo.min(*p);
        hi = hi.max(*p);
        let d = *p - centroid;
        for (k, v) in [
            d.x * d.x,
            d.y * d.y,
            d.z * d.z,
            d.x * d.y,
            d.y * d.z,
            d.x * d.z,
        ]
        .into_iter()
        .enumerate()
        {
            m[k] += v / n;
        }
    }
    Signature {
        centroid,
        lo,
        hi,
        moments: m,
    }
}

/// How far `b` is from `a`, relative to `a`'s size (0: the same placement).
fn distance(a: &Signature, b: &Signature) -> f32 {
    let size = (a.hi - a.lo).length().max(1e-6);
    let d = [
        (a.centroid - b.centroid).length(),
        (a.lo - b.lo).length(),
        (a.hi - b.hi).length(),
    ]
    .into_iter()
    .fold(0.0f32, f32::max)
        / size;
    let dm = a
        .moments
        .iter()
        .zip(&b.moments)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max)
        / (size * size);
    d.max(10.0 * dm)
}

/// The tolerance of [`distance`].
const TOLERANCE: f32 = 0.03;

struct Case {
    name: String,
    cat: Cat,
    product: Product,
    sample: bool,
}

fn samples() -> Vec<Case> {
    let mut out = Vec::new();
    for f in SampleFrame::ALL {
        out.push((f.name(), Cat::Eyewear, f.product()));
    }
    for h in SampleHat::ALL {
        out.push((h.name(), Cat::Hat, h.product()));
    }
    for s in [SampleShoe::Sneaker, SampleShoe::Boot] {
        out.push((s.name(), Cat::Shoe, s.product()));
    }
    for j in SampleJewel::ALL {
        out.push((j.name(), Cat::Jewel, j.product()));
    }
    out.into_iter()
        .map(|(n, cat, product)| Case {
            name: format!("sample:{n}"),
            cat,
            product,
            sample: true,
        })
        .collect()
}

fn corpus() -> Vec<Case> {
    let dir = crate::support::testdata("products");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "SKIPPED the corpus: {} is missing (the real-product corpus sits beside the repo)",
            dir.display()
        );
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".glb") || n.ends_with(".gltf") || n.ends_with(".obj"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let cat = if n.starts_with("glasses") || n.starts_with("sunglasses") {
            Cat::Eyewear
        } else if n.starts_with("hat") {
            Cat::Hat
        } else if n.starts_with("shoe") {
            Cat::Shoe
        } else {
            Cat::Jewel
        };
        let Ok(bytes) = std::fs::read(dir.join(&n)) else {
            continue;
        };
        match product::load(&bytes) {
            Ok(p) => out.push(Case {
                name: n.trim_end_matches(".glb").to_string(),
                cat,
                product: decimate(&p, MAX_TRIANGLES),
                sample: false,
            }),
            Err(e) => println!("skipped {n}: {} (issue #29)", e.code()),
        }
    }
    out
}

#[test]
fn placement_is_the_same_in_every_axis_convention_unit_and_origin() {
    let started = std::time::Instant::now();
    let rots = rotations();
    let mut cases = samples();
    cases.extend(corpus());
    let mut table = Vec::new();
    let (mut corpus_pass, mut corpus_total) = (0usize, 0usize);
    let (mut sample_pass, mut sample_total) = (0usize, 0usize);
    let mut sample_failures = Vec::new();
    for case in &cases {
        let original = reexport(&case.product, None);
        let Some((base_pts, base_pose)) = place(case.cat, &original) else {
            println!("{}: cannot be placed", case.name);
            continue;
        };
        let base = signature(&base_pts);
        let size = {
            let (lo, hi) = original.bounds();
            (Vec3::from(hi) - Vec3::from(lo)).length()
        };
        let mut row = String::new();
        let mut units_row = String::new();
        let mut worst = 0.0f32;
        for (i, r) in rots.iter().enumerate() {
            // The moved variants on every other rotation (run time).
            for moved in [false, true].into_iter().filter(|m| !m || i % 2 == 0) {
                // Moved: the units × 100 or × 1000 (m → cm → mm) by the rotation's index, and
                // on odd ones the origin 3 × the size away.
                let scale = if moved {
                    [1.0f32, 100.0, 1000.0][i % 3]
                } else {
                    1.0
                };
                let far = if moved && i % 4 == 2 {
                    Vec3::new(3.0, -2.1, 1.2) * size * scale
                } else {
                    Vec3::ZERO
                };
                let c = (*r * scale).to_cols_array();
                let matrix = [
                    c[0], c[1], c[2], 0.0, c[3], c[4], c[5], 0.0, c[6], c[7], c[8], 0.0, far.x,
                    far.y, far.z, 1.0,
                ];
                let variant = reexport(&case.product, Some(matrix));
                let ok = place(case.cat, &variant).is_some_and(|(pts, pose)| {
                    let yaw_free = pose.yaw_free || base_pose.yaw_free;
                    let turns = if yaw_free { 4 } else { 1 };
                    let best = (0..turns)
                        .map(|t| {
                            let rot = Mat3::from_rotation_y(t as f32 * std::f32::consts::FRAC_PI_2);
                            let turned: Vec<Vec3> = pts.iter().map(|q| rot * *q).collect();
                            distance(&base, &signature(&turned))
                        })
                        .fold(f32::MAX, f32::min);
                    if !moved {
                        worst = worst.max(best.min(9.99));
                    }
                    best <= TOLERANCE
                });
                if moved {
                    units_row.push(if ok { '#' } else { '.' });
                    continue;
                }
                row.push(if ok { '#' } else { '.' });
                let read = |a: &pose::AxisChoice| {
                    matches!(a.source, PoseSource::Shape | PoseSource::Extras)
                };
                let from_shape =
                    read(&base_pose.up) && read(&base_pose.front) && !base_pose.yaw_free;
                if case.sample && from_shape && !ok {
                    sample_failures.push(format!("{} rotation {i}", case.name));
                }
                if !case.sample {
                    corpus_total += 1;
                    corpus_pass += usize::from(ok);
                }
                if case.sample {
                    sample_total += 1;
                    sample_pass += usize::from(ok);
                }
            }
        }
        let passed = row.chars().filter(|c| *c == '#').count();
        let moved = units_row.chars().filter(|c| *c == '#').count();
        table.push(format!(
            "{:<40} {row} {passed:>2}/24 | {units_row:<12} {moved:>2}/12 | worst {worst:.3}  up {}:{} front {}:{}{}",
            case.name,
            base_pose.up.dir.as_str(),
            base_pose.up.source.as_str(),
            base_pose.front.dir.as_str(),
            base_pose.front.source.as_str(),
            if base_pose.yaw_free { " (yaw free)" } else { "" }
        ));
    }
    println!(
        "product | rotations 0..23 in the file's units and origin (# = placed as the original, \
         within {TOLERANCE}) | the even rotations with the units × 1, × 100, × 1000 \
         (index mod 3) and the origin far away (index mod 4 = 2) | the worst rotation's \
         distance; the pose read"
    );
    for line in &table {
        println!("{line}");
    }
    println!(
        "rotations: samples {sample_pass}/{sample_total}, corpus {corpus_pass}/{corpus_total} \
         pass; {:.1} s",
        started.elapsed().as_secs_f32()
    );
    // A sample whose up and front the shape reads lands the same under every rotation.
    assert!(
        sample_failures.is_empty(),
        "sample variants placed elsewhere: {sample_failures:?}"
    );
    assert!(
        sample_pass * 100 >= sample_total * SAMPLE_FLOOR_PERCENT,
        "only {sample_pass}/{sample_total} sample rotations pass"
    );
    if corpus_total > 0 {
        assert!(
            corpus_pass * 100 >= corpus_total * CORPUS_FLOOR_PERCENT,
            "only {corpus_pass}/{corpus_total} corpus rotations pass"
        );
    }
}

/// The least share of corpus rotations that must land as the original (what passes
/// today, rounded down: the failures are in the table and in the note of issue #35).
const CORPUS_FLOOR_PERCENT: usize = 60;
/// The same for the samples.
const SAMPLE_FLOOR_PERCENT: usize = 60;

/// What the corpus's files are (SOURCES.md): kind and the file's axes that are up and front.
#[test]
fn corpus_products_are_read_as_what_they_are() {
    use vto_render::tryon::hats::fit::HatKind;
    use vto_render::tryon::jewelry::kind::JewelryKind;
    let dir = crate::support::testdata("products");
    if !dir.is_dir() {
        println!("SKIPPED: {} is missing", dir.display());
        return;
    }
    let load =
        |n: &str| product::load(&std::fs::read(dir.join(n)).expect("in the corpus")).unwrap();
    for ring in [
        "ring_au48213_muzammilraxa.glb",
        "ring_au50695_muzammilraxa.glb",
        "ring_au50949_ruby_muzammilraxa.glb",
    ] {
        let p = load(ring);
        assert_eq!(kind_of(&p).0, JewelryKind::Ring, "{ring}");
        // The finger along the file's z, the stone on top (+y) goes front.
        let (_, pose) = jewelry::canonical(&p, JewelryKind::Ring);
        assert_eq!(pose.up.dir.axis(), 2, "{ring}");
        assert_eq!(pose.front.dir.as_str(), "+y", "{ring}");
    }
    assert_eq!(
        kind_of(&load("watch_smartwatch_lume.glb")).0,
        JewelryKind::Bracelet
    );
    assert_eq!(
        kind_of(&load("earring_louboutin_mykolalehkyi.glb")).0,
        JewelryKind::Drop
    );
    let hat = |n: &str| {
        let p = load(n);
        let pose = pose::infer(&p, PoseCategory::Hat);
        let m = read_model(&pose.apply(&p)).unwrap();
        (m.kind.0, pose)
    };
    let (kind, pose) = hat("hat_cap_karamellglass_khabib.glb");
    assert_eq!(kind, HatKind::Cap);
    // Its breadth is the crown's (74 units wide), not a strip near the visor's root.
    let p = load("hat_cap_karamellglass_khabib.glb");
    let m = read_model(&pose.apply(&p)).unwrap();
    assert!(m.breadth > 55.0, "breadth {}", m.breadth);
    assert_eq!(pose.front.dir.as_str(), "-x");
    let (kind, pose) = hat("hat_cap_bambam_mykolalehkyi.glb");
    assert_eq!(kind, HatKind::Cap);
    assert_eq!(pose.front.dir.as_str(), "-z");
    let (kind, pose) = hat("hat_western_meerschaum_yalcinaksakal.glb");
    assert_eq!(kind, HatKind::Brimmed);
    // Its origin is the opening's centre at its lowest point, 0.2 mm under the box's
    // bottom: the conventions, not a wall 6 cm up that sank the hat to the eyes.
    let p = load("hat_western_meerschaum_yalcinaksakal.glb");
    let m = read_model(&pose.apply(&p)).unwrap();
    assert!(m.auto_fit.is_none(), "{:?}", m.auto_fit);
    assert_eq!(pose.up.dir.as_str(), "+y");
    for (n, front) in [
        ("shoe_sneaker_rtfkt_gabrieldesk.glb", "+x"),
        ("shoe_boot_odedstein.obj", "+x"),
    ] {
        let f = model::fit(&load(n));
        assert_eq!(f.pose.up.dir.as_str(), "+y", "{n}");
        assert_eq!(f.pose.front.dir.as_str(), front, "{n}");
        assert!((25.0..36.0).contains(&f.length_cm), "{n}: {}", f.length_cm);
    }
    for n in [
        "sunglasses_plastic_bensonruan.glb",
        "sunglasses_sport_b307_bensonruan.glb",
        "glasses_eyeglasses_bensonruan.glb",
        "glasses_ar_concept_props_mykolalehkyi.glb",
    ] {
        let pose = pose::infer(&load(n), PoseCategory::Eyewear);
        assert!(!pose.turns(), "{n}: {:?}", pose.to_json());
    }
}

/// Eyewear exported turned between the file's axes (issue 35, `glasses_round_yaw45`: it
/// rendered as a huge ring): the pose squares it first, so the sample frames turned 20°, 45°
/// and −30° about the vertical are placed as the originals, and
/// the corpus's yaw-45 frame is read about 8 units wide across its front, not as its
/// 9.9-unit diagonal box. The metadata says what was squared.
#[test]
fn eyewear_turned_between_the_axes_is_squared_and_placed_as_the_original() {
    for f in SampleFrame::ALL {
        let mut product = f.product();
        product.meta.other.remove("up");
        product.meta.other.remove("front");
        let original = reexport(&product, None);
        let (base_pts, base_pose) = place(Cat::Eyewear, &original).expect("placed");
        assert!(base_pose.squared.is_none(), "{}", f.name());
        let base = signature(&base_pts);
        for (turn, deg) in [
            (Mat3::from_rotation_y(20f32.to_radians()), 20.0f32),
            (Mat3::from_rotation_y(45f32.to_radians()), 45.0),
            (Mat3::from_rotation_y((-30f32).to_radians()), -30.0),
        ] {
            let c = turn.to_cols_array();
            let matrix = [
                c[0], c[1], c[2], 0.0, c[3], c[4], c[5], 0.0, c[6], c[7], c[8], 0.0, 0.0, 0.0, 0.0,
                1.0,
            ];
            let variant = reexport(&product, Some(matrix));
            let (pts, pose) = place(Cat::Eyewear, &variant).expect("placed");
            let s = pose
                .squared
                .as_ref()
                .unwrap_or_else(|| panic!("{} turned {deg}°: not squared", f.name()));
            let left = (s.angle_deg + deg).rem_euclid(90.0);
            assert!(
                left.min(90.0 - left) < 1.0,
                "{} turned {deg}°: squared by {}°",
                f.name(),
                s.angle_deg
            );
            let json = pose.to_json();
            assert_eq!(json["turned"], true);
            assert!(json["squared"]["why"].as_str().is_some(), "{json}");
            let d = distance(&base, &signature(&pts));
            assert!(
                d <= TOLERANCE,
                "{} turned {deg}°: placed {d:.3} from the original",
                f.name()
            );
        }
    }
    let dir = crate::support::testdata("products");
    let Ok(bytes) = std::fs::read(dir.join("glasses_round_yaw45_mykolalehkyi.glb")) else {
        println!("SKIPPED the corpus frame: {} is missing", dir.display());
        return;
    };
    let p = product::load(&bytes).unwrap();
    let pose = pose::infer(&p, PoseCategory::Eyewear);
    let s = pose.squared.as_ref().expect("the yaw-45 frame is squared");
    assert_eq!(s.axis.as_str(), "+y");
    assert!((s.angle_deg.abs() - 45.0).abs() < 2.0, "{s:?}");
    let (lo, hi) = pose.apply(&p).bounds();
    let width = hi[0] - lo[0];
    assert!((7.5..8.6).contains(&width), "squared width {width}");
}

/// The direction of least spread of `p`'s surface (area-weighted triangle centroids): a
/// band's hole's axis.
fn least_spread_axis(p: &Product) -> Vec3 {
    let c = vto_render::product::pose::shape::Cloud::of(p).expect("an extent");
    let total: f64 = c.a.iter().map(|a| f64::from(*a)).sum();
    let mean = c.c.iter().zip(&c.a).fold(Vec3::ZERO, |m, (q, a)| {
        m + *q * (f64::from(*a) / total) as f32
    });
    let mut cov = [[0.0f64; 3]; 3];
    for (q, a) in c.c.iter().zip(&c.a) {
        let d = *q - mean;
        for i in 0..3 {
            for j in 0..3 {
                cov[i][j] += f64::from(*a) / total * f64::from(d[i]) * f64::from(d[j]);
            }
        }
    }
    let (_, v) = vto_render::math::symmetric_eigen(cov);
    Vec3::new(v[0][0] as f32, v[0][1] as f32, v[0][2] as f32)
}

#[test]
fn a_watch_tilted_on_all_axes_is_worn_with_the_wrist_through_its_strap() {
    // The Casio watch of the corpus is exported tilted on all axes: read along the file's
    // axes, the wrist ran across its strap and it was drawn as a block across the wrist.
    let path = crate::support::testdata("products").join("watch_casio_tilted_meshopt_lume.glb");
    let Ok(bytes) = std::fs::read(&path) else {
        println!(
            "SKIPPED: {} is missing (the real-product corpus sits beside the repo)",
            path.display()
        );
        return;
    };
    let p = product::load(&bytes).expect("the watch loads");
    let kind = kind_of(&p);
    assert!(kind.0.is_hand_worn(), "{kind:?}");
    let (c, pose) = jewelry::canonical(&p, kind.0);
    // The wrist runs along +Y in the canonical frame: the strap's axis must lie there.
    let axis = least_spread_axis(&c);
    let off = axis.y.abs().clamp(-1.0, 1.0).acos().to_degrees();
    assert!(
        off < 5.0,
        "the strap's axis {axis} is {off:.1}° off the wrist; {pose:?}"
    );
}

/// The area-weighted centroid of a product's see-through (blended) triangles.
fn clear_centroid(p: &Product) -> Option<Vec3> {
    let (mut sum, mut area) = (Vec3::ZERO, 0.0f32);
    for prim in &p.primitives {
        if p.materials[prim.material].alpha_mode != product::AlphaMode::Blend {
            continue;
        }
        for t in prim.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| Vec3::from(prim.positions[t[k] as usize]));
            let w = (b - a).cross(c - a).length() / 2.0;
            sum += (a + b + c) / 3.0 * w;
            area += w;
        }
    }
    (area > 0.0).then(|| sum / area)
}

#[test]
fn every_corpus_watch_shows_its_dial_on_the_back_of_the_wrist() {
    // The dial (the crystal over it) must face canonical +Z, which the wrist's placement
    // turns to the back of the hand. The Casio's strap reaches farther toward its buckle
    // than toward its case: read from the reach alone its dial came out on the side of
    // the wrist.
    let dir = crate::support::testdata("products");
    let mut seen = 0;
    for name in [
        "watch_casio_tilted_meshopt_lume.glb",
        "watch_seiko_meshopt_lume.glb",
        "watch_smartwatch_lume.glb",
        "watch_atlantic_dialup_draco_lume.glb",
    ] {
        let Ok(bytes) = std::fs::read(dir.join(name)) else {
            println!("SKIPPED {name}: the real-product corpus is missing");
            continue;
        };
        let p = product::load(&bytes).expect("the watch loads");
        let kind = kind_of(&p);
        assert!(kind.0.is_hand_worn(), "{name}: {kind:?}");
        let (c, pose) = jewelry::canonical(&p, kind.0);
        let glass = clear_centroid(&c).unwrap_or_else(|| panic!("{name}: no crystal"));
        assert!(
            glass.z > glass.x.hypot(glass.y),
            "{name}: the crystal's centre {glass} is not toward +Z; {:?}",
            pose.front
        );
        seen += 1;
    }
    println!("{seen} watches checked");
}
