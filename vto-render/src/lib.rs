//! # vto-render: seeing the person and drawing the product, as wgpu compute kernels
//!
//! Every renderer first has to see the person, then draw on the photo. Both run on our own
//! WGSL kernels through wgpu, so the same code runs on lavapipe (a CPU Vulkan device: no GPU
//! needed) and on any real GPU.
//!
//! ## Design decisions
//! - **One device per process** ([`gpu::GpuContext::shared`]): device creation costs ~250 ms
//!   on lavapipe. A real GPU is preferred; `VTO_WGPU_BACKEND` / `VTO_WGPU_ADAPTER` override;
//!   no adapter is a typed error that names the fix.
//! - **MediaPipe's models, our executor** ([`tflite`]): a bounds-checked TFLite reader and a
//!   wgpu executor for exactly the operators the six models use, weights uploaded once,
//!   activation buffers reused, one submit per inference. Every kernel has a CPU reference
//!   that the tests compare against, and LiteRT goldens check whole models.
//! - **MediaPipe's pre- and post-processing, re-implemented** ([`vision`]): anchors, decoding,
//!   weighted NMS, rotated ROIs, landmark projection, head pose; GPU crops and mask warps in
//!   [`image_ops`]. Models are fetched and SHA-256-checked by [`models`].
//! - **Products are real 3D** ([`product`], [`raster`], [`tryon`]): glTF/OBJ placed with the
//!   head's pose, rasterized with 32-bit atomic depth, a head occluder and photo-matched
//!   shading. [`engine`] turns it into `vto_core::Engine`s for glasses and sunglasses.
//! - **One WGSL kernel per file** under `shaders/`, each validated by naga in a test; host
//!   structs are `#[repr(C)]` + `Pod` with size assertions.
//!
//! ## Main types
//! [`gpu::GpuContext`], [`tflite::Model`] / [`tflite::Executor`], [`vision::Vision`],
//! [`vision::InspectReport`], [`engine::Renderer`], [`engine::EyewearEngine`].

pub mod engine;
pub mod gpu;
pub mod image_ops;
pub mod models;
pub mod product;
pub mod raster;
pub mod tflite;
pub mod tryon;
pub mod vision;
