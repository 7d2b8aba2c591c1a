//! The product out of a scene: shops export whole scenes (a ground plane, a screen shown in
//! the lenses, a box left from modelling, a stray point, the pair of earrings side by side),
//! and a try-on wants the one product. [`pick`] drops, part by part (a part is a node that
//! places a mesh, [`ProductMeta::parts`]), what is not the product, and says why:
//!
//! 1. **Named**: when `extras.vto.node` names a node, only the parts in its subtree are kept
//!    (the shop's word wins; the rules below are not applied).
//! 2. **No area**: a part whose triangles have no area, or that has vertices and no triangle
//!    (a point or a line exported as degenerate triangles; stray vertices widen the box).
//! 3. **Flat card out of the product**: a part of at most 8 vertices and 4 triangles, all in
//!    one plane (within 5 % of its size), that reaches out of the product's box (the box of the parts of more than 64
//!    vertices) by more than a tenth of its own size: a ground plane, a backdrop, a screen
//!    hanging in front. A card inside the product's box stays (a watch dial drawn on a quad,
//!    a logo decal on a temple, a screen shown in a lens).
//! 4. **Plain box out of the product**: a part of 8 to 64 vertices, every vertex on its own
//!    box's faces, not flat and not a thin bar (its middle side at least a tenth of its
//!    longest), at least a quarter of the product's longest side, reaching out of the
//!    product's box like a card: a modelling cube or a plinth. (A thin low-poly temple or
//!    strap is a bar, and stays.)
//! 5. **Apart**: a part holding under 1 % of the triangles whose box lies clear of the box
//!    of the substantial parts (those of at least 1 %) by more than 10 % of that box's longest
//!    side.
//! 6. **A second copy**: the kept parts are grouped by touching boxes; when the largest group
//!    has copies (groups within 5 % of its triangles and of each box side), only the group
//!    nearest the file's origin stays (a pair of earrings or shoes in one file: one is worn,
//!    the category mirrors or places it itself).
//!
//! A rule never drops the last substantial part: when the rules would leave no triangle, the
//! file is kept whole. OBJ files and built products are one part, so they pass unchanged.
//! Cameras, lights and animations are never drawn (the loader reads meshes only); line and
//! point primitives are skipped by the loader.

use std::borrow::Cow;

use super::{Primitive, Product, ProductMeta};
use crate::math::Vec3;

/// A part [`pick`] left out, and why (for the result metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The part's name ([`super::Part::name`]), after its parent node's (`parent/name`).
    pub part: String,
    /// Which rule dropped it: `not_named`, `no_area`, `flat_card`, `plain_box`,
    /// `apart` or `second_copy`.
    pub why: &'static str,
}

/// The product [`pick`] kept, and what it dropped.
#[derive(Debug, Clone)]
pub struct Picked<'a> {
    /// The product with only its kept parts (borrowed unchanged when nothing was dropped).
    pub product: Cow<'a, Product>,
    /// What was dropped, in part order.
    pub dropped: Vec<Dropped>,
}

/// What one part holds.
#[derive(Debug, Clone)]
struct Stats {
    triangles: usize,
    vertices: usize,
    area: f64,
    lo: [f32; 3],
    hi: [f32; 3],
    /// Every referenced vertex lies on a face of the part's box (in its non-flat axes);
    /// only worked out for parts of at most 64 vertices.
    on_box: bool,
    /// Every referenced vertex lies in one plane (parts of at most 64 vertices).
    planar: bool,
    /// It has vertices, used by a triangle or not (stray vertices still widen the box).
    has_vertices: bool,
}

impl Stats {
    /// Nothing yet: the start of a part's sums (its flags hold until a vertex breaks them)
    /// and of a [`union`] (whose flags are not read).
    const EMPTY: Stats = Stats {
        triangles: 0,
        vertices: 0,
        area: 0.0,
        lo: [f32::MAX; 3],
        hi: [f32::MIN; 3],
        on_box: true,
        planar: true,
        has_vertices: false,
    };

    fn size(&self) -> [f32; 3] {
        [0, 1, 2].map(|k| (self.hi[k] - self.lo[k]).max(0.0))
    }

    fn longest(&self) -> f32 {
        self.size().into_iter().fold(0.0, f32::max)
    }

    /// Whether its middle side is under a tenth of its longest (a bar or a sheet).
    fn is_thin(&self) -> bool {
        let mut s = self.size();
        s.sort_by(f32::total_cmp);
        s[1] < 0.1 * s[2]
    }

    /// How far its box reaches out of `core`'s, as a share of its own longest side.
    fn reach_out_of(&self, core: &Stats) -> f32 {
        let out = (0..3)
            .map(|k| (core.lo[k] - self.lo[k]).max(self.hi[k] - core.hi[k]))
            .fold(0.0, f32::max);
        out / self.longest().max(f32::MIN_POSITIVE)
    }
}

/// Picks the product out of `product`'s scene (see the [module docs](self)).
pub fn pick(product: &Product) -> Picked<'_> {
    let parts = product.meta.parts.len().max(1);
    if parts < 2 {
        return unchanged(product);
    }
    let stats = part_stats(product, parts);
    let mut keep: Vec<Option<&'static str>> = vec![None; parts];
    if let Some(node) = named_node(&product.meta) {
        for (i, part) in product.meta.parts.iter().enumerate() {
            if part.name != node && !part.path.iter().any(|p| *p == node) {
                keep[i] = Some("not_named");
            }
        }
        return finish(product, &stats, keep);
    }
    let total_area: f64 = stats.iter().map(|s| s.area).sum();
    for (i, s) in stats.iter().enumerate() {
        if s.has_vertices && s.area <= 1e-9 * total_area {
            keep[i] = Some("no_area");
        }
    }
    // Cards and boxes are judged against the detailed parts (all parts when none is).
    let detailed = |i: usize| keep[i].is_none() && stats[i].vertices > 64;
    let core = if (0..parts).any(detailed) {
        union((0..parts).filter(|&i| detailed(i)).map(|i| &stats[i]))
    } else {
        union((0..parts).filter(|&i| keep[i].is_none()).map(|i| &stats[i]))
    };
    for (i, s) in stats.iter().enumerate() {
        if keep[i].is_some() || s.triangles == 0 || s.vertices > 64 {
            continue;
        }
        let out = s.reach_out_of(&core) > 0.1;
        if s.vertices <= 8 && s.triangles <= 4 && s.planar {
            keep[i] = out.then_some("flat_card");
        } else if s.vertices >= 8 && s.on_box && !s.planar && !s.is_thin() {
            keep[i] = (out && s.longest() >= 0.25 * core.longest()).then_some("plain_box");
        }
    }
    let triangles: usize = stats.iter().map(|s| s.triangles).sum();
    let substantial: Vec<bool> = (0..parts)
        .map(|i| stats[i].triangles * 100 >= triangles && keep[i].is_none())
        .collect();
    if substantial.contains(&true) {
        let core_box = union((0..parts).filter(|&i| substantial[i]).map(|i| &stats[i]));
        let margin = 0.1 * core_box.longest();
        for i in 0..parts {
            let small = !substantial[i] && stats[i].triangles > 0;
            if keep[i].is_none() && small && !touches(&stats[i], &core_box, margin) {
                keep[i] = Some("apart");
            }
        }
    }
    drop_copies(&stats, &mut keep);
    finish(product, &stats, keep)
}

fn unchanged(product: &Product) -> Picked<'_> {
    Picked {
        product: Cow::Borrowed(product),
        dropped: Vec::new(),
    }
}

/// `extras.vto.node`, when it names a node of the file.
fn named_node(meta: &ProductMeta) -> Option<&str> {
    let node = meta.other.get("node")?.as_str()?;
    meta.parts
        .iter()
        .any(|p| p.name == node || p.path.iter().any(|n| n == node))
        .then_some(node)
}

/// The product without the parts `drop` marks (whole when they would leave no triangle).
fn finish<'a>(
    product: &'a Product,
    stats: &[Stats],
    drop: Vec<Option<&'static str>>,
) -> Picked<'a> {
    let kept: usize = (0..stats.len())
        .filter(|&i| drop[i].is_none())
        .map(|i| stats[i].triangles)
        .sum();
    if kept == 0 || drop.iter().all(Option::is_none) {
        return unchanged(product);
    }
    let dropped = drop
        .iter()
        .enumerate()
        .filter_map(|(i, why)| {
            why.map(|why| {
                let part = &product.meta.parts[i];
                let part = match part.path.last() {
                    Some(parent) => format!("{parent}/{}", part.name),
                    None => part.name.clone(),
                };
                Dropped { part, why }
            })
        })
        .collect();
    let mut picked = product.clone();
    picked
        .primitives
        .retain(|p| drop.get(p.part as usize).is_none_or(Option::is_none));
    Picked {
        product: Cow::Owned(picked),
        dropped,
    }
}

fn part_stats(product: &Product, parts: usize) -> Vec<Stats> {
    let mut stats = vec![Stats::EMPTY; parts];
    for prim in &product.primitives {
        let Some(s) = stats.get_mut(prim.part as usize) else {
            continue;
        };
        s.has_vertices |= !prim.positions.is_empty();
        for t in prim.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| prim.positions[t[k] as usize]);
            let u = [0, 1, 2].map(|k| f64::from(b[k] - a[k]));
            let v = [0, 1, 2].map(|k| f64::from(c[k] - a[k]));
            let n = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            s.area += 0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            s.triangles += 1;
        }
        for p in used_points(prim) {
            s.vertices += 1;
            s.lo = [0, 1, 2].map(|k| s.lo[k].min(p[k]));
            s.hi = [0, 1, 2].map(|k| s.hi[k].max(p[k]));
        }
    }
    // On its box's faces and planar need the part's whole box: a second pass, for the small
    // parts only.
    for prim in &product.primitives {
        let Some(s) = stats.get_mut(prim.part as usize) else {
            continue;
        };
        if s.vertices > 64 {
            s.on_box = false;
            s.planar = false;
            continue;
        }
        let size = s.size();
        let tol = 1e-3 * s.longest();
        let points = used_points(prim);
        for p in &points {
            let on_face = (0..3).any(|k| {
                size[k] > tol && ((p[k] - s.lo[k]).abs() <= tol || (p[k] - s.hi[k]).abs() <= tol)
            });
            s.on_box &= on_face;
        }
        s.planar &= planar(&prim.positions, &prim.indices, &points, 0.05 * s.longest());
    }
    stats
}

/// The positions of `prim` that a triangle uses, once each.
fn used_points(prim: &Primitive) -> Vec<[f32; 3]> {
    let mut used = vec![false; prim.positions.len()];
    for &i in &prim.indices {
        used[i as usize] = true;
    }
    prim.positions
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(p, _)| *p)
        .collect()
}

/// Whether `points` lie within `tol` of the plane of the largest triangle of `indices`.
fn planar(positions: &[[f32; 3]], indices: &[u32], points: &[[f32; 3]], tol: f32) -> bool {
    let normal = indices
        .chunks_exact(3)
        .map(|t| {
            let [a, b, c] = [0, 1, 2].map(|k| Vec3::from(positions[t[k] as usize]));
            (a, (b - a).cross(c - a))
        })
        .max_by(|x, y| x.1.length().total_cmp(&y.1.length()));
    let Some((origin, n)) = normal else {
        return false;
    };
    let n = n.normalize_or_zero();
    points
        .iter()
        .all(|p| (Vec3::from(*p) - origin).dot(n).abs() <= tol)
}

/// The box around `stats`.
fn union<'a>(stats: impl Iterator<Item = &'a Stats>) -> Stats {
    let mut u = Stats::EMPTY;
    for s in stats.filter(|s| s.triangles > 0) {
        u.triangles += s.triangles;
        u.area += s.area;
        for k in 0..3 {
            u.lo[k] = u.lo[k].min(s.lo[k]);
            u.hi[k] = u.hi[k].max(s.hi[k]);
        }
    }
    u
}

/// Whether `a`'s box comes within `margin` of `b`'s.
fn touches(a: &Stats, b: &Stats, margin: f32) -> bool {
    (0..3).all(|k| a.lo[k] <= b.hi[k] + margin && b.lo[k] <= a.hi[k] + margin)
}

/// Rule 6: groups of kept parts by touching boxes; the copies of the largest group but the
/// one nearest the origin are dropped.
fn drop_copies(stats: &[Stats], keep: &mut [Option<&'static str>]) {
    let live: Vec<usize> = (0..stats.len())
        .filter(|&i| keep[i].is_none() && stats[i].triangles > 0)
        .collect();
    let mut group: Vec<usize> = (0..stats.len()).collect();
    fn root(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    let all = union(live.iter().map(|&i| &stats[i]));
    let margin = 0.02 * all.longest();
    for (n, &a) in live.iter().enumerate() {
        for &b in &live[n + 1..] {
            if touches(&stats[a], &stats[b], margin) {
                let (ra, rb) = (root(&mut group, a), root(&mut group, b));
                group[ra] = rb;
            }
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for &i in &live {
        let r = root(&mut group, i);
        match groups.iter_mut().find(|(g, _)| *g == r) {
            Some((_, members)) => members.push(i),
            None => groups.push((r, vec![i])),
        }
    }
    if groups.len() < 2 {
        return;
    }
    let boxes: Vec<Stats> = groups
        .iter()
        .map(|(_, m)| union(m.iter().map(|&i| &stats[i])))
        .collect();
    let largest = (0..groups.len())
        .max_by_key(|&g| boxes[g].triangles)
        .expect("two groups or more");
    let near = |x: f32, y: f32| (x - y).abs() <= 0.05 * x.abs().max(y.abs());
    let copies: Vec<usize> = (0..groups.len())
        .filter(|&g| {
            near(boxes[g].triangles as f32, boxes[largest].triangles as f32)
                && (0..3).all(|k| near(boxes[g].size()[k], boxes[largest].size()[k]))
        })
        .collect();
    if copies.len() < 2 {
        return;
    }
    let distance = |g: usize| {
        (0..3)
            .map(|k| {
                let c = 0.5 * (boxes[g].lo[k] + boxes[g].hi[k]);
                c * c
            })
            .sum::<f32>()
    };
    let nearest = *copies
        .iter()
        .min_by(|&&a, &&b| distance(a).total_cmp(&distance(b)))
        .expect("two copies or more");
    for &g in copies.iter().filter(|&&g| g != nearest) {
        for &i in &groups[g].1 {
            keep[i] = Some("second_copy");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::{Format, Material, Part, Primitive};

    /// A closed box from `lo` to `hi` (8 vertices, 12 triangles) as part `part`.
    fn cube(lo: [f32; 3], hi: [f32; 3], part: u32) -> Primitive {
        let positions: Vec<[f32; 3]> = (0..8)
            .map(|c| [0, 1, 2].map(|k| if c & (1 << k) != 0 { hi[k] } else { lo[k] }))
            .collect();
        let indices = vec![
            0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6,
            4, 1, 5, 7, 1, 7, 3,
        ];
        Primitive {
            normals: vec![[0.0, 0.0, 1.0]; 8],
            uvs: vec![[0.0; 2]; 8],
            uvs1: Vec::new(),
            colors: Vec::new(),
            positions,
            indices,
            material: 0,
            part,
        }
    }

    /// A ring of `n` segments (a torus-like band, many vertices) around the origin, radius `r`,
    /// shifted by `at`, as part `part`.
    fn band(r: f32, at: [f32; 3], n: usize, part: u32) -> Primitive {
        let mut p = Primitive {
            part,
            ..Primitive::default()
        };
        for i in 0..n {
            let a = i as f32 / n as f32 * std::f32::consts::TAU;
            for h in [-0.1 * r, 0.1 * r] {
                p.positions
                    .push([at[0] + r * a.cos(), at[1] + r * a.sin(), at[2] + h]);
            }
        }
        for i in 0..n as u32 {
            let j = (i + 1) % n as u32;
            p.indices
                .extend([2 * i, 2 * j, 2 * i + 1, 2 * j, 2 * j + 1, 2 * i + 1]);
        }
        p.normals = vec![[0.0, 0.0, 1.0]; p.positions.len()];
        p.uvs = vec![[0.0; 2]; p.positions.len()];
        p
    }

    fn product(primitives: Vec<Primitive>, names: &[&str]) -> Product {
        let meta = ProductMeta {
            parts: names
                .iter()
                .map(|n| Part {
                    name: n.to_string(),
                    path: vec!["root".into()],
                })
                .collect(),
            ..ProductMeta::default()
        };
        Product {
            format: Format::Glb,
            primitives,
            materials: vec![Material::default()],
            textures: Vec::new(),
            meta,
        }
    }

    fn quad(lo: [f32; 2], hi: [f32; 2], y: f32, part: u32) -> Primitive {
        Primitive {
            positions: vec![
                [lo[0], y, lo[1]],
                [hi[0], y, lo[1]],
                [hi[0], y, hi[1]],
                [lo[0], y, hi[1]],
            ],
            normals: vec![[0.0, 1.0, 0.0]; 4],
            uvs: vec![[0.0; 2]; 4],
            uvs1: Vec::new(),
            colors: Vec::new(),
            indices: vec![0, 2, 1, 0, 3, 2],
            material: 0,
            part,
        }
    }

    fn dropped(p: &Picked<'_>) -> Vec<(String, &'static str)> {
        p.dropped.iter().map(|d| (d.part.clone(), d.why)).collect()
    }

    #[test]
    fn a_ground_plane_and_a_modelling_cube_are_dropped() {
        let ring = band(1.0, [0.0; 3], 64, 0);
        let ground = quad([-5.0, -5.0], [5.0, 5.0], -1.2, 1);
        let cube = cube([2.0, -0.5, -0.5], [4.0, 0.5, 0.5], 2);
        let p = product(vec![ring, ground, cube], &["ring", "Plane", "Cube"]);
        let picked = pick(&p);
        assert_eq!(
            dropped(&picked),
            [
                ("root/Plane".to_string(), "flat_card"),
                ("root/Cube".to_string(), "plain_box")
            ]
        );
        assert_eq!(picked.product.primitives.len(), 1);
        assert_eq!(picked.product.primitives[0].part, 0);
    }

    #[test]
    fn small_flat_pieces_and_attached_parts_stay() {
        // A watch-like product: a band in the x-y plane, and a small flat hand inside it.
        let ring = band(1.0, [0.0; 3], 64, 0);
        let hand = Primitive {
            positions: vec![
                [-0.05, 0.0, 0.0],
                [0.05, 0.0, 0.0],
                [0.05, 0.5, 0.0],
                [-0.05, 0.5, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            uvs: vec![[0.0; 2]; 4],
            uvs1: Vec::new(),
            colors: Vec::new(),
            indices: vec![0, 1, 2, 0, 2, 3],
            material: 0,
            part: 1,
        };
        let p = product(vec![ring, hand], &["band", "hand"]);
        let picked = pick(&p);
        assert!(picked.dropped.is_empty(), "{:?}", picked.dropped);
        assert!(matches!(picked.product, Cow::Borrowed(_)));
    }

    #[test]
    fn a_stray_speck_far_away_is_dropped() {
        let ring = band(1.0, [0.0; 3], 1000, 0);
        let speck = band(0.01, [-3.0, 0.0, 0.0], 3, 1);
        let p = product(vec![ring, speck], &["hoop", "speck"]);
        assert_eq!(dropped(&pick(&p)), [("root/speck".to_string(), "apart")]);
    }

    #[test]
    fn of_two_copies_the_one_nearest_the_origin_stays() {
        let left = band(1.0, [-3.0, 0.0, 0.0], 64, 0);
        let right = band(1.0, [2.5, 0.0, 0.0], 64, 1);
        let p = product(vec![left, right], &["left", "right"]);
        let picked = pick(&p);
        assert_eq!(dropped(&picked), [("root/left".to_string(), "second_copy")]);
    }

    #[test]
    fn a_degenerate_part_is_dropped_and_a_named_node_wins() {
        let ring = band(1.0, [0.0; 3], 64, 0);
        let mut line = band(1.0, [0.0; 3], 8, 1);
        for p in &mut line.positions {
            p[1] = 0.0;
            p[2] = 0.0;
        }
        let p = product(vec![ring.clone(), line], &["ring", "line"]);
        assert_eq!(dropped(&pick(&p)), [("root/line".to_string(), "no_area")]);

        let ground = quad([-5.0, -5.0], [5.0, 5.0], -1.2, 1);
        let mut p = product(vec![ring, ground], &["ring", "Plane"]);
        p.meta.other.insert("node".into(), "Plane".into());
        assert_eq!(dropped(&pick(&p)), [("root/ring".to_string(), "not_named")]);
        p.meta.other.insert("node".into(), "no such node".into());
        assert_eq!(
            dropped(&pick(&p)),
            [("root/Plane".to_string(), "flat_card")]
        );
    }

    #[test]
    fn nothing_is_dropped_when_it_would_leave_nothing() {
        let mut parts = vec![band(1.0, [0.0; 3], 8, 0), band(1.0, [0.0; 3], 8, 1)];
        for p in parts.iter_mut().flat_map(|p| &mut p.positions) {
            *p = [p[0], 0.0, 0.0];
        }
        let p = product(parts, &["a", "b"]);
        assert!(pick(&p).dropped.is_empty());
    }
}
