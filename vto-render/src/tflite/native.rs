//! The native CPU executor: the lowered graph run by kernels written for a CPU, for machines
//! whose wgpu adapter is itself a CPU (lavapipe, SwiftShader, WARP), where WGSL through a
//! Vulkan emulation runs MobileNet-style networks 50–100× slower than native code.
//!
//! Why our own kernels and not tract: they consume the very plan the wgpu executor runs (one
//! lowering, one set of LiteRT goldens for both), and measured against `tract-tflite` on the
//! five models it can read once rewritten (`bench/tract-compare/`, docs/performance.md) they
//! were faster or level on four (the face mesh about 1.9× by the minima) and slower on hand
//! landmarks. The measure we hold this executor to is
//! LiteRT's time in the same run (`scripts/bench-vision.sh`).
//!
//! Design:
//! - The same [`lower`] + [`fuse`] plan the wgpu executor consumes: NHWC float32, PAD folded
//!   into convolutions, activations / PRELU / residual ADDs fused into their epilogue.
//! - Convolutions run on a register-blocked kernel of our own ([`pointwise`]): weights
//!   packed once per plan as `[k][out_c]`, output channels across the lanes, 12 accumulators
//!   (6 pixels × 16 channels or 12 × 8) in registers, bias, activations and residual applied
//!   before the one store. 1×1 layers read the activations in place; other convolutions
//!   gather the patches of a tile of pixels on the stack. Which layers take it was measured
//!   per layer shape against the GEMM ([`Pointwise::wins`]).
//! - The rest are GEMMs on `matrixmultiply` (through `ndarray`'s safe `general_mat_mul`; it
//!   picks AVX2/FMA kernels at run time): 1×1 layers expanding few channels into many (where
//!   its packing is cheap against its work) and convolutions with large patches (im2col
//!   into a scratch matrix). Transposed convolutions are a GEMM followed by a scatter-add
//!   (col2im).
//! - Heads with fewer than 8 outputs run as direct convolutions ([`direct_conv`], one dot
//!   product per output; `matrixmultiply` computes and packs 8 columns at a time).
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

mod conv;
mod ops;
mod pointwise;

use conv::*;
use ops::*;
use pointwise::*;

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
    /// Weights `[out_c][k_h·k_w·in_c]` (TFLite's own layout), empty when `pw` holds them.
    Conv {
        x: Src,
        w: Vec<f32>,
        geo: Geo,
        epi: Epi,
        pointwise: bool,
        direct: bool,
        /// The weights packed for [`pointwise`] when the layer runs there: a 1×1 layer
        /// [`Pointwise::wins`] for, or any other with 8 outputs or more and a patch of at
        /// most [`GATHER_LEN`] values (patches gathered per tile of pixels).
        pw: Option<Pointwise>,
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
                    // Measured per layer (`--profile --all`, one thread, 2026-11-24): the
                    // register-blocked kernel with patches gathered per tile takes 0.5× the
                    // im2col GEMM on the mesh and pose heads (one output pixel: the GEMM packs
                    // all the weights on every run) and 0.7× on the RGB stems, against the
                    // earlier direct loop (one accumulator per 8 outputs, latency-bound).
                    let gather = !pointwise && geo.out_c >= SMALL_N && k <= GATHER_LEN;
                    let direct = !pointwise && !gather && k <= DIRECT_MAX_K && geo.out_c < SMALL_N;
                    if !pointwise && !direct && !gather {
                        scratch = scratch.max(geo.out_h * geo.out_w * k);
                    }
                    let mut wv = constant(*w, "convolution weights")?.clone();
                    let bias = b
                        .map(|b| constant(b, "convolution bias").cloned())
                        .transpose()?;
                    let alpha = epi
                        .alpha
                        .map(|a| constant(a, "PRELU slopes").cloned())
                        .transpose()?
                        .unwrap_or_default();
                    let pw = ((pointwise && Pointwise::wins(geo.in_c, geo.out_c)) || gather)
                        .then(|| Pointwise::pack(&wv, k, geo.out_c, bias.as_deref(), &alpha));
                    if pw.is_some() {
                        wv = Vec::new();
                    }
                    Kernel::Conv {
                        x: src(*x),
                        w: wv,
                        direct,
                        pw,
                        geo: *geo,
                        epi: Epi {
                            bias,
                            act1: epi.act1,
                            residual: epi.residual.map(|(r, rc)| (src(r), rc)),
                            act2: epi.act2,
                            alpha,
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
                Kernel::Conv { w, epi, pw, .. } => {
                    w.len()
                        + pw.as_ref().map_or(0, Pointwise::len)
                        + epi.bias.as_ref().map_or(0, Vec::len)
                        + epi.alpha.len()
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
            pw,
            ..
        } => format!(
            "conv{} {} {:?}{}",
            if pw.is_some() && *pointwise {
                "1x1_direct"
            } else if pw.is_some() {
                "_gather"
            } else if *pointwise {
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
            geo,
            epi,
            pw: Some(pw),
            pointwise: one_by_one,
            ..
        } => pointwise(env.get(*x), pw, geo, epi, env, !one_by_one, out),
        Kernel::Conv {
            x,
            w,
            geo,
            epi,
            direct: true,
            ..
        } => direct_conv(env.get(*x), w, geo, epi, env, out),
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
