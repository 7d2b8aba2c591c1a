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
//!    faces ([`vision::face`], with the face policy of [`engine`]), body ([`vision::pose`]),
//!    person mask ([`vision::segmentation`]) — on the TFLite executor ([`tflite`]).
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
//!   shading. A category is one module implementing [`tryon::TryOn`]; [`engine`] is the one
//!   generic adapter around them.
//! - **One maths module** ([`math`], on `glam`), **one GPU kernel helper** (pipelines,
//!   buffers, dispatch and readback on [`gpu::GpuContext`]) and **one shader table**
//!   ([`shaders`]): one WGSL kernel per file under `shaders/`, every one validated by naga in
//!   one test; host structs are `#[repr(C)]` + `Pod` with size assertions.
//!
//! ## Main types
//! [`gpu::GpuContext`], [`tflite::Model`] / [`tflite::Executor`], [`vision::Vision`],
//! [`vision::InspectReport`], [`engine::Renderer`], [`engine::BuiltinEngine`],
//! [`tryon::TryOn`], [`scene::SceneBuilder`], [`raster::Rasterizer`].

pub mod engine;
pub mod fill;
pub mod garment;
pub mod gpu;
pub mod image_ops;
pub mod math;
pub mod models;
pub mod product;
pub mod raster;
#[cfg(feature = "samples")]
pub mod samples;
pub mod scene;
pub mod shaders;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tflite;
pub mod tryon;
pub mod vision;

pub use engine::{builtin, try_on};
