//! Procedural sample jewels: gold studs with a cut gem, gold hoops, silver drops with a
//! sapphire, a gold chain with a pendant, a ring and a bangle.
//!
//! They follow the jewelry conventions of `docs/products.md`: metres, +Y up, the front
//! facing +Z; earrings have their origin at the piercing (one earring per file, worn mirrored
//! on the other ear); a necklace has its origin at the centre of the neck's base, the clasp
//! towards −Z and the pendant at the front; the kind is in the root node's extras
//! (`{"vto": {"kind": ...}}`). Metals are metallic with a low roughness (they reflect the
//! environment); gems are cut into flat facets that glint.

use std::f32::consts::{PI, TAU};

use super::build::{glb_with_extras, kinded_product, shade, texture, Builder, Parts};
use crate::math::Vec3;
use crate::product::{AlphaMode, Material, Product, Texture};

/// The sample jewels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleJewel {
    /// Gold studs set with a round-cut ruby.
    StudRuby,
    /// Gold hoops, 2 cm across.
    HoopGold,
    /// Silver drops: a short chain and a teardrop sapphire.
    DropSapphire,
    /// A fine gold chain with a round pendant set with an emerald.
    NecklacePendant,
    /// A gold ring with a solitaire.
    RingSolitaire,
    /// A polished silver bangle.
    BangleSilver,
}

impl SampleJewel {
    /// All samples.
    pub const ALL: [SampleJewel; 6] = [
        SampleJewel::StudRuby,
        SampleJewel::HoopGold,
        SampleJewel::DropSapphire,
        SampleJewel::NecklacePendant,
        SampleJewel::RingSolitaire,
        SampleJewel::BangleSilver,
    ];

    /// A file-name stem.
    pub fn name(self) -> &'static str {
        match self {
            SampleJewel::StudRuby => "stud_ruby",
            SampleJewel::HoopGold => "hoop_gold",
            SampleJewel::DropSapphire => "drop_sapphire",
            SampleJewel::NecklacePendant => "necklace_pendant",
            SampleJewel::RingSolitaire => "ring_solitaire",
            SampleJewel::BangleSilver => "bangle_silver",
        }
    }

    /// The kind written to the extras.
    pub fn kind(self) -> &'static str {
        match self {
            SampleJewel::StudRuby => "stud",
            SampleJewel::HoopGold => "hoop",
            SampleJewel::DropSapphire => "drop",
            SampleJewel::NecklacePendant => "necklace",
            SampleJewel::RingSolitaire => "ring",
            SampleJewel::BangleSilver => "bracelet",
        }
    }

    /// The jewel as a [`Product`].
    pub fn product(self) -> Product {
        let mut p = kinded_product(self.parts(), self.name(), self.kind());
        p.meta.length_cm = self.length_cm();
        p
    }

    /// The jewel as a binary glTF file, its kind (and a necklace's chain length,
    /// `length_cm`) in the root node's extras.
    pub fn glb(self) -> Vec<u8> {
        let mut vto = serde_json::json!({"kind": self.kind()});
        if let Some(len) = self.length_cm() {
            vto["length_cm"] = len.into();
        }
        glb_with_extras(self.parts(), self.name(), serde_json::json!({ "vto": vto }))
    }

    /// A necklace's chain length (cm, rounded to 0.5): the length of its modelled chain.
    pub fn length_cm(self) -> Option<f32> {
        (self == SampleJewel::NecklacePendant).then(|| {
            let path = necklace_path();
            let len: f32 = path
                .iter()
                .zip(path.iter().cycle().skip(1))
                .map(|(a, b)| a.distance(*b))
                .sum();
            (len * 200.0).round() / 2.0
        })
    }

    fn parts(self) -> Parts {
        let gold = [1.0, 0.74, 0.32, 1.0];
        let silver = [0.93, 0.92, 0.9, 1.0];
        let ruby = [0.6, 0.02, 0.06, 1.0];
        let sapphire = [0.04, 0.12, 0.6, 1.0];
        let emerald = [0.02, 0.45, 0.16, 1.0];
        let diamond = [0.9, 0.92, 0.95, 1.0];
        let mut metal = Builder::default();
        let mut gem = Builder::default();
        let (metal_color, gem_color) = match self {
            SampleJewel::StudRuby => {
                // A polished bezel 7.8 mm across round a 5 mm stone (a common stud), its
                // rim wide enough to show as a gold ring round the red even at 6 px; the
                // gem's table 2 mm in front of the lobe.
                torus(
                    &mut metal,
                    Vec3::new(0.0, 0.0, 0.0013),
                    0.003,
                    0.0009,
                    Axis::Z,
                );
                disc(&mut metal, Vec3::new(0.0, 0.0, 0.0005), 0.0031);
                brilliant(&mut gem, Vec3::new(0.0, 0.0, 0.0014), 0.0025, 1.0);
                (gold, ruby)
            }
            SampleJewel::HoopGold => {
                torus(
                    &mut metal,
                    Vec3::new(0.0, -0.0105, 0.0),
                    0.0105,
                    0.0013,
                    Axis::Z,
                );
                return (
                    vec![metal.primitive(0)],
                    vec![metal_mat(gold)],
                    vec![polish()],
                );
            }
            SampleJewel::DropSapphire => {
                // A ring through the lobe, a short chain, the stone hanging below.
                torus(
                    &mut metal,
                    Vec3::new(0.0, -0.002, 0.0),
                    0.002,
                    0.0005,
                    Axis::X,
                );
                let chain: Vec<Vec3> = (0..=12)
                    .map(|i| Vec3::new(0.0, -0.004 - 0.001 * i as f32, 0.0))
                    .collect();
                metal.tube(&chain, 0.0005, 6, false);
                torus(
                    &mut metal,
                    Vec3::new(0.0, -0.0175, 0.0),
                    0.0012,
                    0.0004,
                    Axis::X,
                );
                brilliant(&mut gem, Vec3::new(0.0, -0.025, 0.0), 0.0045, 1.5);
                (silver, sapphire)
            }
            SampleJewel::NecklacePendant => {
                let path = necklace_path();
                metal.tube(&path, 0.0009, 6, true);
                let low =
                    path.iter()
                        .copied()
                        .fold(Vec3::splat(f32::MAX), |a, p| if p.y < a.y { p } else { a });
                torus(
                    &mut metal,
                    low + Vec3::new(0.0, -0.0025, 0.0),
                    0.0022,
                    0.0006,
                    Axis::X,
                );
                let centre = low + Vec3::new(0.0, -0.0115, 0.0025);
                torus(&mut metal, centre, 0.0065, 0.0011, Axis::Z);
                disc(&mut metal, centre - Vec3::new(0.0, 0.0, 0.0008), 0.0066);
                brilliant(&mut gem, centre + Vec3::new(0.0, 0.0, 0.0005), 0.0042, 1.0);
                (gold, emerald)
            }
            SampleJewel::RingSolitaire => {
                // Finger along +Y: the band round the Y axis, the stone on top (+Z), held
                // in a six-prong head: a 5.6 mm brilliant (about 0.6 ct) whose girdle sits
                // 2.8 mm above the band, its culet just clear of the band's top.
                torus(&mut metal, Vec3::ZERO, 0.0095, 0.0012, Axis::Y);
                let stone = Vec3::new(0.0, 0.0, RING_GIRDLE_Z);
                prong_head(&mut metal, stone, RING_STONE_R, 0.0095 + 0.0012);
                brilliant(&mut gem, stone, RING_STONE_R, 1.0);
                (gold, diamond)
            }
            SampleJewel::BangleSilver => {
                torus(&mut metal, Vec3::ZERO, 0.032, 0.0028, Axis::Y);
                return (
                    vec![metal.primitive(0)],
                    vec![metal_mat(silver)],
                    vec![polish()],
                );
            }
        };
        (
            vec![metal.primitive(0), gem.faceted(1)],
            vec![metal_mat(metal_color), gem_mat(gem_color)],
            vec![polish()],
        )
    }
}

/// The solitaire's stone: its radius (m) and its girdle's height above the band's axis.
pub const RING_STONE_R: f32 = 0.0028;
/// See [`RING_STONE_R`].
pub const RING_GIRDLE_Z: f32 = 0.0135;
/// The solitaire's prongs: how many, and their wire's radius (m; real claws are 0.7–1 mm).
pub const RING_PRONGS: usize = 6;
/// See [`RING_PRONGS`].
pub const PRONG_R: f32 = 0.0005;

/// A prong head holding a round brilliant (girdle centre `stone`, radius `r`, facing +Z) on a
/// band whose top is at height `seat` (+Z): [`RING_PRONGS`] claws rising from a seat on the
/// band, flaring out past the girdle and bending over the crown's edge, each ending in a
/// rounded tip; a gallery rail joins them under the girdle. The claws stand between the
/// pavilion's facets (they grip the girdle, not a facet's face).
fn prong_head(b: &mut Builder, stone: Vec3, r: f32, seat: f32) {
    let girdle = stone.z;
    for k in 0..RING_PRONGS {
        let a = (k as f32 + 0.5) / RING_PRONGS as f32 * TAU;
        let dir = Vec3::new(a.cos(), a.sin(), 0.0);
        // (radius from the stone's axis as a fraction of r, height above the girdle in r).
        let profile: [(f32, f32); 7] = [
            (0.35, (seat - 0.0004 - girdle) / r),
            (0.62, -0.62),
            (0.92, -0.3),
            (1.1, 0.0),
            (1.1, 0.12),
            (1.0, 0.24),
            (0.86, 0.27),
        ];
        let path: Vec<Vec3> = profile
            .iter()
            .map(|&(f, z)| Vec3::new(stone.x, stone.y, girdle) + dir * (f * r) + Vec3::Z * (z * r))
            .collect();
        b.tube(&path, PRONG_R, 8, false);
        let tip = path[path.len() - 1];
        b.ellipsoid(tip, Vec3::splat(PRONG_R * 1.25), 6, 10);
    }
    // The gallery rail under the girdle, and the seat on the band.
    torus(b, stone - Vec3::Z * (0.45 * r), 0.8 * r, 0.00032, Axis::Z);
    b.ellipsoid(
        Vec3::new(stone.x, stone.y, seat - 0.0002),
        Vec3::new(0.45 * r, 0.4 * r, 0.22 * r),
        6,
        16,
    );
}

/// The axis a torus turns about.
#[derive(Debug, Clone, Copy)]
enum Axis {
    X,
    Y,
    Z,
}

fn torus(b: &mut Builder, centre: Vec3, major: f32, minor: f32, axis: Axis) {
    b.grid(64, 10, true, [1.0, 8.0], |u, v| {
        let (a, t) = (v * TAU, u * TAU);
        let r = major + minor * t.cos();
        let (p, q, h) = (r * a.cos(), r * a.sin(), minor * t.sin());
        centre
            + match axis {
                Axis::Z => Vec3::new(p, q, h),
                Axis::Y => Vec3::new(p, h, q),
                Axis::X => Vec3::new(h, p, q),
            }
    });
}

/// A flat disc facing ±Z.
fn disc(b: &mut Builder, centre: Vec3, radius: f32) {
    b.grid(2, 32, true, [1.0, 1.0], |u, v| {
        let a = u * TAU;
        centre + Vec3::new(radius * v * a.cos(), radius * v * a.sin(), 0.0)
    });
}

/// A round brilliant facing +Z (table, crown, girdle, pavilion), `elongation` stretching it
/// along Y (a pear / teardrop shape below 1.5).
fn brilliant(b: &mut Builder, centre: Vec3, radius: f32, elongation: f32) {
    // (radius fraction, height fraction): table centre to culet.
    const PROFILE: [(f32, f32); 5] = [
        (0.0, 0.42),
        (0.56, 0.42),
        (1.0, 0.05),
        (1.0, -0.02),
        (0.0, -0.75),
    ];
    b.grid(4, 16, true, [1.0, 1.0], |u, v| {
        let i = (v * 4.0).round() as usize;
        let (r, z) = PROFILE[i.min(4)];
        let a = u * TAU + PI / 16.0 * (i % 2) as f32;
        let (x, mut y) = (r * a.cos(), r * a.sin());
        if elongation > 1.0 && y < 0.0 {
            y *= elongation;
        }
        centre + Vec3::new(x, y, z) * radius
    });
}

/// The necklace's chain: round the neck's base at the back, draped down onto the chest at
/// the front (its lowest point 6.5 cm under the origin, 2 cm forward of the neck).
fn necklace_path() -> Vec<Vec3> {
    let (rx, rz) = (0.058, 0.055);
    let front_half = 1.9f32;
    (0..480)
        .map(|i| {
            let phi = i as f32 / 480.0 * TAU;
            let (s, c) = phi.sin_cos();
            let w = ((c - front_half.cos()) / (1.0 - front_half.cos())).max(0.0);
            let drape = w.powf(1.6);
            Vec3::new(
                rx * s * (1.0 - 0.25 * drape),
                0.008 * (1.0 - c) / 2.0 - 0.065 * drape,
                rz * c + 0.02 * drape,
            )
        })
        .collect()
}

fn metal_mat(color: [f32; 4]) -> Material {
    Material {
        name: "metal".into(),
        base_color: color,
        base_color_texture: Some(0),
        base_color_uv: 0,
        metallic: 1.0,
        roughness: 0.16,
        alpha_mode: AlphaMode::Opaque,
        alpha_cutoff: 0.5,
        double_sided: true,
        finish: Default::default(),
    }
}

fn gem_mat(color: [f32; 4]) -> Material {
    Material {
        name: "gem".into(),
        base_color: color,
        base_color_texture: None,
        base_color_uv: 0,
        metallic: 0.7,
        roughness: 0.04,
        alpha_mode: AlphaMode::Opaque,
        alpha_cutoff: 0.5,
        double_sided: true,
        finish: Default::default(),
    }
}

/// Polished metal: faint brushing along the tube, link-like banding along a chain.
fn polish() -> Texture {
    texture(16, |x, y| {
        let band = 0.5 + 0.5 * ((y as f32 / 16.0 + x as f32 / 16.0) * TAU).sin();
        shade([255.0, 255.0, 255.0], 0.78 + 0.22 * band)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::load;

    #[test]
    fn jewels_have_real_sizes_and_round_trip_with_their_kind() {
        for j in SampleJewel::ALL {
            let p = j.product();
            let (lo, hi) = p.bounds();
            let size = (0..3).map(|k| hi[k] - lo[k]).fold(0.0f32, f32::max);
            let want = match j {
                SampleJewel::StudRuby => 0.005..0.012,
                SampleJewel::HoopGold | SampleJewel::RingSolitaire => 0.015..0.03,
                SampleJewel::DropSapphire => 0.02..0.04,
                SampleJewel::NecklacePendant => 0.1..0.2,
                SampleJewel::BangleSilver => 0.06..0.08,
            };
            assert!(want.contains(&size), "{}: {size}", j.name());
            let back = load(&j.glb()).expect("the GLB loads");
            assert_eq!(back.meta.kind.as_deref(), Some(j.kind()));
            assert_eq!(back.meta.length_cm, p.meta.length_cm, "{}", j.name());
        }
        // The necklace states its chain's real length: a 40–45 cm chain.
        let len = SampleJewel::NecklacePendant.length_cm().unwrap();
        assert!((40.0..=45.0).contains(&len), "{len}");
    }

    #[test]
    fn the_solitaire_is_held_by_six_prongs_reaching_over_its_girdle() {
        // The metal reaches over the stone's girdle all round (six claws): seen from the
        // front, metal vertices above the girdle's height lie just outside / over the rim
        // in every 60° sector.
        let p = SampleJewel::RingSolitaire.product();
        let metal = &p.primitives[0].positions;
        let mut sectors = [false; RING_PRONGS];
        for q in metal {
            let (x, y, z) = (q[0], q[1], q[2]);
            let r = x.hypot(y);
            if z > RING_GIRDLE_Z && (0.75 * RING_STONE_R..=1.3 * RING_STONE_R).contains(&r) {
                let a = y.atan2(x).rem_euclid(TAU);
                sectors[(a / TAU * RING_PRONGS as f32) as usize % RING_PRONGS] = true;
            }
        }
        assert!(sectors.iter().all(|&s| s), "{sectors:?}");
    }
}
