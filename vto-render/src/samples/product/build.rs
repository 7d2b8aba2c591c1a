//! A small mesh builder for the procedural samples: parametric grids (surfaces of revolution,
//! brims, chains) with smooth area-weighted normals, and a few textures that look like the
//! materials they stand for (felt, twill, knit, metal).

use crate::math::Vec3;
use crate::product::write::{write_glb_with_root, GlbRoot};
use crate::product::{compute_normals, Format, Material, Primitive, Product, ProductMeta, Texture};

/// A sample's parts: its primitives, materials and textures.
pub type Parts = (Vec<Primitive>, Vec<Material>, Vec<Texture>);

/// A sample of a category that takes several kinds (hats, jewelry) as a [`Product`]: as if
/// loaded from [`kinded_glb`]'s file (its kind in the meta, its name as a node).
pub fn kinded_product((primitives, materials, textures): Parts, name: &str, kind: &str) -> Product {
    Product {
        format: Format::Glb,
        primitives,
        materials,
        textures,
        meta: ProductMeta {
            kind: Some(kind.into()),
            names: vec![name.into()],
            ..ProductMeta::default()
        },
    }
}

/// The same sample as a binary glTF file: one root node named `name`, its kind in that node's
/// extras (`{"vto": {"kind": ...}}`).
pub fn kinded_glb(parts: Parts, name: &str, kind: &str) -> Vec<u8> {
    glb_with_extras(parts, name, serde_json::json!({"vto": {"kind": kind}}))
}

/// The same sample as a binary glTF file: one root node named `name` carrying `extras`.
pub fn glb_with_extras(
    (primitives, materials, textures): Parts,
    name: &str,
    extras: serde_json::Value,
) -> Vec<u8> {
    let meshes: Vec<(Primitive, [f32; 3])> =
        primitives.into_iter().map(|p| (p, [0.0; 3])).collect();
    write_glb_with_root(
        &meshes,
        &materials,
        &textures,
        &GlbRoot {
            name: name.into(),
            extras,
            matrix: None,
        },
    )
}

/// Triangles under construction, turned into a [`Primitive`] by [`Builder::primitive`].
#[derive(Debug, Default, Clone)]
pub struct Builder {
    positions: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
}

impl Builder {
    /// A parametric surface sampled on a `(rows + 1) × cols` grid (`cols + 1` when `wrap` is
    /// false): `f(u, v)` with `u` in [0, 1] around (the last column joins the first when
    /// `wrap`), `v` in [0, 1] along; texture coordinates `(u · u_repeat, v · v_repeat)`.
    pub fn grid(
        &mut self,
        rows: usize,
        cols: usize,
        wrap: bool,
        repeat: [f32; 2],
        f: impl Fn(f32, f32) -> Vec3,
    ) {
        let base = self.positions.len() as u32;
        let ncol = if wrap { cols } else { cols + 1 };
        for i in 0..=rows {
            let v = i as f32 / rows as f32;
            for j in 0..ncol {
                let u = j as f32 / cols as f32;
                self.positions.push(f(u, v).to_array());
                self.uvs.push([u * repeat[0], v * repeat[1]]);
            }
        }
        for i in 0..rows {
            for j in 0..cols {
                let j2 = if wrap { (j + 1) % cols } else { j + 1 };
                let a = base + (i * ncol + j) as u32;
                let b = base + (i * ncol + j2) as u32;
                let c = base + ((i + 1) * ncol + j) as u32;
                let d = base + ((i + 1) * ncol + j2) as u32;
                self.indices.extend([a, c, b, b, c, d]);
            }
        }
    }

    /// A tube of `radius` along `path` (closed when `closed`), `sides` around.
    pub fn tube(&mut self, path: &[Vec3], radius: f32, sides: usize, closed: bool) {
        let n = path.len();
        if n < 2 {
            return;
        }
        let frame = |i: usize| {
            let prev = if i > 0 {
                path[i - 1]
            } else if closed {
                path[n - 1]
            } else {
                path[0]
            };
            let next = if i + 1 < n {
                path[i + 1]
            } else if closed {
                path[0]
            } else {
                path[n - 1]
            };
            let t = (next - prev).normalize_or(Vec3::X);
            let r = if t.y.abs() > 0.9 { Vec3::X } else { Vec3::Y };
            let a = t.cross(r).normalize_or(Vec3::Z);
            (a, t.cross(a))
        };
        let rows = if closed { n } else { n - 1 };
        let pts: Vec<(Vec3, Vec3, Vec3)> = (0..n)
            .map(|i| {
                let (a, b) = frame(i);
                (path[i], a, b)
            })
            .collect();
        self.grid(rows, sides, true, [1.0, n as f32 / 4.0], |u, v| {
            let i = ((v * rows as f32).round() as usize) % n;
            let (p, a, b) = pts[i];
            let phi = u * std::f32::consts::TAU;
            p + (a * phi.cos() + b * phi.sin()) * radius
        });
    }

    /// An ellipsoid of `radii` about `centre`.
    pub fn ellipsoid(&mut self, centre: Vec3, radii: Vec3, rows: usize, cols: usize) {
        self.grid(rows, cols, true, [1.0, 1.0], |u, v| {
            let th = v * std::f32::consts::PI;
            let ph = u * std::f32::consts::TAU;
            centre + radii * Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin())
        });
    }

    /// Appends another builder's triangles.
    pub fn append(&mut self, other: Builder) {
        let base = self.positions.len() as u32;
        self.positions.extend(other.positions);
        self.uvs.extend(other.uvs);
        self.indices
            .extend(other.indices.into_iter().map(|i| i + base));
    }

    /// Moves every vertex by `f`.
    pub fn map(&mut self, f: impl Fn(Vec3) -> Vec3) {
        for p in &mut self.positions {
            *p = f(Vec3::from(*p)).to_array();
        }
    }

    /// The triangles as a primitive of `material` with one normal per triangle (every
    /// triangle gets its own vertices): cut facets that glint.
    pub fn faceted(self, material: usize) -> Primitive {
        let mut positions = Vec::with_capacity(self.indices.len());
        let mut uvs = Vec::with_capacity(self.indices.len());
        for &i in &self.indices {
            positions.push(self.positions[i as usize]);
            uvs.push(self.uvs[i as usize]);
        }
        let indices: Vec<u32> = (0..positions.len() as u32).collect();
        let normals = compute_normals(&positions, &indices);
        Primitive {
            positions,
            normals,
            uvs,
            uvs1: Vec::new(),
            colors: Vec::new(),
            indices,
            material,
            part: 0,
        }
    }

    /// The triangles as a primitive of `material`, with smooth normals.
    pub fn primitive(self, material: usize) -> Primitive {
        let normals = compute_normals(&self.positions, &self.indices);
        Primitive {
            positions: self.positions,
            normals,
            uvs: self.uvs,
            uvs1: Vec::new(),
            colors: Vec::new(),
            indices: self.indices,
            material,
            part: 0,
        }
    }
}

/// Deterministic value noise in [0, 1] on an integer lattice, smoothly interpolated, tiling
/// with period `period` cells.
pub fn value_noise(x: f32, y: f32, period: u32, seed: u32) -> f32 {
    let hash = |i: i64, j: i64| {
        let p = i64::from(period.max(1));
        let (i, j) = (i.rem_euclid(p) as u32, j.rem_euclid(p) as u32);
        let mut h = i
            .wrapping_mul(0x27d4_eb2d)
            .wrapping_add(j.wrapping_mul(0x1656_67b1))
            .wrapping_add(seed.wrapping_mul(0x9e37_79b9));
        h ^= h >> 15;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        (h & 0xffff) as f32 / 65535.0
    };
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let s = |t: f32| t * t * (3.0 - 2.0 * t);
    let (i, j) = (x0 as i64, y0 as i64);
    let a = hash(i, j) + (hash(i + 1, j) - hash(i, j)) * s(fx);
    let b = hash(i, j + 1) + (hash(i + 1, j + 1) - hash(i, j + 1)) * s(fx);
    a + (b - a) * s(fy)
}

/// Fractal noise (three octaves of [`value_noise`]) in about [0, 1], tiling over `period`.
pub fn fbm(x: f32, y: f32, period: u32, seed: u32) -> f32 {
    (0..3)
        .map(|o| {
            let k = (1u32 << o) as f32;
            value_noise(x * k, y * k, period << o, seed + o) / k
        })
        .sum::<f32>()
        / 1.75
}

/// A `size`² texture whose texel at (x, y) is `f(x, y)` (sRGB bytes).
pub fn texture(size: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Texture {
    let mut rgba = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..size {
        for x in 0..size {
            rgba.extend(f(x, y));
        }
    }
    Texture {
        width: size,
        height: size,
        rgba,
    }
}

/// `rgb` (sRGB bytes) scaled by `k`.
pub fn shade(rgb: [f32; 3], k: f32) -> [u8; 4] {
    let c = |v: f32| (v * k).round().clamp(0.0, 255.0) as u8;
    [c(rgb[0]), c(rgb[1]), c(rgb[2]), 255]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_tiles_and_stays_in_range() {
        for k in 0..50 {
            let (x, y) = (k as f32 * 0.37, k as f32 * 0.71);
            let a = value_noise(x, y, 8, 1);
            assert!((0.0..=1.0).contains(&a));
            assert!((a - value_noise(x + 8.0, y, 8, 1)).abs() < 1e-5);
        }
    }

    #[test]
    fn a_wrapped_grid_has_no_seam_vertices() {
        let mut b = Builder::default();
        b.grid(2, 8, true, [1.0, 1.0], |u, v| Vec3::new(u, v, 0.0));
        let p = b.primitive(0);
        assert_eq!(p.positions.len(), 3 * 8);
        assert_eq!(p.indices.len(), 2 * 8 * 6);
        assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
    }
}
