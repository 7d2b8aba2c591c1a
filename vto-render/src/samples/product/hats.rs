//! Procedural sample hats: a baseball cap, a fedora and a beanie.
//!
//! Every hat follows the hat conventions of `docs/products.md`: metres, +Y up, the front
//! facing +Z, the origin at the centre of the head opening, the opening in the `y = 0` plane,
//! an elliptical opening [`OPENING`] wide and long (head size 57), and its kind in the root
//! node's extras (`{"vto": {"kind": "cap" | "brimmed" | "beanie"}}`).

use std::f32::consts::{PI, TAU};

use super::build::{fbm, kinded_glb, kinded_product, shade, texture, value_noise, Builder, Parts};
use crate::math::Vec3;
use crate::product::{AlphaMode, Material, Primitive, Product, Texture};

/// The head opening (metres): breadth (x) and length (z).
pub const OPENING: [f32; 2] = [0.155, 0.195];

/// The sample hats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleHat {
    /// A navy six-panel baseball cap in cotton twill, with a curved visor.
    CapNavy,
    /// A charcoal-brown felt fedora with a black grosgrain band and a snap brim.
    FedoraFelt,
    /// A rust ribbed-knit beanie with a turned-up cuff.
    BeanieKnit,
}

impl SampleHat {
    /// All samples.
    pub const ALL: [SampleHat; 3] = [
        SampleHat::CapNavy,
        SampleHat::FedoraFelt,
        SampleHat::BeanieKnit,
    ];

    /// A file-name stem.
    pub fn name(self) -> &'static str {
        match self {
            SampleHat::CapNavy => "cap_navy",
            SampleHat::FedoraFelt => "fedora_felt",
            SampleHat::BeanieKnit => "beanie_knit",
        }
    }

    /// The kind written to the extras.
    pub fn kind(self) -> &'static str {
        match self {
            SampleHat::CapNavy => "cap",
            SampleHat::FedoraFelt => "brimmed",
            SampleHat::BeanieKnit => "beanie",
        }
    }

    /// The hat as a [`Product`].
    pub fn product(self) -> Product {
        kinded_product(self.parts(), self.name(), self.kind())
    }

    /// The hat as a binary glTF file, its kind in the root node's extras.
    pub fn glb(self) -> Vec<u8> {
        kinded_glb(self.parts(), self.name(), self.kind())
    }

    fn parts(self) -> Parts {
        match self {
            SampleHat::CapNavy => cap(),
            SampleHat::FedoraFelt => fedora(),
            SampleHat::BeanieKnit => beanie(),
        }
    }
}

fn fabric(name: &str, texture: usize, roughness: f32) -> Material {
    Material {
        name: name.into(),
        base_color: [1.0; 4],
        base_color_texture: Some(texture),
        base_color_uv: 0,
        metallic: 0.0,
        roughness,
        alpha_mode: AlphaMode::Opaque,
        alpha_cutoff: 0.5,
        double_sided: true,
        finish: Default::default(),
    }
}

/// The opening ellipse point at angle `phi` (0: +x, π/2: front), scaled by `k`.
fn rim(phi: f32, k: f32) -> Vec3 {
    Vec3::new(
        OPENING[0] / 2.0 * k * phi.cos(),
        0.0,
        OPENING[1] / 2.0 * k * phi.sin(),
    )
}

/// A baseball cap: a six-panel dome, a button, a curved visor.
fn cap() -> (Vec<Primitive>, Vec<Material>, Vec<Texture>) {
    let h = 0.086;
    let mut crown = Builder::default();
    crown.grid(24, 96, true, [6.0, 1.0], |u, v| {
        let phi = u * TAU;
        let t = v * PI / 2.0;
        // Fuller at the front: the front panels stand more upright.
        let front = phi.sin().max(0.0);
        let r = t.cos().max(0.0).powf(0.6 - 0.2 * front);
        let p = rim(phi, r);
        Vec3::new(p.x, h * t.sin() * (1.0 + 0.05 * front), p.z - 0.008 * v * v)
    });
    // Panels seams sit on the texture's column edges (u · 6 repeats): the crown as six
    // slightly puffed panels.
    crown.map(|p| {
        let phi = p.z.atan2(p.x);
        let panel = (phi / TAU * 6.0 + 0.5).rem_euclid(1.0);
        let puff = 1.0 + 0.015 * (panel * PI).sin() * (p.y / h * PI).sin().max(0.0);
        Vec3::new(p.x * puff, p.y, p.z * puff)
    });
    let mut button = Builder::default();
    button.ellipsoid(
        Vec3::new(0.0, h * 1.005, -0.008),
        Vec3::new(0.009, 0.004, 0.009),
        6,
        16,
    );
    // The visor: from the front arc of the opening forward, curved down at the sides.
    let mut visor = Builder::default();
    let (a0, a1) = (0.1 * PI, 0.9 * PI);
    let visor_point = |u: f32, v: f32, lower: f32| {
        let phi = a0 + (a1 - a0) * u;
        // Sewn to the crown's hem: on its outline, overlapping it by 1 mm (tucked inside,
        // the root would pass into the head, be hidden by it and leave a crack of skin
        // between the crown and the visor).
        let inner = rim(phi, 1.0) + Vec3::new(0.0, 0.001, 0.0);
        let reach = 0.078 * phi.sin().powf(1.5);
        let outer = Vec3::new(1.12 * inner.x, 0.0, inner.z + reach);
        let p = inner + (outer - inner) * v;
        let bend = 0.02 * (p.x / 0.09).powi(2) * v;
        // Pitched down about 10° as a cap is worn (more hides the eyes from a camera at eye
        // level), curved down at the sides.
        let pitch = 0.18 * (p.z - inner.z).max(0.0);
        Vec3::new(p.x, -pitch - bend - lower, p.z)
    };
    visor.grid(8, 40, false, [3.0, 1.0], |u, v| visor_point(u, v, 0.0));
    visor.grid(8, 40, false, [3.0, 1.0], |u, v| visor_point(u, v, 0.004));
    // The edges: bands joining the two surfaces along the outer and inner outlines (an open
    // inner edge would show the crown's lining through the slit).
    visor.grid(2, 40, false, [3.0, 0.1], |u, v| {
        visor_point(u, 1.0, 0.004 * v)
    });
    visor.grid(2, 40, false, [3.0, 0.1], |u, v| {
        visor_point(u, 0.0, 0.004 * v)
    });
    let twill = texture(128, |x, y| {
        // Diagonal twill wales, fibre noise, and the six seams (each u repeat is one panel)
        // with a line of stitches beside each.
        let (fx, fy) = (x as f32, y as f32);
        let wale = 0.5 + 0.5 * ((fx + fy) * TAU / 4.0).sin();
        let n = fbm(fx / 8.0, fy / 8.0, 16, 3);
        let mut k = 0.86 + 0.1 * wale + 0.14 * (n - 0.5);
        let edge = x.min(127 - x);
        if edge < 3 {
            k *= 0.4;
        } else if (6..9).contains(&edge) && (y / 4) % 2 == 0 {
            k *= 1.6;
        }
        shade([30.0, 42.0, 84.0], k)
    });
    let visor_tex = texture(64, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        let wale = 0.5 + 0.5 * ((fx + fy) * TAU / 4.0).sin();
        let n = fbm(fx / 8.0, fy / 8.0, 8, 4);
        let mut k = 0.86 + 0.08 * wale + 0.12 * (n - 0.5);
        // Rows of stitching parallel to the visor's edge.
        if (y % 16 == 10 || y % 16 == 13) && (x / 3) % 2 == 0 {
            k *= 1.6;
        }
        shade([30.0, 42.0, 84.0], k)
    });
    let crown = {
        crown.append(button);
        crown.primitive(0)
    };
    (
        vec![crown, visor.primitive(1)],
        vec![fabric("cotton-twill", 0, 0.85), fabric("visor", 1, 0.8)],
        vec![twill, visor_tex],
    )
}

/// A fedora: a tapered, pinched crown with a centre dent, a grosgrain band and a snap brim.
fn fedora() -> (Vec<Primitive>, Vec<Material>, Vec<Texture>) {
    let h = 0.098;
    let pinch = |phi: f32| {
        let g = |c: f32| (-((phi - c) / 0.35).powi(2)).exp();
        g(0.32 * PI) + g(0.68 * PI)
    };
    // The crown: the wall tapers, then turns over into a top with a teardrop dent.
    let crown_point = |u: f32, v: f32| {
        let phi = u * TAU;
        if v < 0.78 {
            let t = v / 0.78;
            let k = 1.0 - 0.14 * t * t - 0.14 * pinch(phi) * t * t;
            let p = rim(phi, 1.0 * k);
            Vec3::new(p.x, h * t, p.z)
        } else {
            let t = (v - 0.78) / 0.22;
            let k0 = 0.86 - 0.14 * pinch(phi);
            // Rounded shoulder, then flat inward to the centre.
            let k = k0 * (1.0 - t).max(0.0).sqrt() * (1.0 - 0.06 * (t * PI).sin());
            let p = rim(phi, k);
            let dent = 0.03 * (-(p.x / 0.02).powi(2)).exp() * (1.0 - (p.z / 0.09).powi(2)).max(0.0);
            let shoulder = 0.008 * (t * PI / 2.0).sin();
            Vec3::new(p.x, h + shoulder - dent * t.min(0.4) / 0.4, p.z)
        }
    };
    let mut crown = Builder::default();
    crown.grid(36, 96, true, [4.0, 2.0], crown_point);
    // The band: a ribbon round the crown's base.
    let mut band = Builder::default();
    band.grid(6, 96, true, [8.0, 1.0], |u, v| {
        let y = 0.004 + 0.034 * v;
        let mut p = crown_point(u, y / h * 0.78);
        p.x *= 1.0 + 0.018 + 0.004 * (v * PI).sin();
        p.z *= 1.0 + 0.015 + 0.004 * (v * PI).sin();
        p
    });
    // The brim: down at the front, up at the back and sides, with a thickness and a bound edge.
    let brim_point = |u: f32, v: f32, lower: f32| {
        let phi = u * TAU;
        let inner = rim(phi, 0.99);
        let w = 0.062 - 0.008 * phi.sin().min(0.0).abs();
        let out = Vec3::new(inner.x, 0.0, inner.z).normalize_or(Vec3::Z);
        let p = inner + out * (w * v);
        let front = phi.sin().max(0.0);
        let back = (-phi.sin()).max(0.0);
        let side = phi.cos().powi(2);
        let lift = (0.012 * back + 0.010 * side - 0.014 * front * front) * v * v;
        Vec3::new(p.x, lift - lower, p.z)
    };
    let mut brim = Builder::default();
    brim.grid(10, 120, true, [10.0, 1.0], |u, v| brim_point(u, v, 0.0));
    brim.grid(10, 120, true, [10.0, 1.0], |u, v| brim_point(u, v, 0.0035));
    brim.grid(2, 120, true, [10.0, 0.1], |u, v| {
        brim_point(u, 1.0, 0.0035 * v)
    });
    let felt = texture(128, |x, y| {
        let n = fbm(x as f32 / 6.0, y as f32 / 6.0, 21, 7);
        let fibre = value_noise(x as f32 * 1.3, y as f32 * 0.4, 166, 9);
        shade(
            [112.0, 82.0, 58.0],
            0.85 + 0.3 * (n - 0.5) + 0.12 * (fibre - 0.5),
        )
    });
    let ribbon = texture(32, |x, y| {
        // Grosgrain: fine horizontal ribs.
        let rib = 0.5 + 0.5 * (y as f32 * TAU / 4.0).sin();
        let n = value_noise(x as f32 / 3.0, y as f32 / 3.0, 11, 2);
        shade([20.0, 18.0, 18.0], 0.85 + 0.25 * rib + 0.1 * (n - 0.5))
    });
    crown.append(brim);
    (
        vec![crown.primitive(0), band.primitive(1)],
        vec![
            fabric("wool-felt", 0, 0.92),
            fabric("grosgrain-band", 1, 0.45),
        ],
        vec![felt, ribbon],
    )
}

/// A beanie: a ribbed-knit dome slouching a little back, and a turned-up cuff.
fn beanie() -> (Vec<Primitive>, Vec<Material>, Vec<Texture>) {
    let h = 0.125;
    let ribs = 56.0;
    let rib = |phi: f32| 1.0 + 0.012 * (phi * ribs).cos();
    let mut dome = Builder::default();
    dome.grid(30, 224, true, [ribs / 2.0, 6.0], |u, v| {
        let phi = u * TAU;
        let t = v * PI / 2.0;
        let k = t.cos().max(0.0).powf(0.65) * (1.0 + 0.05 * (v * PI).sin());
        let k = k * (1.0 + (rib(phi) - 1.0) * (1.0 - v).sqrt());
        let p = rim(phi, 0.99 * k);
        Vec3::new(p.x, h * t.sin(), p.z - 0.022 * v * v)
    });
    // The cuff: a thicker ribbed band from the opening up, its top edge rolled.
    let cuff_h = 0.058;
    let mut cuff = Builder::default();
    cuff.grid(12, 224, true, [ribs / 2.0, 1.5], |u, v| {
        let phi = u * TAU;
        let roll = (v * PI).sin();
        let k = (1.045 + 0.012 * roll) * (1.0 + 1.4 * (rib(phi) - 1.0));
        let y = cuff_h * v + 0.003 * roll;
        let p = rim(phi, k * (1.0 + 0.06 * y / h));
        Vec3::new(p.x, y - 0.002, p.z - 0.022 * (y / h).powi(2))
    });
    let knit = texture(64, |x, y| {
        // Two knit columns per tile (each is a rib): V-shaped stitches, wool fuzz.
        let cx = (x % 32) as f32 / 32.0;
        let row = y as f32 / 8.0;
        let v = ((cx - 0.5).abs() * 2.0 - (row.fract() - 0.5) * 0.8).abs();
        let stitch = 1.0 - (v * 3.0).min(1.0);
        let groove = (cx * TAU).cos() * 0.5 + 0.5;
        let n = fbm(x as f32 / 4.0, y as f32 / 4.0, 16, 5);
        shade(
            [150.0, 62.0, 38.0],
            0.7 + 0.25 * stitch - 0.18 * groove + 0.2 * (n - 0.5),
        )
    });
    (
        vec![dome.primitive(0), cuff.primitive(0)],
        vec![fabric("wool-knit", 0, 0.95)],
        vec![knit],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::load;

    #[test]
    fn hats_follow_the_conventions_and_round_trip_with_their_kind() {
        for hat in SampleHat::ALL {
            let p = hat.product();
            let (lo, hi) = p.bounds();
            assert!((lo[0] + hi[0]).abs() < 0.01, "{}: centred", hat.name());
            assert!(
                hi[0] - lo[0] >= OPENING[0],
                "{}: wider than the opening",
                hat.name()
            );
            assert!(
                lo[1] > -0.07 && hi[1] > 0.08,
                "{}: sits on y = 0 ({lo:?} {hi:?})",
                hat.name()
            );
            let back = load(&hat.glb()).expect("the GLB loads");
            assert_eq!(back.meta.kind.as_deref(), Some(hat.kind()));
            assert_eq!(back.triangle_count(), p.triangle_count());
        }
    }
}
