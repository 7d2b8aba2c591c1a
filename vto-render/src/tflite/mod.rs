//! MediaPipe's TFLite models, read by our own flatbuffer reader and run as WGSL kernels, or
//! as native CPU kernels where the wgpu device is itself a CPU.
//!
//! - [`Model::parse`] reads a `.tflite` file ([`schema`]): tensors, operators with their
//!   options, constant buffers. Malformed input gives [`TfliteError::Malformed`].
//! - [`Executor::new`] folds the load-time operators (DEQUANTIZE of float16 weights, DENSIFY
//!   of sparse weights) on the CPU, uploads every constant once, plans the activation buffers
//!   (tensors whose lifetimes do not overlap share a buffer; RESHAPE is a view) and builds one
//!   compute pipeline per kernel and one bind group per dispatch.
//! - [`Executor::run`] uploads the inputs, records every dispatch into one command encoder,
//!   submits once and maps the outputs once.
//! - [`CpuExecutor`] runs the same lowered, fused plan with native kernels (GEMM-based
//!   convolutions, vectorised depthwise and elementwise loops, rows over a thread pool): the
//!   product path on lavapipe/SwiftShader/WARP, where it is tens of times faster than WGSL.
//!
//! The layout is NHWC float32 throughout. [`cpu`] holds the reference implementation of every
//! operator; it is the oracle of the tests, not a product path.

pub mod cpu;
#[cfg(feature = "gpu")]
mod executor;
mod native;
mod prepare;
pub mod schema;
pub(crate) mod simd;
#[cfg(all(test, feature = "gpu"))]
mod tests;

#[cfg(feature = "gpu")]
pub use executor::Executor;
pub use native::{CpuArena, CpuExecutor, CpuPlan};
pub use schema::{Activation, OpKind, Padding};

#[cfg(feature = "gpu")]
use crate::gpu::GpuError;

/// Errors of the TFLite reader and executor.
#[derive(Debug, thiserror::Error)]
pub enum TfliteError {
    /// The file is not a well-formed TFLite flatbuffer.
    #[error("malformed TFLite model: {0}")]
    Malformed(String),
    /// The model uses an operator this executor does not implement.
    #[error("unsupported TFLite operator {name}")]
    UnsupportedOperator {
        /// The builtin name (e.g. `SOFTMAX`) or the custom op code.
        name: String,
    },
    /// The model uses a feature (tensor type, option) this executor does not implement.
    #[error("unsupported TFLite feature: {0}")]
    Unsupported(String),
    /// The inputs given to [`Executor::run`] do not match the model.
    #[error("bad input: {0}")]
    BadInput(String),
    /// No GPU context.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Reading results back from the GPU failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
}

impl TfliteError {
    /// A stable machine-readable code: `tflite_malformed`, `tflite_unsupported` (an
    /// operator or a feature), `tflite_bad_input` or `tflite_gpu` (no device, a failed
    /// readback).
    pub fn code(&self) -> &'static str {
        match self {
            TfliteError::Malformed(_) => "tflite_malformed",
            TfliteError::UnsupportedOperator { .. } | TfliteError::Unsupported(_) => {
                "tflite_unsupported"
            }
            TfliteError::BadInput(_) => "tflite_bad_input",
            #[cfg(feature = "gpu")]
            TfliteError::Gpu(_) => "tflite_gpu",
            TfliteError::Readback(_) => "tflite_gpu",
        }
    }
}

/// Name and shape of a graph input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// The tensor name in the file.
    pub name: String,
    /// Its shape (NHWC for images).
    pub shape: Vec<usize>,
}

/// A parsed `.tflite` model.
#[derive(Debug, Clone)]
pub struct Model {
    graph: schema::Graph,
}

impl Model {
    /// Parses a `.tflite` file.
    pub fn parse(bytes: &[u8]) -> Result<Model, TfliteError> {
        Ok(Model {
            graph: schema::parse(bytes)?,
        })
    }

    /// Builds a model from an already-made graph (tests construct small graphs this way).
    pub fn from_graph(graph: schema::Graph) -> Model {
        Model { graph }
    }

    /// The parsed graph.
    pub fn graph(&self) -> &schema::Graph {
        &self.graph
    }

    fn info(&self, idx: &[usize]) -> Vec<TensorInfo> {
        idx.iter()
            .map(|&i| {
                let t = &self.graph.tensors[i];
                TensorInfo {
                    name: t.name.clone(),
                    shape: t.shape.clone(),
                }
            })
            .collect()
    }

    /// The graph inputs, in order.
    pub fn inputs(&self) -> Vec<TensorInfo> {
        self.info(&self.graph.inputs)
    }

    /// The graph outputs, in order.
    pub fn outputs(&self) -> Vec<TensorInfo> {
        self.info(&self.graph.outputs)
    }
}
