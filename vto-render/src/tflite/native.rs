//! The native CPU executor: the lowered graph run by kernels written for a CPU, for machines
//! whose wgpu adapter is itself a CPU (lavapipe, SwiftShader, WARP), where WGSL through a
//! Vulkan emulation runs MobileNet-style networks 50–100× slower than native code.
//!
//! Why our own kernels and not `tract-core`: they consume the very plan the wgpu executor
//! runs (one lowering, one set of LiteRT goldens for both), and the GEMM-bound layers run on a
//! maintained SIMD GEMM (`matrixmultiply`). We did not benchmark a tract lowering;
//! the measure we hold this executor to is LiteRT's time in the same run
//! (`scripts/bench-vision.sh`).
//!
//! Design:
//! - The same [`lower`] + [`fuse`] plan the wgpu executor consumes: NHWC float32, PAD folded
//!   into convolutions, activations / PRELU / residual ADDs fused into their epilogue.
//! - Most convolutions are GEMMs on `matrixmultiply` (through `ndarray`'s safe
//!   `general_mat_mul`; it picks AVX2/FMA kernels at run time): a 1×1 stride-1 convolution
//!   multiplies the activation matrix `[H·W, C_in]` by the weights in place; other
//!   convolutions first gather patches (im2col) into a scratch matrix. Transposed
//!   convolutions are a GEMM followed by a scatter-add (col2im).
//! - Layers a GEMM handles badly run as direct convolutions ([`direct_conv`]): RGB stems
//!   (fewer than 8 input channels; output channels across the lanes, in registers) and heads
//!   with fewer than 8 outputs (one dot product per output; `matrixmultiply` computes and
//!   packs 8 columns at a time).
//! - Depthwise convolutions are loops over the contiguous channel axis; with stride 1 along x
//!   a run of pixels is one flat multiply-add per tap over weights tiled to the run's length,
//!   so the compiler emits straight 8-lane loops with no per-pixel bookkeeping.
//! - The hand-written loops run through [`super::simd`]: compiled for AVX2 when the CPU has
//!   it (runtime dispatch by `pulp`, no `unsafe` here), for the baseline otherwise.
//! - Rows are split over `rayon`'s pool (each chunk runs its GEMM and then its epilogue,
//!   while the rows are still in cache); small layers run on the calling thread.
//! - The packed weights are a read-only [`CpuPlan`] behind an `Arc`: every executor made
//!   from one plan (a pool of concurrent pipelines) shares them and owns only its
//!   activation buffers, planned once as the wgpu executor plans them (tensors whose
//!   lifetimes do not overlap share a buffer) and reused across runs with the im2col
//!   scratch: a warm [`CpuExecutor::run`] allocates only the returned output vectors.
//!   Executors that never run at once (the networks of one vision pipeline) can share one
//!   set of those buffers ([`CpuArena`]).
//! - [`CpuExecutor::profile`] times every kernel (`cargo bench -p vto-render --bench anchor
//!   -- --profile`).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

use super::executor::plan_buffers;
use super::prepare::{fuse, lower, Act, BinOp, Geo, Plan, Step, UnOp};
use super::schema::Activation;
use super::simd::{simd, simd_kernel};
use super::{Model, TfliteError};

/// Where a kernel reads a tensor: a pool buffer (slot, element count) or a constant.
#[derive(Debug, Clone, Copy)]
enum Src {
    Buf(usize, usize),
    Const(usize),
}

/// A convolution epilogue with its constants resolved: `act2(act1(acc + bias) + residual)`.
#[derive(Debug)]
struct Epi {
    bias: Option<Vec<f32>>,
    act1: Act,
    residual: Option<(Src, usize)>,
    act2: Act,
    /// PRELU slopes per output channel (empty when unused).
    alpha: Vec<f32>,
}

/// One prepared kernel; `y` is the output slot, `n` its element count.
#[derive(Debug)]
enum Kernel {
    /// Weights `[out_c][k_h·k_w·in_c]` (TFLite's own layout); `wt` the same transposed to
    /// `[k_h·k_w·in_c][out_c]` when the layer runs as a direct convolution with output
    /// channels across the lanes ([`direct_conv`]), else empty.
    Conv {
        x: Src,
        w: Vec<f32>,
        wt: Vec<f32>,
        geo: Geo,
        epi: Epi,
        pointwise: bool,
        direct: bool,
    },
    /// Weights `[k_h·k_w][out_c]`; `tile` the same and the bias repeated over a run of
    /// pixels ([`depthwise_tile`]) when the layer has stride 1 along x, else empty.
    Depthwise {
        x: Src,
        w: Vec<f32>,
        tile: Vec<f32>,
        geo: Geo,
        mult: usize,
        epi: Epi,
    },
    /// Weights `[(k_y, k_x, out_c)][in_c]`.
    TransposeConv {
        x: Src,
        w: Vec<f32>,
        bias: Option<Vec<f32>>,
        geo: Geo,
    },
    Binary {
        op: BinOp,
        a: Src,
        b: Src,
        a_shape: [usize; 4],
        b_shape: [usize; 4],
        out_shape: [usize; 4],
        act: Act,
    },
    Unary {
        op: UnOp,
        x: Src,
    },
    Pad {
        x: Src,
        in_shape: [usize; 4],
        out_shape: [usize; 4],
        before: [usize; 4],
    },
    Pool {
        max: bool,
        x: Src,
        geo: Geo,
        act: Act,
    },
    Concat {
        parts: Vec<(Src, usize)>,
        outer: usize,
        inner: usize,
        out_axis: usize,
        act: Act,
    },
    Resize {
        x: Src,
        geo: Geo,
        align_corners: bool,
        half_pixel_centers: bool,
    },
    DepthToSpace {
        x: Src,
        geo: Geo,
        block: usize,
    },
}

/// A graph output: a pool buffer or a constant.
#[derive(Debug)]
enum Output {
    Buf(usize, usize),
    Const(Vec<f32>),
}

/// The read-only part of a prepared model: kernels with their packed weights, constants, the
/// buffer plan. Shared (behind an `Arc`) by every [`CpuExecutor`] made with
/// [`CpuExecutor::from_plan`].
#[derive(Debug)]
struct Packed {
    kernels: Vec<(Kernel, usize, usize)>,
    consts: Vec<Vec<f32>>,
    buf_lens: Vec<usize>,
    scratch_len: usize,
    inputs: Vec<(usize, usize)>,
    outputs: Vec<Output>,
}

/// A model prepared for [`CpuExecutor`]: the lowered, fused plan with its weights packed.
/// Read-only and cheap to clone (an `Arc`): every executor made from it with
/// [`CpuExecutor::from_plan`] shares the weights and owns only its buffers.
#[derive(Debug, Clone)]
pub struct CpuPlan(Arc<Packed>);

impl CpuPlan {
    /// Prepares `model`: lowers and fuses the graph, packs the weights, plans the buffers.
    /// An operator outside the supported set gives [`TfliteError::UnsupportedOperator`].
    pub fn new(model: &Model) -> Result<CpuPlan, TfliteError> {
        Ok(CpuPlan(Arc::new(Packed::new(model)?)))
    }
}

/// Runs a [`Model`] with native CPU kernels. Weights are decoded and packed once (and shared
/// by executors made from the same [`CpuPlan`]); activation buffers and scratch are
/// allocated once per executor and reused by every run.
pub struct CpuExecutor {
    packed: Arc<Packed>,
    bufs: Vec<Vec<f32>>,
    scratch: Vec<f32>,
    /// Buffers shared with other executors instead of `bufs` and `scratch`.
    arena: Option<Arc<Mutex<CpuArena>>>,
}

/// Activation buffers and scratch that several executors take turns with: the networks of
/// one vision pipeline run one at a time, so they need one set of buffers (each slot grown
/// to the largest use), not one set each. Give it to [`CpuExecutor::with_arena`].
#[derive(Debug, Default)]
pub struct CpuArena {
    bufs: Vec<Vec<f32>>,
    scratch: Vec<f32>,
}

impl CpuArena {
    /// Bytes held (after the executors using it have run once).
    pub fn bytes(&self) -> usize {
        (self.bufs.iter().map(Vec::len).sum::<usize>() + self.scratch.len()) * 4
    }

    /// Grows the slots to what `p` needs (allocates only on an executor's first run).
    fn fit(&mut self, p: &Packed) {
        if self.bufs.len() < p.buf_lens.len() {
            self.bufs.resize_with(p.buf_lens.len(), Vec::new);
        }
        for (b, &n) in self.bufs.iter_mut().zip(&p.buf_lens) {
            if b.len() < n {
                b.resize(n, 0.0);
            }
        }
        if self.scratch.len() < p.scratch_len {
            self.scratch.resize(p.scratch_len, 0.0);
        }
    }
}

impl std::fmt::Debug for CpuExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuExecutor")
            .field("kernels", &self.packed.kernels.len())
            .field("activation_bytes", &self.activation_bytes())
            .field("weight_bytes", &self.weight_bytes())
            .finish()
    }
}

/// Multiply-adds below which a layer runs on the calling thread (a rayon hand-off costs a
/// few microseconds).
const PARALLEL_WORK: usize = 1 << 17;

fn act_of(a: Activation) -> Act {
    Act::from_fused(a)
}

impl Packed {
    fn new(model: &Model) -> Result<Packed, TfliteError> {
        let mut plan = lower(model.graph())?;
        fuse(&mut plan);
        let alloc = plan_buffers(&plan);
        let buf_lens: Vec<usize> = alloc.sizes.iter().map(|&b| (b / 4) as usize).collect();
        let mut consts: Vec<Vec<f32>> = Vec::new();
        let mut const_index = std::collections::HashMap::new();
        let mut src = |t: usize| -> Src {
            if let Some(c) = plan.consts.get(&t) {
                let i = *const_index.entry(t).or_insert_with(|| {
                    consts.push(c.clone());
                    consts.len() - 1
                });
                Src::Const(i)
            } else {
                Src::Buf(alloc.slot[&t], plan.numel(t))
            }
        };
        let constant = |t: usize, what: &str| -> Result<&Vec<f32>, TfliteError> {
            plan.consts
                .get(&t)
                .ok_or_else(|| TfliteError::Unsupported(format!("{what} computed at run time")))
        };
        let mut kernels = Vec::new();
        let mut scratch = 0usize;
        for step in &plan.steps {
            let y = step.writes();
            let kernel = match step {
                Step::Reshape { .. } => continue,
                Step::Conv {
                    x, w, b, geo, epi, ..
                } => {
                    let pointwise = geo.k_h == 1
                        && geo.k_w == 1
                        && geo.stride_h == 1
                        && geo.stride_w == 1
                        && geo.pad_top == 0
                        && geo.pad_left == 0
                        && geo.in_h == geo.out_h
                        && geo.in_w == geo.out_w;
                    let k = geo.k_h * geo.k_w * geo.in_c;
                    let direct = !pointwise
                        && k <= DIRECT_MAX_K
                        && (geo.out_c < SMALL_N || geo.in_c < LANES);
                    if !pointwise && !direct {
                        scratch = scratch.max(geo.out_h * geo.out_w * k);
                    }
                    let wv = constant(*w, "convolution weights")?.clone();
                    let mut wt = Vec::new();
                    if direct && geo.out_c >= SMALL_N {
                        wt = vec![0.0; wv.len()];
                        for (oc, row) in wv.chunks_exact(k).enumerate() {
                            for (kk, v) in row.iter().enumerate() {
                                wt[kk * geo.out_c + oc] = *v;
                            }
                        }
                    }
                    Kernel::Conv {
                        x: src(*x),
                        w: wv,
                        wt,
                        direct,
                        geo: *geo,
                        epi: Epi {
                            bias: b
                                .map(|b| constant(b, "convolution bias").cloned())
                                .transpose()?,
                            act1: epi.act1,
                            residual: epi.residual.map(|(r, rc)| (src(r), rc)),
                            act2: epi.act2,
                            alpha: epi
                                .alpha
                                .map(|a| constant(a, "PRELU slopes").cloned())
                                .transpose()?
                                .unwrap_or_default(),
                        },
                        pointwise,
                    }
                }
                Step::Depthwise {
                    x,
                    w,
                    b,
                    geo,
                    mult,
                    epi,
                    ..
                } => Kernel::Depthwise {
                    x: src(*x),
                    w: constant(*w, "depthwise weights")?.clone(),
                    tile: depthwise_tile(
                        constant(*w, "depthwise weights")?,
                        b.map(|b| constant(b, "depthwise bias"))
                            .transpose()?
                            .map(Vec::as_slice),
                        geo,
                        *mult,
                    ),
                    geo: *geo,
                    mult: *mult,
                    epi: Epi {
                        bias: b
                            .map(|b| constant(b, "depthwise bias").cloned())
                            .transpose()?,
                        act1: epi.act1,
                        residual: epi.residual.map(|(r, rc)| (src(r), rc)),
                        act2: epi.act2,
                        alpha: epi
                            .alpha
                            .map(|a| constant(a, "PRELU slopes").cloned())
                            .transpose()?
                            .unwrap_or_default(),
                    },
                },
                Step::TransposeConv { x, w, b, geo, .. } => {
                    let wt = constant(*w, "transpose convolution weights")?;
                    let n = geo.k_h * geo.k_w * geo.out_c;
                    let mut packed = vec![0.0; n * geo.in_c];
                    for oc in 0..geo.out_c {
                        for k in 0..geo.k_h * geo.k_w {
                            let src = &wt[(oc * geo.k_h * geo.k_w + k) * geo.in_c..][..geo.in_c];
                            packed[(k * geo.out_c + oc) * geo.in_c..][..geo.in_c]
                                .copy_from_slice(src);
                        }
                    }
                    scratch = scratch.max(geo.in_h * geo.in_w * n);
                    Kernel::TransposeConv {
                        x: src(*x),
                        w: packed,
                        bias: b
                            .map(|b| constant(b, "transpose convolution bias").cloned())
                            .transpose()?,
                        geo: *geo,
                    }
                }
                Step::Binary {
                    op,
                    a,
                    b,
                    a_shape,
                    b_shape,
                    out_shape,
                    act,
                    ..
                } => Kernel::Binary {
                    op: *op,
                    a: src(*a),
                    b: src(*b),
                    a_shape: *a_shape,
                    b_shape: *b_shape,
                    out_shape: *out_shape,
                    act: act_of(*act),
                },
                Step::Unary { op, x, .. } => Kernel::Unary {
                    op: *op,
                    x: src(*x),
                },
                Step::Pad {
                    x,
                    in_shape,
                    out_shape,
                    before,
                    ..
                } => Kernel::Pad {
                    x: src(*x),
                    in_shape: *in_shape,
                    out_shape: *out_shape,
                    before: *before,
                },
                Step::Pool {
                    max, x, geo, act, ..
                } => Kernel::Pool {
                    max: *max,
                    x: src(*x),
                    geo: *geo,
                    act: act_of(*act),
                },
                Step::Concat {
                    parts,
                    outer,
                    inner,
                    out_axis,
                    act,
                    ..
                } => Kernel::Concat {
                    parts: parts.iter().map(|&(t, len)| (src(t), len)).collect(),
                    outer: *outer,
                    inner: *inner,
                    out_axis: *out_axis,
                    act: act_of(*act),
                },
                Step::Resize {
                    x,
                    geo,
                    align_corners,
                    half_pixel_centers,
                    ..
                } => Kernel::Resize {
                    x: src(*x),
                    geo: *geo,
                    align_corners: *align_corners,
                    half_pixel_centers: *half_pixel_centers,
                },
                Step::DepthToSpace { x, geo, block, .. } => Kernel::DepthToSpace {
                    x: src(*x),
                    geo: *geo,
                    block: *block,
                },
            };
            kernels.push((kernel, alloc.slot[&y], plan.numel(y)));
        }
        let inputs = plan
            .inputs
            .iter()
            .map(|&t| (alloc.slot[&t], plan.numel(t)))
            .collect();
        let outputs = outputs_of(&plan, &alloc.slot);
        Ok(Packed {
            kernels,
            consts,
            buf_lens,
            scratch_len: scratch,
            inputs,
            outputs,
        })
    }
}

impl CpuExecutor {
    /// Prepares `model` ([`CpuPlan::new`]) and allocates the buffers of one executor.
    pub fn new(model: &Model) -> Result<CpuExecutor, TfliteError> {
        Ok(CpuExecutor::with_buffers(Arc::new(Packed::new(model)?)))
    }

    fn with_buffers(packed: Arc<Packed>) -> CpuExecutor {
        CpuExecutor {
            bufs: packed.buf_lens.iter().map(|&n| vec![0.0; n]).collect(),
            scratch: vec![0.0; packed.scratch_len],
            packed,
            arena: None,
        }
    }

    /// An executor of a prepared model that runs in `arena`'s buffers, shared with the other
    /// executors given the same arena. They must not run at the same time: a run holds the
    /// arena's lock, so a concurrent run waits.
    pub fn with_arena(plan: &CpuPlan, arena: Arc<Mutex<CpuArena>>) -> CpuExecutor {
        CpuExecutor {
            packed: Arc::clone(&plan.0),
            bufs: Vec::new(),
            scratch: Vec::new(),
            arena: Some(arena),
        }
    }

    /// An executor of a prepared model, with activation buffers and scratch of its own and
    /// the plan's weights shared: what a second concurrent pipeline costs is
    /// [`CpuExecutor::activation_bytes`], not a second copy of the network.
    pub fn from_plan(plan: &CpuPlan) -> CpuExecutor {
        CpuExecutor::with_buffers(Arc::clone(&plan.0))
    }

    /// The prepared model this executor runs (shared, not copied).
    pub fn plan(&self) -> CpuPlan {
        CpuPlan(Arc::clone(&self.packed))
    }

    /// Bytes of memory held by activation buffers (after sharing) and scratch.
    pub fn activation_bytes(&self) -> usize {
        (self.bufs.iter().map(Vec::len).sum::<usize>() + self.scratch.len()) * 4
    }

    /// Bytes of packed weights and constants (shared by [`CpuExecutor::from_plan`]d executors).
    pub fn weight_bytes(&self) -> usize {
        let weights: usize = self
            .packed
            .kernels
            .iter()
            .map(|(k, _, _)| match k {
                Kernel::Conv { w, wt, epi, .. } => {
                    w.len() + wt.len() + epi.bias.as_ref().map_or(0, Vec::len) + epi.alpha.len()
                }
                Kernel::Depthwise { w, tile, epi, .. } => {
                    w.len() + tile.len() + epi.bias.as_ref().map_or(0, Vec::len) + epi.alpha.len()
                }
                Kernel::TransposeConv { w, bias, .. } => {
                    w.len() + bias.as_ref().map_or(0, Vec::len)
                }
                _ => 0,
            })
            .sum();
        (weights + self.packed.consts.iter().map(Vec::len).sum::<usize>()) * 4
    }

    /// Number of kernels run per inference.
    pub fn kernel_count(&self) -> usize {
        self.packed.kernels.len()
    }

    /// Runs one inference; `inputs` in model input order, each a flat NHWC array.
    /// Returns the outputs in model output order.
    pub fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, TfliteError> {
        self.run_timed(inputs, None)
    }

    /// Runs one inference like [`CpuExecutor::run`] and times every kernel: one
    /// `(description, milliseconds)` per kernel in run order, for benchmarks that look for
    /// the slow operators (`cargo bench -p vto-render --bench anchor -- --profile`).
    pub fn profile(&mut self, inputs: &[&[f32]]) -> Result<Vec<(String, f64)>, TfliteError> {
        let mut times = Vec::with_capacity(self.packed.kernels.len());
        self.run_timed(inputs, Some(&mut times))?;
        Ok(self
            .packed
            .kernels
            .iter()
            .zip(times)
            .map(|((k, _, _), t)| (describe(k), t))
            .collect())
    }

    fn run_timed(
        &mut self,
        inputs: &[&[f32]],
        mut times: Option<&mut Vec<f64>>,
    ) -> Result<Vec<Vec<f32>>, TfliteError> {
        let packed = &*self.packed;
        if inputs.len() != packed.inputs.len() {
            return Err(TfliteError::BadInput(format!(
                "{} inputs given, the model has {}",
                inputs.len(),
                packed.inputs.len()
            )));
        }
        for (k, (&(_, n), data)) in packed.inputs.iter().zip(inputs).enumerate() {
            if data.len() != n {
                return Err(TfliteError::BadInput(format!(
                    "input {k} has {} values, expected {n}",
                    data.len()
                )));
            }
        }
        let Self {
            bufs,
            scratch,
            arena,
            ..
        } = self;
        let mut guard = match arena {
            Some(a) => Some(a.lock().map_err(|_| {
                TfliteError::Unsupported("a run in a shared arena panicked earlier".into())
            })?),
            None => None,
        };
        let (bufs, scratch) = match guard.as_deref_mut() {
            Some(a) => {
                a.fit(packed);
                (&mut a.bufs, &mut a.scratch)
            }
            None => (bufs, scratch),
        };
        for (&(slot, n), data) in packed.inputs.iter().zip(inputs) {
            bufs[slot][..n].copy_from_slice(data);
        }
        for (kernel, y, n) in packed.kernels.iter() {
            let t0 = times.is_some().then(Instant::now);
            let mut out = std::mem::take(&mut bufs[*y]);
            let env = Env {
                bufs: bufs.as_slice(),
                consts: packed.consts.as_slice(),
            };
            run_kernel(kernel, &env, scratch, &mut out[..*n]);
            bufs[*y] = out;
            if let (Some(times), Some(t0)) = (times.as_deref_mut(), t0) {
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        Ok(packed
            .outputs
            .iter()
            .map(|o| match o {
                Output::Buf(slot, n) => bufs[*slot][..*n].to_vec(),
                Output::Const(v) => v.clone(),
            })
            .collect())
    }
}

/// A short description of a kernel for [`CpuExecutor::profile`]: operator and shapes.
fn describe(k: &Kernel) -> String {
    let win = |g: &Geo| {
        format!(
            "{}x{}x{} -> {}x{}x{} k{}x{} s{}",
            g.in_h, g.in_w, g.in_c, g.out_h, g.out_w, g.out_c, g.k_h, g.k_w, g.stride_h
        )
    };
    match k {
        Kernel::Conv {
            geo,
            pointwise,
            direct,
            epi,
            ..
        } => format!(
            "conv{} {} {:?}{}",
            if *pointwise {
                "1x1"
            } else if *direct {
                "_direct"
            } else {
                ""
            },
            win(geo),
            epi.act1,
            if epi.residual.is_some() { "+res" } else { "" }
        ),
        Kernel::Depthwise { geo, epi, .. } => format!(
            "depthwise {} {:?}{}",
            win(geo),
            epi.act1,
            if epi.residual.is_some() { "+res" } else { "" }
        ),
        Kernel::TransposeConv { geo, .. } => format!("transpose_conv {}", win(geo)),
        Kernel::Binary { op, out_shape, .. } => format!("{op:?} {out_shape:?}"),
        Kernel::Unary { op, .. } => format!("{op:?}"),
        Kernel::Pad {
            in_shape,
            out_shape,
            ..
        } => format!("pad {in_shape:?} -> {out_shape:?}"),
        Kernel::Pool { max, geo, .. } => {
            format!(
                "{} {}",
                if *max { "max_pool" } else { "avg_pool" },
                win(geo)
            )
        }
        Kernel::Concat { parts, inner, .. } => format!("concat {} parts x{inner}", parts.len()),
        Kernel::Resize { geo, .. } => format!("resize {}", win(geo)),
        Kernel::DepthToSpace { geo, .. } => format!("depth_to_space {}", win(geo)),
    }
}

fn outputs_of(plan: &Plan, slot: &std::collections::HashMap<usize, usize>) -> Vec<Output> {
    plan.outputs
        .iter()
        .map(|&t| match plan.consts.get(&t) {
            Some(c) => Output::Const(c.clone()),
            None => Output::Buf(slot[&t], plan.numel(t)),
        })
        .collect()
}

/// The tensors a kernel reads.
struct Env<'a> {
    bufs: &'a [Vec<f32>],
    consts: &'a [Vec<f32>],
}

impl Env<'_> {
    fn get(&self, s: Src) -> &[f32] {
        match s {
            Src::Buf(slot, n) => &self.bufs[slot][..n],
            Src::Const(i) => &self.consts[i],
        }
    }
}

fn run_kernel(kernel: &Kernel, env: &Env, scratch: &mut [f32], out: &mut [f32]) {
    match kernel {
        Kernel::Conv {
            x,
            w,
            geo,
            epi,
            direct: true,
            wt,
            ..
        } => direct_conv(env.get(*x), w, wt, geo, epi, env, out),
        Kernel::Conv {
            x,
            w,
            geo,
            epi,
            pointwise,
            ..
        } => conv(env.get(*x), w, geo, epi, *pointwise, env, scratch, out),
        Kernel::Depthwise {
            x,
            w,
            tile,
            geo,
            mult,
            epi,
        } => depthwise(env.get(*x), w, tile, geo, *mult, epi, env, out),
        Kernel::TransposeConv { x, w, bias, geo } => {
            transpose_conv(env.get(*x), w, bias.as_deref(), geo, scratch, out)
        }
        Kernel::Binary {
            op,
            a,
            b,
            a_shape,
            b_shape,
            out_shape,
            act,
        } => {
            let (av, bv) = (env.get(*a), env.get(*b));
            match op {
                BinOp::Add => binary(|a, b| a + b, av, bv, a_shape, b_shape, out_shape, out),
                BinOp::Mul => binary(|a, b| a * b, av, bv, a_shape, b_shape, out_shape, out),
                BinOp::Prelu => binary(
                    |a, b| if a >= 0.0 { a } else { a * b },
                    av,
                    bv,
                    a_shape,
                    b_shape,
                    out_shape,
                    out,
                ),
            }
            activate(*act, out, &[]);
        }
        Kernel::Unary { op, x } => {
            out.copy_from_slice(env.get(*x));
            let act = match op {
                UnOp::Relu => Act::Relu,
                UnOp::Relu6 => Act::Relu6,
                UnOp::Logistic => Act::Logistic,
                UnOp::HardSwish => Act::HardSwish,
                UnOp::Tanh => Act::Tanh,
            };
            activate(act, out, &[]);
        }
        Kernel::Pad {
            x,
            in_shape,
            out_shape,
            before,
        } => pad(env.get(*x), in_shape, out_shape, before, out),
        Kernel::Pool { max, x, geo, act } => {
            pool(env.get(*x), geo, *max, out);
            activate(*act, out, &[]);
        }
        Kernel::Concat {
            parts,
            outer,
            inner,
            out_axis,
            act,
        } => {
            let mut off = 0;
            for &(t, len) in parts {
                let xv = env.get(t);
                let chunk = len * inner;
                for o in 0..*outer {
                    out[(o * out_axis + off) * inner..][..chunk]
                        .copy_from_slice(&xv[o * chunk..][..chunk]);
                }
                off += len;
            }
            activate(*act, out, &[]);
        }
        Kernel::Resize {
            x,
            geo,
            align_corners,
            half_pixel_centers,
        } => resize_bilinear(env.get(*x), geo, *align_corners, *half_pixel_centers, out),
        Kernel::DepthToSpace { x, geo, block } => {
            let xv = env.get(*x);
            let (b, c) = (*block, geo.out_c);
            for oy in 0..geo.out_h {
                for ox in 0..geo.out_w {
                    let (iy, ix) = (oy / b, ox / b);
                    let ic = ((oy % b) * b + ox % b) * c;
                    out[(oy * geo.out_w + ox) * c..][..c]
                        .copy_from_slice(&xv[(iy * geo.in_w + ix) * geo.in_c + ic..][..c]);
                }
            }
        }
    }
}

/// Applies an activation in place; `alpha` holds per-channel PRELU slopes (`v` is
/// `[pixels][alpha.len()]` then).
#[inline(always)]
fn activate(act: Act, v: &mut [f32], alpha: &[f32]) {
    match act {
        Act::None => {}
        Act::Relu => v
            .iter_mut()
            .for_each(|x| *x = if *x < 0.0 { 0.0 } else { *x }),
        Act::ReluN1To1 => v.iter_mut().for_each(|x| *x = x.clamp(-1.0, 1.0)),
        Act::Relu6 => v.iter_mut().for_each(|x| *x = x.clamp(0.0, 6.0)),
        Act::Tanh => v.iter_mut().for_each(|x| *x = x.tanh()),
        Act::HardSwish => v
            .iter_mut()
            .for_each(|x| *x = *x * (*x + 3.0).clamp(0.0, 6.0) / 6.0),
        Act::Logistic => v.iter_mut().for_each(|x| *x = 1.0 / (1.0 + (-*x).exp())),
        Act::Prelu => {
            if alpha.is_empty() {
                return;
            }
            for px in v.chunks_exact_mut(alpha.len()) {
                for (x, a) in px.iter_mut().zip(alpha) {
                    *x = if *x >= 0.0 { *x } else { *x * a };
                }
            }
        }
    }
}

/// The epilogue of the pixels `p0..` held in `out` (`[pixels][c]`), bias already added
/// when `with_bias` is false.
#[inline(always)]
fn epilogue(out: &mut [f32], p0: usize, c: usize, epi: &Epi, env: &Env, with_bias: bool) {
    if with_bias {
        if let Some(b) = &epi.bias {
            for px in out.chunks_exact_mut(c) {
                for (o, b) in px.iter_mut().zip(b) {
                    *o += b;
                }
            }
        }
    }
    activate(epi.act1, out, &epi.alpha);
    if let Some((r, rc)) = epi.residual {
        let rv = env.get(r);
        let k = rc.min(c);
        for (i, px) in out.chunks_exact_mut(c).enumerate() {
            let rp = &rv[(p0 + i) * rc..][..k];
            for (o, r) in px[..k].iter_mut().zip(rp) {
                *o += r;
            }
        }
    }
    activate(epi.act2, out, &epi.alpha);
}

/// Output columns below which [`gemm`] takes dot products itself: `matrixmultiply`'s
/// kernels compute 8 columns at a time and pack both operands, wasted work for a layer with
/// one to a few output channels (segmentation heads, transposed-convolution upsampling).
const SMALL_N: usize = 8;

/// `Σ a·b`, eight partial sums in registers.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ac, bc) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for ((a, x), y) in acc.iter_mut().zip(x).zip(y) {
            *a += x * y;
        }
    }
    let mut sum = acc.iter().sum::<f32>();
    for (x, y) in ar.iter().zip(br) {
        sum += x * y;
    }
    sum
}

/// [`gemm`] for fewer than [`SMALL_N`] output columns: one dot product per output.
#[inline(always)]
fn gemm_dots((a, m, k, w, n, c): (&[f32], usize, usize, &[f32], usize, &mut [f32])) {
    for (row, out) in a.chunks_exact(k).zip(c[..m * n].chunks_exact_mut(n)) {
        for (o, wr) in out.iter_mut().zip(w.chunks_exact(k)) {
            *o = dot(row, wr);
        }
    }
}

/// `c[m×n] = a[m×k] · wᵀ` where `w` is `[n][k]` row-major.
fn gemm(a: &[f32], m: usize, k: usize, w: &[f32], n: usize, c: &mut [f32]) {
    if n < SMALL_N {
        simd(GemmDots((a, m, k, w, n, c)));
        return;
    }
    // The shapes are computed from the same geometry as the slices, so these cannot fail.
    let a = ArrayView2::from_shape((m, k), &a[..m * k]).expect("gemm: lhs shape");
    let b = ArrayView2::from_shape((n, k), &w[..n * k])
        .expect("gemm: weight shape")
        .reversed_axes();
    let mut c = ArrayViewMut2::from_shape((m, n), &mut c[..m * n]).expect("gemm: output shape");
    general_mat_mul(1.0, &a, &b, 0.0, &mut c);
}

/// Rows (pixels) per parallel chunk for `m` rows of `work` multiply-adds in all; `m` when
/// the layer is too small to split.
fn chunk_rows(m: usize, work: usize) -> usize {
    if work < PARALLEL_WORK {
        return m.max(1);
    }
    let threads = rayon::current_num_threads().max(1);
    // A few chunks per thread, for balance; at least 16 rows for the GEMM's blocking.
    m.div_ceil(threads * 3).max(16)
}

/// Input coordinate of an output coordinate and a kernel tap, or `None` in the padding.
#[inline]
fn tap(o: usize, k: usize, stride: usize, dil: usize, pad: usize, size: usize) -> Option<usize> {
    let p = (o * stride + k * dil).checked_sub(pad)?;
    (p < size).then_some(p)
}

/// Gathers the patches of output pixels `p0..p0 + rows.len() / kk` into `rows`
/// (`[pixel][k_y][k_x][in_c]`, zeros in the padding).
#[inline(always)]
fn im2col(x: &[f32], g: &Geo, p0: usize, rows: &mut [f32]) {
    let kk = g.k_h * g.k_w * g.in_c;
    for (i, row) in rows.chunks_exact_mut(kk).enumerate() {
        let p = p0 + i;
        let (oy, ox) = (p / g.out_w, p % g.out_w);
        // Columns whose taps all land inside the input copy one contiguous run per row.
        let x_in = g.dil_w == 1
            && ox * g.stride_w >= g.pad_left
            && ox * g.stride_w + g.k_w <= g.in_w + g.pad_left;
        for ky in 0..g.k_h {
            let dst = &mut row[ky * g.k_w * g.in_c..][..g.k_w * g.in_c];
            let Some(iy) = tap(oy, ky, g.stride_h, g.dil_h, g.pad_top, g.in_h) else {
                dst.fill(0.0);
                continue;
            };
            if x_in {
                let ix = ox * g.stride_w - g.pad_left;
                dst.copy_from_slice(&x[(iy * g.in_w + ix) * g.in_c..][..g.k_w * g.in_c]);
                continue;
            }
            for kx in 0..g.k_w {
                let d = &mut dst[kx * g.in_c..][..g.in_c];
                match tap(ox, kx, g.stride_w, g.dil_w, g.pad_left, g.in_w) {
                    Some(ix) => d.copy_from_slice(&x[(iy * g.in_w + ix) * g.in_c..][..g.in_c]),
                    None => d.fill(0.0),
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn conv(
    x: &[f32],
    w: &[f32],
    g: &Geo,
    epi: &Epi,
    pointwise: bool,
    env: &Env,
    scratch: &mut [f32],
    out: &mut [f32],
) {
    let m = g.out_h * g.out_w;
    let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
    let rows = chunk_rows(m, m * k * n);
    let body = |ci: usize, o: &mut [f32], patches: Option<&mut [f32]>| {
        let p0 = ci * rows;
        let pm = o.len() / n;
        match patches {
            Some(s) => {
                let s = &mut s[..pm * k];
                im2col(x, g, p0, s);
                gemm(s, pm, k, w, n, o);
            }
            None => gemm(&x[p0 * k..], pm, k, w, n, o),
        }
        epilogue(o, p0, n, epi, env, true);
    };
    if pointwise {
        if rows >= m {
            body(0, out, None);
        } else {
            out.par_chunks_mut(rows * n)
                .enumerate()
                .for_each(|(ci, o)| body(ci, o, None));
        }
    } else if rows >= m {
        body(0, out, Some(scratch));
    } else {
        out.par_chunks_mut(rows * n)
            .zip(scratch.par_chunks_mut(rows * k))
            .enumerate()
            .for_each(|(ci, (o, s))| body(ci, o, Some(s)));
    }
}

simd_kernel!(GemmDots => gemm_dots((&'a [f32], usize, usize, &'a [f32], usize, &'a mut [f32])));
simd_kernel!(DirectRows => direct_rows((
    usize,
    &'a mut [f32],
    &'a [f32],
    &'a [f32],
    &'a [f32],
    &'a Geo,
    &'a Epi,
    &'a Env<'a>,
    usize,
)));
simd_kernel!(DepthwiseRows => depthwise_rows((
    usize,
    &'a mut [f32],
    &'a [f32],
    &'a [f32],
    &'a [f32],
    &'a Geo,
    usize,
    &'a Epi,
    &'a Env<'a>,
    usize,
    &'a [f32],
    &'a [usize],
    (usize, usize, usize, usize),
)));

/// Output coordinates `lo..hi` whose every kernel tap lands inside the input (no padding).
fn interior(
    out: usize,
    k: usize,
    stride: usize,
    dil: usize,
    pad: usize,
    size: usize,
) -> (usize, usize) {
    let lo = pad.div_ceil(stride);
    let reach = (k - 1) * dil;
    // o * stride + reach - pad <= size - 1
    let hi = if size + pad > reach {
        ((size + pad - reach - 1) / stride + 1).min(out)
    } else {
        0
    };
    (lo.min(hi), hi)
}

/// Lanes per register block of the depthwise kernel (one AVX register of f32).
const LANES: usize = 8;

/// One interior output pixel of a depthwise convolution (multiplier 1): `o = bias + Σ x·w`
/// over the taps at `offs` from `base`, eight channels at a time in registers.
#[inline(always)]
fn depthwise_pixel(o: &mut [f32], x: &[f32], base: usize, offs: &[usize], w: &[f32], bias: &[f32]) {
    let c = o.len();
    let blocks = c / LANES;
    for bk in 0..blocks {
        let c0 = bk * LANES;
        let mut acc = [0f32; LANES];
        acc.copy_from_slice(&bias[c0..c0 + LANES]);
        for (t, &off) in offs.iter().enumerate() {
            let xs = &x[base + off + c0..][..LANES];
            let ws = &w[t * c + c0..][..LANES];
            for ((a, x), w) in acc.iter_mut().zip(xs).zip(ws) {
                *a += x * w;
            }
        }
        o[c0..c0 + LANES].copy_from_slice(&acc);
    }
    for ch in blocks * LANES..c {
        let mut acc = bias[ch];
        for (t, &off) in offs.iter().enumerate() {
            acc += x[base + off + ch] * w[t * c + ch];
        }
        o[ch] = acc;
    }
}

/// One output pixel of a depthwise convolution with the bounds of every tap checked (the
/// border, and channel multipliers above 1).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn depthwise_pixel_checked(
    o: &mut [f32],
    x: &[f32],
    w: &[f32],
    g: &Geo,
    mult: usize,
    oy: usize,
    ox: usize,
    bias: &[f32],
) {
    let c = o.len();
    o.copy_from_slice(bias);
    for ky in 0..g.k_h {
        let Some(iy) = tap(oy, ky, g.stride_h, g.dil_h, g.pad_top, g.in_h) else {
            continue;
        };
        for kx in 0..g.k_w {
            let Some(ix) = tap(ox, kx, g.stride_w, g.dil_w, g.pad_left, g.in_w) else {
                continue;
            };
            let wp = &w[(ky * g.k_w + kx) * c..][..c];
            let base = (iy * g.in_w + ix) * g.in_c;
            if mult == 1 {
                for ((o, a), b) in o.iter_mut().zip(&x[base..][..c]).zip(wp) {
                    *o += a * b;
                }
            } else {
                for (oc, (o, b)) in o.iter_mut().zip(wp).enumerate() {
                    *o += x[base + oc / mult] * b;
                }
            }
        }
    }
}

/// The rows of one chunk of [`direct_conv`].
#[inline(always)]
#[allow(clippy::type_complexity)]
fn direct_rows(
    (ci, chunk, x, w, wt, g, epi, env, rows): (
        usize,
        &mut [f32],
        &[f32],
        &[f32],
        &[f32],
        &Geo,
        &Epi,
        &Env,
        usize,
    ),
) {
    let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
    let row_len = g.out_w * n;
    let mut buf = [0f32; DIRECT_MAX_K];
    let patch = &mut buf[..k];
    for (r, row) in chunk.chunks_exact_mut(row_len).enumerate() {
        let oy = ci * rows + r;
        for (ox, o) in row.chunks_exact_mut(n).enumerate() {
            im2col(x, g, oy * g.out_w + ox, patch);
            if n < SMALL_N {
                for (o, wr) in o.iter_mut().zip(w.chunks_exact(k)) {
                    *o = dot(patch, wr);
                }
            } else {
                // Eight output channels at a time in registers; a last partial
                // block overlaps the one before it.
                let mut c0 = 0;
                while c0 < n {
                    let c = c0.min(n - LANES);
                    let mut acc = [0f32; LANES];
                    for (kk, &xv) in patch.iter().enumerate() {
                        let wv = &wt[kk * n + c..][..LANES];
                        for (a, w) in acc.iter_mut().zip(wv) {
                            *a += xv * w;
                        }
                    }
                    o[c..c + LANES].copy_from_slice(&acc);
                    c0 += LANES;
                }
            }
        }
    }
    epilogue(chunk, ci * rows * g.out_w, n, epi, env, true);
}

/// Patch length up to which a convolution may run as [`direct_conv`] (its patch lives on
/// the stack).
const DIRECT_MAX_K: usize = 128;

/// A convolution without im2col: for every output pixel its patch is gathered on the stack,
/// then multiplied by the weights, output channels across the lanes (`wt`, `[k][n]`) or, for
/// fewer than [`SMALL_N`] outputs, one dot product per output channel (`w`, `[n][k]`). For
/// layers a GEMM handles badly: few input channels (an RGB stem) or few outputs (a mask head).
#[allow(clippy::too_many_arguments)]
fn direct_conv(x: &[f32], w: &[f32], wt: &[f32], g: &Geo, epi: &Epi, env: &Env, out: &mut [f32]) {
    let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
    let row_len = g.out_w * n;
    let rows = chunk_rows(g.out_h, g.out_h * g.out_w * k * n);
    let body = |ci: usize, chunk: &mut [f32]| {
        simd(DirectRows((ci, chunk, x, w, wt, g, epi, env, rows)));
    };
    if rows >= g.out_h {
        body(0, out);
    } else {
        out.par_chunks_mut(rows * row_len)
            .enumerate()
            .for_each(|(ci, chunk)| body(ci, chunk));
    }
}

/// The rows of one chunk of [`depthwise`].
#[inline(always)]
#[allow(clippy::type_complexity)]
fn depthwise_rows(
    (ci, chunk, x, w, tile, g, mult, epi, env, rows, bias, offs, (y_lo, y_hi, x_lo, x_hi)): (
        usize,
        &mut [f32],
        &[f32],
        &[f32],
        &[f32],
        &Geo,
        usize,
        &Epi,
        &Env,
        usize,
        &[f32],
        &[usize],
        (usize, usize, usize, usize),
    ),
) {
    let c = g.out_c;
    let row_len = g.out_w * c;
    let run = tile_pixels(c);
    let taps = g.k_h * g.k_w;
    for (r, row) in chunk.chunks_exact_mut(row_len).enumerate() {
        let oy = ci * rows + r;
        let inner_row = mult == 1 && (y_lo..y_hi).contains(&oy);
        if inner_row && !tile.is_empty() {
            // Stride 1 along x: a run of pixels is one flat multiply-add per tap (input,
            // output and tiled weights all contiguous), no per-pixel bookkeeping.
            let iy = oy * g.stride_h - g.pad_top;
            let bias_tile = &tile[taps * run * c..];
            let mut ox = x_lo;
            while ox < x_hi {
                let len = (x_hi - ox).min(run) * c;
                let o = &mut row[ox * c..][..len];
                o.copy_from_slice(&bias_tile[..len]);
                let ix = ox - g.pad_left;
                for (t, &off) in offs.iter().enumerate() {
                    let xs = &x[(iy * g.in_w + ix) * c + off..][..len];
                    let ws = &tile[t * run * c..][..len];
                    for ((o, a), b) in o.iter_mut().zip(xs).zip(ws) {
                        *o += a * b;
                    }
                }
                ox += run;
            }
        }
        for ox in 0..g.out_w {
            let o = &mut row[ox * c..][..c];
            if inner_row && !tile.is_empty() && (x_lo..x_hi).contains(&ox) {
                continue;
            }
            if inner_row && (x_lo..x_hi).contains(&ox) {
                let iy = oy * g.stride_h - g.pad_top;
                let ix = ox * g.stride_w - g.pad_left;
                depthwise_pixel(o, x, (iy * g.in_w + ix) * g.in_c, offs, w, bias);
            } else {
                depthwise_pixel_checked(o, x, w, g, mult, oy, ox, bias);
            }
        }
    }
    epilogue(chunk, ci * rows * g.out_w, c, epi, env, false);
}

/// Pixels per run of the stride-1 depthwise path: about 256 values, so a run of output,
/// input and tiled weights stays in L1.
fn tile_pixels(c: usize) -> usize {
    (256 / c.max(1)).max(1)
}

/// The depthwise weights `[tap][c]` repeated over a run of [`tile_pixels`] pixels, then the
/// bias repeated the same way, for the stride-1 path; empty for other layers.
fn depthwise_tile(w: &[f32], bias: Option<&[f32]>, g: &Geo, mult: usize) -> Vec<f32> {
    if g.stride_w != 1 || g.dil_w != 1 || mult != 1 || g.in_c != g.out_c {
        return Vec::new();
    }
    let (c, run) = (g.out_c, tile_pixels(g.out_c));
    let mut tile = Vec::with_capacity((g.k_h * g.k_w + 1) * run * c);
    for tap in w.chunks_exact(c).take(g.k_h * g.k_w) {
        for _ in 0..run {
            tile.extend_from_slice(tap);
        }
    }
    for _ in 0..run {
        match bias {
            Some(b) => tile.extend_from_slice(&b[..c]),
            None => tile.extend(std::iter::repeat_n(0.0, c)),
        }
    }
    tile
}

#[allow(clippy::too_many_arguments)]
fn depthwise(
    x: &[f32],
    w: &[f32],
    tile: &[f32],
    g: &Geo,
    mult: usize,
    epi: &Epi,
    env: &Env,
    out: &mut [f32],
) {
    let c = g.out_c;
    let row_len = g.out_w * c;
    let work = g.out_h * row_len * g.k_h * g.k_w;
    let rows = chunk_rows(g.out_h, work);
    let zeros;
    let bias = match &epi.bias {
        Some(b) => b.as_slice(),
        None => {
            zeros = vec![0.0; c];
            &zeros
        }
    };
    let (y_lo, y_hi) = interior(g.out_h, g.k_h, g.stride_h, g.dil_h, g.pad_top, g.in_h);
    let (x_lo, x_hi) = interior(g.out_w, g.k_w, g.stride_w, g.dil_w, g.pad_left, g.in_w);
    // Offsets of the taps from a pixel's first tap, in input elements.
    let offs: Vec<usize> = (0..g.k_h)
        .flat_map(|ky| (0..g.k_w).map(move |kx| (ky * g.dil_h * g.in_w + kx * g.dil_w) * g.in_c))
        .collect();
    let body = |ci: usize, chunk: &mut [f32]| {
        let interior = (y_lo, y_hi, x_lo, x_hi);
        simd(DepthwiseRows((
            ci,
            chunk,
            x,
            w,
            tile,
            g,
            mult,
            epi,
            env,
            rows,
            bias,
            &offs[..],
            interior,
        )));
    };
    if rows >= g.out_h {
        body(0, out);
    } else {
        out.par_chunks_mut(rows * row_len)
            .enumerate()
            .for_each(|(ci, chunk)| body(ci, chunk));
    }
}

fn transpose_conv(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    g: &Geo,
    scratch: &mut [f32],
    out: &mut [f32],
) {
    let m = g.in_h * g.in_w;
    let n = g.k_h * g.k_w * g.out_c;
    let col = &mut scratch[..m * n];
    gemm(x, m, g.in_c, w, n, col);
    out.fill(0.0);
    let c = g.out_c;
    for iy in 0..g.in_h {
        for ix in 0..g.in_w {
            let src = &col[(iy * g.in_w + ix) * n..][..n];
            for ky in 0..g.k_h {
                let Some(oy) = (iy * g.stride_h + ky).checked_sub(g.pad_top) else {
                    continue;
                };
                if oy >= g.out_h {
                    continue;
                }
                for kx in 0..g.k_w {
                    let Some(ox) = (ix * g.stride_w + kx).checked_sub(g.pad_left) else {
                        continue;
                    };
                    if ox >= g.out_w {
                        continue;
                    }
                    let o = &mut out[(oy * g.out_w + ox) * c..][..c];
                    for (o, s) in o.iter_mut().zip(&src[(ky * g.k_w + kx) * c..][..c]) {
                        *o += s;
                    }
                }
            }
        }
    }
    if let Some(b) = bias {
        for px in out.chunks_exact_mut(c) {
            for (o, b) in px.iter_mut().zip(b) {
                *o += b;
            }
        }
    }
}

/// Row-major strides of a rank-4 shape, 0 along broadcast (size-1) axes.
fn strides(s: &[usize; 4]) -> [usize; 4] {
    let mut st = [0; 4];
    let mut acc = 1;
    for d in (0..4).rev() {
        st[d] = if s[d] == 1 { 0 } else { acc };
        acc *= s[d];
    }
    st
}

fn binary<F: Fn(f32, f32) -> f32>(
    f: F,
    a: &[f32],
    b: &[f32],
    a_shape: &[usize; 4],
    b_shape: &[usize; 4],
    out_shape: &[usize; 4],
    out: &mut [f32],
) {
    if a_shape == out_shape && b_shape == out_shape {
        for ((o, a), b) in out.iter_mut().zip(a).zip(b) {
            *o = f(*a, *b);
        }
        return;
    }
    let (sa, sb) = (strides(a_shape), strides(b_shape));
    let inner = out_shape[3];
    let mut o = 0;
    for n in 0..out_shape[0] {
        for h in 0..out_shape[1] {
            for w in 0..out_shape[2] {
                let ao = n * sa[0] + h * sa[1] + w * sa[2];
                let bo = n * sb[0] + h * sb[1] + w * sb[2];
                let dst = &mut out[o..o + inner];
                match (sa[3], sb[3]) {
                    (0, 0) => dst.fill(f(a[ao], b[bo])),
                    (0, _) => {
                        let av = a[ao];
                        for (d, b) in dst.iter_mut().zip(&b[bo..bo + inner]) {
                            *d = f(av, *b);
                        }
                    }
                    (_, 0) => {
                        let bv = b[bo];
                        for (d, a) in dst.iter_mut().zip(&a[ao..ao + inner]) {
                            *d = f(*a, bv);
                        }
                    }
                    _ => {
                        for ((d, a), b) in dst
                            .iter_mut()
                            .zip(&a[ao..ao + inner])
                            .zip(&b[bo..bo + inner])
                        {
                            *d = f(*a, *b);
                        }
                    }
                }
                o += inner;
            }
        }
    }
}

fn pad(
    x: &[f32],
    in_shape: &[usize; 4],
    out_shape: &[usize; 4],
    before: &[usize; 4],
    out: &mut [f32],
) {
    out.fill(0.0);
    let c = in_shape[3];
    let mut i = 0;
    for n in 0..in_shape[0] {
        for h in 0..in_shape[1] {
            for w in 0..in_shape[2] {
                let f = (((n + before[0]) * out_shape[1] + h + before[1]) * out_shape[2]
                    + w
                    + before[2])
                    * out_shape[3]
                    + before[3];
                out[f..f + c].copy_from_slice(&x[i..i + c]);
                i += c;
            }
        }
    }
}

fn pool(x: &[f32], g: &Geo, max: bool, out: &mut [f32]) {
    let c = g.out_c;
    for oy in 0..g.out_h {
        for ox in 0..g.out_w {
            let o = &mut out[(oy * g.out_w + ox) * c..][..c];
            o.fill(if max { f32::NEG_INFINITY } else { 0.0 });
            let mut count = 0;
            for ky in 0..g.k_h {
                let Some(iy) = tap(oy, ky, g.stride_h, 1, g.pad_top, g.in_h) else {
                    continue;
                };
                for kx in 0..g.k_w {
                    let Some(ix) = tap(ox, kx, g.stride_w, 1, g.pad_left, g.in_w) else {
                        continue;
                    };
                    let xp = &x[(iy * g.in_w + ix) * g.in_c..][..c];
                    if max {
                        for (o, e) in o.iter_mut().zip(xp) {
                            *o = o.max(*e);
                        }
                    } else {
                        for (o, e) in o.iter_mut().zip(xp) {
                            *o += e;
                        }
                    }
                    count += 1;
                }
            }
            if !max && count > 0 {
                let inv = count as f32;
                o.iter_mut().for_each(|v| *v /= inv);
            }
        }
    }
}

fn resize_bilinear(x: &[f32], g: &Geo, align: bool, half: bool, out: &mut [f32]) {
    let scale = |i: usize, o: usize| {
        if align && o > 1 {
            (i as f32 - 1.0) / (o as f32 - 1.0)
        } else {
            i as f32 / o as f32
        }
    };
    let (sy, sx) = (scale(g.in_h, g.out_h), scale(g.in_w, g.out_w));
    // The same arithmetic as the reference (`cpu::resize_bilinear`).
    let interp = |v: usize, s: f32, size: usize| {
        let p = if half {
            (v as f32 + 0.5) * s - 0.5
        } else {
            v as f32 * s
        };
        let lo = p.floor().max(0.0);
        let hi = (p.ceil() as isize).min(size as isize - 1).max(0) as usize;
        (lo as usize, hi, p - lo)
    };
    let c = g.out_c;
    let xs: Vec<(usize, usize, f32)> = (0..g.out_w).map(|ox| interp(ox, sx, g.in_w)).collect();
    for oy in 0..g.out_h {
        let (y0, y1, dy) = interp(oy, sy, g.in_h);
        for (ox, &(x0, x1, dx)) in xs.iter().enumerate() {
            let at = |y: usize, xx: usize| &x[(y * g.in_w + xx) * g.in_c..][..c];
            let (a, b, cc, d) = (at(y0, x0), at(y1, x0), at(y0, x1), at(y1, x1));
            let (wa, wb, wc, wd) = (
                (1.0 - dy) * (1.0 - dx),
                dy * (1.0 - dx),
                (1.0 - dy) * dx,
                dy * dx,
            );
            let o = &mut out[(oy * g.out_w + ox) * c..][..c];
            for ((((o, a), b), cc), d) in o.iter_mut().zip(a).zip(b).zip(cc).zip(d) {
                *o = a * wa + b * wb + cc * wc + d * wd;
            }
        }
    }
}
