//! The scene stages every 3D category shares: from a person seen in a photo and a product
//! placed in camera space to a [`raster::Scene`](crate::raster::Scene).
//!
//! - [`camera`]: the photo's pinhole camera and the head frame (where head-worn products are
//!   placed);
//! - [`head`]: points of the canonical head that products rest on (ears, centre);
//! - [`head_scene`]: the head camera, the light from the face, a builder and the head
//!   occluder of a head-worn product, in one place for every head-worn category;
//! - [`light`]: ambient and key light estimated from the photo;
//! - [`occluder`]: depth-only meshes of the person (the head) that hide parts of a product;
//! - [`thin`]: parts narrower than a sample on screen (chains, wires) widened into the
//!   rasterizer's thin layer with their coverage kept;
//! - [`SceneBuilder`]: materials and textures packed for the GPU, the region of interest (the
//!   product's footprint plus its shadow), the supersampling budget, the contact shadow, and
//!   every vertex projected.
//!
//! A category module ([`crate::tryon`]) only decides *where* the product goes: it hands the
//! builder the product's triangles in camera space ([`CameraMesh`]) and its occluders.

pub mod camera;
pub mod head;
pub mod head_scene;
pub mod light;
pub mod occluder;
pub mod thin;

use crate::math::{Vec2, Vec3};
use crate::product::{AlphaMode, Product};
use crate::raster::{Lighting, Mesh, RasterMaterial, RasterVertex, Scene, Shadow, Transparency};
use camera::PhotoCamera;

/// Near plane (cm): product vertices closer to the camera are not drawn.
pub const NEAR_CM: f32 = 1.0;
/// Most supersampled samples per render (64 MB of depth, 64 MB of ids); the supersampling
/// factor is lowered to stay within it.
pub const MAX_SAMPLES: u64 = 4 << 20;

/// Triangles in camera space (cm; x right, y down, z forward), before projection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CameraMesh {
    /// Positions.
    pub positions: Vec<Vec3>,
    /// Unit normals.
    pub normals: Vec<Vec3>,
    /// Texture coordinates, UV set 0 (see [`crate::product::Primitive`]).
    pub uvs: Vec<[f32; 2]>,
    /// Texture coordinates, UV set 1.
    pub uvs1: Vec<[f32; 2]>,
    /// Linear RGBA vertex colours (white: none).
    pub colors: Vec<[f32; 4]>,
    /// The tint-gradient coordinate (0 at the product's top, 1 at its bottom).
    pub aux: Vec<f32>,
    /// Three vertex indices and a material index.
    pub triangles: Vec<[u32; 4]>,
}

impl CameraMesh {
    /// Appends one white vertex with one UV set.
    pub fn push_vertex(&mut self, position: Vec3, normal: Vec3, uv: [f32; 2], aux: f32) {
        self.push(position, normal, [uv, [0.0; 2]], [1.0; 4], aux);
    }

    fn push(&mut self, position: Vec3, normal: Vec3, uv: [[f32; 2]; 2], rgba: [f32; 4], aux: f32) {
        self.positions.push(position);
        self.normals.push(normal);
        self.uvs.push(uv[0]);
        self.uvs1.push(uv[1]);
        self.colors.push(rgba);
        self.aux.push(aux);
    }

    /// Appends every primitive of `product`, each vertex mapped by `place` (asset position and
    /// normal → camera-space position and normal), with both UV sets and the vertex colours
    /// (white where a primitive has none). The tint-gradient coordinate runs over the
    /// product's height in its own frame.
    pub fn push_product(
        &mut self,
        product: &Product,
        mut place: impl FnMut(Vec3, Vec3) -> (Vec3, Vec3),
    ) {
        let (lo, hi) = product.bounds();
        let y_span = (hi[1] - lo[1]).max(1e-9);
        let n_mat = product.materials.len().max(1);
        for p in &product.primitives {
            let base = self.positions.len() as u32;
            let mat = p.material.min(n_mat - 1) as u32;
            for (i, q) in p.positions.iter().enumerate() {
                let n = p.normals.get(i).copied().unwrap_or([0.0, 0.0, 1.0]);
                let uv = p.uvs.get(i).copied().unwrap_or([0.0, 0.0]);
                let uv1 = p.uvs1.get(i).copied().unwrap_or([0.0, 0.0]);
                let rgba = p.colors.get(i).copied().unwrap_or([1.0; 4]);
                let (pos, nrm) = place(Vec3::from(*q), Vec3::from(n));
                self.push(pos, nrm, [uv, uv1], rgba, (hi[1] - q[1]) / y_span);
            }
            self.triangles.extend(
                p.indices
                    .chunks_exact(3)
                    .map(|t| [base + t[0], base + t[1], base + t[2], mat]),
            );
        }
    }
}

/// Materials and packed textures of `product`, as the rasterizer reads them.
pub fn materials(product: &Product) -> (Vec<RasterMaterial>, Vec<u32>) {
    let mut texels = Vec::new();
    let mut offsets = Vec::new();
    for t in &product.textures {
        offsets.push(texels.len() as u32);
        texels.extend(
            t.rgba
                .chunks_exact(4)
                .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]])),
        );
    }
    let materials = product
        .materials
        .iter()
        .map(|m| {
            let slot = |texture: Option<usize>| {
                texture
                    .and_then(|i| product.textures.get(i).map(|t| (i, t)))
                    .map_or([0; 4], |(i, t)| [offsets[i], t.width, t.height, 1])
            };
            let f = &m.finish;
            RasterMaterial {
                base: m.base_color,
                pbr: [m.metallic, m.roughness, m.alpha_cutoff, f.reflectance()],
                tex: slot(m.base_color_texture),
                flags: [
                    match m.alpha_mode {
                        AlphaMode::Opaque => 0,
                        AlphaMode::Mask => 1,
                        AlphaMode::Blend => 2,
                    },
                    u32::from(m.double_sided),
                    0,
                    uv_sets(m.base_color_uv, f.emissive_uv),
                ],
                coat: [f.clearcoat, f.clearcoat_roughness, f.sheen_roughness, 0.0],
                sheen: [f.sheen_color[0], f.sheen_color[1], f.sheen_color[2], 0.0],
                glow: [f.emissive[0], f.emissive[1], f.emissive[2], 0.0],
                glow_tex: slot(f.emissive_texture),
            }
        })
        .collect();
    (materials, texels)
}

/// `RasterMaterial::flags[3]`: which UV set the base colour (bit 0) and the emissive (bit 1)
/// textures read.
fn uv_sets(base: u32, emissive: u32) -> u32 {
    u32::from(base == 1) | u32::from(emissive == 1) << 1
}

/// Why a scene could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneError {
    /// Nothing of the product lies in front of the camera.
    #[error("no vertex of the 3D model lies in front of the camera")]
    BehindCamera,
    /// The product has no triangles or no materials.
    #[error("the 3D model has no triangles")]
    Empty,
}

/// Collects a product, its occluders and the light, then projects them into a
/// [`Scene`] (see the module docs).
#[derive(Debug, Clone)]
pub struct SceneBuilder {
    camera: PhotoCamera,
    size: (u32, u32),
    /// The product in camera space.
    pub product: CameraMesh,
    /// Depth-only occluders in camera space.
    pub occluders: Vec<CameraMesh>,
    materials: Vec<RasterMaterial>,
    texels: Vec<u32>,
    lighting: Lighting,
    transparency: Transparency,
    shadow: Shadow,
    supersampling: u32,
    thin_parts: bool,
}

impl SceneBuilder {
    /// A builder for a `width`×`height` photo seen by `camera`, with the product's materials.
    pub fn new(camera: PhotoCamera, width: u32, height: u32, product: &Product) -> Self {
        let (materials, texels) = materials(product);
        SceneBuilder {
            camera,
            size: (width, height),
            product: CameraMesh::default(),
            occluders: Vec::new(),
            materials,
            texels,
            lighting: light::neutral(),
            transparency: Transparency::Clear,
            shadow: Shadow {
                offset: [0.0; 2],
                radius: 1.0,
                strength: 0.0,
            },
            supersampling: 2,
            thin_parts: true,
        }
    }

    /// Sets the light.
    pub fn lighting(mut self, lighting: Lighting) -> Self {
        self.lighting = lighting;
        self
    }

    /// Sets how the transparent layer is drawn.
    pub fn transparency(mut self, transparency: Transparency) -> Self {
        self.transparency = transparency;
        self
    }

    /// Supersampling per axis (clamped to 1–4; lowered on huge footprints, see [`MAX_SAMPLES`]).
    pub fn supersampling(mut self, ss: u32) -> Self {
        self.supersampling = ss.clamp(1, 4);
        self
    }

    /// Whether parts narrower than a sample go to the thin layer ([`thin`]; on by default). Off
    /// renders them as plain triangles, point-sampled (what comparisons measure against).
    pub fn thin_parts(mut self, on: bool) -> Self {
        self.thin_parts = on;
        self
    }

    /// A contact shadow of `strength` (0 disables it), cast away from the key light by a
    /// distance and blur that scale with `px_per_cm` (pixels per centimetre at the product).
    pub fn contact_shadow(mut self, strength: f32, px_per_cm: f32) -> Self {
        let k = Vec2::from_slice(&self.lighting.key_dir[..2]);
        let kxy = k.length();
        let offset = if kxy > 1e-3 {
            -k / kxy * 0.3 * px_per_cm * kxy.min(1.0)
        } else {
            Vec2::ZERO
        };
        self.shadow = Shadow {
            offset: offset.to_array(),
            radius: (0.2 * px_per_cm).clamp(1.0, 12.0),
            strength,
        };
        self
    }

    /// The product's footprint in pixels (`min`, `max`) of the vertices in front of the near
    /// plane, `None` when there are none.
    pub fn footprint(&self) -> Option<(Vec2, Vec2)> {
        let mut lo = Vec2::splat(f32::MAX);
        let mut hi = Vec2::splat(f32::MIN);
        for c in self.product.positions.iter().filter(|c| c.z >= NEAR_CM) {
            let p = self.camera.project(*c);
            lo = lo.min(p);
            hi = hi.max(p);
        }
        (lo.x <= hi.x).then_some((lo, hi))
    }

    /// Projects everything into a [`Scene`].
    pub fn build(self) -> Result<Scene, SceneError> {
        if self.materials.is_empty() || self.product.triangles.is_empty() {
            return Err(SceneError::Empty);
        }
        let (lo, hi) = self.footprint().ok_or(SceneError::BehindCamera)?;
        let (w, h) = (self.size.0 as f32, self.size.1 as f32);
        let margin = self.shadow.reach() as f32 + 2.0;
        let x0 = (lo.x - margin).floor().clamp(0.0, w) as u32;
        let y0 = (lo.y - margin).floor().clamp(0.0, h) as u32;
        let x1 = (hi.x + margin).ceil().clamp(0.0, w) as u32;
        let y1 = (hi.y + margin).ceil().clamp(0.0, h) as u32;
        let roi = [x0, y0, x1.saturating_sub(x0), y1.saturating_sub(y0)];
        // Keep the supersampled buffers within a budget on huge photos: fewer samples per pixel
        // rather than a refusal.
        let px = u64::from(roi[2]) * u64::from(roi[3]);
        let mut ss = self.supersampling;
        while ss > 1 && px * u64::from(ss * ss) > MAX_SAMPLES {
            ss -= 1;
        }
        let project = |m: &CameraMesh| -> Mesh {
            let vertices = (0..m.positions.len())
                .map(|i| self.raster_vertex(m, i, roi, ss as f32))
                .collect();
            Mesh {
                vertices,
                triangles: m.triangles.clone(),
            }
        };
        let mut product = project(&self.product);
        if self.thin_parts {
            thin::widen(&mut product, &self.materials, 1.0, ss as f32);
        }
        // Occluder triangles wholly off the ROI do nothing: leave them out.
        let (rw, rh) = ((roi[2] * ss) as f32, (roi[3] * ss) as f32);
        let occluders = self
            .occluders
            .iter()
            .map(|m| {
                let mut mesh = project(m);
                let verts = &mesh.vertices;
                mesh.triangles.retain(|t| {
                    let v = [0, 1, 2].map(|k| verts[t[k] as usize].pos);
                    let lo = [0, 1].map(|k| v[0][k].min(v[1][k]).min(v[2][k]));
                    let hi = [0, 1].map(|k| v[0][k].max(v[1][k]).max(v[2][k]));
                    !(hi[0] < 0.0 || hi[1] < 0.0 || lo[0] > rw || lo[1] > rh)
                });
                mesh
            })
            .collect();
        Ok(Scene {
            roi,
            ss,
            product,
            occluders,
            materials: self.materials,
            texels: self.texels,
            lighting: self.lighting,
            transparency: self.transparency,
            shadow: self.shadow,
            near: NEAR_CM,
        })
    }

    fn raster_vertex(&self, m: &CameraMesh, i: usize, roi: [u32; 4], ss: f32) -> RasterVertex {
        let c = m.positions[i];
        let n = m.normals[i];
        let p = self.camera.project(c);
        RasterVertex {
            pos: [
                (p.x - roi[0] as f32) * ss,
                (p.y - roi[1] as f32) * ss,
                c.z,
                if c.z > 0.0 { 1.0 / c.z } else { 0.0 },
            ],
            view: [c.x, c.y, c.z, m.aux[i]],
            normal: [n.x, n.y, n.z, 0.0],
            uv: [m.uvs[i][0], m.uvs[i][1], m.uvs1[i][0], m.uvs1[i][1]],
            color: m.colors[i],
        }
    }
}
