//! A product-neutral compute-shader triangle rasterizer (WGSL) for 3D products over a photo.
//!
//! The scene stages ([`crate::scene`]) project every vertex on the host (a few thousand per
//! product) into a [`Scene`]: supersampled pixel positions inside a region of interest (the
//! product's footprint plus the shadow margin), camera-space positions and normals, materials
//! and textures, and any number of depth-only occluders (the head, the neck, a leg: whatever
//! of the person stands in front of parts of the product). The GPU then runs, in one
//! submission:
//!
//! 1. `raster.wgsl` mode 0 — every occluder into one depth plane (depth only);
//! 2. modes 1, 2 — the opaque layer's depth with 32-bit `atomicMin` on the bits of the
//!    positive f32 view depth, fragments behind an occluder rejected and counted; then the
//!    triangle id of the winning depth (lowest id on ties: deterministic);
//! 3. modes 3, 4 — the same for the transparent layer (BLEND materials), in front of the
//!    opaque depth: the nearest transparent surface per sample;
//! 4. modes 5, 6 — the thin layer: triangles of parts narrower than a sample on screen,
//!    widened by the host to a pixel with a coverage weight in proportion
//!    ([`crate::scene::thin`]); per sample in front of the opaque depth, the weights of every
//!    thin triangle covering it are summed (clamped to 1) and the nearest thin triangle is
//!    kept, so a chain or a wire keeps its true coverage as a continuous faint line instead of
//!    scattered dots;
//! 5. `coverage.wgsl` — per output pixel, product and occluder coverage of its samples;
//! 6. `resolve.wgsl` — per sample: photo (under a blurred, offset contact shadow of the
//!    product), shaded product (under the thin layer at its coverage, or over the glass where
//!    the thin triangle is nearer than the transparent one: a wire in front of a lens) (ambient + key light, metallic/rough Blinn–Phong, a
//!    high-contrast studio environment in the photo's colours — a floor (lit for polished
//!    metal, with a dark band along the horizon; dark for gems and glass), bright ceiling,
//!    strip light and softboxes — so polished metal reads as metal; textures box-filtered
//!    over each sample's footprint; cut gems facet by facet, see [`SHADING_GEM`]), then the
//!    transparent layer (transmission with tint and Fresnel, faint reflection); samples averaged (S×S supersampling). Untouched pixels are
//!    copied bit for bit.
//!
//! Only the ROI is read back; pixels outside it are never written. [`cpu_ids`] is the CPU
//! reference of steps 1–3, the oracle of the tests.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use image::RgbaImage;

use crate::gpu::GpuContext;

/// Mirrors WGSL `Vert` (shaders/raster/common.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct RasterVertex {
    /// Supersampled pixel x, y inside the ROI, view depth z (cm, > 0), 1 / z.
    pub pos: [f32; 4],
    /// Camera-space position (cm; x right, y down, z forward), the tint-gradient coordinate
    /// (0 at the product's top, 1 at its bottom).
    pub view: [f32; 4],
    /// Camera-space unit normal, the thin layer's coverage weight (0: not a thin triangle; see
    /// [`crate::scene::thin`]).
    pub normal: [f32; 4],
    /// Texture coordinates: UV set 0 (x, y), UV set 1 (z, w); each texture of a material
    /// reads the set its `RasterMaterial::flags[3]` names.
    pub uv: [f32; 4],
    /// Linear RGBA vertex colour, multiplied into the base colour (white: none).
    pub color: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<RasterVertex>() == 80);

/// Mirrors WGSL `Material` (shaders/raster/common.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct RasterMaterial {
    /// Linear RGBA base colour.
    pub base: [f32; 4],
    /// Metallic, roughness, alpha cutoff, dielectric reflectance head on (0: glTF's 0.04).
    pub pbr: [f32; 4],
    /// Texel offset, width, height, has texture.
    pub tex: [u32; 4],
    /// Alpha mode (0 opaque, 1 mask, 2 blend), double sided, shading model (0 standard,
    /// [`SHADING_GEM`] a cut gem), UV sets (bit 0: the base colour texture reads UV set 1,
    /// bit 1: the emissive texture does).
    pub flags: [u32; 4],
    /// Clearcoat strength, clearcoat roughness, sheen roughness, unused (all 0: none).
    pub coat: [f32; 4],
    /// Linear sheen colour, unused (black: no sheen).
    pub sheen: [f32; 4],
    /// Linear emitted colour, unused (black: no emission).
    pub glow: [f32; 4],
    /// The emissive texture as `tex`: texel offset, width, height, has texture.
    pub glow_tex: [u32; 4],
}
const _: () = assert!(std::mem::size_of::<RasterMaterial>() == 128);

/// `RasterMaterial::flags[2]` of a cut gem: each flat facet shows the environment from its
/// own direction (bright and dark facets, colour fringes), its outline dark.
pub const SHADING_GEM: u32 = 1;

/// Mirrors WGSL `Params` (shaders/raster/common.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct RasterParams {
    /// ROI x0, y0, width, height (output pixels).
    pub roi: [u32; 4],
    /// S, W, H, triangle count.
    pub ss: [u32; 4],
    /// Raster mode, transparency mode, unused, unused.
    pub mode: [u32; 4],
    /// Ambient rgb, near plane (cm).
    pub ambient: [f32; 4],
    /// Direction towards the key light (camera space).
    pub key_dir: [f32; 4],
    /// Key light rgb.
    pub key_color: [f32; 4],
    /// Shadow offset x, y (pixels), radius (pixels), strength.
    pub shadow: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<RasterParams>() == 112);

/// Vertices and triangles (`[i0, i1, i2, material]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mesh {
    /// Projected vertices.
    pub vertices: Vec<RasterVertex>,
    /// Triangles: three vertex indices and a material index.
    pub triangles: Vec<[u32; 4]>,
}

/// How the transparent layer (BLEND materials: lenses, gems, visors) is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transparency {
    /// Clear glass with a faint reflection.
    Clear = 0,
    /// Tinted by the material's colour and alpha.
    Material = 1,
    /// A default grey gradient, darker at the top (sunglasses whose lens materials are clear).
    DefaultGradient = 2,
}

/// Light estimated from the photo (linear RGB, camera space).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lighting {
    /// Ambient colour.
    pub ambient: [f32; 3],
    /// Unit direction towards the key light (x right, y down, z forward).
    pub key_dir: [f32; 3],
    /// Key light colour.
    pub key_color: [f32; 3],
}

/// The contact shadow of the product on the skin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shadow {
    /// Offset (pixels) of the shadow from the product, away from the light.
    pub offset: [f32; 2],
    /// Blur radius in pixels.
    pub radius: f32,
    /// Darkening at full coverage (0 disables the shadow).
    pub strength: f32,
}

impl Shadow {
    /// How far (pixels) the shadow can reach beyond the product's footprint.
    pub fn reach(&self) -> u32 {
        if self.strength <= 0.0 {
            return 0;
        }
        (self.offset[0].abs().max(self.offset[1].abs()) + self.radius).ceil() as u32 + 1
    }
}

/// Everything the GPU needs for one try-on.
#[derive(Debug, Clone)]
pub struct Scene {
    /// ROI in output pixels: x0, y0, width, height.
    pub roi: [u32; 4],
    /// Supersampling factor per axis (2 = 4 samples per pixel).
    pub ss: u32,
    /// The product.
    pub product: Mesh,
    /// Depth-only occluders (material indices ignored): parts of the person in front of
    /// parts of the product. Any number; together they form one depth plane.
    pub occluders: Vec<Mesh>,
    /// Materials of the product.
    pub materials: Vec<RasterMaterial>,
    /// All textures, packed RGBA8 (sRGB) words; materials point into it.
    pub texels: Vec<u32>,
    /// Light.
    pub lighting: Lighting,
    /// How the transparent layer is drawn.
    pub transparency: Transparency,
    /// Contact shadow.
    pub shadow: Shadow,
    /// Near plane (cm).
    pub near: f32,
}

impl Scene {
    fn params(&self, mode: u32, tri_count: u32) -> RasterParams {
        let l = &self.lighting;
        RasterParams {
            roi: self.roi,
            ss: [
                self.ss,
                self.roi[2] * self.ss,
                self.roi[3] * self.ss,
                tri_count,
            ],
            mode: [mode, self.transparency as u32, 0, 0],
            ambient: [l.ambient[0], l.ambient[1], l.ambient[2], self.near],
            key_dir: [l.key_dir[0], l.key_dir[1], l.key_dir[2], 0.0],
            key_color: [l.key_color[0], l.key_color[1], l.key_color[2], 0.0],
            shadow: [
                self.shadow.offset[0],
                self.shadow.offset[1],
                self.shadow.radius,
                self.shadow.strength,
            ],
        }
    }
}

/// Counts from one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RasterStats {
    /// Product samples rejected because they lie behind an occluder.
    pub occluded_fragments: u32,
    /// Product samples that passed the occluder test.
    pub drawn_fragments: u32,
}

/// Errors of the rasterizer.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    /// The scene does not fit the photo or the device.
    #[error("bad scene: {0}")]
    BadScene(String),
    /// Reading results back failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
}

impl Scene {
    /// Whether any product triangle belongs to the thin layer ([`crate::scene::thin`]).
    pub fn has_thin(&self) -> bool {
        self.product.vertices.iter().any(|v| v.normal[3] > 0.0)
    }

    /// Every occluder as one mesh (they share one depth plane).
    pub fn occluder_mesh(&self) -> Mesh {
        let mut all = Mesh::default();
        for m in &self.occluders {
            let base = all.vertices.len() as u32;
            all.vertices.extend_from_slice(&m.vertices);
            all.triangles.extend(
                m.triangles
                    .iter()
                    .map(|t| [t[0] + base, t[1] + base, t[2] + base, 0]),
            );
        }
        all
    }

    fn check(&self) -> Result<(), RasterError> {
        let n_mat = self.materials.len() as u32;
        let n_vert = self.product.vertices.len() as u32;
        let bad_product = self
            .product
            .triangles
            .iter()
            .any(|t| t[..3].iter().any(|&i| i >= n_vert) || t[3] >= n_mat);
        let bad_occluder = self.occluders.iter().any(|m| {
            let n = m.vertices.len() as u32;
            m.triangles.iter().any(|t| t[..3].iter().any(|&i| i >= n))
        });
        if bad_product || bad_occluder {
            return Err(RasterError::BadScene("triangle index out of range".into()));
        }
        Ok(())
    }
}

/// Depth planes of a render: occluders, opaque, transparent, thin.
const DEPTH_PLANES: u64 = 4;
/// Id planes of a render: opaque, transparent, thin, the thin layer's coverage sum.
const ID_PLANES: u64 = 4;

/// The compiled kernels on one device.
#[derive(Debug)]
pub struct Rasterizer {
    ctx: Arc<GpuContext>,
    raster: wgpu::ComputePipeline,
    coverage: wgpu::ComputePipeline,
    resolve: wgpu::ComputePipeline,
}

/// Workgroups for `n` triangles at 64 per group, folded into 2D past the per-dimension limit.
fn tri_groups(n: u32) -> (u32, u32, u32) {
    let groups = n.div_ceil(64).max(1);
    if groups <= 65_535 {
        (groups, 1, 1)
    } else {
        (65_535, groups.div_ceil(65_535), 1)
    }
}

/// The buffers of the depth and id passes, shared by [`Rasterizer::render`] and
/// [`Rasterizer::ids`].
struct DepthPasses {
    zbuf: wgpu::Buffer,
    ids: wgpu::Buffer,
    counters: wgpu::Buffer,
    verts: wgpu::Buffer,
    tris: wgpu::Buffer,
    mats: wgpu::Buffer,
    texels: wgpu::Buffer,
}

impl Rasterizer {
    /// Compiles the kernels on `ctx`.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        Rasterizer {
            raster: ctx.pipeline("raster/raster"),
            coverage: ctx.pipeline("raster/coverage"),
            resolve: ctx.pipeline("raster/resolve"),
            ctx,
        }
    }

    /// The GPU context the kernels run on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// Uploads the scene and records the occluder, opaque and transparent depth and id passes
    /// (modes 0–4 of `raster.wgsl`).
    fn depth_passes(&self, scene: &Scene, enc: &mut wgpu::CommandEncoder) -> DepthPasses {
        let ctx = &*self.ctx;
        let [_, _, w, h] = scene.roi;
        let plane = u64::from(w * scene.ss) * u64::from(h * scene.ss);
        // Depth and ids start at all ones (the farthest depth, no triangle); queue writes land
        // before the encoder's passes run.
        let zbuf = ctx.storage("raster zbuf", plane * DEPTH_PLANES * 4);
        let ids = ctx.storage("raster ids", plane * ID_PLANES * 4);
        let ones = vec![0xffu8; (plane * 4) as usize];
        for k in 0..DEPTH_PLANES {
            ctx.queue.write_buffer(&zbuf, k * plane * 4, &ones);
        }
        // Opaque, transparent and thin ids start at "none"; the thin coverage sum at zero.
        for k in 0..ID_PLANES - 1 {
            ctx.queue.write_buffer(&ids, k * plane * 4, &ones);
        }
        ctx.queue.write_buffer(
            &ids,
            (ID_PLANES - 1) * plane * 4,
            &vec![0u8; (plane * 4) as usize],
        );
        let occluder = scene.occluder_mesh();
        let passes = DepthPasses {
            zbuf,
            ids,
            counters: ctx.storage_init("raster counters", &[0u8; 16]),
            verts: ctx.storage_init("verts", bytemuck::cast_slice(&scene.product.vertices)),
            tris: ctx.storage_init("tris", bytemuck::cast_slice(&scene.product.triangles)),
            mats: ctx.storage_init("materials", bytemuck::cast_slice(&scene.materials)),
            texels: ctx.storage_init("texels", bytemuck::cast_slice(&scene.texels)),
        };
        let occ_verts = ctx.storage_init("occ verts", bytemuck::cast_slice(&occluder.vertices));
        let occ_tris = ctx.storage_init("occ tris", bytemuck::cast_slice(&occluder.triangles));
        let thin = scene.has_thin();
        for mode in 0..7u32 {
            if mode >= 5 && !thin {
                continue;
            }
            let (v, t, n) = if mode == 0 {
                (&occ_verts, &occ_tris, occluder.triangles.len() as u32)
            } else {
                (
                    &passes.verts,
                    &passes.tris,
                    scene.product.triangles.len() as u32,
                )
            };
            if n == 0 {
                continue;
            }
            let u = ctx.uniform("raster params", bytemuck::bytes_of(&scene.params(mode, n)));
            let p = &passes;
            let bg = ctx.bind(
                &self.raster,
                &[&u, v, t, &p.mats, &p.texels, &p.zbuf, &p.ids, &p.counters],
            );
            GpuContext::dispatch(enc, &self.raster, &bg, tri_groups(n));
        }
        passes
    }

    /// Renders `scene` over `photo` and returns the composited image (same size as `photo`).
    pub fn render(
        &self,
        photo: &RgbaImage,
        scene: &Scene,
    ) -> Result<(RgbaImage, RasterStats), RasterError> {
        let [x0, y0, w, h] = scene.roi;
        if w == 0 || h == 0 {
            return Ok((photo.clone(), RasterStats::default()));
        }
        if x0 + w > photo.width() || y0 + h > photo.height() || !(1..=4).contains(&scene.ss) {
            return Err(RasterError::BadScene(format!(
                "ROI {:?} / supersampling {} outside a {}×{} photo",
                scene.roi,
                scene.ss,
                photo.width(),
                photo.height()
            )));
        }
        scene.check()?;
        let ctx = &*self.ctx;
        let ss = scene.ss;
        let plane = u64::from(w * ss) * u64::from(h * ss);
        let max = ctx.limits.max_storage_buffer_binding_size as u64;
        if plane * DEPTH_PLANES.max(ID_PLANES) * 4 > max {
            return Err(RasterError::BadScene(format!(
                "ROI {w}×{h} at {ss}× supersampling needs more than the device's {max}-byte buffers"
            )));
        }
        let roi_pixels: Vec<u32> = (y0..y0 + h)
            .flat_map(|y| (x0..x0 + w).map(move |x| u32::from_le_bytes(photo.get_pixel(x, y).0)))
            .collect();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let p = self.depth_passes(scene, &mut enc);
        let cover = ctx.storage("cover", u64::from(w * h) * 8);
        let photo_buf = ctx.storage_init("photo roi", bytemuck::cast_slice(&roi_pixels));
        let out_size = u64::from(w * h) * 4;
        let out = ctx.storage("out roi", out_size);
        let n_tri = scene.product.triangles.len() as u32;
        let u = ctx.uniform("raster params", bytemuck::bytes_of(&scene.params(0, n_tri)));
        let pixel_groups = (w.div_ceil(8), h.div_ceil(8), 1);
        let bg = ctx.bind(&self.coverage, &[&u, &p.zbuf, &p.ids, &cover]);
        GpuContext::dispatch(&mut enc, &self.coverage, &bg, pixel_groups);
        let bg = ctx.bind(
            &self.resolve,
            &[
                &u, &p.verts, &p.tris, &p.mats, &p.texels, &p.ids, &cover, &photo_buf, &out,
            ],
        );
        GpuContext::dispatch(&mut enc, &self.resolve, &bg, pixel_groups);
        let staging = ctx.staging("raster readback", out_size + 16);
        enc.copy_buffer_to_buffer(&out, 0, &staging, 0, out_size);
        enc.copy_buffer_to_buffer(&p.counters, 0, &staging, out_size, 16);
        let bytes = ctx
            .submit_and_read(enc, &staging, out_size + 16)
            .map_err(|e| RasterError::Readback(e.0))?;

        let mut image = photo.clone();
        for (j, row) in bytes[..out_size as usize]
            .chunks_exact(w as usize * 4)
            .enumerate()
        {
            for (i, px) in row.chunks_exact(4).enumerate() {
                image.put_pixel(
                    x0 + i as u32,
                    y0 + j as u32,
                    image::Rgba([px[0], px[1], px[2], px[3]]),
                );
            }
        }
        Ok((image, counters(&bytes[out_size as usize..])))
    }

    /// Runs only the depth and id passes and returns the two id planes (opaque, transparent)
    /// and the counters: the GPU side of the [`cpu_ids`] comparison.
    pub fn ids(&self, scene: &Scene) -> Result<(Vec<u32>, RasterStats), RasterError> {
        scene.check()?;
        let [_, _, w, h] = scene.roi;
        let ctx = &*self.ctx;
        let plane = u64::from(w * scene.ss) * u64::from(h * scene.ss);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let p = self.depth_passes(scene, &mut enc);
        let size = plane * 2 * 4;
        let staging = ctx.staging("ids readback", size + 16);
        enc.copy_buffer_to_buffer(&p.ids, 0, &staging, 0, size);
        enc.copy_buffer_to_buffer(&p.counters, 0, &staging, size, 16);
        let bytes = ctx
            .submit_and_read(enc, &staging, size + 16)
            .map_err(|e| RasterError::Readback(e.0))?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes[..size as usize]);
        Ok((words, counters(&bytes[size as usize..])))
    }
}

fn counters(c: &[u8]) -> RasterStats {
    let word = |k: usize| u32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]]);
    RasterStats {
        occluded_fragments: word(0),
        drawn_fragments: word(1),
    }
}

fn edge(a: [f32; 2], b: [f32; 2], p: [f32; 2]) -> f32 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// CPU reference of the depth and id passes (textures for MASK materials are not sampled:
/// the reference treats MASK as opaque, so compare on scenes without MASK materials). Thin
/// triangles ([`crate::scene::thin`]) are left out, as the GPU's opaque and transparent
/// passes leave them out.
/// Returns the opaque and transparent id planes, concatenated, and the counters.
pub fn cpu_ids(scene: &Scene) -> (Vec<u32>, RasterStats) {
    let [_, _, w, h] = scene.roi;
    let (ww, hh) = ((w * scene.ss) as usize, (h * scene.ss) as usize);
    let plane = ww * hh;
    let mut z = vec![u32::MAX; plane * 3];
    let mut ids = vec![u32::MAX; plane * 2];
    let mut stats = RasterStats::default();
    let occluder = scene.occluder_mesh();
    for mode in 0..5u32 {
        let mesh = if mode == 0 { &occluder } else { &scene.product };
        for (t, tri) in mesh.triangles.iter().enumerate() {
            if mode != 0 {
                if mesh.vertices[tri[0] as usize].normal[3] > 0.0 {
                    continue;
                }
                let blend = scene.materials[tri[3] as usize].flags[0] == 2;
                if (mode <= 2) == blend {
                    continue;
                }
            }
            let [a, b, c] = [0, 1, 2].map(|k| mesh.vertices[tri[k] as usize].pos);
            if a[2].min(b[2]).min(c[2]) < scene.near {
                continue;
            }
            let (pa, pb, pc) = ([a[0], a[1]], [b[0], b[1]], [c[0], c[1]]);
            let area = edge(pa, pb, pc);
            if area.abs() < 1e-6 {
                continue;
            }
            let lo = [pa[0].min(pb[0]).min(pc[0]), pa[1].min(pb[1]).min(pc[1])];
            let hi = [pa[0].max(pb[0]).max(pc[0]), pa[1].max(pb[1]).max(pc[1])];
            if hi[0] < 0.0 || hi[1] < 0.0 || lo[0] > ww as f32 || lo[1] > hh as f32 {
                continue;
            }
            let x0 = (lo[0] - 0.5).ceil().max(0.0) as usize;
            let y0 = (lo[1] - 0.5).ceil().max(0.0) as usize;
            let x1 = ((hi[0] - 0.5).floor().clamp(-1.0, ww as f32 - 1.0) + 1.0) as usize;
            let y1 = ((hi[1] - 0.5).floor().clamp(-1.0, hh as f32 - 1.0) + 1.0) as usize;
            let inv_area = 1.0 / area;
            for y in y0..y1 {
                for x in x0..x1 {
                    let p = [x as f32 + 0.5, y as f32 + 0.5];
                    let w0 = edge(pb, pc, p) * inv_area;
                    let w1 = edge(pc, pa, p) * inv_area;
                    let w2 = edge(pa, pb, p) * inv_area;
                    if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                        continue;
                    }
                    let inv_z = w0 * a[3] + w1 * b[3] + w2 * c[3];
                    if inv_z <= 0.0 {
                        continue;
                    }
                    let zb = (1.0 / inv_z).to_bits();
                    let i = y * ww + x;
                    let t = t as u32;
                    match mode {
                        0 => z[i] = z[i].min(zb),
                        1 | 3 => {
                            if zb >= z[i] {
                                stats.occluded_fragments += 1;
                                continue;
                            }
                            if mode == 3 && zb >= z[plane + i] {
                                continue;
                            }
                            stats.drawn_fragments += 1;
                            let k = if mode == 1 { plane + i } else { 2 * plane + i };
                            z[k] = z[k].min(zb);
                        }
                        2 => {
                            if zb == z[plane + i] {
                                ids[i] = ids[i].min(t);
                            }
                        }
                        _ => {
                            if zb == z[2 * plane + i] {
                                ids[plane + i] = ids[plane + i].min(t);
                            }
                        }
                    }
                }
            }
        }
    }
    (ids, stats)
}
