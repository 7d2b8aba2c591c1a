//! Image operations on the GPU: upload/download RGBA8, bilinear resize, rotated crop into a
//! model's input tensor, alpha composite, and warping a mask back onto the image grid.
//!
//! Images live on the GPU as storage buffers of packed RGBA8 (`u32` per pixel, red in the low
//! byte), the layout `image::RgbaImage` already has, so upload and download are plain buffer
//! copies with no kernel. Each operation is one WGSL kernel under `shaders/image/` and has a CPU
//! reference here (`cpu_*`), used as the test oracle.
//!
//! Sampling follows MediaPipe's CPU path (OpenCV `warpPerspective`): an output pixel `(x, y)`
//! (integer coordinates) reads the source at `affine · (x, y, 1)` with source pixel centres at
//! integer coordinates, bilinear, and a border that is either zero or replicated. The crop
//! into a tensor also rounds the sample position to 1/32 pixel and the value to an 8-bit
//! level, as OpenCV's 8-bit warp does, so our tensors match MediaPipe's closely.
//!
//! One CPU-only helper sits here too, below every stage that needs it: [`box_blur`], the
//! separable box blur of the garment stage (and the samples).

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use image::RgbaImage;

use crate::gpu::GpuContext;

/// Errors from the image operations.
#[derive(Debug, thiserror::Error)]
pub enum ImageOpsError {
    /// An image or tensor has a zero or inconsistent size.
    #[error("bad size: {0}")]
    BadSize(String),
    /// Reading a result back from the GPU failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
}

/// A 2D affine map `(x, y) -> (m[0]x + m[1]y + m[2], m[3]x + m[4]y + m[5])`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Affine2 {
    /// Row-major coefficients.
    pub m: [f32; 6],
}

impl Affine2 {
    /// The identity map.
    pub const IDENTITY: Affine2 = Affine2 {
        m: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    };

    /// Applies the map to a point.
    pub fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        let m = &self.m;
        (m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5])
    }

    /// The inverse map, or `None` when the map is singular.
    pub fn inverse(&self) -> Option<Affine2> {
        let [a, b, c, d, e, f] = self.m.map(f64::from);
        let det = a * e - b * d;
        if det.abs() < 1e-12 || !det.is_finite() {
            return None;
        }
        let (ia, ib, id, ie) = (e / det, -b / det, -d / det, a / det);
        let ic = -(ia * c + ib * f);
        let if_ = -(id * c + ie * f);
        Some(Affine2 {
            m: [ia, ib, ic, id, ie, if_].map(|v| v as f32),
        })
    }
}

/// What lies outside the source image when a crop reaches past its edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Border {
    /// Black (pixel value 0, i.e. the low end of the tensor range).
    Zero,
    /// The nearest edge pixel.
    Replicate,
}

/// The shape and value range of a model's input tensor (NHWC, N = 1, C = 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorSpec {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The value a 0 pixel maps to.
    pub range_min: f32,
    /// The value a 255 pixel maps to.
    pub range_max: f32,
    /// Border handling.
    pub border: Border,
}

impl TensorSpec {
    fn scale_offset(&self) -> (f32, f32) {
        let scale = (self.range_max - self.range_min) / 255.0;
        (scale, self.range_min)
    }
}

/// Mirrors `ResizeParams` in `shaders/image/resize.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ResizeParams {
    /// Source width.
    pub src_w: u32,
    /// Source height.
    pub src_h: u32,
    /// Output width.
    pub dst_w: u32,
    /// Output height.
    pub dst_h: u32,
}
const _: () = assert!(std::mem::size_of::<ResizeParams>() == 16);

/// Mirrors `CropParams` in `shaders/image/crop_to_tensor.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CropParams {
    /// Source width.
    pub src_w: u32,
    /// Source height.
    pub src_h: u32,
    /// Tensor width.
    pub dst_w: u32,
    /// Tensor height.
    pub dst_h: u32,
    /// Output pixel → source pixel affine map.
    pub m: [f32; 6],
    /// Value scale applied to [0, 255] pixels.
    pub scale: f32,
    /// Value offset.
    pub offset: f32,
    /// 0 = zero border, 1 = replicate.
    pub border: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<CropParams>() == 64);

/// Mirrors `CompositeParams` in `shaders/image/composite.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CompositeParams {
    /// Width of both images.
    pub width: u32,
    /// Height of both images.
    pub height: u32,
    /// Multiplies the source alpha.
    pub opacity: f32,
    /// Padding to 16 bytes.
    pub pad: u32,
}
const _: () = assert!(std::mem::size_of::<CompositeParams>() == 16);

/// Mirrors `WarpParams` in `shaders/image/warp_mask.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct WarpParams {
    /// Mask width.
    pub src_w: u32,
    /// Mask height.
    pub src_h: u32,
    /// Output width.
    pub dst_w: u32,
    /// Output height.
    pub dst_h: u32,
    /// Output pixel → mask pixel affine map.
    pub m: [f32; 6],
    /// Padding to 16 bytes.
    pub pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<WarpParams>() == 48);

/// An RGBA8 image in a GPU storage buffer (and, when its [`ImageOps`] keeps host copies, the
/// same pixels in memory, for work done on the CPU).
#[derive(Debug)]
pub struct GpuImage {
    buffer: wgpu::Buffer,
    width: u32,
    height: u32,
    host: Option<Arc<RgbaImage>>,
}

impl GpuImage {
    /// The pixels in memory, when the image was uploaded by an [`ImageOps`] that keeps host
    /// copies ([`ImageOps::keep_host_copies`]).
    pub fn host(&self) -> Option<&RgbaImage> {
        self.host.as_deref()
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }
}

/// The compiled image kernels on one GPU context.
#[derive(Debug)]
pub struct ImageOps {
    ctx: Arc<GpuContext>,
    resize: wgpu::ComputePipeline,
    crop: wgpu::ComputePipeline,
    composite: wgpu::ComputePipeline,
    warp: wgpu::ComputePipeline,
    keep_host: bool,
}

fn check_size(what: &str, w: u32, h: u32) -> Result<(), ImageOpsError> {
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(ImageOpsError::BadSize(format!(
            "{what} is {w}x{h}; sides must be 1..=16384"
        )));
    }
    Ok(())
}

impl ImageOps {
    /// Compiles the kernels on `ctx`.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        let resize = ctx.pipeline("image/resize");
        let crop = ctx.pipeline("image/crop_to_tensor");
        let composite = ctx.pipeline("image/composite");
        let warp = ctx.pipeline("image/warp_mask");
        Self {
            ctx,
            resize,
            crop,
            composite,
            warp,
            keep_host: false,
        }
    }

    /// Makes [`ImageOps::upload`] keep a copy of the pixels in memory beside the GPU buffer
    /// ([`GpuImage::host`]), for callers that also work on the image on the CPU.
    pub fn keep_host_copies(&mut self, keep: bool) {
        self.keep_host = keep;
    }

    /// The GPU context the kernels run on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    fn storage(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.ctx.storage(label, size)
    }

    /// Uploads an image.
    pub fn upload(&self, image: &RgbaImage) -> Result<GpuImage, ImageOpsError> {
        check_size("image", image.width(), image.height())?;
        let buffer = self.ctx.storage_init("image", image.as_raw());
        Ok(GpuImage {
            buffer,
            width: image.width(),
            height: image.height(),
            host: self.keep_host.then(|| Arc::new(image.clone())),
        })
    }

    /// Downloads an image.
    pub fn download(&self, image: &GpuImage) -> Result<RgbaImage, ImageOpsError> {
        let bytes = self.read_buffer(&image.buffer, u64::from(image.width * image.height) * 4)?;
        RgbaImage::from_raw(image.width, image.height, bytes)
            .ok_or_else(|| ImageOpsError::Readback("short image buffer".into()))
    }

    fn read_buffer(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>, ImageOpsError> {
        let staging = self.ctx.staging("readback", size);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.ctx
            .submit_and_read(enc, &staging, size)
            .map_err(|e| ImageOpsError::Readback(e.0))
    }

    fn run(
        &self,
        pipeline: &wgpu::ComputePipeline,
        params: &[u8],
        src: &wgpu::Buffer,
        dst: &wgpu::Buffer,
        (w, h): (u32, u32),
    ) {
        let uniform = self.ctx.uniform("params", params);
        let bind = self.ctx.bind(pipeline, &[&uniform, src, dst]);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        GpuContext::dispatch(&mut enc, pipeline, &bind, (w.div_ceil(8), h.div_ceil(8), 1));
        self.ctx.queue.submit([enc.finish()]);
    }

    /// Bilinear resize to `width`×`height`.
    pub fn resize(
        &self,
        src: &GpuImage,
        width: u32,
        height: u32,
    ) -> Result<GpuImage, ImageOpsError> {
        check_size("resize target", width, height)?;
        let params = ResizeParams {
            src_w: src.width,
            src_h: src.height,
            dst_w: width,
            dst_h: height,
        };
        let dst = self.storage("resized", u64::from(width * height) * 4);
        self.run(
            &self.resize,
            bytemuck::bytes_of(&params),
            &src.buffer,
            &dst,
            (width, height),
        );
        Ok(GpuImage {
            buffer: dst,
            width,
            height,
            host: None,
        })
    }

    /// Crops the region `to_source` maps the tensor grid onto into an NHWC f32 RGB tensor of
    /// `spec`'s size and value range. `to_source` maps tensor pixels to image pixels.
    pub fn crop_to_tensor(
        &self,
        src: &GpuImage,
        to_source: &Affine2,
        spec: &TensorSpec,
    ) -> Result<Vec<f32>, ImageOpsError> {
        check_size("tensor", spec.width, spec.height)?;
        let (scale, offset) = spec.scale_offset();
        let params = CropParams {
            src_w: src.width,
            src_h: src.height,
            dst_w: spec.width,
            dst_h: spec.height,
            m: to_source.m,
            scale,
            offset,
            border: match spec.border {
                Border::Zero => 0,
                Border::Replicate => 1,
            },
            pad: [0; 3],
        };
        let size = u64::from(spec.width * spec.height) * 3 * 4;
        let dst = self.storage("tensor", size);
        self.run(
            &self.crop,
            bytemuck::bytes_of(&params),
            &src.buffer,
            &dst,
            (spec.width, spec.height),
        );
        let bytes = self.read_buffer(&dst, size)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// Composites `src` over `dst` (same size, straight alpha, `opacity` in [0, 1]).
    pub fn composite(
        &self,
        dst: &GpuImage,
        src: &GpuImage,
        opacity: f32,
    ) -> Result<GpuImage, ImageOpsError> {
        if (dst.width, dst.height) != (src.width, src.height) {
            return Err(ImageOpsError::BadSize(format!(
                "composite of {}x{} over {}x{}",
                src.width, src.height, dst.width, dst.height
            )));
        }
        let params = CompositeParams {
            width: dst.width,
            height: dst.height,
            opacity: opacity.clamp(0.0, 1.0),
            pad: 0,
        };
        let size = u64::from(dst.width * dst.height) * 4;
        let out = self.storage("composite", size);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&dst.buffer, 0, &out, 0, size);
        self.ctx.queue.submit([enc.finish()]);
        self.run(
            &self.composite,
            bytemuck::bytes_of(&params),
            &src.buffer,
            &out,
            (dst.width, dst.height),
        );
        Ok(GpuImage {
            buffer: out,
            width: dst.width,
            height: dst.height,
            host: None,
        })
    }

    /// Warps a `mask_w`×`mask_h` one-channel mask of values in [0, 1] onto a `width`×`height`
    /// grid; `to_mask` maps output pixels to mask pixels. Zero outside the mask. The result is
    /// quantized to 8-bit levels (n / 255) on the GPU, which quarters the readback.
    pub fn warp_mask(
        &self,
        mask: &[f32],
        (mask_w, mask_h): (u32, u32),
        to_mask: &Affine2,
        (width, height): (u32, u32),
    ) -> Result<Vec<f32>, ImageOpsError> {
        check_size("mask", mask_w, mask_h)?;
        check_size("warp target", width, height)?;
        if mask.len() != (mask_w * mask_h) as usize {
            return Err(ImageOpsError::BadSize(format!(
                "mask has {} values, expected {mask_w}x{mask_h}",
                mask.len()
            )));
        }
        let params = WarpParams {
            src_w: mask_w,
            src_h: mask_h,
            dst_w: width,
            dst_h: height,
            m: to_mask.m,
            pad: [0; 2],
        };
        let src = self.ctx.storage_init("mask", bytemuck::cast_slice(mask));
        let words = width.div_ceil(4);
        let size = u64::from(words * height) * 4;
        let dst = self.storage("warped mask", size);
        self.run(
            &self.warp,
            bytemuck::bytes_of(&params),
            &src,
            &dst,
            (words, height),
        );
        let bytes = self.read_buffer(&dst, size)?;
        let mut out = Vec::with_capacity((width * height) as usize);
        for row in bytes.chunks_exact(words as usize * 4) {
            out.extend(row[..width as usize].iter().map(|&b| f32::from(b) / 255.0));
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------------
// CPU references (test oracles). They follow the kernels' arithmetic step by step.

fn unorm(v: u8) -> f32 {
    f32::from(v) / 255.0
}

fn pack(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// CPU reference of [`ImageOps::resize`].
pub fn cpu_resize(src: &RgbaImage, width: u32, height: u32) -> RgbaImage {
    let (sw, sh) = (src.width() as i32, src.height() as i32);
    let texel = |x: i32, y: i32, c: usize| {
        unorm(
            src.get_pixel(x.clamp(0, sw - 1) as u32, y.clamp(0, sh - 1) as u32)
                .0[c],
        )
    };
    RgbaImage::from_fn(width, height, |ox, oy| {
        let sx = (ox as f32 + 0.5) * sw as f32 / width as f32 - 0.5;
        let sy = (oy as f32 + 0.5) * sh as f32 / height as f32 - 0.5;
        let (x0, y0) = (sx.floor(), sy.floor());
        let (fx, fy) = (sx - x0, sy - y0);
        let (ix, iy) = (x0 as i32, y0 as i32);
        let mut px = [0u8; 4];
        for (c, p) in px.iter_mut().enumerate() {
            let top = lerp(texel(ix, iy, c), texel(ix + 1, iy, c), fx);
            let bottom = lerp(texel(ix, iy + 1, c), texel(ix + 1, iy + 1, c), fx);
            *p = pack(lerp(top, bottom, fy));
        }
        image::Rgba(px)
    })
}

/// CPU reference of [`ImageOps::crop_to_tensor`].
pub fn cpu_crop_to_tensor(src: &RgbaImage, to_source: &Affine2, spec: &TensorSpec) -> Vec<f32> {
    let (sw, sh) = (src.width() as i32, src.height() as i32);
    let texel = |x: i32, y: i32, c: usize| -> f32 {
        if spec.border == Border::Zero && (x < 0 || y < 0 || x >= sw || y >= sh) {
            return 0.0;
        }
        f32::from(
            src.get_pixel(x.clamp(0, sw - 1) as u32, y.clamp(0, sh - 1) as u32)
                .0[c],
        )
    };
    let (scale, offset) = spec.scale_offset();
    let mut out = Vec::with_capacity((spec.width * spec.height * 3) as usize);
    for oy in 0..spec.height {
        for ox in 0..spec.width {
            let (sx, sy) = to_source.apply(ox as f32, oy as f32);
            let (sx, sy) = ((sx * 32.0).round() / 32.0, (sy * 32.0).round() / 32.0);
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (ix, iy) = (x0 as i32, y0 as i32);
            for c in 0..3 {
                let top = lerp(texel(ix, iy, c), texel(ix + 1, iy, c), fx);
                let bottom = lerp(texel(ix, iy + 1, c), texel(ix + 1, iy + 1, c), fx);
                out.push(lerp(top, bottom, fy).round() * scale + offset);
            }
        }
    }
    out
}

/// CPU reference of [`ImageOps::composite`].
pub fn cpu_composite(dst: &RgbaImage, src: &RgbaImage, opacity: f32) -> RgbaImage {
    let opacity = opacity.clamp(0.0, 1.0);
    RgbaImage::from_fn(dst.width(), dst.height(), |x, y| {
        let s = src.get_pixel(x, y).0.map(unorm);
        let d = dst.get_pixel(x, y).0.map(unorm);
        let sa = s[3] * opacity;
        let da = d[3] * (1.0 - sa);
        let oa = sa + da;
        let mut px = [0u8; 4];
        for c in 0..3 {
            px[c] = if oa > 0.0 {
                pack((s[c] * sa + d[c] * da) / oa)
            } else {
                0
            };
        }
        px[3] = pack(oa);
        image::Rgba(px)
    })
}

/// CPU reference of [`ImageOps::warp_mask`].
pub fn cpu_warp_mask(
    mask: &[f32],
    (mask_w, mask_h): (u32, u32),
    to_mask: &Affine2,
    (width, height): (u32, u32),
) -> Vec<f32> {
    let texel = |x: i32, y: i32| -> f32 {
        if x < 0 || y < 0 || x >= mask_w as i32 || y >= mask_h as i32 {
            0.0
        } else {
            mask[(y as u32 * mask_w + x as u32) as usize]
        }
    };
    let mut out = Vec::with_capacity((width * height) as usize);
    for oy in 0..height {
        for ox in 0..width {
            let (sx, sy) = to_mask.apply(ox as f32, oy as f32);
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (ix, iy) = (x0 as i32, y0 as i32);
            let top = lerp(texel(ix, iy), texel(ix + 1, iy), fx);
            let bottom = lerp(texel(ix, iy + 1), texel(ix + 1, iy + 1), fx);
            out.push(f32::from(pack(lerp(top, bottom, fy))) / 255.0);
        }
    }
    out
}

/// A separable box blur of radius `r` over a `w` × `h` row-major grid (edges clamped): the
/// garment stage's low-pass (shading, coverage, mask opening and closing) and the samples'
/// soft shadows. CPU only.
pub fn box_blur(src: &[f32], w: usize, h: usize, r: usize) -> Vec<f32> {
    let mut tmp = vec![0.0f32; w * h];
    let mut out = vec![0.0f32; w * h];
    let norm = 1.0 / (2 * r + 1) as f32;
    for y in 0..h {
        let row = &src[y * w..(y + 1) * w];
        let mut acc = 0.0;
        for k in 0..=2 * r {
            acc += row[k.saturating_sub(r).min(w - 1)];
        }
        for x in 0..w {
            tmp[y * w + x] = acc * norm;
            let add = (x + r + 1).min(w - 1);
            let sub = x.saturating_sub(r);
            acc += row[add] - row[sub];
        }
    }
    for x in 0..w {
        let mut acc = 0.0;
        for k in 0..=2 * r {
            acc += tmp[k.saturating_sub(r).min(h - 1) * w + x];
        }
        for y in 0..h {
            out[y * w + x] = acc * norm;
            let add = (y + r + 1).min(h - 1);
            let sub = y.saturating_sub(r);
            acc += tmp[add * w + x] - tmp[sub * w + x];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_inverse_round_trips() {
        let a = Affine2 {
            m: [0.8, -0.6, 10.0, 0.6, 0.8, -5.0],
        };
        let inv = a.inverse().unwrap();
        let (x, y) = a.apply(3.0, 7.0);
        let (bx, by) = inv.apply(x, y);
        assert!((bx - 3.0).abs() < 1e-4 && (by - 7.0).abs() < 1e-4);
        assert!(Affine2 { m: [0.0; 6] }.inverse().is_none());
    }
}
