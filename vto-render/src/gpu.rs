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

/// Why reading a GPU buffer back failed.
#[derive(Debug, thiserror::Error)]
#[error("GPU readback failed: {0}")]
pub struct ReadbackError(pub String);

/// The compute pipeline of the kernel `name` of [`crate::shaders::SHADERS`] on `device` (see
/// [`GpuContext::pipeline`]).
///
/// # Panics
/// When `name` is not in the table (names are constants of this crate; the shader-table test
/// checks every one).
pub fn pipeline(device: &wgpu::Device, name: &str) -> wgpu::ComputePipeline {
    let shader = crate::shaders::shader(name)
        .unwrap_or_else(|| panic!("kernel {name} is not in the shader table"));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(shader.source().into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// The one GPU kernel helper: pipelines from the shader table, storage buffers, bind groups,
/// dispatches and readback. Every kernel family (TFLite operators, image operations, the
/// rasterizer) goes through these, so there is one way to do each.
impl GpuContext {
    /// The compute pipeline of the kernel `name` in [`crate::shaders::SHADERS`] (entry point
    /// `main`, layout from the shader).
    ///
    /// # Panics
    /// When `name` is not in the table: names are compile-time constants of this crate, and
    /// the shader-table test checks every one.
    pub fn pipeline(&self, name: &str) -> wgpu::ComputePipeline {
        pipeline(&self.device, name)
    }

    /// A storage buffer holding `bytes` (padded to one 16-byte word when empty: zero-length
    /// bindings are invalid), readable back with `COPY_SRC`.
    pub fn storage_init(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        let padded = [0u8; 16];
        let contents = if bytes.is_empty() { &padded[..] } else { bytes };
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            })
    }

    /// An uninitialised storage buffer of `size` bytes (at least 4).
    pub fn storage(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A uniform buffer holding `bytes`.
    pub fn uniform(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            })
    }

    /// A bind group for group 0 of `pipeline`, binding `buffers` in order (binding `i` is `buffers[i]`).
    pub fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// Records one dispatch of `pipeline` with `bind` over `groups` workgroups.
    pub fn dispatch(
        enc: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        bind: &wgpu::BindGroup,
        groups: (u32, u32, u32),
    ) {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }

    /// A `MAP_READ` staging buffer of `size` bytes to copy results into.
    pub fn staging(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Submits `enc`, waits for the device and returns the first `size` bytes of `staging`
    /// (which `enc` copied results into). The one readback path of the crate.
    pub fn submit_and_read(
        &self,
        enc: wgpu::CommandEncoder,
        staging: &wgpu::Buffer,
        size: u64,
    ) -> Result<Vec<u8>, ReadbackError> {
        self.queue.submit([enc.finish()]);
        let slice = staging.slice(..size);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| ReadbackError(e.to_string()))?;
        rx.recv()
            .map_err(|e| ReadbackError(e.to_string()))?
            .map_err(|e| ReadbackError(e.to_string()))?;
        let bytes = slice.get_mapped_range().to_vec();
        staging.unmap();
        Ok(bytes)
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
