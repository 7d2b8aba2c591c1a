//! The wgpu executor: constants uploaded once, activation buffers planned once, one command
//! encoder and one readback per inference.

use std::collections::HashMap;
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use super::prepare::{fuse, lower, plan_buffers, Epilogue, Geo, Plan, Step};
use super::{Model, TfliteError};
use crate::gpu::GpuContext;

mod build;

use build::Builder;

/// Mirrors `ConvParams` in `conv2d.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ConvParams {
    in_h: u32,
    in_w: u32,
    in_c: u32,
    out_h: u32,
    out_w: u32,
    out_c: u32,
    k_h: u32,
    k_w: u32,
    stride_h: u32,
    stride_w: u32,
    dil_h: u32,
    dil_w: u32,
    pad_top: u32,
    pad_left: u32,
    act: u32,
    /// Output-channel blocks: `oc8` (blocks of 8) in conv2d.wgsl, `oc4` in depthwise.wgsl.
    oc4: u32,
    /// `groups_w` in conv2d.wgsl, `mult` in depthwise.wgsl.
    extra: u32,
    act2: u32,
    res_c: u32,
    _pad: u32,
}
const _: () = assert!(std::mem::size_of::<ConvParams>() == 80);

/// Mirrors `TransposeConvParams` in `transpose_conv.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct TransposeConvParams {
    in_h: u32,
    in_w: u32,
    in_c: u32,
    out_h: u32,
    out_w: u32,
    out_c: u32,
    k_h: u32,
    k_w: u32,
    stride_h: u32,
    stride_w: u32,
    pad_top: u32,
    pad_left: u32,
    oc4: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<TransposeConvParams>() == 64);

/// Mirrors `BinaryParams` in `binary.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct BinaryParams {
    out_shape: [u32; 4],
    a_str: [u32; 4],
    b_str: [u32; 4],
    op: u32,
    act: u32,
    total: u32,
    same: u32,
}
const _: () = assert!(std::mem::size_of::<BinaryParams>() == 64);

/// Mirrors `UnaryParams` in `unary.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct UnaryParams {
    op: u32,
    total: u32,
    _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<UnaryParams>() == 16);

/// Mirrors `PadParams` in `pad.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct PadParams {
    in_shape: [u32; 4],
    out_shape: [u32; 4],
    before: [u32; 4],
    total: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<PadParams>() == 64);

/// Mirrors `PoolParams` in `pool.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct PoolParams {
    in_h: u32,
    in_w: u32,
    c: u32,
    out_h: u32,
    out_w: u32,
    k_h: u32,
    k_w: u32,
    stride_h: u32,
    stride_w: u32,
    pad_top: u32,
    pad_left: u32,
    is_max: u32,
    act: u32,
    total: u32,
    _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<PoolParams>() == 64);

/// Mirrors `ResizeParams` in `resize_bilinear.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ResizeParams {
    in_h: u32,
    in_w: u32,
    c: u32,
    out_h: u32,
    out_w: u32,
    half_pixel: u32,
    total: u32,
    _pad0: u32,
    scale_y: f32,
    scale_x: f32,
    _pad1: [f32; 2],
}
const _: () = assert!(std::mem::size_of::<ResizeParams>() == 48);

/// Mirrors `DepthToSpaceParams` in `depth_to_space.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct DepthToSpaceParams {
    in_w: u32,
    in_c: u32,
    out_w: u32,
    out_c: u32,
    block: u32,
    total: u32,
    _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<DepthToSpaceParams>() == 32);

/// Mirrors `ConcatParams` in `concat.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ConcatParams {
    len: u32,
    inner: u32,
    out_axis: u32,
    offset: u32,
    act: u32,
    total: u32,
    _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<ConcatParams>() == 32);

const WORKGROUP: u32 = 64;
const MAX_GROUPS: u32 = 65535;

/// A binding of a dispatch: a tensor (pool buffer or uploaded constant) or a packed buffer.
enum Bind {
    Tensor(usize),
    Buffer(wgpu::Buffer),
}

/// One recorded kernel launch.
struct Dispatch {
    /// Kernel name and output size, for [`Executor::profile`].
    label: String,
    pipeline: usize,
    bind_group: wgpu::BindGroup,
    groups: (u32, u32, u32),
}

/// Runs a [`Model`] on the GPU. Weights live on the GPU; activation buffers are reused
/// across runs and shared between tensors whose lifetimes do not overlap.
pub struct Executor {
    ctx: Arc<GpuContext>,
    pipelines: Vec<wgpu::ComputePipeline>,
    dispatches: Vec<Dispatch>,
    /// Graph inputs: (buffer, element count).
    inputs: Vec<(wgpu::Buffer, usize)>,
    /// Graph outputs: (buffer, element count, byte offset in the staging buffer).
    outputs: Vec<(wgpu::Buffer, usize, u64)>,
    staging: wgpu::Buffer,
    staging_size: u64,
    activation_bytes: u64,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("dispatches", &self.dispatches.len())
            .field("activation_bytes", &self.activation_bytes)
            .finish()
    }
}

fn f32_bytes(v: &[f32]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Packs conv weights `[out_c, k_h, k_w, in_c]` as `[k_h][k_w][in_c][ceil(out_c / group) * group]`
/// (zero-padded): conv2d.wgsl reads 8 output channels at a time, transpose_conv.wgsl 4.
fn pack_conv_weights(w: &[f32], g: &Geo, group: usize) -> Vec<f32> {
    let ocp = g.out_c.div_ceil(group) * group;
    let mut out = vec![0.0; g.k_h * g.k_w * g.in_c * ocp];
    for oc in 0..g.out_c {
        for ky in 0..g.k_h {
            for kx in 0..g.k_w {
                for ic in 0..g.in_c {
                    let dst = ((ky * g.k_w + kx) * g.in_c + ic) * ocp + oc;
                    out[dst] = w[((oc * g.k_h + ky) * g.k_w + kx) * g.in_c + ic];
                }
            }
        }
    }
    out
}

/// Packs depthwise weights `[1, k_h, k_w, out_c]` as `[k_h][k_w][oc4]` vec4.
fn pack_depthwise_weights(w: &[f32], g: &Geo) -> Vec<f32> {
    let oc4 = g.out_c.div_ceil(4);
    let mut out = vec![0.0; g.k_h * g.k_w * oc4 * 4];
    for k in 0..g.k_h * g.k_w {
        out[k * oc4 * 4..k * oc4 * 4 + g.out_c].copy_from_slice(&w[k * g.out_c..(k + 1) * g.out_c]);
    }
    out
}

/// Packs a per-channel vector zero-padded to a multiple of 16 channels (the widest block).
fn pack_bias(b: Option<&[f32]>, out_c: usize) -> Vec<f32> {
    let mut out = vec![0.0; out_c.div_ceil(16) * 16];
    if let Some(b) = b {
        out[..out_c].copy_from_slice(b);
    }
    out
}

fn to_u32(v: usize, what: &str) -> Result<u32, TfliteError> {
    u32::try_from(v).map_err(|_| TfliteError::Unsupported(format!("{what} {v} too large")))
}

/// Workgroup counts for a 1-D kernel over `total` items (`i = gid.x + gid.y * 65535 * 64`).
fn groups_1d(total: usize) -> Result<(u32, u32, u32), TfliteError> {
    let wg = to_u32(total.div_ceil(WORKGROUP as usize), "dispatch size")?;
    if wg <= MAX_GROUPS {
        Ok((wg.max(1), 1, 1))
    } else {
        let y = wg.div_ceil(MAX_GROUPS);
        if y > MAX_GROUPS {
            return Err(TfliteError::Unsupported(format!(
                "{total} items in one dispatch"
            )));
        }
        Ok((MAX_GROUPS, y, 1))
    }
}

impl Executor {
    /// Prepares `model` on `ctx`: folds load-time operators, uploads weights, plans buffers,
    /// builds pipelines and bind groups. An operator outside the supported set gives
    /// [`TfliteError::UnsupportedOperator`].
    pub fn new(ctx: Arc<GpuContext>, model: &Model) -> Result<Executor, TfliteError> {
        let mut plan = lower(model.graph())?;
        fuse(&mut plan);
        let alloc = plan_buffers(&plan);
        let device = &ctx.device;
        let max_binding = u64::from(ctx.limits.max_storage_buffer_binding_size);
        let pool: Vec<wgpu::Buffer> = alloc
            .sizes
            .iter()
            .map(|&size| {
                if size > max_binding {
                    return Err(TfliteError::Unsupported(format!(
                        "a {size}-byte tensor exceeds the device's storage binding limit"
                    )));
                }
                Ok(device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("tflite activations"),
                    size,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }))
            })
            .collect::<Result<_, _>>()?;
        let activation_bytes = alloc.sizes.iter().sum();
        let mut b = Builder {
            device,
            pipelines: Vec::new(),
            pipeline_index: HashMap::new(),
            dispatches: Vec::new(),
            pool,
            slot: alloc.slot,
            const_buffers: HashMap::new(),
            plan: &plan,
        };
        for step in &plan.steps {
            b.step(step)?;
        }
        let inputs = plan
            .inputs
            .iter()
            .map(|&t| (b.pool[b.slot[&t]].clone(), plan.numel(t)))
            .collect();
        let mut offset = 0u64;
        let mut outputs = Vec::new();
        for &t in &plan.outputs {
            // An output that is a constant (no step writes it) is uploaded like any constant.
            let buffer = match plan.consts.get(&t) {
                Some(c) => {
                    let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("tflite constant output"),
                        contents: f32_bytes(c),
                        usage: wgpu::BufferUsages::COPY_SRC,
                    });
                    buf
                }
                None => b.pool[b.slot[&t]].clone(),
            };
            outputs.push((buffer, plan.numel(t), offset));
            offset += (plan.numel(t) * 4) as u64;
        }
        let staging_size = offset.max(4);
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tflite readback"),
            size: staging_size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Ok(Executor {
            pipelines: b.pipelines,
            dispatches: b.dispatches,
            inputs,
            outputs,
            staging,
            staging_size,
            activation_bytes,
            ctx,
        })
    }

    /// Bytes of GPU memory used by activation buffers (after sharing).
    pub fn activation_bytes(&self) -> u64 {
        self.activation_bytes
    }

    /// Number of kernel launches per inference.
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }

    /// The GPU buffers holding the graph inputs, in input order (for callers that prepare
    /// inputs on the GPU and call [`Executor::run_resident`]).
    pub fn input_buffers(&self) -> Vec<&wgpu::Buffer> {
        self.inputs.iter().map(|(b, _)| b).collect()
    }

    fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("tflite"),
                timestamp_writes: None,
            });
            for d in &self.dispatches {
                pass.set_pipeline(&self.pipelines[d.pipeline]);
                pass.set_bind_group(0, &d.bind_group, &[]);
                pass.dispatch_workgroups(d.groups.0, d.groups.1, d.groups.2);
            }
        }
        for (buf, n, off) in &self.outputs {
            encoder.copy_buffer_to_buffer(buf, 0, &self.staging, *off, (*n * 4) as u64);
        }
    }

    /// Runs one inference; `inputs` in model input order, each a flat NHWC array.
    /// Returns the outputs in model output order.
    pub fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, TfliteError> {
        if inputs.len() != self.inputs.len() {
            return Err(TfliteError::BadInput(format!(
                "{} inputs given, the model has {}",
                inputs.len(),
                self.inputs.len()
            )));
        }
        for (k, ((buf, n), data)) in self.inputs.iter().zip(inputs).enumerate() {
            if data.len() != *n {
                return Err(TfliteError::BadInput(format!(
                    "input {k} has {} values, expected {n}",
                    data.len()
                )));
            }
            self.ctx.queue.write_buffer(buf, 0, f32_bytes(data));
        }
        self.run_resident()
    }

    /// Times every dispatch on its own (one submission and wait each): a diagnostic for
    /// finding slow kernels, much slower than [`Executor::run`]. Returns (label, seconds).
    pub fn profile(&mut self) -> Vec<(String, f64)> {
        let device = &self.ctx.device;
        let mut out = Vec::new();
        for d in &self.dispatches {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&self.pipelines[d.pipeline]);
                pass.set_bind_group(0, &d.bind_group, &[]);
                pass.dispatch_workgroups(d.groups.0, d.groups.1, d.groups.2);
            }
            let t0 = std::time::Instant::now();
            self.ctx.queue.submit(Some(encoder.finish()));
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
            out.push((d.label.clone(), t0.elapsed().as_secs_f64()));
        }
        out
    }

    /// Runs one inference on inputs already written to [`Executor::input_buffers`].
    pub fn run_resident(&mut self) -> Result<Vec<Vec<f32>>, TfliteError> {
        let device = &self.ctx.device;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("tflite inference"),
        });
        self.record(&mut encoder);
        let bytes = self
            .ctx
            .submit_and_read(encoder, &self.staging, self.staging_size)
            .map_err(|e| TfliteError::Readback(e.0))?;
        let all: Vec<f32> = bytemuck::pod_collect_to_vec(&bytes);
        let out = self
            .outputs
            .iter()
            .map(|(_, n, off)| {
                let s = (*off / 4) as usize;
                all[s..s + n].to_vec()
            })
            .collect();
        Ok(out)
    }
}
