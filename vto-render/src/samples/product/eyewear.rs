//! Procedural sample glasses frames (eyewear), written with [`crate::product::write`].
//!
//! Every frame follows the asset conventions of `RENDERING.md`: metres, +Y up, the front facing
//! +Z, origin at the bridge centre. The lens centres sit 31.5 mm either side of the bridge and
//! 6.5 mm below it (MediaPipe's canonical face: eye centres relative to landmark 168), the
//! temples run back 11 cm and hook down behind the ears. Lens centres are boxing centres
//! (the middle of each lens's bounding box). The temples are separate meshes placed
//! by node translations, so the writer exercises node transforms too.

use crate::math::{normalize_or, Vec3};
use crate::product::write::{write_glb, write_gltf_embedded};
use crate::product::{AlphaMode, Format, Material, Primitive, Product, Texture};

/// Lens centre offset from the bridge (metres): x of the subject's left lens, y.
pub const LENS_CENTRE: [f32; 2] = [0.0315, -0.0065];

/// The sample frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleFrame {
    /// Round black acetate, clear lenses.
    RoundBlack,
    /// Rectangular tortoiseshell (a base-colour texture), clear lenses.
    RectTortoise,
    /// Thin gold aviator with tinted green-grey lenses (sunglasses).
    AviatorGoldTinted,
    /// Red cat-eye, clear lenses.
    CatEyeRed,
}

impl SampleFrame {
    /// All samples.
    pub const ALL: [SampleFrame; 4] = [
        SampleFrame::RoundBlack,
        SampleFrame::RectTortoise,
        SampleFrame::AviatorGoldTinted,
        SampleFrame::CatEyeRed,
    ];

    /// A file-name stem, e.g. `round_black`.
    pub fn name(self) -> &'static str {
        match self {
            SampleFrame::RoundBlack => "round_black",
            SampleFrame::RectTortoise => "rect_tortoise",
            SampleFrame::AviatorGoldTinted => "aviator_gold_tinted",
            SampleFrame::CatEyeRed => "cat_eye_red",
        }
    }

    /// Whether the lenses are tinted (a sunglasses product).
    pub fn tinted(self) -> bool {
        matches!(self, SampleFrame::AviatorGoldTinted)
    }

    fn shape(self) -> Shape {
        match self {
            SampleFrame::RoundBlack => Shape {
                half_w: 0.023,
                top: 0.022,
                bottom: 0.022,
                power: 2.0,
                lift: 0.0,
                rim: [0.0022, 0.0030],
            },
            SampleFrame::RectTortoise => Shape {
                half_w: 0.026,
                top: 0.017,
                bottom: 0.018,
                power: 5.0,
                lift: 0.0,
                rim: [0.0030, 0.0035],
            },
            SampleFrame::AviatorGoldTinted => Shape {
                half_w: 0.027,
                top: 0.019,
                bottom: 0.027,
                power: 2.4,
                lift: 0.0,
                rim: [0.0011, 0.0012],
            },
            SampleFrame::CatEyeRed => Shape {
                half_w: 0.026,
                top: 0.018,
                bottom: 0.018,
                power: 3.0,
                lift: 0.006,
                rim: [0.0028, 0.0032],
            },
        }
    }

    fn materials(self) -> (Material, Material) {
        let frame = match self {
            SampleFrame::RoundBlack => mat("acetate-black", [0.015, 0.015, 0.018, 1.0], 0.0, 0.3),
            SampleFrame::RectTortoise => Material {
                base_color_texture: Some(0),
                base_color_uv: 0,
                ..mat("acetate-tortoise", [1.0, 1.0, 1.0, 1.0], 0.0, 0.35)
            },
            SampleFrame::AviatorGoldTinted => mat("metal-gold", [1.0, 0.78, 0.34, 1.0], 1.0, 0.25),
            SampleFrame::CatEyeRed => mat("acetate-red", [0.55, 0.02, 0.04, 1.0], 0.0, 0.3),
        };
        let lens = if self.tinted() {
            Material {
                alpha_mode: AlphaMode::Blend,
                ..mat("lens-tinted", [0.10, 0.13, 0.09, 0.8], 0.0, 0.05)
            }
        } else {
            Material {
                alpha_mode: AlphaMode::Blend,
                ..mat("lens-clear", [1.0, 1.0, 1.0, 0.06], 0.0, 0.05)
            }
        };
        (frame, lens)
    }

    /// The frame as a [`Product`] (in the asset frame, temples already in place).
    pub fn product(self) -> Product {
        let parts = self.parts();
        let mut primitives = Vec::new();
        for (prim, offset) in parts {
            let mut p = prim;
            for v in &mut p.positions {
                for k in 0..3 {
                    v[k] += offset[k];
                }
            }
            primitives.push(p);
        }
        let (frame, lens) = self.materials();
        Product {
            format: Format::Glb,
            primitives,
            materials: vec![frame, lens],
            textures: self.textures(),
            meta: crate::product::ProductMeta::default(),
        }
    }

    /// The frame as a binary glTF file.
    pub fn glb(self) -> Vec<u8> {
        let (frame, lens) = self.materials();
        write_glb(&self.parts(), &[frame, lens], &self.textures())
    }

    fn textures(self) -> Vec<Texture> {
        if self != SampleFrame::RectTortoise {
            return Vec::new();
        }
        // Tortoiseshell: dark brown with amber blotches (deterministic value noise).
        let (w, h) = (64u32, 64u32);
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h {
            for x in 0..w {
                let (fx, fy) = (x as f32 / 9.0, y as f32 / 7.0);
                let n =
                    (fx.sin() * 1.7 + fy.cos() * 1.3 + (fx * 0.6 + fy * 1.1).sin()) * 0.25 + 0.5;
                let t = ((n - 0.45) * 3.0).clamp(0.0, 1.0);
                let c = [
                    (40.0 + t * 150.0) as u8,
                    (20.0 + t * 80.0) as u8,
                    (8.0 + t * 20.0) as u8,
                    255,
                ];
                rgba.extend(c);
            }
        }
        vec![Texture {
            width: w,
            height: h,
            rgba,
        }]
    }

    /// The meshes with their node translations: front (rims, bridge, end pieces), lenses, and
    /// the two temples (local to their hinges).
    fn parts(self) -> Vec<(Primitive, [f32; 3])> {
        let s = self.shape();
        let mut front = Mesh::default();
        let mut lenses = Mesh::default();
        for side in [-1.0f32, 1.0] {
            let outline = s.outline(side);
            front.tube(&outline, s.rim[0], s.rim[1], true);
            lenses.lens(
                &outline,
                [
                    side * LENS_CENTRE[0],
                    LENS_CENTRE[1] + (s.bottom - s.top) / 2.0,
                ],
            );
        }
        // Bridge: from the upper inner rim of one lens through the origin to the other.
        let inner = s.point(-1.0, 2.35);
        let p0 = [inner[0], inner[1], 0.0];
        let p2 = [-inner[0], inner[1], 0.0];
        let p1 = [0.0, -inner[1], 0.004];
        let bridge: Vec<[f32; 3]> = (0..=16)
            .map(|i| {
                let t = i as f32 / 16.0;
                let a = (1.0 - t) * (1.0 - t);
                let b = 2.0 * t * (1.0 - t);
                let c = t * t;
                std::array::from_fn(|k| a * p0[k] + b * p1[k] + c * p2[k])
            })
            .collect();
        front.tube(&bridge, s.rim[0] * 0.9, s.rim[1] * 0.9, false);
        // End pieces: from the upper outer rim point back to the hinge.
        let mut hinges = Vec::new();
        for side in [-1.0f32, 1.0] {
            let o = s.point(side, 0.35);
            let hinge = [o[0] + side * 0.005, o[1], -0.008];
            front.tube(
                &[
                    [o[0], o[1], 0.0],
                    [o[0] + side * 0.004, o[1], -0.002],
                    hinge,
                ],
                s.rim[0].max(0.0018),
                s.rim[1].max(0.0025),
                false,
            );
            hinges.push(hinge);
        }
        let mut out = vec![(front.into_primitive(0), [0.0; 3])];
        out.push((lenses.into_primitive(1), [0.0; 3]));
        for (side, hinge) in [-1.0f32, 1.0].into_iter().zip(hinges) {
            let mut temple = Mesh::default();
            let path: Vec<[f32; 3]> = (0..=20)
                .map(|i| {
                    let t = i as f32 / 20.0;
                    let z = -0.11 * t;
                    // Straight back, then a hook down behind the ear over the last 20 %.
                    let hook = ((t - 0.8) / 0.2).max(0.0);
                    [side * 0.002 * t, -0.025 * hook * hook, z]
                })
                .collect();
            temple.tube(&path, 0.0016, 0.0028, false);
            out.push((temple.into_primitive(0), hinge));
        }
        out
    }
}

fn mat(name: &str, base_color: [f32; 4], metallic: f32, roughness: f32) -> Material {
    Material {
        name: name.to_string(),
        base_color,
        base_color_texture: None,
        base_color_uv: 0,
        metallic,
        roughness,
        alpha_mode: AlphaMode::Opaque,
        alpha_cutoff: 0.5,
        double_sided: true,
        finish: Default::default(),
    }
}

/// A lens outline: a superellipse around the lens centre, optionally lifted at the outer top.
struct Shape {
    half_w: f32,
    top: f32,
    bottom: f32,
    power: f32,
    lift: f32,
    /// Rim tube half-sizes: in the lens plane, along z.
    rim: [f32; 2],
}

impl Shape {
    /// The outline point at angle `a` (0 = outward, counter-clockwise seen from the front) of
    /// the lens on `side` (+1 = +x).
    fn point(&self, side: f32, a: f32) -> [f32; 2] {
        let (c, s) = (a.cos(), a.sin());
        let e = 2.0 / self.power;
        let x = c.signum() * c.abs().powf(e) * self.half_w;
        let h = if s >= 0.0 { self.top } else { self.bottom };
        // Shifted so that the boxing centre (the middle of the lens's bounding box, the
        // optical datum) is at LENS_CENTRE whatever the top/bottom asymmetry.
        let mut y = s.signum() * s.abs().powf(e) * h + (self.bottom - self.top) / 2.0;
        // Cat-eye: raise the outer upper corner.
        if s > 0.0 && c > 0.0 {
            y += self.lift * (c * s * 2.0).powi(2);
        }
        [side * (LENS_CENTRE[0] + x), LENS_CENTRE[1] + y]
    }

    fn outline(&self, side: f32) -> Vec<[f32; 3]> {
        (0..64)
            .map(|i| {
                let a = i as f32 / 64.0 * std::f32::consts::TAU;
                let p = self.point(side, a);
                [p[0], p[1], 0.0]
            })
            .collect()
    }
}

#[derive(Default)]
struct Mesh {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
}

impl Mesh {
    /// A tube with an elliptical cross-section (`rw` across, `rd` along the lens normal-ish
    /// axis) along `path`.
    fn tube(&mut self, path: &[[f32; 3]], rw: f32, rd: f32, closed: bool) {
        const K: usize = 8;
        let n = path.len();
        let base = self.positions.len() as u32;
        for i in 0..n {
            let prev = if i == 0 {
                if closed {
                    path[n - 1]
                } else {
                    path[0]
                }
            } else {
                path[i - 1]
            };
            let next = if i + 1 == n {
                if closed {
                    path[0]
                } else {
                    path[n - 1]
                }
            } else {
                path[i + 1]
            };
            let t = normalize_or(Vec3::from(next) - Vec3::from(prev), Vec3::X);
            // Frame: `u` in the plane perpendicular to t, as close to +z as possible… unless the
            // path runs along z (temples), then use +x.
            let refv = if t.z.abs() > 0.7 { Vec3::X } else { Vec3::Z };
            let w = normalize_or(t.cross(refv), Vec3::Y);
            let u = w.cross(t);
            for k in 0..K {
                let phi = k as f32 / K as f32 * std::f32::consts::TAU;
                let (c, s) = (phi.cos(), phi.sin());
                let off = w * (c * rw) + u * (s * rd);
                let nrm = w * (c / rw) + u * (s / rd);
                self.positions.push((Vec3::from(path[i]) + off).to_array());
                self.normals.push(normalize_or(nrm, u).to_array());
                self.uvs
                    .push([i as f32 / n as f32 * 4.0, k as f32 / K as f32]);
            }
        }
        let segs = if closed { n } else { n - 1 };
        for i in 0..segs {
            let j = (i + 1) % n;
            for k in 0..K {
                let k2 = (k + 1) % K;
                let a = base + (i * K + k) as u32;
                let b = base + (i * K + k2) as u32;
                let c = base + (j * K + k) as u32;
                let d = base + (j * K + k2) as u32;
                self.indices.extend([a, c, b, b, c, d]);
            }
        }
    }

    /// A slightly domed lens filling `outline` (rings from the centre outwards).
    fn lens(&mut self, outline: &[[f32; 3]], centre: [f32; 2]) {
        const RINGS: usize = 4;
        let n = outline.len();
        let base = self.positions.len() as u32;
        let dome = 0.003;
        self.positions.push([centre[0], centre[1], dome]);
        self.normals.push([0.0, 0.0, 1.0]);
        self.uvs.push([0.5, 0.5]);
        for r in 1..=RINGS {
            let f = r as f32 / RINGS as f32;
            for p in outline {
                let x = centre[0] + (p[0] - centre[0]) * f;
                let y = centre[1] + (p[1] - centre[1]) * f;
                let z = dome * (1.0 - f * f) - 0.0005;
                self.positions.push([x, y, z]);
                // Normal of the dome z = d(1 - f²): tilts outwards by 2·d·f / radius.
                let dx = p[0] - centre[0];
                let dy = p[1] - centre[1];
                let rr = (dx * dx + dy * dy).max(1e-8);
                let g = 2.0 * dome * f / rr.sqrt();
                let dir = Vec3::new(dx / rr.sqrt() * g, dy / rr.sqrt() * g, 1.0);
                self.normals.push(normalize_or(dir, Vec3::Z).to_array());
                self.uvs.push([0.5 + dx * f * 10.0, 0.5 - dy * f * 10.0]);
            }
        }
        for i in 0..n {
            let j = (i + 1) % n;
            self.indices
                .extend([base, base + 1 + i as u32, base + 1 + j as u32]);
        }
        for r in 1..RINGS {
            let a0 = base + 1 + ((r - 1) * n) as u32;
            let b0 = base + 1 + (r * n) as u32;
            for i in 0..n as u32 {
                let j = (i + 1) % n as u32;
                self.indices
                    .extend([a0 + i, b0 + i, a0 + j, a0 + j, b0 + i, b0 + j]);
            }
        }
    }

    fn into_primitive(self, material: usize) -> Primitive {
        Primitive {
            positions: self.positions,
            normals: self.normals,
            uvs: self.uvs,
            uvs1: Vec::new(),
            colors: Vec::new(),
            indices: self.indices,
            material,
            part: 0,
        }
    }
}

impl SampleFrame {
    /// The frame as a `.gltf` JSON file with a data-URI buffer.
    pub fn gltf_embedded(self) -> Vec<u8> {
        let (frame, lens) = self.materials();
        write_gltf_embedded(&self.parts(), &[frame, lens], &self.textures())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::{load, AlphaMode, Format};

    #[test]
    fn every_sample_round_trips_through_glb_and_gltf() {
        for s in SampleFrame::ALL {
            let direct = s.product();
            for (bytes, fmt) in [(s.glb(), Format::Glb), (s.gltf_embedded(), Format::Gltf)] {
                let p = load(&bytes).unwrap_or_else(|e| panic!("{}: {e}", s.name()));
                assert_eq!(p.format, fmt);
                assert_eq!(p.triangle_count(), direct.triangle_count());
                let (lo, hi) = p.bounds();
                let (dlo, dhi) = direct.bounds();
                for k in 0..3 {
                    assert!((lo[k] - dlo[k]).abs() < 1e-6 && (hi[k] - dhi[k]).abs() < 1e-6);
                }
                assert!(p.materials.iter().any(|m| m.alpha_mode == AlphaMode::Blend));
                assert_eq!(
                    p.textures.len(),
                    usize::from(s == SampleFrame::RectTortoise)
                );
            }
        }
    }

    #[test]
    fn limits_are_checked_before_reading() {
        use crate::product::{load_with_limits, Limits};
        let glb = SampleFrame::RectTortoise.glb();
        for (limits, what) in [
            (
                Limits {
                    max_vertices: 100,
                    ..Limits::default()
                },
                "vertices",
            ),
            (
                Limits {
                    max_triangles: 100,
                    ..Limits::default()
                },
                "triangles",
            ),
            (
                Limits {
                    max_texture_side: 32,
                    ..Limits::default()
                },
                "texture side",
            ),
            (
                Limits {
                    max_texture_pixels: 1000,
                    ..Limits::default()
                },
                "texture pixels",
            ),
        ] {
            match load_with_limits(&glb, &limits) {
                Err(crate::product::ProductError::TooLarge { what: w, .. }) => assert_eq!(w, what),
                other => panic!("{what}: {other:?}"),
            }
        }
    }

    #[test]
    fn node_transforms_and_alpha_modes_are_applied() {
        let p = SampleFrame::RoundBlack.product();
        let mut prim = p.primitives[0].clone();
        prim.material = 0;
        let masked = Material {
            alpha_mode: AlphaMode::Mask,
            alpha_cutoff: 0.25,
            ..p.materials[0].clone()
        };
        let glb = write_glb(&[(prim.clone(), [1.0, 2.0, 3.0])], &[masked], &[]);
        let q = load(&glb).unwrap();
        assert_eq!(q.materials[0].alpha_mode, AlphaMode::Mask);
        assert_eq!(q.materials[0].alpha_cutoff, 0.25);
        for (a, b) in q.primitives[0].positions.iter().zip(&prim.positions) {
            assert!((a[0] - b[0] - 1.0).abs() < 1e-6 && (a[2] - b[2] - 3.0).abs() < 1e-6);
        }
    }

    #[test]
    fn frames_follow_the_conventions() {
        for s in SampleFrame::ALL {
            let (lo, hi) = s.product().bounds();
            let width = hi[0] - lo[0];
            assert!((0.11..0.16).contains(&width), "{}: {width}", s.name());
            assert!((lo[0] + hi[0]).abs() < 1e-4, "symmetric");
            assert!(lo[2] < -0.1 && hi[2] < 0.01, "temples go back along -z");
        }
    }
}
