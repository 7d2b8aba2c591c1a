//! Procedural sample shoes: a canvas sneaker and a leather boot, each one **right** shoe that
//! follows the shoe conventions of `docs/products.md` (metres, +Y up, toe along +Z, origin
//! at the bottom of the heel's back; the wearer's left, the shoe's medial side, at +X).
//!
//! A shoe is built on a last: a plan-view outline (half-widths on the medial and lateral
//! side, the toe tip shifted medially, the arch pulled in) and a height profile along the
//! foot. The upper is a grid of cross-sections (superellipse arcs from the lateral sole edge
//! over the top to the medial one); over the collar the top arc sinks into a bowl drawn with
//! the dark lining material, which reads as the opening. The sole is the outline extruded
//! (thicker at the heel, the toe sprung up); the laces are tubes across the instep, lifted off
//! the tongue. Four materials: upper (textured), sole (textured sidewall), laces, lining.

use crate::math::{normalize_or, Vec3};
use crate::product::write::write_glb;
use crate::product::{compute_normals, Format, Material, Primitive, Product, ProductMeta, Texture};

/// The sample shoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleShoe {
    /// A low navy canvas sneaker with a white side stripe, white sole and laces.
    Sneaker,
    /// A brown leather ankle boot with a dark lugged sole and tan laces.
    Boot,
}

/// Stations along the foot.
const STATIONS: usize = 48;
/// Points per cross-section (lateral sole edge → over the top → medial sole edge).
const ARC: usize = 28;
/// The top arc (indices) that becomes the collar bowl over the opening.
const TOP_ARC: std::ops::Range<usize> = 7..22;

/// Material indices.
const UPPER: usize = 0;
const SOLE: usize = 1;
const LACES: usize = 2;
const LINING: usize = 3;

/// Shape parameters of one shoe (metres).
struct Last {
    length: f32,
    /// (t, upper height above the sole) knots.
    height: &'static [(f32, f32)],
    /// The collar opening: t range and bowl depth.
    collar: (f32, f32, f32),
    /// Lace stations (t).
    laces: &'static [f32],
    /// Sole thickness at the heel and the forefoot.
    sole: (f32, f32),
    /// How much wider than the heel the shaft is above the ankle (a boot's shaft encloses
    /// the leg).
    flare: f32,
}

impl SampleShoe {
    /// A short name (`sneaker`, `boot`).
    pub fn name(self) -> &'static str {
        match self {
            SampleShoe::Sneaker => "sneaker",
            SampleShoe::Boot => "boot",
        }
    }

    fn last(self) -> Last {
        match self {
            SampleShoe::Sneaker => Last {
                length: 0.285,
                height: &[
                    (0.0, 0.050),
                    (0.06, 0.058),
                    (0.25, 0.052),
                    (0.42, 0.066),
                    (0.60, 0.058),
                    (0.80, 0.044),
                    (0.93, 0.036),
                    (1.0, 0.022),
                ],
                collar: (0.05, 0.40, 0.035),
                laces: &[0.45, 0.50, 0.55, 0.60, 0.65, 0.70],
                sole: (0.030, 0.022),
                flare: 0.0,
            },
            SampleShoe::Boot => Last {
                length: 0.29,
                height: &[
                    (0.0, 0.135),
                    (0.06, 0.148),
                    (0.28, 0.145),
                    (0.40, 0.105),
                    (0.55, 0.072),
                    (0.80, 0.050),
                    (0.93, 0.040),
                    (1.0, 0.024),
                ],
                collar: (0.04, 0.33, 0.05),
                laces: &[0.40, 0.45, 0.50, 0.55, 0.60, 0.65],
                sole: (0.036, 0.018),
                flare: 0.6,
            },
        }
    }

    fn materials(self) -> Vec<Material> {
        let m = |name: &str, c: [f32; 4], rough: f32, tex: Option<usize>| Material {
            name: name.into(),
            base_color: c,
            base_color_texture: tex,
            metallic: 0.0,
            roughness: rough,
            ..Material::default()
        };
        match self {
            SampleShoe::Sneaker => vec![
                m("canvas upper", [1.0; 4], 0.85, Some(0)),
                m("rubber sole", [1.0; 4], 0.7, Some(1)),
                m("laces", [0.86, 0.86, 0.84, 1.0], 0.9, None),
                m("lining", [0.05, 0.05, 0.06, 1.0], 0.9, None),
            ],
            SampleShoe::Boot => vec![
                m("leather upper", [1.0; 4], 0.6, Some(0)),
                m("lug sole", [1.0; 4], 0.8, Some(1)),
                m("laces", [0.55, 0.40, 0.24, 1.0], 0.85, None),
                m("lining", [0.09, 0.06, 0.04, 1.0], 0.9, None),
            ],
        }
    }

    /// The shoe as a product (a right shoe: no extras, its side shows in its shape).
    pub fn product(self) -> Product {
        Product {
            format: Format::Glb,
            primitives: self.primitives(),
            materials: self.materials(),
            textures: vec![self.upper_texture(), self.sole_texture()],
            meta: ProductMeta::default(),
        }
    }

    /// The shoe as a binary glTF file.
    pub fn glb(self) -> Vec<u8> {
        let meshes: Vec<(Primitive, [f32; 3])> = self
            .primitives()
            .into_iter()
            .map(|p| (p, [0.0; 3]))
            .collect();
        write_glb(&meshes, &self.materials(), &self.textures())
    }

    /// The primitives (upper, sole, laces, lining), for writers.
    pub fn primitives(self) -> Vec<Primitive> {
        let last = self.last();
        let mut grid = Grid::default();
        upper(&last, &mut grid);
        sole(&last, &mut grid);
        laces(&last, &mut grid);
        grid.into_primitives()
    }

    /// The textures (upper, sole), for writers.
    pub fn textures(self) -> Vec<Texture> {
        vec![self.upper_texture(), self.sole_texture()]
    }

    fn upper_texture(self) -> Texture {
        const S: u32 = 256;
        let mut rgba = Vec::with_capacity((S * S * 4) as usize);
        for y in 0..S {
            for x in 0..S {
                // u: around the cross-section (0 lateral sole edge, 1 medial), v: heel → toe.
                let (u, v) = (x as f32 / S as f32, y as f32 / S as f32);
                let n = hash(x, y);
                let c = match self {
                    SampleShoe::Sneaker => {
                        let weave = 0.06 * ((x % 4 < 2) ^ (y % 4 < 2)) as u8 as f32;
                        let mut c = [0.10 + weave, 0.14 + weave, 0.30 + weave];
                        // A white side stripe on each side, rising toward the heel.
                        for side in [0.22f32, 0.78] {
                            let centre = side + (0.5 - side) * 0.25 * (1.0 - v);
                            if (u - centre).abs() < 0.035 && (0.18..0.72).contains(&v) {
                                c = [0.92, 0.92, 0.9];
                            }
                        }
                        // Stitching above the sole and round the toe cap.
                        let stitch = ((u - 0.06).abs() < 0.006
                            || (u - 0.94).abs() < 0.006
                            || (v - 0.82).abs() < 0.005)
                            && (x + y) % 6 < 3;
                        if stitch {
                            c = [0.85, 0.85, 0.8];
                        }
                        c
                    }
                    SampleShoe::Boot => {
                        let grain = 0.05 * (n - 0.5);
                        let mut c = [0.36 + grain, 0.20 + grain * 0.8, 0.10 + grain * 0.5];
                        // Darker toe cap and heel counter, seams in tan.
                        if !(0.16..=0.8).contains(&v) {
                            c = [c[0] * 0.8, c[1] * 0.8, c[2] * 0.8];
                        }
                        let seam = ((v - 0.8).abs() < 0.005 || (v - 0.16).abs() < 0.005)
                            && (x + y) % 6 < 3;
                        if seam {
                            c = [0.75, 0.58, 0.35];
                        }
                        c
                    }
                };
                rgba.extend(c.map(|k| (k.clamp(0.0, 1.0) * 255.0) as u8));
                rgba.push(255);
            }
        }
        Texture {
            width: S,
            height: S,
            rgba,
        }
    }

    fn sole_texture(self) -> Texture {
        const S: u32 = 128;
        let mut rgba = Vec::with_capacity((S * S * 4) as usize);
        for y in 0..S {
            for x in 0..S {
                // u: along the sole's perimeter, v: 0 at the ground, 1 at the top edge.
                let v = y as f32 / S as f32;
                let n = 0.04 * (hash(x, y) - 0.5);
                let c = match self {
                    SampleShoe::Sneaker => {
                        let mut c = [0.93 + n, 0.92 + n, 0.88 + n];
                        if (0.55..0.62).contains(&v) {
                            c = [0.15, 0.18, 0.35];
                        }
                        if v < 0.18 {
                            let tread = 0.12 * ((x % 8 < 4) as u8 as f32);
                            c = [0.7 - tread, 0.68 - tread, 0.64 - tread];
                        }
                        c
                    }
                    SampleShoe::Boot => {
                        let lug = if v < 0.45 && x % 10 < 5 { 0.04 } else { 0.09 };
                        [lug + n, lug * 0.9 + n, lug * 0.8 + n]
                    }
                };
                rgba.extend(c.map(|k| (k.clamp(0.0, 1.0) * 255.0) as u8));
                rgba.push(255);
            }
        }
        Texture {
            width: S,
            height: S,
            rgba,
        }
    }
}

/// A deterministic pseudo-random value in [0, 1) per texel.
fn hash(x: u32, y: u32) -> f32 {
    let mut h = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h & 0xffff) as f32 / 65536.0
}

/// Piecewise-linear interpolation over `(t, value)` knots.
fn interp(knots: &[(f32, f32)], t: f32) -> f32 {
    let mut prev = knots[0];
    for &k in knots {
        if t <= k.0 {
            let span = (k.0 - prev.0).max(1e-6);
            return prev.1 + (k.1 - prev.1) * ((t - prev.0) / span).clamp(0.0, 1.0);
        }
        prev = k;
    }
    prev.1
}

/// Plan-view outline at `t`: (medial x, lateral x) of a right shoe (medial at +X).
fn outline(t: f32) -> (f32, f32) {
    let base = interp(
        &[
            (0.0, 0.035),
            (0.15, 0.037),
            (0.45, 0.036),
            (0.72, 0.046),
            (0.88, 0.040),
            (1.0, 0.030),
        ],
        t,
    );
    // Rounded heel and toe.
    let heel = if t < 0.09 {
        (1.0 - (1.0 - t / 0.09).powi(2)).max(0.0).sqrt()
    } else {
        1.0
    };
    let toe = if t > 0.84 {
        (1.0 - ((t - 0.84) / 0.16).powi(2)).max(0.0).sqrt()
    } else {
        1.0
    };
    let w = base * heel * toe;
    // The toe tip lies toward the big toe; the arch pulls the medial side in.
    let centre = 0.010 * ((t - 0.55) / 0.45).clamp(0.0, 1.0).powi(2);
    let arch = 1.0 - 0.16 * (-((t - 0.45) / 0.12).powi(2)).exp();
    (centre + w * arch, centre - w)
}

/// The sole's top (the upper's base) at `t`.
fn sole_top(last: &Last, t: f32) -> f32 {
    let (heel, fore) = last.sole;
    let th = if t < 0.3 {
        heel
    } else if t < 0.45 {
        heel + (fore - heel) * (t - 0.3) / 0.15
    } else {
        fore
    };
    th + toe_spring(t)
}

/// How far the sole's bottom rises toward the toe.
fn toe_spring(t: f32) -> f32 {
    0.012 * ((t - 0.8) / 0.2).clamp(0.0, 1.0).powi(2)
}

/// Triangles per material over one shared vertex list.
#[derive(Default)]
struct Grid {
    positions: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    /// Per vertex: a point inside the shoe the normal must point away from.
    inside: Vec<Vec3>,
    tris: [Vec<u32>; 4],
}

impl Grid {
    fn vertex(&mut self, p: Vec3, uv: [f32; 2], inside: Vec3) -> u32 {
        self.positions.push(p.to_array());
        self.uvs.push(uv);
        self.inside.push(inside);
        (self.positions.len() - 1) as u32
    }

    fn quad(&mut self, m: usize, a: u32, b: u32, c: u32, d: u32) {
        self.tris[m].extend([a, b, c, a, c, d]);
    }

    /// One primitive per material, vertices copied, smooth normals turned outward.
    fn into_primitives(self) -> Vec<Primitive> {
        let mut out = Vec::new();
        for (m, tris) in self.tris.iter().enumerate() {
            if tris.is_empty() {
                continue;
            }
            let mut map = vec![u32::MAX; self.positions.len()];
            let mut p = Primitive {
                material: m,
                ..Primitive::default()
            };
            let mut inside = Vec::new();
            for &i in tris {
                let i = i as usize;
                if map[i] == u32::MAX {
                    map[i] = p.positions.len() as u32;
                    p.positions.push(self.positions[i]);
                    p.uvs.push(self.uvs[i]);
                    inside.push(self.inside[i]);
                }
                p.indices.push(map[i]);
            }
            // Consistent winding: each triangle faces away from its vertices' inside point.
            for t in p.indices.chunks_exact_mut(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| Vec3::from(p.positions[i as usize]));
                let n = (b - a).cross(c - a);
                let mid = (a + b + c) / 3.0;
                if n.dot(mid - inside[t[0] as usize]) < 0.0 {
                    t.swap(1, 2);
                }
            }
            p.normals = compute_normals(&p.positions, &p.indices);
            for (n, (q, c)) in p.normals.iter_mut().zip(p.positions.iter().zip(&inside)) {
                let v = Vec3::from(*n);
                if v.dot(Vec3::from(*q) - *c) < 0.0 {
                    *n = (-v).to_array();
                }
            }
            out.push(p);
        }
        out
    }
}

/// A cross-section point: `a` from 0 (lateral sole edge) to 1 (medial sole edge).
fn section(last: &Last, t: f32, a: f32) -> Vec3 {
    let (med, lat) = outline(t);
    let centre = (med + lat) / 2.0;
    let half = (med - lat) / 2.0;
    let base = sole_top(last, t) - 0.002;
    let toe_round = if t > 0.86 {
        (1.0 - ((t - 0.86) / 0.14).powi(2)).max(0.0).sqrt()
    } else {
        1.0
    };
    let h = interp(last.height, t) * (0.35 + 0.65 * toe_round);
    let ang = std::f32::consts::PI * (1.0 - a);
    let (s, c) = ang.sin_cos();
    let e = 2.0 / 2.6;
    let y = base + h * s.abs().powf(e);
    let rise = ((y - 0.06) / 0.05).clamp(0.0, 1.0);
    let half = half * (1.0 + last.flare * rise * rise * (3.0 - 2.0 * rise));
    let x = centre + half * c.signum() * c.abs().powf(e);
    Vec3::new(x, y, t * last.length)
}

fn station_t(i: usize) -> f32 {
    // Denser near the rounded heel and toe.
    let u = i as f32 / (STATIONS - 1) as f32;
    0.5 - 0.5 * (std::f32::consts::PI * u).cos()
}

fn upper(last: &Last, g: &mut Grid) {
    let (c0, c1, depth) = last.collar;
    let mut rows = Vec::new();
    for i in 0..STATIONS {
        let t = station_t(i);
        let h = interp(last.height, t);
        let inside = Vec3::new(
            (outline(t).0 + outline(t).1) / 2.0,
            sole_top(last, t) + 0.35 * h,
            t * last.length,
        );
        // Over the collar, the top arc sinks into a bowl: a smooth dip across the arc that
        // fades out at the collar's ends.
        // Over the heel's end and the collar's back half the top is fully open; toward the
        // instep it closes smoothly.
        let mid = (c0 + c1) / 2.0;
        let fade = if t <= mid {
            1.0
        } else if t < c1 {
            let u = (t - mid) / (c1 - mid);
            let k = 1.0 - u;
            k * k * (3.0 - 2.0 * k)
        } else {
            0.0
        };
        let rim_l = section(last, t, TOP_ARC.start as f32 / (ARC - 1) as f32);
        let rim_m = section(last, t, (TOP_ARC.end - 1) as f32 / (ARC - 1) as f32);
        let row: Vec<u32> = (0..ARC)
            .map(|k| {
                let a = k as f32 / (ARC - 1) as f32;
                let mut p = section(last, t, a);
                let mut ins = inside;
                if fade > 0.0 && TOP_ARC.contains(&k) {
                    let u = (k - TOP_ARC.start) as f32 / (TOP_ARC.len() - 1) as f32;
                    let chord = rim_l.lerp(rim_m, u);
                    let dip = depth * (std::f32::consts::PI * u).sin() * fade;
                    let flat = p.lerp(chord, fade.min(1.0));
                    p = Vec3::new(flat.x, flat.y - dip, flat.z);
                    // The bowl's normals point up, out of the opening.
                    ins = Vec3::new(p.x, p.y - 0.05, p.z);
                }
                g.vertex(p, [a, t], ins)
            })
            .collect();
        rows.push((row, fade > 0.0));
    }
    for i in 0..STATIONS - 1 {
        let (r0, in0) = &rows[i];
        let (r1, in1) = &rows[i + 1];
        for k in 0..ARC - 1 {
            let bowl = (*in0 || *in1) && TOP_ARC.contains(&k) && TOP_ARC.contains(&(k + 1));
            let m = if bowl { LINING } else { UPPER };
            g.quad(m, r0[k], r1[k], r1[k + 1], r0[k + 1]);
        }
    }
}

fn sole(last: &Last, g: &mut Grid) {
    let grow = 0.004;
    let loops: Vec<(Vec3, Vec3, Vec3, Vec3)> = (0..STATIONS)
        .map(|i| {
            let t = station_t(i);
            let (med, lat) = outline(t);
            let z = t * last.length;
            let zs = z + grow * ((t - 0.5) * 2.0).clamp(-1.0, 1.0).powi(5);
            let (bot, top) = (toe_spring(t), sole_top(last, t));
            // The margin narrows with the outline, so the walls meet at the heel and toe.
            let gx = grow * ((med - lat) / 0.02).min(1.0);
            (
                Vec3::new(med + gx, bot, zs),
                Vec3::new(lat - gx, bot, zs),
                Vec3::new(med + gx, top, zs),
                Vec3::new(lat - gx, top, zs),
            )
        })
        .collect();
    // Walls, bottom and top each get their own vertices, so their normals stay crisp: the
    // walls' point away from the sole's centre line, the bottom's down, the top's up.
    let mut prev: Option<[u32; 8]> = None;
    for (i, &(mb, lb, mt, lt)) in loops.iter().enumerate() {
        let t = station_t(i);
        let (med, lat) = outline(t);
        let axis = |p: Vec3| Vec3::new((med + lat) / 2.0, p.y, p.z);
        let below = |p: Vec3| p + Vec3::Y;
        let above = |p: Vec3| p - Vec3::Y;
        // Sidewall texture: u along the foot, v from the ground (0) to the top edge (1).
        let ids = [
            g.vertex(mb, [t, 0.0], axis(mb)),
            g.vertex(lb, [t, 0.0], axis(lb)),
            g.vertex(mt, [t, 0.98], axis(mt)),
            g.vertex(lt, [t, 0.98], axis(lt)),
            g.vertex(mb, [t, 0.05], below(mb)),
            g.vertex(lb, [t, 0.05], below(lb)),
            g.vertex(mt, [t, 0.98], above(mt)),
            g.vertex(lt, [t, 0.98], above(lt)),
        ];
        if let Some(p) = prev {
            // Medial wall, lateral wall, bottom, top.
            g.quad(SOLE, p[0], ids[0], ids[2], p[2]);
            g.quad(SOLE, p[1], ids[1], ids[3], p[3]);
            g.quad(SOLE, p[4], ids[4], ids[5], p[5]);
            g.quad(SOLE, p[6], ids[6], ids[7], p[7]);
        }
        prev = Some(ids);
    }
}

fn laces(last: &Last, g: &mut Grid) {
    const R: f32 = 0.0028;
    const SIDES: usize = 6;
    for &t in last.laces {
        // Across the instep between the eyelet rows, lifted off the tongue.
        let path: Vec<Vec3> = (0..=10)
            .map(|j| {
                let a = 0.30 + 0.40 * j as f32 / 10.0;
                let p = section(last, t, a);
                let axis = Vec3::new((outline(t).0 + outline(t).1) / 2.0, sole_top(last, t), p.z);
                p + normalize_or(p - axis, Vec3::Y) * 0.004
            })
            .collect();
        let mut rings = Vec::new();
        for (j, &p) in path.iter().enumerate() {
            let next = path[(j + 1).min(path.len() - 1)];
            let prev = path[j.saturating_sub(1)];
            let dir = normalize_or(next - prev, Vec3::X);
            let side = normalize_or(dir.cross(Vec3::Z), Vec3::Y);
            let up = dir.cross(side);
            let ring: Vec<u32> = (0..SIDES)
                .map(|s| {
                    let ang = std::f32::consts::TAU * s as f32 / SIDES as f32;
                    let q = p + R * (side * ang.cos() + up * ang.sin());
                    g.vertex(q, [0.0, 0.0], p)
                })
                .collect();
            rings.push(ring);
        }
        for j in 0..rings.len() - 1 {
            for s in 0..SIDES {
                let s2 = (s + 1) % SIDES;
                g.quad(
                    LACES,
                    rings[j][s],
                    rings[j + 1][s],
                    rings[j + 1][s2],
                    rings[j][s2],
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_follow_the_shoe_conventions() {
        for shoe in [SampleShoe::Sneaker, SampleShoe::Boot] {
            let p = shoe.product();
            let (lo, hi) = p.bounds();
            // Origin at the heel's bottom back, toe along +Z, metres.
            assert!(lo[1].abs() < 1e-3 && lo[2].abs() < 0.01, "{lo:?}");
            assert!(
                (0.26..0.31).contains(&hi[2]),
                "{} length {}",
                shoe.name(),
                hi[2]
            );
            assert!(
                (0.08..0.11).contains(&(hi[0] - lo[0])),
                "width {}",
                hi[0] - lo[0]
            );
            // Four materials, each with triangles; the upper and the sole are textured.
            let used: Vec<usize> = p.primitives.iter().map(|q| q.material).collect();
            assert_eq!(used, vec![UPPER, SOLE, LACES, LINING]);
            assert!(p.materials[UPPER].base_color_texture.is_some());
            assert!(p.materials[SOLE].base_color_texture.is_some());
            // Normals point outward: on the upper, away from the shoe's axis on average.
            let up = &p.primitives[0];
            let outward = up
                .positions
                .iter()
                .zip(&up.normals)
                .filter(|(q, n)| {
                    let d = Vec3::new(q[0], q[1] - 0.04, 0.0);
                    d.dot(Vec3::new(n[0], n[1], 0.0)) > 0.0
                })
                .count();
            assert!(
                outward * 10 > up.positions.len() * 8,
                "{outward}/{}",
                up.positions.len()
            );
        }
        let boot = SampleShoe::Boot.product().bounds().1[1];
        let sneaker = SampleShoe::Sneaker.product().bounds().1[1];
        assert!(
            boot > sneaker + 0.05,
            "the boot's shaft is taller: {boot} vs {sneaker}"
        );
    }
}
