//! The eight networks on the wgpu TFLite executor: the product path of [`super::Networks`].

use std::sync::Arc;

use crate::gpu::GpuContext;
use crate::models::{ModelId, ModelStore};
use crate::tflite::{Executor, Model};

use super::{Infer, Networks, VisionError};

/// One model on the GPU executor.
pub struct GpuNet {
    id: ModelId,
    exec: Executor,
}

impl std::fmt::Debug for GpuNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuNet")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl GpuNet {
    /// Parses the model and uploads its weights once.
    pub fn new(ctx: Arc<GpuContext>, id: ModelId, bytes: &[u8]) -> Result<Self, VisionError> {
        let err = |e: crate::tflite::TfliteError| VisionError::Infer {
            model: id,
            message: e.to_string(),
        };
        let model = Model::parse(bytes).map_err(err)?;
        let exec = Executor::new(ctx, &model).map_err(err)?;
        Ok(Self { id, exec })
    }
}

impl Infer for GpuNet {
    fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, VisionError> {
        self.exec.run(inputs).map_err(|e| VisionError::Infer {
            model: self.id,
            message: e.to_string(),
        })
    }
}

impl Networks {
    /// All eight models from a verified store, on the GPU executor, each built on its first
    /// run ([`super::OnFirstUse`]).
    pub fn gpu(ctx: &Arc<GpuContext>, store: &ModelStore) -> Result<Networks, VisionError> {
        Networks::from_fn(|id| {
            let ctx = ctx.clone();
            let bytes = store.bytes(id).to_vec();
            let make: super::MakeNet = Box::new(move || {
                let net: Box<dyn Infer + Send> = Box::new(GpuNet::new(ctx, id, &bytes)?);
                Ok(net)
            });
            Ok(Box::new(super::OnFirstUse::new(id, make)))
        })
    }
}
