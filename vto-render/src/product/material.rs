//! glTF materials as vto renders them: what is read from the JSON beyond the `gltf` crate's
//! model, and how it maps onto [`Material`](super::Material) (base colour, its texture and UV
//! set, metallic, roughness, alpha, double-sided).
//!
//! - `KHR_materials_pbrSpecularGlossiness` is converted to metal-rough with the Khronos
//!   conversion (`solve_metallic` below): roughness = 1 − glossiness, metallic solved from the
//!   diffuse and specular brightness; a specular-glossiness texture contributes its mean.
//! - Each texture a material shows (base colour, emissive) reads its own coordinates: its
//!   `texCoord` (or `KHR_texture_transform`'s) picks the `TEXCOORD_n`, and its transform is
//!   applied to them at load time. [`uv_sets`] gives a primitive's two UV sets their sources:
//!   set 0 the base colour texture's coordinates, set 1 the emissive texture's when they are
//!   other ones (another `TEXCOORD_n`, or the same under another transform).
//! - The finish on top of the base ([`Finish`](super::Finish)): `KHR_materials_clearcoat`,
//!   `_sheen`, `_ior`, emission (`emissiveFactor`, `emissiveTexture`,
//!   `KHR_materials_emissive_strength`); and `KHR_materials_volume`'s attenuation, which
//!   darkens a transmissive material's tint through its thickness.
//! - `KHR_materials_transmission`: a transmissive material (lens, gem) becomes a tint in the
//!   transparent layer ([`transmission_tint`]).
//! - Everything else a material says that the rasterizer has no place for (normal and
//!   occlusion maps, the factors' textures, iridescence…) is listed in the product's notes.

use serde_json::Value;

use super::Finish;

/// A 2×3 UV matrix (`KHR_texture_transform`: translation · rotation · scale).
pub(super) type UvTransform = [[f32; 3]; 2];

/// A texture of a material and where it reads its coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TexRef {
    /// Index into the glTF `textures`.
    pub texture: usize,
    /// Which `TEXCOORD_n`.
    pub set: u32,
    /// The texture transform, if any.
    pub transform: Option<UvTransform>,
}

impl TexRef {
    /// The coordinates this texture reads.
    pub fn source(&self) -> UvSource {
        UvSource {
            set: self.set,
            transform: self.transform,
        }
    }
}

/// Where one UV set of a primitive comes from: a `TEXCOORD_n`, and the transform its texture
/// applies to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct UvSource {
    /// Which `TEXCOORD_n`.
    pub set: u32,
    /// The texture transform, if any.
    pub transform: Option<UvTransform>,
}

/// The UV sets of a material's primitives and which of them each texture reads.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct UvSets {
    /// Sources of set 0 and set 1 (`None`: set 0 is `TEXCOORD_0` untransformed, set 1 is
    /// left empty).
    pub sources: [Option<UvSource>; 2],
    /// The set the base colour texture reads.
    pub base: u32,
    /// The set the emissive texture reads.
    pub emissive: u32,
}

/// The UV sets for a material whose base colour and emissive textures are `base` and
/// `emissive`: set 0 is the base colour texture's coordinates (without one, the emissive
/// texture's); the emissive texture reads set 0 when its coordinates are the same (same
/// `TEXCOORD_n`, same transform), else set 1.
pub(super) fn uv_sets(base: Option<TexRef>, emissive: Option<TexRef>) -> UvSets {
    let first = base.or(emissive).map(|t| t.source());
    match emissive.map(|t| t.source()) {
        Some(e) if Some(e) != first => UvSets {
            sources: [first, Some(e)],
            base: 0,
            emissive: 1,
        },
        _ => UvSets {
            sources: [first, None],
            base: 0,
            emissive: 0,
        },
    }
}

/// A texture info object (`{"index", "texCoord", "extensions": {"KHR_texture_transform"}}`).
pub(super) fn texture_ref(info: &Value) -> Option<TexRef> {
    let texture = info["index"].as_u64()? as usize;
    let mut set = info["texCoord"].as_u64().unwrap_or(0) as u32;
    let t = &info["extensions"]["KHR_texture_transform"];
    let transform = t.is_object().then(|| {
        if let Some(s) = t["texCoord"].as_u64() {
            set = s as u32;
        }
        let pair = |k: &str, d: f32| {
            let a = &t[k];
            [
                a[0].as_f64().map_or(d, |v| v as f32),
                a[1].as_f64().map_or(d, |v| v as f32),
            ]
        };
        let [ox, oy] = pair("offset", 0.0);
        let [sx, sy] = pair("scale", 1.0);
        let r = t["rotation"].as_f64().unwrap_or(0.0) as f32;
        let (sin, cos) = r.sin_cos();
        [[cos * sx, sin * sy, ox], [-sin * sx, cos * sy, oy]]
    });
    Some(TexRef {
        texture,
        set,
        transform,
    })
}

/// Applies a UV transform.
pub(super) fn transform_uv(m: &UvTransform, uv: [f32; 2]) -> [f32; 2] {
    [
        m[0][0] * uv[0] + m[0][1] * uv[1] + m[0][2],
        m[1][0] * uv[0] + m[1][1] * uv[1] + m[1][2],
    ]
}

/// A material's `KHR_materials_transmission` factor (0 without it).
pub(super) fn transmission_factor(material: &Value) -> f32 {
    let t = &material["extensions"]["KHR_materials_transmission"];
    if t.is_object() {
        t["transmissionFactor"].as_f64().unwrap_or(0.0) as f32
    } else {
        0.0
    }
}

/// The lens tint of a transmissive material: the base colour's hue, its luminance raised to
/// at least [`MIN_LENS_TRANSMITTANCE`] so eyes stay visible through near-black lenses, and the
/// transmission factor as the tint's density (alpha) in the transparent layer.
pub(super) fn transmission_tint(base: [f32; 4], transmission: f32) -> [f32; 4] {
    let lum = 0.2126 * base[0] + 0.7152 * base[1] + 0.0722 * base[2];
    let rgb = if lum < MIN_LENS_TRANSMITTANCE {
        let k = if lum > 1e-6 {
            MIN_LENS_TRANSMITTANCE / lum
        } else {
            0.0
        };
        if k > 0.0 {
            [base[0] * k, base[1] * k, base[2] * k]
        } else {
            [MIN_LENS_TRANSMITTANCE; 3]
        }
    } else {
        [base[0], base[1], base[2]]
    };
    [
        rgb[0].min(1.0),
        rgb[1].min(1.0),
        rgb[2].min(1.0),
        transmission.clamp(0.0, 1.0),
    ]
}

/// The least luminance a transmissive lens lets through (category-3 sunglasses transmit
/// 8–18 % of visible light).
pub const MIN_LENS_TRANSMITTANCE: f32 = 0.15;

/// The spec-gloss parameters of a material, if it uses `KHR_materials_pbrSpecularGlossiness`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SpecGloss {
    /// Linear diffuse RGBA factor.
    pub diffuse: [f32; 4],
    /// The diffuse texture.
    pub diffuse_texture: Option<TexRef>,
    /// Linear specular RGB factor.
    pub specular: [f32; 3],
    /// Glossiness factor.
    pub glossiness: f32,
    /// The specular-glossiness texture (sRGB specular, linear glossiness in alpha).
    pub texture: Option<TexRef>,
}

/// Reads `KHR_materials_pbrSpecularGlossiness` from a material's JSON.
pub(super) fn spec_gloss(material: &Value) -> Option<SpecGloss> {
    let e = &material["extensions"]["KHR_materials_pbrSpecularGlossiness"];
    if !e.is_object() {
        return None;
    }
    let num = |v: &Value, d: f32| v.as_f64().map_or(d, |x| x as f32);
    Some(SpecGloss {
        diffuse: std::array::from_fn(|k| num(&e["diffuseFactor"][k], 1.0)),
        diffuse_texture: texture_ref(&e["diffuseTexture"]),
        specular: std::array::from_fn(|k| num(&e["specularFactor"][k], 1.0)),
        glossiness: num(&e["glossinessFactor"], 1.0),
        texture: texture_ref(&e["specularGlossinessTexture"]),
    })
}

/// The reflectance of a dielectric at normal incidence (4 %), as the conversion assumes.
const DIELECTRIC_SPECULAR: f32 = 0.04;

/// Perceived brightness of a linear colour.
fn brightness(c: [f32; 3]) -> f32 {
    (0.299 * c[0] * c[0] + 0.587 * c[1] * c[1] + 0.114 * c[2] * c[2]).sqrt()
}

/// The metallic value whose metal-rough response matches a diffuse and a specular brightness
/// (the quadratic of the Khronos spec-gloss → metal-rough conversion).
fn solve_metallic(diffuse: f32, specular: f32, one_minus_specular_strength: f32) -> f32 {
    if specular < DIELECTRIC_SPECULAR {
        return 0.0;
    }
    let a = DIELECTRIC_SPECULAR;
    let b = diffuse * one_minus_specular_strength / (1.0 - DIELECTRIC_SPECULAR) + specular
        - 2.0 * DIELECTRIC_SPECULAR;
    let c = DIELECTRIC_SPECULAR - specular;
    let d = (b * b - 4.0 * a * c).max(0.0);
    ((-b + d.sqrt()) / (2.0 * a)).clamp(0.0, 1.0)
}

/// Converts spec-gloss values to `(base colour, metallic, roughness)`; `specular` and
/// `glossiness` are the factors already multiplied by the texture's mean, if any.
pub(super) fn to_metal_rough(
    diffuse: [f32; 4],
    specular: [f32; 3],
    glossiness: f32,
) -> ([f32; 4], f32, f32) {
    let rgb = [diffuse[0], diffuse[1], diffuse[2]];
    let one_minus = 1.0 - specular.iter().copied().fold(0.0, f32::max);
    let metallic = solve_metallic(brightness(rgb), brightness(specular), one_minus);
    let base = std::array::from_fn::<f32, 3, _>(|k| {
        let from_diffuse =
            rgb[k] * one_minus / (1.0 - DIELECTRIC_SPECULAR) / (1.0 - metallic).max(1e-4);
        let from_specular =
            (specular[k] - DIELECTRIC_SPECULAR * (1.0 - metallic)) / metallic.max(1e-4);
        let t = metallic * metallic;
        (from_diffuse * (1.0 - t) + from_specular * t).clamp(0.0, 1.0)
    });
    (
        [base[0], base[1], base[2], diffuse[3]],
        metallic,
        (1.0 - glossiness).clamp(0.0, 1.0),
    )
}

/// Material extensions whose effect reaches the rasterizer (converted or drawn).
pub(super) const RENDERED: &[&str] = &[
    "KHR_materials_transmission",
    "KHR_materials_pbrSpecularGlossiness",
    "KHR_texture_transform",
    "KHR_materials_clearcoat",
    "KHR_materials_sheen",
    "KHR_materials_ior",
    "KHR_materials_emissive_strength",
    "KHR_materials_volume",
];

fn num(v: &Value, default: f32) -> f32 {
    v.as_f64().map_or(default, |x| x as f32).clamp(-1e6, 1e6)
}

fn rgb(v: &Value, default: f32) -> [f32; 3] {
    std::array::from_fn(|k| num(&v[k], default).max(0.0))
}

/// A material's finish, and where its emissive texture is (read by the caller, which also sets
/// the UV set it reads).
pub(super) fn finish(material: &Value) -> (Finish, Option<TexRef>) {
    let ext = &material["extensions"];
    let coat = &ext["KHR_materials_clearcoat"];
    let sheen = &ext["KHR_materials_sheen"];
    let strength = num(
        &ext["KHR_materials_emissive_strength"]["emissiveStrength"],
        1.0,
    )
    .max(0.0);
    let emissive = rgb(&material["emissiveFactor"], 0.0).map(|c| c * strength);
    let ior = num(&ext["KHR_materials_ior"]["ior"], 1.5);
    let finish = Finish {
        clearcoat: num(&coat["clearcoatFactor"], 0.0).clamp(0.0, 1.0),
        clearcoat_roughness: num(&coat["clearcoatRoughnessFactor"], 0.0).clamp(0.0, 1.0),
        sheen_color: if sheen.is_object() {
            rgb(&sheen["sheenColorFactor"], 0.0).map(|c| c.min(1.0))
        } else {
            [0.0; 3]
        },
        sheen_roughness: num(&sheen["sheenRoughnessFactor"], 0.0).clamp(0.0, 1.0),
        emissive,
        emissive_texture: None,
        emissive_uv: 0,
        // 0 is glTF's "infinite" index (a perfect mirror); a dielectric below 1 is not.
        ior: if ior == 0.0 { 1e3 } else { ior.clamp(1.0, 1e3) },
    };
    let texture = (emissive.iter().any(|&c| c > 0.0))
        .then(|| texture_ref(&material["emissiveTexture"]))
        .flatten();
    (finish, texture)
}

/// What light keeps of each colour through a transmissive material's volume
/// (`KHR_materials_volume`): `attenuationColor` ^ (`thicknessFactor` / `attenuationDistance`);
/// white for a thin-walled material (thickness 0) or without the extension.
pub(super) fn volume_attenuation(material: &Value) -> [f32; 3] {
    let v = &material["extensions"]["KHR_materials_volume"];
    let thickness = num(&v["thicknessFactor"], 0.0).max(0.0);
    let distance = v["attenuationDistance"]
        .as_f64()
        .map_or(f32::INFINITY, |d| d as f32);
    if !v.is_object() || thickness == 0.0 || !(distance > 0.0 && distance.is_finite()) {
        return [1.0; 3];
    }
    rgb(&v["attenuationColor"], 1.0).map(|c| c.clamp(0.0, 1.0).powf(thickness / distance))
}

/// What this material asks for that vto does not draw, for the product's notes.
pub(super) fn notes(index: usize, material: &Value) -> Vec<String> {
    let name = material["name"].as_str().unwrap_or("");
    let who = format!("material {index} {name:?}");
    let mut out = Vec::new();
    if let Some(exts) = material["extensions"].as_object() {
        for ext in exts.keys().filter(|e| !RENDERED.contains(&e.as_str())) {
            out.push(format!("{who}: {ext} is not rendered (ignored)"));
        }
    }
    for (key, what) in [
        ("normalTexture", "normal map"),
        ("occlusionTexture", "occlusion map"),
    ] {
        if material[key].is_object() {
            out.push(format!("{who}: {what} is not rendered (ignored)"));
        }
    }
    if material["pbrMetallicRoughness"]["metallicRoughnessTexture"].is_object() {
        out.push(format!(
            "{who}: metallic-roughness texture is not rendered (its factors are)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_matte_diffuse_spec_gloss_material_becomes_a_rough_dielectric() {
        // Grey wool: 4 % specular, low gloss.
        let (base, metallic, roughness) = to_metal_rough([0.5, 0.4, 0.3, 1.0], [0.04; 3], 0.2);
        assert!(metallic < 0.01, "{metallic}");
        assert!((roughness - 0.8).abs() < 1e-6);
        assert!(
            (base[0] - 0.5).abs() < 0.01 && (base[2] - 0.3).abs() < 0.01,
            "{base:?}"
        );
    }

    #[test]
    fn a_black_diffuse_with_gold_specular_becomes_gold_metal() {
        let gold = [1.0, 0.78, 0.34];
        let (base, metallic, _) = to_metal_rough([0.0, 0.0, 0.0, 1.0], gold, 0.9);
        assert!(metallic > 0.95, "{metallic}");
        assert!((base[1] - 0.78).abs() < 0.05, "{base:?}");
    }

    #[test]
    fn texture_transform_offsets_rotates_and_scales() {
        let r = texture_ref(&json!({"index": 2, "texCoord": 0, "extensions": {
            "KHR_texture_transform": {"offset": [0.5, 0.25], "scale": [2.0, 3.0],
            "rotation": std::f64::consts::FRAC_PI_2, "texCoord": 1}}}))
        .unwrap();
        assert_eq!((r.texture, r.set), (2, 1));
        let uv = transform_uv(&r.transform.unwrap(), [1.0, 1.0]);
        // rotation π/2: u' = sy·v + ox, v' = −sx·u + oy.
        assert!(
            (uv[0] - 3.5).abs() < 1e-5 && (uv[1] + 1.75).abs() < 1e-5,
            "{uv:?}"
        );
    }

    #[test]
    fn each_texture_reads_its_own_uv_set() {
        let t = |texture, set, dx: Option<f32>| TexRef {
            texture,
            set,
            transform: dx.map(|dx| [[1.0, 0.0, dx], [0.0, 1.0, 0.0]]),
        };
        // The same coordinates: one set, both textures read it.
        let same = uv_sets(Some(t(0, 0, None)), Some(t(1, 0, None)));
        assert_eq!((same.sources[1], same.base, same.emissive), (None, 0, 0));
        // Emission on TEXCOORD_1: set 1.
        let other = uv_sets(Some(t(0, 0, None)), Some(t(1, 1, None)));
        assert_eq!((other.base, other.emissive), (0, 1));
        assert_eq!(other.sources.map(|s| s.map(|s| s.set)), [Some(0), Some(1)]);
        // The same TEXCOORD under another transform is other coordinates too.
        let moved = uv_sets(Some(t(0, 0, None)), Some(t(1, 0, Some(0.5))));
        assert_eq!(moved.emissive, 1);
        assert_eq!(
            moved.sources[1].and_then(|s| s.transform),
            t(1, 0, Some(0.5)).transform
        );
        // Emission alone reads set 0, from its own TEXCOORD_n.
        let alone = uv_sets(None, Some(t(1, 1, None)));
        assert_eq!(
            (alone.emissive, alone.sources[0].map(|s| s.set)),
            (0, Some(1))
        );
        assert_eq!(uv_sets(None, None), UvSets::default());
    }

    #[test]
    fn unrendered_extensions_are_noted_and_rendered_ones_not() {
        let n = notes(
            3,
            &json!({"name": "cap", "emissiveFactor": [1, 0, 0],
                "extensions": {"KHR_materials_iridescence": {}, "KHR_materials_sheen": {},
                    "KHR_materials_clearcoat": {}, "KHR_materials_transmission": {}}}),
        );
        assert!(
            n.iter().any(|s| s.contains("KHR_materials_iridescence")),
            "{n:?}"
        );
        for drawn in ["sheen", "clearcoat", "transmission", "emission"] {
            assert!(!n.iter().any(|s| s.contains(drawn)), "{drawn}: {n:?}");
        }
    }

    #[test]
    fn clearcoat_sheen_ior_and_emission_are_read() {
        let (f, tex) = finish(&json!({
            "emissiveFactor": [1, 0.5, 0],
            "emissiveTexture": {"index": 4, "texCoord": 1},
            "extensions": {
                "KHR_materials_clearcoat": {"clearcoatFactor": 1.0,
                    "clearcoatRoughnessFactor": 0.04},
                "KHR_materials_sheen": {"sheenColorFactor": [0.5, 0.4, 0.3],
                    "sheenRoughnessFactor": 0.8},
                "KHR_materials_emissive_strength": {"emissiveStrength": 4.0},
                "KHR_materials_ior": {"ior": 2.4}}}));
        assert_eq!((f.clearcoat, f.clearcoat_roughness), (1.0, 0.04));
        assert_eq!((f.sheen_color, f.sheen_roughness), ([0.5, 0.4, 0.3], 0.8));
        assert_eq!(f.emissive, [4.0, 2.0, 0.0]);
        assert!(
            (f.reflectance() - 0.1696).abs() < 1e-3,
            "diamond: {}",
            f.reflectance()
        );
        assert_eq!(tex.map(|t| (t.texture, t.set)), Some((4, 1)));
        // Without the extensions: nothing added, glTF's 4 % reflectance; an emissive texture
        // under a black factor emits nothing and is not read.
        let (f, tex) = finish(&json!({"emissiveTexture": {"index": 0}}));
        assert_eq!(f, Finish::default());
        assert!((f.reflectance() - 0.04).abs() < 1e-6);
        assert!(tex.is_none());
    }

    #[test]
    fn a_thick_coloured_volume_darkens_what_it_transmits() {
        let m = |thickness: f32| {
            json!({"extensions": {"KHR_materials_volume": {"thicknessFactor": thickness,
                "attenuationDistance": 0.5, "attenuationColor": [0.25, 1.0, 0.5]}}})
        };
        assert_eq!(volume_attenuation(&m(0.0)), [1.0; 3], "thin-walled");
        let a = volume_attenuation(&m(1.0));
        assert!((a[0] - 0.0625).abs() < 1e-6 && a[1] == 1.0 && (a[2] - 0.25).abs() < 1e-6);
        assert_eq!(volume_attenuation(&json!({})), [1.0; 3]);
    }
}
