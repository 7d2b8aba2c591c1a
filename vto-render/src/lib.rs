//! vto-render: the vision stack and the renderers of vto, as wgpu compute kernels.
//!
//! This crate is being built; see the workspace README.

pub mod engine;
pub mod gpu;
pub mod image_ops;
pub mod models;
pub mod product;
pub mod raster;
pub mod tflite;
pub mod tryon;
pub mod vision;
