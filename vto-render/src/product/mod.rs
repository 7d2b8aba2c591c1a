//! 3D products: glTF 2.0 (`.glb`, `.gltf` with embedded / data-URI buffers) and OBJ, loaded
//! into one flat, already-transformed triangle soup with PBR metallic-roughness materials.
//!
//! - [`load`] sniffs the format (GLB magic, JSON, else OBJ text) and checks [`Limits`]
//!   (vertices, triangles, texture sizes, file size) **before** allocating for them.
//! - Node transforms are applied (the default scene, else the first, else every root node), so
//!   a [`Product`] is a list of [`Primitive`]s in the asset's own frame (glTF: metres, +Y up,
//!   front +Z — see `RENDERING.md`, "Asset conventions").
//! - Each primitive keeps its vertex colours (`COLOR_0`) and up to two UV sets: the
//!   coordinates its material's textures read, each under its own transform (see
//!   [`Primitive`]).
//! - What the file says about itself (glTF `extras.vto`: kind, foot, chain length; node and
//!   mesh names) is parsed once, into [`Product::meta`] ([`ProductMeta`]; [`meta`] documents
//!   where it is read and which value wins).
//! - A malformed file gives a [`ProductError`] with a stable [`ProductError::code`], never a
//!   panic.
//! - [`write`](mod@write) is the inverse: a product's primitives, materials and textures as GLB, `.gltf`
//!   or OBJ (test assets, and the procedural samples of `crate::samples`, feature `samples`).

use crate::math::{normalize_or, Vec3};

mod accessor;
mod draco;
mod gltf_load;
mod ktx2;
mod material;
mod meshopt;
pub mod meta;
mod obj;
pub mod pick;
pub mod pose;
mod texture;
mod vertices;
pub mod write;

pub use meta::{Foot, Part, ProductMeta};

/// Limits checked before anything large is allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted file, in bytes.
    pub max_file_bytes: usize,
    /// Most vertices over all primitives (after node instancing).
    pub max_vertices: usize,
    /// Most triangles over all primitives (after node instancing).
    pub max_triangles: usize,
    /// Largest texture side, in pixels.
    pub max_texture_side: u32,
    /// Most texture pixels over all textures.
    pub max_texture_pixels: u64,
    /// Deepest node hierarchy.
    pub max_node_depth: usize,
    /// Most node visits while walking the scene: a node listed as the child of several
    /// parents is visited once per path, so a few dozen nodes can stand for billions of
    /// visits. Mesh instances count against it too.
    pub max_node_instances: usize,
}

impl Default for Limits {
    /// 64 MiB files, 500 k vertices, 500 k triangles, 4096² textures (32 Mpx in all), 32 levels,
    /// 100 k node instances.
    fn default() -> Self {
        Limits {
            max_file_bytes: 64 << 20,
            max_vertices: 500_000,
            max_triangles: 500_000,
            max_texture_side: 4096,
            max_texture_pixels: 32 << 20,
            max_node_depth: 32,
            max_node_instances: 100_000,
        }
    }
}

/// Why a product could not be loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProductError {
    /// The file is not a well-formed glTF / OBJ file.
    #[error("malformed 3D model: {0}")]
    Malformed(String),
    /// The file uses something this loader does not read (external URIs, sparse accessors…).
    #[error("unsupported 3D model feature: {0}")]
    Unsupported(String),
    /// The file exceeds a [`Limits`] field.
    #[error("3D model too large: {what} is {got}, the limit is {limit}")]
    TooLarge {
        /// Which limit.
        what: &'static str,
        /// The value found.
        got: u64,
        /// The limit.
        limit: u64,
    },
    /// The file holds no triangles.
    #[error("3D model has no triangles")]
    Empty,
}

impl ProductError {
    /// A stable machine-readable code: `product_malformed`, `product_unsupported`,
    /// `product_too_large` or `product_empty`.
    pub fn code(&self) -> &'static str {
        match self {
            ProductError::Malformed(_) => "product_malformed",
            ProductError::Unsupported(_) => "product_unsupported",
            ProductError::TooLarge { .. } => "product_too_large",
            ProductError::Empty => "product_empty",
        }
    }
}

/// How a material's alpha is used (glTF `alphaMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlphaMode {
    /// Fully opaque; alpha ignored.
    Opaque,
    /// Opaque where alpha ≥ the cutoff, absent elsewhere.
    Mask,
    /// Blended: rendered in the transparent pass (lenses).
    Blend,
}

/// A PBR metallic-roughness material.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// The name in the file, if any.
    pub name: String,
    /// Linear RGBA base colour factor.
    pub base_color: [f32; 4],
    /// Index into [`Product::textures`] of the base colour texture.
    pub base_color_texture: Option<usize>,
    /// Which of a primitive's UV sets the base colour texture reads: 0 [`Primitive::uvs`],
    /// 1 [`Primitive::uvs1`].
    pub base_color_uv: u32,
    /// Metallic factor in [0, 1].
    pub metallic: f32,
    /// Roughness factor in [0, 1].
    pub roughness: f32,
    /// Alpha mode.
    pub alpha_mode: AlphaMode,
    /// Alpha cutoff for [`AlphaMode::Mask`].
    pub alpha_cutoff: f32,
    /// Whether back faces are shown (the rasterizer never culls; this only flips normals).
    pub double_sided: bool,
    /// The layers and light on top of the base (clearcoat, sheen, emission, index of
    /// refraction): none by default.
    pub finish: Finish,
}

/// What a material adds to its metal-rough base: glTF's `KHR_materials_clearcoat`,
/// `_sheen`, `_ior` and emission (`emissiveFactor` × `emissiveTexture` ×
/// `KHR_materials_emissive_strength`).
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    /// Clearcoat layer strength in [0, 1] (lacquer over a frame or a shoe).
    pub clearcoat: f32,
    /// The clearcoat's roughness in [0, 1].
    pub clearcoat_roughness: f32,
    /// Linear sheen colour (velvet, felt, knit: light caught at grazing angles); black is none.
    pub sheen_color: [f32; 3],
    /// The sheen's roughness in [0, 1].
    pub sheen_roughness: f32,
    /// Linear emitted colour, strength included.
    pub emissive: [f32; 3],
    /// Index into [`Product::textures`] of the emissive texture.
    pub emissive_texture: Option<usize>,
    /// Which of a primitive's UV sets the emissive texture reads: 0 [`Primitive::uvs`], 1
    /// [`Primitive::uvs1`].
    pub emissive_uv: u32,
    /// Index of refraction of a dielectric (glTF's default 1.5: 4 % reflectance head on).
    pub ior: f32,
}

impl Finish {
    /// The head-on reflectance of the material as a dielectric: ((n − 1) / (n + 1))² (0.04
    /// at glTF's default index 1.5).
    pub fn reflectance(&self) -> f32 {
        ((self.ior - 1.0) / (self.ior + 1.0)).powi(2)
    }
}

impl Default for Finish {
    /// No coat, no sheen, no emission, glTF's index of refraction 1.5.
    fn default() -> Self {
        Finish {
            clearcoat: 0.0,
            clearcoat_roughness: 0.0,
            sheen_color: [0.0; 3],
            sheen_roughness: 0.0,
            emissive: [0.0; 3],
            emissive_texture: None,
            emissive_uv: 0,
            ior: 1.5,
        }
    }
}

impl Default for Material {
    /// glTF's default material: white, fully metallic, fully rough, opaque.
    fn default() -> Self {
        Material {
            name: String::new(),
            base_color: [1.0; 4],
            base_color_texture: None,
            base_color_uv: 0,
            metallic: 1.0,
            roughness: 1.0,
            alpha_mode: AlphaMode::Opaque,
            alpha_cutoff: 0.5,
            double_sided: false,
            finish: Finish::default(),
        }
    }
}

/// A decoded RGBA8 texture (sRGB).
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 4` bytes.
    pub rgba: Vec<u8>,
}

/// Triangles sharing a material, in the asset frame (node transforms applied).
///
/// A primitive has up to two UV sets, as its material's textures read them: a glTF file's
/// `TEXCOORD_n` with the texture's `KHR_texture_transform` applied. The base colour texture
/// reads set 0 ([`Primitive::uvs`]); an emissive texture that reads other coordinates (another
/// `TEXCOORD_n`, or the same one under another transform) reads set 1 ([`Primitive::uvs1`]).
/// Which set each texture reads is [`Material::base_color_uv`] and [`Finish::emissive_uv`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Primitive {
    /// Positions.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, one per position.
    pub normals: Vec<[f32; 3]>,
    /// UV set 0: texture coordinates, one per position (zero when absent).
    pub uvs: Vec<[f32; 2]>,
    /// UV set 1: texture coordinates, one per position; empty when no texture reads them
    /// (a texture reading an empty set reads (0, 0)).
    pub uvs1: Vec<[f32; 2]>,
    /// Linear RGBA vertex colours (glTF `COLOR_0`), one per position, multiplied into the base
    /// colour (factor × texture × vertex colour, alpha included); empty: none (white).
    pub colors: Vec<[f32; 4]>,
    /// Triangle list indices into the arrays above.
    pub indices: Vec<u32>,
    /// Index into [`Product::materials`].
    pub material: usize,
    /// Which part of the file it belongs to: an index into [`ProductMeta::parts`] (glTF: the
    /// node that instanced its mesh; OBJ and built products: 0, one part).
    pub part: u32,
}

/// The file format a product came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Binary glTF.
    Glb,
    /// JSON glTF with embedded buffers.
    Gltf,
    /// Wavefront OBJ.
    Obj,
}

/// A loaded 3D product.
#[derive(Debug, Clone, PartialEq)]
pub struct Product {
    /// Where it came from.
    pub format: Format,
    /// Its primitives.
    pub primitives: Vec<Primitive>,
    /// Its materials (at least one).
    pub materials: Vec<Material>,
    /// Its textures.
    pub textures: Vec<Texture>,
    /// What the file says about itself: `extras.vto` (kind, foot, chain length, the rest raw)
    /// and the node and mesh names, parsed once at load time (see [`meta`] for the scope).
    pub meta: ProductMeta,
}

impl Product {
    /// Axis-aligned bounds `(min, max)` of every position.
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        let mut lo = [f32::MAX; 3];
        let mut hi = [f32::MIN; 3];
        for p in self.primitives.iter().flat_map(|p| &p.positions) {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        (lo, hi)
    }

    /// Total vertices.
    pub fn vertex_count(&self) -> usize {
        self.primitives.iter().map(|p| p.positions.len()).sum()
    }

    /// Total triangles.
    pub fn triangle_count(&self) -> usize {
        self.primitives.iter().map(|p| p.indices.len() / 3).sum()
    }
}

/// Loads a product from bytes (format sniffed) with default [`Limits`].
pub fn load(bytes: &[u8]) -> Result<Product, ProductError> {
    load_with_limits(bytes, &Limits::default())
}

/// Loads a product from bytes with explicit limits.
pub fn load_with_limits(bytes: &[u8], limits: &Limits) -> Result<Product, ProductError> {
    if bytes.len() > limits.max_file_bytes {
        return Err(ProductError::TooLarge {
            what: "file size",
            got: bytes.len() as u64,
            limit: limits.max_file_bytes as u64,
        });
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let product = if bytes.starts_with(b"glTF") {
        gltf_load::load(bytes, limits, Format::Glb)?
    } else if first == Some(b'{') {
        gltf_load::load(bytes, limits, Format::Gltf)?
    } else {
        obj::load(bytes, limits)?
    };
    if product.triangle_count() == 0 {
        return Err(ProductError::Empty);
    }
    Ok(product)
}

/// Smooth normals from triangle areas, for primitives that have none.
pub(crate) fn compute_normals(positions: &[[f32; 3]], indices: &[u32]) -> Vec<[f32; 3]> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0] as usize, t[1] as usize, t[2] as usize];
        let [pa, pb, pc] = [a, b, c].map(|i| Vec3::from(positions[i]));
        let f = (pb - pa).cross(pc - pa);
        for i in [a, b, c] {
            n[i] += f;
        }
    }
    n.into_iter()
        .map(|v| normalize_or(v, Vec3::Z).to_array())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_stable() {
        assert_eq!(
            ProductError::Malformed("x".into()).code(),
            "product_malformed"
        );
        assert_eq!(ProductError::Empty.code(), "product_empty");
        let e = ProductError::TooLarge {
            what: "vertices",
            got: 2,
            limit: 1,
        };
        assert_eq!(e.code(), "product_too_large");
        assert!(e.to_string().contains("vertices"));
    }

    #[test]
    fn oversized_files_are_refused_before_parsing() {
        let limits = Limits {
            max_file_bytes: 8,
            ..Limits::default()
        };
        let err = load_with_limits(b"v 0 0 0\nv 1 0 0\n", &limits).unwrap_err();
        assert_eq!(err.code(), "product_too_large");
    }

    #[test]
    fn normals_of_a_ccw_triangle_face_plus_z() {
        let n = compute_normals(
            &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            &[0, 1, 2],
        );
        for v in n {
            assert!((v[2] - 1.0).abs() < 1e-6);
        }
    }
}
