//! The headless wgpu context: one adapter and one device per process.
//!
//! Device creation costs ~250 ms on lavapipe, so the context is created once
//! ([`GpuContext::shared`]) and reused by every kernel. Adapter choice:
//!
//! 1. `VTO_WGPU_BACKEND` limits the backends (`vulkan`, `metal`, `dx12`, `gl`, or a
//!    comma-separated list; default: all primary backends).
//! 2. `VTO_WGPU_ADAPTER` picks the first adapter whose name contains the given text
//!    (case-insensitive), e.g. `llvmpipe` to force the CPU device on a machine with a GPU.
//! 3. Otherwise a discrete GPU is preferred, then an integrated one, then a virtual
//!    one, then a CPU device (lavapipe / llvmpipe).

use std::sync::{Arc, OnceLock};

/// Errors from setting up the GPU context.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter was found on this machine (or none matched the overrides).
    #[error(
        "no GPU adapter found{detail}: install a Vulkan driver; on Debian/Ubuntu without a GPU \
         run `apt-get install -y mesa-vulkan-drivers libvulkan1` (lavapipe, a CPU Vulkan device)"
    )]
    NoAdapter {
        /// What was asked for, when overrides narrowed the search.
        detail: String,
    },
    /// An override variable holds a value we do not understand.
    #[error("invalid {var}={value:?}: {reason}")]
    BadOverride {
        /// The environment variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The adapter refused to create a device.
    #[error("could not create a device on adapter {adapter:?}: {source}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// The cause.
        #[source]
        source: wgpu::RequestDeviceError,
    },
}

/// Which adapter to use: the overrides of the module docs, as values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdapterChoice {
    /// Backends to consider; `None` means all primary backends.
    pub backends: Option<wgpu::Backends>,
    /// A case-insensitive substring of the adapter name.
    pub name_contains: Option<String>,
}

impl AdapterChoice {
    /// Reads `VTO_WGPU_BACKEND` and `VTO_WGPU_ADAPTER`.
    pub fn from_env() -> Result<Self, GpuError> {
        let backends = match std::env::var("VTO_WGPU_BACKEND") {
            Ok(v) if !v.trim().is_empty() => Some(parse_backends(&v)?),
            _ => None,
        };
        let name_contains = std::env::var("VTO_WGPU_ADAPTER")
            .ok()
            .filter(|v| !v.trim().is_empty());
        Ok(Self {
            backends,
            name_contains,
        })
    }
}

fn parse_backends(value: &str) -> Result<wgpu::Backends, GpuError> {
    let mut out = wgpu::Backends::empty();
    for part in value.split(',').map(|p| p.trim().to_ascii_lowercase()) {
        out |= match part.as_str() {
            "vulkan" | "vk" => wgpu::Backends::VULKAN,
            "metal" => wgpu::Backends::METAL,
            "dx12" | "d3d12" => wgpu::Backends::DX12,
            "gl" | "gles" | "opengl" => wgpu::Backends::GL,
            other => {
                return Err(GpuError::BadOverride {
                    var: "VTO_WGPU_BACKEND",
                    value: value.to_string(),
                    reason: format!("unknown backend {other:?}; use vulkan, metal, dx12 or gl"),
                })
            }
        };
    }
    Ok(out)
}

/// Ranks an adapter type: lower is preferred.
fn rank(device_type: wgpu::DeviceType) -> u8 {
    match device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// A wgpu device and queue with the adapter they came from.
#[derive(Debug)]
pub struct GpuContext {
    /// The device every kernel runs on.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// What the adapter says about itself (name, backend, device type).
    pub info: wgpu::AdapterInfo,
    /// The limits the device was created with.
    pub limits: wgpu::Limits,
}

static SHARED: OnceLock<Result<Arc<GpuContext>, String>> = OnceLock::new();

impl GpuContext {
    /// The process-wide context, created on first use from the environment's overrides.
    ///
    /// A failure is remembered: later calls return the same error without retrying.
    pub fn shared() -> Result<Arc<GpuContext>, GpuError> {
        let slot = SHARED.get_or_init(|| {
            AdapterChoice::from_env()
                .and_then(|choice| Self::new(&choice))
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        match slot {
            Ok(ctx) => Ok(ctx.clone()),
            Err(message) => Err(GpuError::NoAdapter {
                detail: format!(" ({message})"),
            }),
        }
    }

    /// Creates a new context (prefer [`GpuContext::shared`]; this is for tests and tools).
    pub fn new(choice: &AdapterChoice) -> Result<Self, GpuError> {
        let backends = choice.backends.unwrap_or(wgpu::Backends::PRIMARY);
        let instance = wgpu::Instance::new(&wgpu::InstanceDescriptor {
            backends,
            ..Default::default()
        });
        let mut adapters: Vec<wgpu::Adapter> = instance
            .enumerate_adapters(backends)
            .into_iter()
            .filter(|a| {
                let info = a.get_info();
                match &choice.name_contains {
                    Some(needle) => info
                        .name
                        .to_ascii_lowercase()
                        .contains(&needle.to_ascii_lowercase()),
                    None => true,
                }
            })
            .collect();
        adapters.sort_by_key(|a| rank(a.get_info().device_type));
        let adapter = adapters
            .into_iter()
            .next()
            .ok_or_else(|| GpuError::NoAdapter {
                detail: match (&choice.backends, &choice.name_contains) {
                    (None, None) => String::new(),
                    (b, n) => format!(" (backends {b:?}, name containing {n:?})"),
                },
            })?;
        let info = adapter.get_info();
        let adapter_limits = adapter.limits();
        // Ask for what the adapter offers for the storage-heavy kernels, within the defaults'
        // shape so the same code runs on small GPUs.
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: adapter_limits.max_storage_buffer_binding_size,
            max_buffer_size: adapter_limits.max_buffer_size,
            max_storage_buffers_per_shader_stage: adapter_limits
                .max_storage_buffers_per_shader_stage
                .min(16),
            max_compute_workgroup_storage_size: adapter_limits.max_compute_workgroup_storage_size,
            max_compute_invocations_per_workgroup: adapter_limits
                .max_compute_invocations_per_workgroup,
            max_compute_workgroup_size_x: adapter_limits.max_compute_workgroup_size_x,
            max_compute_workgroup_size_y: adapter_limits.max_compute_workgroup_size_y,
            max_compute_workgroups_per_dimension: adapter_limits
                .max_compute_workgroups_per_dimension,
            ..wgpu::Limits::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("vto"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            memory_hints: wgpu::MemoryHints::Performance,
            ..Default::default()
        }))
        .map_err(|source| GpuError::RequestDevice {
            adapter: info.name.clone(),
            source,
        })?;
        Ok(Self {
            device,
            queue,
            info,
            limits,
        })
    }

    /// A one-line description such as `llvmpipe (Vulkan, Cpu)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.info.name, self.info.backend, self.info.device_type
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_parse_and_reject_unknown() {
        assert_eq!(
            parse_backends("vulkan, gl").unwrap(),
            wgpu::Backends::VULKAN | wgpu::Backends::GL
        );
        let err = parse_backends("cuda").unwrap_err().to_string();
        assert!(
            err.contains("VTO_WGPU_BACKEND") && err.contains("cuda"),
            "{err}"
        );
    }

    #[test]
    fn discrete_gpus_rank_before_cpus() {
        assert!(rank(wgpu::DeviceType::DiscreteGpu) < rank(wgpu::DeviceType::IntegratedGpu));
        assert!(rank(wgpu::DeviceType::IntegratedGpu) < rank(wgpu::DeviceType::Cpu));
    }

    #[test]
    fn no_matching_adapter_is_a_typed_error_with_the_fix() {
        let choice = AdapterChoice {
            backends: None,
            name_contains: Some("no-such-adapter-xyz".into()),
        };
        match GpuContext::new(&choice) {
            Err(e @ GpuError::NoAdapter { .. }) => {
                assert!(e.to_string().contains("mesa-vulkan-drivers"), "{e}")
            }
            other => panic!("expected NoAdapter, got {other:?}"),
        }
    }

    #[test]
    fn shared_context_finds_a_device() {
        let ctx = GpuContext::shared().expect("a wgpu adapter (lavapipe in CI)");
        assert!(!ctx.info.name.is_empty());
    }
}
