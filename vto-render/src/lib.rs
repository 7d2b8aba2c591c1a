//! # vto-render: seeing the person and drawing the product, as wgpu compute kernels
//!
//! Every renderer first has to see the person, then draw on the photo. Both run on our own
//! WGSL kernels through wgpu, so the same code runs on lavapipe (a CPU Vulkan device: no GPU
//! needed) and on any real GPU.
//!
//! ## A sync try-on, one way through
//! 1. [`engine::BuiltinEngine`] (the [`vto_core::Engine`] of every built-in category) hands the
//!    bytes to [`engine::Renderer::try_on`] on tokio's blocking pool.
//! 2. Decode: the photo through vto-core's `media` (sniffed, pixel limits before decoding, EXIF
//!    orientation), the product through [`product`] (glTF/OBJ) or the same image decoder.
//! 3. See: [`engine::Renderer::see`] runs only what the category's [`tryon::Needs`] ask for —
//!    faces ([`vision::face`], with the face policy of [`vision::person`]), body
//!    ([`vision::pose`]), person mask ([`vision::segmentation`]) — on the TFLite executor
//!    ([`tflite`]) — into a [`vision::Person`].
//! 4. Place: the category's module under [`tryon`] (one per category, e.g.
//!    [`tryon::eyewear`]) puts the product into camera space with the shared
//!    [`scene`] stages (photo camera and head frame, light estimate, occluders) and a
//!    [`scene::SceneBuilder`] projects it into a [`raster::Scene`].
//! 5. Render: [`raster::Rasterizer`] (product-neutral: opaque and transparent layers, any
//!    number of depth-only occluders) composites it over the photo on the GPU.
//! 6. Encode: PNG ([`engine::encode_png`]); the metadata carries the category's placement,
//!    the face choice and the stage timings.
//!
//! [`engine::builtin`] returns the `Engines` of every built-in category; the `vto` binary
//! passes them to the server.
//!
//! ## A 3D try-on (eyewear, hats, jewelry, shoes), module by module
//! [`engine`] → [`product`] (the model's bytes become a [`product::Product`]: triangles,
//! materials, and the file's [`product::ProductMeta`] parsed once) → [`vision`] (the face,
//! body or hands the category's [`tryon::Needs`] ask for) → [`tryon::placer`] (the one
//! adapter: it hands the model to the category's [`tryon::Placer::place`] in
//! [`tryon::eyewear`], [`tryon::hats`], [`tryon::jewelry`] or [`tryon::shoes`]) → [`scene`]
//! (the category's placement in camera space: [`scene::head_scene::HeadScene`] for the
//! head-worn ones, lights, occluders, and [`scene::SceneBuilder`] into a [`raster::Scene`])
//! → [`raster`] ([`raster::Rasterizer::render`] over the photo) → back in [`tryon::placer`]
//! (the category's metadata, a [`tryon::Look`]) → [`engine`] (PNG and timings).
//!
//! ## A garment try-on, one way through
//! A product photo of a garment (`shirt`, `tshirt`, `jacket`, `pants`, `dress`,
//! `full_outfit`) is decoded, seen and encoded as above; in place of the 3D placing and
//! rasterizing it passes the [`garment`] stage, driven by the category in
//! [`tryon::garments`], in this order:
//! 1. [`vision::Person`]: the photo, its pose keypoints and person mask.
//! 2. [`garment::cutout`]: the garment cut out of its product photo, its landmarks and part
//!    labels ([`garment::GarmentImage`]).
//! 3. [`garment::body`]: the body frame ([`garment::BodyFrame`]), and for a lower garment
//!    the legs, the feet and the top worn now.
//! 4. [`garment::upper::fit`] or [`garment::lower::fit`]: the garment's parts fitted to the
//!    body ([`garment::Part`]).
//! 5. [`garment::warp`]: one thin-plate spline per part, evaluated by a WGSL kernel
//!    ([`garment::Warper`]).
//! 6. [`garment::upper::compose`] or [`garment::lower::compose`] (and
//!    [`garment::lower::uncover`]), with [`garment::shade`]: the warped garment over the
//!    photo, the person's light on it, what it uncovers filled.
//!
//! ## Design decisions
//! - **One device per process** ([`gpu::GpuContext::shared`]): device creation costs ~250 ms
//!   on lavapipe. A real GPU is preferred; `VTO_WGPU_BACKEND` / `VTO_WGPU_ADAPTER` override;
//!   no adapter is a typed error that names the fix.
//! - **MediaPipe's models, our executor** ([`tflite`]): a bounds-checked TFLite reader and a
//!   wgpu executor for exactly the operators the eight models use, weights uploaded once,
//!   activation buffers reused, one submit per inference. Every kernel has a CPU reference
//!   that the tests compare against, and LiteRT goldens check whole models.
//! - **MediaPipe's pre- and post-processing, re-implemented** ([`vision`]): anchors, decoding,
//!   weighted NMS, rotated ROIs, landmark projection, head pose; GPU crops and mask warps in
//!   [`image_ops`]. Models are fetched and SHA-256-checked by [`models`].
//! - **Products are real 3D** ([`product`], [`scene`], [`raster`], [`tryon`]): glTF/OBJ placed
//!   with the person's pose, rasterized with 32-bit atomic depth, occluders and photo-matched
//!   shading. A category is one module implementing [`tryon::TryOn`] (a 3D category only
//!   [`tryon::Placer`]: where its product goes and what hides it); [`engine`] is the one
//!   generic adapter around them.
//! - **Samples are not the library**: the procedural sample products and drawn figures live in
//!   `samples`, behind the cargo feature `samples` (the `vto` binary's playground, the tests,
//!   examples and benches turn it on); nothing in the loading or rendering code imports them.
//! - **One maths module** ([`math`], on `glam`), **one GPU kernel helper** (pipelines,
//!   buffers, dispatch and readback on [`gpu::GpuContext`]) and **one shader table**
//!   ([`shaders`]): one WGSL kernel per file under `shaders/`, every one validated by naga in
//!   one test; host structs are `#[repr(C)]` + `Pod` with size assertions.
//!
//! ## Main types
//! [`gpu::GpuContext`], [`tflite::Model`] / [`tflite::Executor`], [`vision::Vision`],
//! [`vision::InspectReport`], [`engine::Renderer`], [`engine::BuiltinEngine`],
//! [`tryon::TryOn`], [`tryon::Placer`], [`product::ProductMeta`], [`scene::SceneBuilder`],
//! [`raster::Rasterizer`].
//!
//! ## Features
//! `gpu` (default) is everything on wgpu. Without it the crate is [`product`], [`tflite`]
//! (the reader and the CPU executor) and [`math`]: the parsers the fuzz targets under
//! `fuzz/` exercise, built without wgpu.

// Without `gpu`, helpers only the wgpu executor calls are unused.
#![cfg_attr(not(feature = "gpu"), allow(dead_code, unused_imports))]

#[cfg(feature = "gpu")]
pub mod engine;
#[cfg(feature = "gpu")]
pub mod fill;
#[cfg(feature = "gpu")]
pub mod garment;
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(feature = "gpu")]
pub mod image_ops;
pub mod math;
#[cfg(feature = "gpu")]
pub mod models;
pub mod product;
#[cfg(feature = "gpu")]
pub mod raster;
#[cfg(feature = "samples")]
pub mod samples;
#[cfg(feature = "gpu")]
pub mod scene;
#[cfg(feature = "gpu")]
pub mod shaders;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tflite;
#[cfg(feature = "gpu")]
pub mod tryon;
#[cfg(feature = "gpu")]
pub mod vision;

#[cfg(feature = "gpu")]
pub use engine::{builtin, try_on};
