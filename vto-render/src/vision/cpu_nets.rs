//! The eight networks on the native CPU executor, and the choice between it and the wgpu
//! executor ([`VisionBackend`]).
//!
//! On a CPU wgpu device (lavapipe/llvmpipe, SwiftShader, WARP) the WGSL executor is 50–100×
//! slower than native kernels, so `auto` runs the networks on [`CpuExecutor`] there and on
//! the wgpu executor on a real GPU. When the networks run on the CPU, [`super::Vision`] also
//! crops the model inputs and warps the masks on the CPU (no GPU round trip per network).

use std::sync::{Arc, Mutex, OnceLock};

use crate::gpu::GpuContext;
use crate::models::{ModelId, ModelStore};
use crate::tflite::{CpuArena, CpuExecutor, CpuPlan, Model};

use super::{Infer, Networks, VisionError};

/// Where the vision networks run (config `vision_backend`, env `VTO_VISION_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VisionBackend {
    /// The native CPU executor when the wgpu adapter is a CPU device, the wgpu executor on a
    /// real GPU.
    #[default]
    Auto,
    /// Always the native CPU executor.
    Cpu,
    /// Always the wgpu executor.
    Gpu,
}

/// An unknown [`VisionBackend`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown vision backend {0:?}: expected \"auto\", \"cpu\" or \"gpu\"")]
pub struct UnknownVisionBackend(pub String);

impl std::str::FromStr for VisionBackend {
    type Err = UnknownVisionBackend;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            _ => Err(UnknownVisionBackend(s.to_owned())),
        }
    }
}

impl std::fmt::Display for VisionBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        })
    }
}

impl VisionBackend {
    /// The environment variable [`VisionBackend::from_env`] reads.
    pub const ENV: &'static str = "VTO_VISION_BACKEND";

    /// `VTO_VISION_BACKEND`, or [`VisionBackend::Auto`] when unset or empty.
    pub fn from_env() -> Result<Self, UnknownVisionBackend> {
        match std::env::var(Self::ENV) {
            Ok(v) if !v.trim().is_empty() => v.parse(),
            _ => Ok(Self::Auto),
        }
    }

    /// Whether the networks run on the CPU with this choice on an adapter of `device_type`.
    pub fn runs_on_cpu(self, device_type: wgpu::DeviceType) -> bool {
        match self {
            Self::Cpu => true,
            Self::Gpu => false,
            Self::Auto => device_type == wgpu::DeviceType::Cpu,
        }
    }
}

/// One model on the native CPU executor.
pub struct CpuNet {
    id: ModelId,
    exec: CpuExecutor,
}

impl std::fmt::Debug for CpuNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuNet")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl CpuNet {
    /// Parses the model and packs its weights once.
    pub fn new(id: ModelId, bytes: &[u8]) -> Result<Self, VisionError> {
        let err = |e: crate::tflite::TfliteError| VisionError::Infer {
            model: id,
            message: e.to_string(),
        };
        let model = Model::parse(bytes).map_err(err)?;
        let exec = CpuExecutor::new(&model).map_err(err)?;
        Ok(Self { id, exec })
    }
}

impl Infer for CpuNet {
    fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, VisionError> {
        self.exec.run(inputs).map_err(|e| VisionError::Infer {
            model: self.id,
            message: e.to_string(),
        })
    }
}

/// One model's [`CpuPlan`], prepared once by whichever pooled pipeline runs it first and
/// shared by all: the model bytes are held (once) only until then.
struct SharedPlan {
    id: ModelId,
    bytes: Mutex<Option<Arc<[u8]>>>,
    plan: OnceLock<Result<CpuPlan, String>>,
}

impl SharedPlan {
    fn executor(&self, arena: Arc<Mutex<CpuArena>>) -> Result<CpuExecutor, VisionError> {
        let plan = self.plan.get_or_init(|| {
            // A poisoned lock means a panic while taking the bytes; nothing to prepare from.
            let bytes = self.bytes.lock().ok().and_then(|mut b| b.take());
            let bytes = bytes.ok_or_else(|| "the model bytes are gone".to_owned())?;
            let model = Model::parse(&bytes).map_err(|e| e.to_string())?;
            CpuPlan::new(&model).map_err(|e| e.to_string())
        });
        match plan {
            Ok(plan) => Ok(CpuExecutor::with_arena(plan, arena)),
            Err(message) => Err(VisionError::Infer {
                model: self.id,
                message: message.clone(),
            }),
        }
    }
}

impl Networks {
    /// All eight models from a verified store, on the native CPU executor, each built on its
    /// first run ([`super::OnFirstUse`]). A [`super::Vision`] built with these prepares the
    /// model inputs on the CPU too.
    pub fn cpu(store: &ModelStore) -> Result<Networks, VisionError> {
        let mut pool = Networks::cpu_pool(store, 1)?;
        pool.pop().ok_or_else(|| VisionError::Infer {
            model: ModelId::FaceDetectionShortRange,
            message: "no networks built".into(),
        })
    }

    /// `count` (at least 1) sets of the eight models on the native CPU executor for a pool
    /// of concurrent pipelines, like [`Networks::cpu`] but sharing one packed copy of every
    /// model's weights ([`CpuPlan`]); the eight networks of a set run one at a time, so they
    /// share one set of activation buffers and scratch ([`CpuArena`]).
    pub fn cpu_pool(store: &ModelStore, count: usize) -> Result<Vec<Networks>, VisionError> {
        let shared: Vec<Arc<SharedPlan>> = ModelId::ALL
            .iter()
            .map(|&id| {
                Arc::new(SharedPlan {
                    id,
                    bytes: Mutex::new(Some(Arc::from(store.bytes(id)))),
                    plan: OnceLock::new(),
                })
            })
            .collect();
        (0..count.max(1))
            .map(|_| {
                let arena = Arc::new(Mutex::new(CpuArena::default()));
                let mut nets = Networks::from_fn(|id| {
                    let plan = shared.iter().find(|p| p.id == id).cloned().ok_or_else(|| {
                        VisionError::Infer {
                            model: id,
                            message: "not in the model list".into(),
                        }
                    })?;
                    let arena = Arc::clone(&arena);
                    let make: super::MakeNet = Box::new(move || {
                        let net: Box<dyn Infer + Send> = Box::new(CpuNet {
                            id,
                            exec: plan.executor(arena)?,
                        });
                        Ok(net)
                    });
                    Ok(Box::new(super::OnFirstUse::new(id, make)))
                })?;
                nets.host_inputs = true;
                Ok(nets)
            })
            .collect()
    }

    /// `count` sets of the eight models on the executor `backend` picks for `ctx`'s adapter
    /// ([`Networks::for_context`]); on the CPU they share their packed weights
    /// ([`Networks::cpu_pool`]).
    pub fn pool_for_context(
        ctx: &Arc<GpuContext>,
        store: &ModelStore,
        backend: VisionBackend,
        count: usize,
    ) -> Result<Vec<Networks>, VisionError> {
        if backend.runs_on_cpu(ctx.info.device_type) {
            Networks::cpu_pool(store, count)
        } else {
            (0..count.max(1))
                .map(|_| Networks::gpu(ctx, store))
                .collect()
        }
    }

    /// All eight models on the executor `backend` picks for `ctx`'s adapter (see
    /// [`VisionBackend`]).
    pub fn for_context(
        ctx: &Arc<GpuContext>,
        store: &ModelStore,
        backend: VisionBackend,
    ) -> Result<Networks, VisionError> {
        if backend.runs_on_cpu(ctx.info.device_type) {
            Networks::cpu(store)
        } else {
            Networks::gpu(ctx, store)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_parses_displays_and_picks_by_device_type() {
        for b in [VisionBackend::Auto, VisionBackend::Cpu, VisionBackend::Gpu] {
            assert_eq!(b.to_string().parse::<VisionBackend>(), Ok(b));
        }
        assert_eq!(" CPU ".parse::<VisionBackend>(), Ok(VisionBackend::Cpu));
        let err = "tpu".parse::<VisionBackend>().unwrap_err().to_string();
        assert!(err.contains("tpu") && err.contains("auto"), "{err}");
        use wgpu::DeviceType as D;
        assert!(VisionBackend::Auto.runs_on_cpu(D::Cpu));
        assert!(!VisionBackend::Auto.runs_on_cpu(D::DiscreteGpu));
        assert!(!VisionBackend::Auto.runs_on_cpu(D::IntegratedGpu));
        assert!(VisionBackend::Cpu.runs_on_cpu(D::DiscreteGpu));
        assert!(!VisionBackend::Gpu.runs_on_cpu(D::Cpu));
    }
}
