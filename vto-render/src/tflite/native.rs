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
//!   packed once per plan in panels of 16 output channels (`[k][16]` each), output channels
//!   across the lanes, 12 accumulators (6 pixels × 16 channels or 12 × 8) in registers,
//!   bias, activations and residual applied before the one store. 1×1 layers read the
//!   activations in place; other convolutions read the patches of interior pixels in place
//!   too (through a table of offsets) and gather those of border pixels on the stack. Which
//!   layers take it was measured per layer shape against the GEMM ([`Pointwise::wins`]).
//! - The rest are GEMMs on `matrixmultiply` (through `ndarray`'s safe `general_mat_mul`; it
//!   picks AVX2/FMA kernels at run time): 1×1 layers expanding few channels into many (where
//!   its packing is cheap against its work) and convolutions with large patches (im2col
//!   into a scratch matrix). Transposed convolutions are a GEMM followed by a scatter-add
//!   (col2im).
//! - Heads with fewer than 8 outputs run as direct convolutions ([`direct_conv`], one dot
//!   product per output, interior pixels 8 at a time straight from the input;
//!   `matrixmultiply` computes and packs 8 columns at a time).
//! - Depthwise convolutions ([`depthwise`]) are register-blocked over pixels and channels:
//!   8 interior pixels × one vector of channels in registers over all the taps, border
//!   pixels with the rectangle of taps inside the input, no per-tap checks.
//! - The hand-written loops run through [`super::simd`]: compiled for AVX2 when the CPU has
//!   it (runtime dispatch by `pulp`, no `unsafe` here), for the baseline otherwise.
//! - A run is handed to `rayon`'s pool once ([`CpuExecutor::run`]); rows of large layers are
//!   split over its threads (each chunk runs its GEMM and then its epilogue, while the rows
//!   are still in cache); small layers run on the thread the run is on.
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
mod depthwise;
mod direct;
mod ops;
mod pack;
mod pointwise;
mod run;

use conv::*;
use depthwise::*;
use direct::*;
use ops::*;
use pointwise::*;
use run::*;

use super::prepare::plan_buffers;
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
    /// Weights `[k_h·k_w][out_c]`.
    Depthwise {
        x: Src,
        w: Vec<f32>,
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
                Kernel::Depthwise { w, epi, .. } => {
                    w.len() + epi.bias.as_ref().map_or(0, Vec::len) + epi.alpha.len()
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
        // The whole run on one of rayon's threads (a hand-off here when called from outside
        // the pool, none from inside it): a layer split over threads then runs its first
        // part on that thread and leaves the rest to be stolen, where called from outside
        // the pool every split layer was a hand-off of its own, the calling thread put to
        // sleep and woken again (two context switches a layer, tens of them a run).
        rayon::scope(|_| {
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
        });
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
