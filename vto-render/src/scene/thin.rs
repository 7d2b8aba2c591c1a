//! Thin parts stay visible: chains, wires and frame rims narrower than a sample on screen.
//!
//! The rasterizer point-samples (S×S samples per pixel); a 1 mm chain on a small photo projects
//! to a few tenths of a pixel and falls between the samples, so it shows as scattered dots or
//! not at all. Here every part of the product (a connected component, vertices welded by
//! position) is measured on screen: its width is `2 A / P`, with `A` the projected area of its
//! camera-facing triangles and `P` the projected length of their outline (the edges used by
//! one facing triangle only) — exact for a tube (A = w·ℓ, P = 2ℓ), a chain link (a ring) and
//! a wire rim, large for a lens or a solid frame. A part narrower than the sample spacing (it
//! can fall between the samples; anything wider always meets a sample in each row or column
//! it crosses, and keeps its point-sampled look) is drawn in the rasterizer's *thin layer*,
//! at the minimum width of one output pixel: each of its facing triangles is
//! widened across its longest edge, about its centroid, by `f = min_width / width` (and along
//! it by `e = min_width / length` when it is shorter than that) and carries the coverage weight
//! `1 / (f e)`, lowered where the part covers itself; the GPU sums the weights of the thin triangles over each sample
//! (clamped to 1). The widening keeps every triangle's area × weight, so the part's coverage
//! along its length is what its true width gives, spread over a pixel-wide continuous line.
//! Its other-facing triangles are dropped (they lie behind the facing ones on a closed part).
//! Parts at least a sample spacing wide are untouched.

use std::collections::HashMap;

use crate::raster::{Mesh, RasterMaterial};

/// The largest widening factor: parts thinner than `min_width / MAX_WIDENING` keep their
/// coverage but are widened no further (their weight stays ≥ 1 / `MAX_WIDENING`).
pub const MAX_WIDENING: f32 = 64.0;

/// What [`widen`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThinStats {
    /// Parts (connected components) of the product's opaque and masked triangles.
    pub parts: usize,
    /// Parts narrower than the minimum width, drawn in the thin layer.
    pub thin_parts: usize,
    /// Triangles drawn in the thin layer.
    pub thin_triangles: usize,
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[parent[i as usize] as usize];
        parent[i as usize] = p;
        i = p;
    }
    i
}

/// Projected signed area (twice the area) of three sample-space points.
fn area2(a: [f32; 2], b: [f32; 2], c: [f32; 2]) -> f32 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Most grid cells [`union_share`] rasterizes per part.
const MAX_CELLS: f32 = (1 << 20) as f32;

/// The share (0–1] of `summed` (the summed projected area of triangles `tris`) that their
/// union covers, measured on a grid of cells an eighth of the part's `width` (coarser when the
/// part is large; 1 when that grid would be too coarse to tell).
fn union_share(mesh: &Mesh, tris: &[usize], width: f32, summed: f32) -> f32 {
    if tris.is_empty() || summed <= 0.0 {
        return 1.0;
    }
    let corners = |t: usize| {
        let tri = mesh.triangles[t];
        [0, 1, 2].map(|k| {
            let v = &mesh.vertices[tri[k] as usize];
            [v.pos[0], v.pos[1]]
        })
    };
    let mut lo = [f32::MAX; 2];
    let mut hi = [f32::MIN; 2];
    for &t in tris {
        for q in corners(t) {
            for k in 0..2 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
        }
    }
    let (bw, bh) = (hi[0] - lo[0], hi[1] - lo[1]);
    let cell = (width / 8.0).max((bw * bh / MAX_CELLS).sqrt()).max(1e-6);
    if cell > width / 4.0 {
        return 1.0;
    }
    let (nx, ny) = (
        (bw / cell).ceil() as usize + 1,
        (bh / cell).ceil() as usize + 1,
    );
    let mut hit = vec![false; nx * ny];
    for &t in tris {
        let [a, b, c] = corners(t);
        let d = area2(a, b, c);
        if d.abs() < 1e-12 {
            continue;
        }
        let x0 = ((a[0].min(b[0]).min(c[0]) - lo[0]) / cell).floor().max(0.0) as usize;
        let x1 = (((a[0].max(b[0]).max(c[0]) - lo[0]) / cell).ceil() as usize).min(nx - 1);
        let y0 = ((a[1].min(b[1]).min(c[1]) - lo[1]) / cell).floor().max(0.0) as usize;
        let y1 = (((a[1].max(b[1]).max(c[1]) - lo[1]) / cell).ceil() as usize).min(ny - 1);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let q = [
                    lo[0] + (x as f32 + 0.5) * cell,
                    lo[1] + (y as f32 + 0.5) * cell,
                ];
                let w = [area2(b, c, q) / d, area2(c, a, q) / d, area2(a, b, q) / d];
                if w.iter().all(|&w| w >= 0.0) {
                    hit[y * nx + x] = true;
                }
            }
        }
    }
    let union = hit.iter().filter(|&&h| h).count() as f32 * cell * cell;
    (union / summed).clamp(0.05, 1.0)
}

/// Moves the parts of `mesh` (projected: positions in supersampled pixels) narrower than
/// `thin_below` into the thin layer, widened to `min_width` (see the module docs); both in
/// supersampled pixels (the scene uses one sample spacing and one output pixel, S).
/// BLEND triangles (lenses, gems) are left alone.
pub fn widen(
    mesh: &mut Mesh,
    materials: &[RasterMaterial],
    thin_below: f32,
    min_width: f32,
) -> ThinStats {
    let n_tri = mesh.triangles.len();
    let verts = &mesh.vertices;
    // Weld vertices by camera-space position (10 µm), so seams split by normals or UVs do not
    // cut a part in two.
    let mut weld_of: HashMap<[i32; 3], u32> = HashMap::new();
    let weld: Vec<u32> = verts
        .iter()
        .map(|v| {
            let key = [0, 1, 2].map(|k| (v.view[k] * 1000.0).round() as i32);
            let next = weld_of.len() as u32;
            *weld_of.entry(key).or_insert(next)
        })
        .collect();
    let mut weld_pos = vec![[0.0f32; 2]; weld_of.len()];
    for (i, v) in verts.iter().enumerate() {
        weld_pos[weld[i] as usize] = [v.pos[0], v.pos[1]];
    }
    // Which triangles take part: opaque or masked, in front of the camera, not degenerate.
    let eligible: Vec<bool> = mesh
        .triangles
        .iter()
        .map(|t| {
            let blend = materials
                .get(t[3] as usize)
                .is_some_and(|m| m.flags[0] == 2);
            !blend && t[..3].iter().all(|&i| verts[i as usize].pos[2] > 0.0)
        })
        .collect();
    // Facing the camera, by the vertex normals (winding is unreliable in shop files).
    let facing: Vec<bool> = mesh
        .triangles
        .iter()
        .map(|t| {
            let mut n = [0.0f32; 3];
            let mut c = [0.0f32; 3];
            for &i in &t[..3] {
                let v = &verts[i as usize];
                for k in 0..3 {
                    n[k] += v.normal[k];
                    c[k] += v.view[k];
                }
            }
            n[0] * c[0] + n[1] * c[1] + n[2] * c[2] < 0.0
        })
        .collect();
    // Parts: union-find over welded vertices.
    let mut parent: Vec<u32> = (0..weld_pos.len() as u32).collect();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        if !eligible[t] {
            continue;
        }
        let a = find(&mut parent, weld[tri[0] as usize]);
        for &i in &tri[1..3] {
            let b = find(&mut parent, weld[i as usize]);
            if a != b {
                parent[b as usize] = a;
            }
        }
    }
    let mut part_of_root: HashMap<u32, usize> = HashMap::new();
    let part: Vec<usize> = (0..n_tri)
        .map(|t| {
            if !eligible[t] {
                return usize::MAX;
            }
            let r = find(&mut parent, weld[mesh.triangles[t][0] as usize]);
            let next = part_of_root.len();
            *part_of_root.entry(r).or_insert(next)
        })
        .collect();
    let n_parts = part_of_root.len();
    // Per part and facing (0: facing the camera, 1: facing away): projected area and outline.
    let mut area = vec![[0.0f64; 2]; n_parts];
    let mut edges: Vec<HashMap<(u32, u32), u32>> = vec![HashMap::new(); 2];
    for (t, tri) in mesh.triangles.iter().enumerate() {
        if !eligible[t] {
            continue;
        }
        let side = usize::from(!facing[t]);
        let p = [0, 1, 2].map(|k| {
            let v = &verts[tri[k] as usize];
            [v.pos[0], v.pos[1]]
        });
        area[part[t]][side] += f64::from(area2(p[0], p[1], p[2]).abs() / 2.0);
        for k in 0..3 {
            let (a, b) = (weld[tri[k] as usize], weld[tri[(k + 1) % 3] as usize]);
            if a != b {
                *edges[side].entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
    }
    let mut outline = vec![[0.0f64; 2]; n_parts];
    let mut part_of_weld = vec![usize::MAX; weld_pos.len()];
    for (t, tri) in mesh.triangles.iter().enumerate() {
        if eligible[t] {
            for &i in &tri[..3] {
                part_of_weld[weld[i as usize] as usize] = part[t];
            }
        }
    }
    for (side, map) in edges.iter().enumerate() {
        for (&(a, b), &n) in map {
            let p = part_of_weld[a as usize];
            if n != 1 || p == usize::MAX {
                continue;
            }
            let (u, v) = (weld_pos[a as usize], weld_pos[b as usize]);
            outline[p][side] += f64::from(((u[0] - v[0]).powi(2) + (u[1] - v[1]).powi(2)).sqrt());
        }
    }
    // Each part's width on screen, from the facing with the larger area (a closed part shows
    // the same outline both ways; an open sheet shows all of itself on one side).
    let mut front_side = vec![0usize; n_parts];
    let mut factor = vec![0.0f32; n_parts];
    let mut stats = ThinStats {
        parts: n_parts,
        ..ThinStats::default()
    };
    for p in 0..n_parts {
        let side = usize::from(area[p][1] > area[p][0]);
        front_side[p] = side;
        let (a, len) = (area[p][side], outline[p][side]);
        if a <= 0.0 || len <= 0.0 {
            continue;
        }
        let width = (2.0 * a / len) as f32;
        if width < thin_below.min(min_width) {
            factor[p] = (min_width / width).min(MAX_WIDENING);
            stats.thin_parts += 1;
        }
    }
    if stats.thin_parts == 0 {
        return stats;
    }
    // Where a part covers itself (the two wires of a link seen edge-on, a twisted strand), the
    // summed weights would count its area twice: scale its weights by the share of its summed
    // area that its union covers.
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n_parts];
    for (t, &p) in part.iter().enumerate() {
        if p != usize::MAX && factor[p] > 0.0 && usize::from(!facing[t]) == front_side[p] {
            members[p].push(t);
        }
    }
    let mut overlap = vec![1.0f32; n_parts];
    for p in (0..n_parts).filter(|&p| factor[p] > 0.0) {
        let width = min_width / factor[p];
        let summed = area[p][front_side[p]] as f32;
        overlap[p] = union_share(mesh, &members[p], width, summed);
    }
    // Rebuild: thin facing triangles widened on vertices of their own; thin other-facing
    // triangles dropped; everything else kept.
    let mut triangles = Vec::with_capacity(n_tri);
    let old = std::mem::take(&mut mesh.triangles);
    for (t, tri) in old.into_iter().enumerate() {
        let p = part[t];
        if p == usize::MAX || factor[p] == 0.0 {
            triangles.push(tri);
            continue;
        }
        if usize::from(!facing[t]) != front_side[p] {
            continue;
        }
        let f = factor[p];
        let v = [0, 1, 2].map(|k| mesh.vertices[tri[k] as usize]);
        let q = v.map(|v| [v.pos[0], v.pos[1]]);
        // The longest edge and the direction across it.
        let (mut best, mut len) = (0, -1.0f32);
        for k in 0..3 {
            let (a, b) = (q[k], q[(k + 1) % 3]);
            let l = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            if l > len {
                (best, len) = (k, l);
            }
        }
        let (a, b) = (q[best], q[(best + 1) % 3]);
        let across = if len > 0.0 {
            [-(b[1] - a[1]) / len, (b[0] - a[0]) / len]
        } else {
            [0.0, 1.0]
        };
        let g = [
            (q[0][0] + q[1][0] + q[2][0]) / 3.0,
            (q[0][1] + q[1][1] + q[2][1]) / 3.0,
        ];
        // A triangle shorter than the minimum width is stretched along its longest edge too,
        // so a part smaller than a pixel spreads its coverage over a pixel both ways.
        let along = [across[1], -across[0]];
        let e = if len > 0.0 {
            (min_width / len).clamp(1.0, MAX_WIDENING)
        } else {
            1.0
        };
        let base = mesh.vertices.len() as u32;
        for (k, mut vert) in v.into_iter().enumerate() {
            let d = (q[k][0] - g[0]) * across[0] + (q[k][1] - g[1]) * across[1];
            let l = (q[k][0] - g[0]) * along[0] + (q[k][1] - g[1]) * along[1];
            vert.pos[0] += d * (f - 1.0) * across[0] + l * (e - 1.0) * along[0];
            vert.pos[1] += d * (f - 1.0) * across[1] + l * (e - 1.0) * along[1];
            vert.normal[3] = overlap[p] / (f * e);
            mesh.vertices.push(vert);
        }
        triangles.push([base, base + 1, base + 2, tri[3]]);
        stats.thin_triangles += 1;
    }
    mesh.triangles = triangles;
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raster::RasterVertex;

    /// A closed square tube along x, `len` long and `width` wide on screen (sample units),
    /// seen from the front, at depth 50.
    fn tube(len: f32, width: f32, y: f32) -> Mesh {
        let mut mesh = Mesh::default();
        let segs = 8;
        // Ring of 4 corners in (y, z): front-top, front-bottom, back-bottom, back-top.
        let ring = [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
        for s in 0..=segs {
            let x = len * s as f32 / segs as f32;
            for &(cy, cz) in &ring {
                let pos_y = y + cy * width / 2.0;
                let z = 50.0 + cz * 0.01;
                mesh.vertices.push(RasterVertex {
                    pos: [x, pos_y, z, 1.0 / z],
                    // Camera-space: x, y in cm (0.01 cm per sample here), z.
                    view: [x * 0.01, pos_y * 0.01, z, 0.0],
                    normal: [0.0, cy * 0.7, cz * 0.7, 0.0],
                    uv: [0.0; 4],
                    color: [1.0; 4],
                });
            }
        }
        for s in 0..segs {
            for k in 0..4 {
                let a = (s * 4 + k) as u32;
                let b = (s * 4 + (k + 1) % 4) as u32;
                let (c, d) = (a + 4, b + 4);
                mesh.triangles.push([a, b, c, 0]);
                mesh.triangles.push([b, d, c, 0]);
            }
        }
        mesh
    }

    fn opaque() -> Vec<RasterMaterial> {
        vec![RasterMaterial {
            base: [1.0; 4],
            pbr: [0.0; 4],
            tex: [0; 4],
            flags: [0; 4],
            ..bytemuck::Zeroable::zeroed()
        }]
    }

    fn weighted_area(mesh: &Mesh) -> f32 {
        mesh.triangles
            .iter()
            .map(|t| {
                let v = [0, 1, 2].map(|k| mesh.vertices[t[k] as usize]);
                let a = area2(
                    [v[0].pos[0], v[0].pos[1]],
                    [v[1].pos[0], v[1].pos[1]],
                    [v[2].pos[0], v[2].pos[1]],
                )
                .abs()
                    / 2.0;
                let w = if v[0].normal[3] > 0.0 {
                    v[0].normal[3]
                } else {
                    1.0
                };
                a * w
            })
            .sum()
    }

    #[test]
    fn a_thin_tube_is_widened_with_its_coverage_kept() {
        let mut mesh = tube(40.0, 0.5, 10.0);
        // Facing triangles: the front face (z = -1 side) plus the top and bottom sides edge-on.
        let stats = widen(&mut mesh, &opaque(), 1.0, 2.0);
        assert_eq!(stats.parts, 1);
        assert_eq!(stats.thin_parts, 1);
        assert!(stats.thin_triangles > 0);
        // Every kept triangle is in the thin layer, about 2 samples wide, with weight ≈ 1/4,
        // and the weighted area is the tube's true projected area (40 × 0.5).
        assert!(mesh.vertices[mesh.triangles[0][0] as usize].normal[3] > 0.2);
        let a = weighted_area(&mesh);
        assert!((a - 20.0).abs() < 1.0, "weighted area {a}");
        let ys: Vec<f32> = mesh
            .triangles
            .iter()
            .flat_map(|t| t[..3].iter().map(|&i| mesh.vertices[i as usize].pos[1]))
            .collect();
        let span = ys.iter().cloned().fold(f32::MIN, f32::max)
            - ys.iter().cloned().fold(f32::MAX, f32::min);
        assert!(span >= 1.9, "widened span {span}");
    }

    #[test]
    fn a_wide_tube_is_left_alone() {
        let before = tube(40.0, 6.0, 10.0);
        let mut mesh = before.clone();
        let stats = widen(&mut mesh, &opaque(), 1.0, 2.0);
        assert_eq!(stats.thin_parts, 0);
        assert_eq!(mesh, before);
    }
}
