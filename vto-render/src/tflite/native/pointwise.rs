//! A direct kernel for 1×1 stride-1 convolutions with few channels (the 16–32-channel
//! layers of the face mesh and the BlazeFace detectors).
//!
//! `out[p][co] = act2(act1(bias[co] + Σ_ci x[p][ci]·w[ci][co]) + residual[p][co])`, NHWC,
//! with the weights packed once per plan in panels of 16 output channels, each `[ci][16]` (a
//! register block's weights for one input contiguous, and its whole panel read in order;
//! padded to whole panels). Output channels run across the lanes of
//! `pulp`'s widest vector (8 with AVX2), a block of pixels at a time so that each weight
//! vector loaded serves several pixels: `P` pixels × `G` vectors of accumulators stay in
//! registers (`P·G = 12` of the 16 AVX registers), initialised with the bias, and the
//! activations and the residual are applied to them before the one store. Pixels left over
//! after whole blocks run as one more block overlapping the one before; layers with fewer
//! pixels than a block (heads) one pixel at a time over up to 8 vectors of channels.
//!
//! For these layers `matrixmultiply` spends about as long packing both operands as
//! multiplying (K = 16–32 is a fraction of its blocking); here nothing is packed at run
//! time. Which layers take this path is [`Pointwise::wins`], from measurement.

use pulp::Simd;

use super::*;

/// Largest vector width the packing is padded for (AVX-512 f32).
const PAD_LANES: usize = 16;

/// Output channels per panel of packed weights: a register block's 1 or 2 vectors of 8.
const PANEL: usize = PAD_LANES;

/// Weights, bias and PRELU slopes of a pointwise layer packed for [`pointwise`].
#[derive(Debug)]
pub(super) struct Pointwise {
    /// `[n_pad / PANEL][in_c][PANEL]`: panels of [`PANEL`] output channels, each the
    /// channels' weights for every input in turn (what a register block reads, contiguous),
    /// zeros past `out_c`.
    w: Vec<f32>,
    /// `[n_pad]`, zeros past `out_c` (and where the layer has no bias).
    bias: Vec<f32>,
    /// `[n_pad]` PRELU slopes, or empty.
    alpha: Vec<f32>,
    n_pad: usize,
}

impl Pointwise {
    /// Whether a 1×1 layer with `in_c` inputs and `out_c` outputs runs faster here than on
    /// the GEMM. Measured per layer shape on this machine (`--profile --all`, one thread,
    /// both kernels on every 1×1 layer of the eight networks, 2026-11-24): the direct kernel
    /// takes 0.65–0.9× the GEMM's time on square and narrowing layers (16→16, 32→32 in the
    /// face mesh, 128→128, 256→256) and on wide reductions (`in_c` ≥ 96), but 1.1–1.4× on
    /// expansions from few channels (16→64, 24→144: the GEMM's packing is cheap against its
    /// work there), and below 4 outputs the dot-product path is faster.
    pub(super) fn wins(in_c: usize, out_c: usize) -> bool {
        out_c >= 4 && (out_c * 3 <= in_c * 4 || in_c >= 96)
    }

    /// Packs TFLite's `[out_c][in_c]` weights.
    pub(super) fn pack(
        w: &[f32],
        in_c: usize,
        out_c: usize,
        bias: Option<&[f32]>,
        alpha: &[f32],
    ) -> Pointwise {
        let n_pad = out_c.div_ceil(PAD_LANES) * PAD_LANES;
        let mut wp = vec![0.0; in_c * n_pad];
        for (oc, row) in w.chunks_exact(in_c).take(out_c).enumerate() {
            let panel = &mut wp[oc / PANEL * in_c * PANEL..][..in_c * PANEL];
            for (ci, v) in row.iter().enumerate() {
                panel[ci * PANEL + oc % PANEL] = *v;
            }
        }
        let pad = |v: &[f32]| {
            let mut p = vec![0.0; n_pad];
            p[..out_c].copy_from_slice(&v[..out_c]);
            p
        };
        Pointwise {
            w: wp,
            bias: bias.map_or_else(|| vec![0.0; n_pad], pad),
            alpha: if alpha.is_empty() {
                Vec::new()
            } else {
                pad(alpha)
            },
            n_pad,
        }
    }

    /// Bytes of packed constants.
    pub(super) fn len(&self) -> usize {
        self.w.len() + self.bias.len() + self.alpha.len()
    }
}

/// Whether the activation can be applied to the accumulators in registers.
fn in_registers(a: Act) -> bool {
    matches!(
        a,
        Act::None | Act::Relu | Act::Relu6 | Act::ReluN1To1 | Act::Prelu
    )
}

/// Values of the stack buffer the patches of a tile of pixels are gathered into (24 KiB).
pub(super) const GATHER_LEN: usize = TILE_PIXELS * 128;

/// Pixels per gathered tile for patches of `k` values: as many as fit in [`GATHER_LEN`] (at
/// most [`TILE_PIXELS`]), a multiple of the 12-pixel register block when there are 12.
fn gather_tile(k: usize) -> usize {
    let t = (GATHER_LEN / k.max(1)).min(TILE_PIXELS);
    if t >= 12 {
        t - t % 12
    } else {
        t.max(1)
    }
}

/// Runs a pointwise layer (`x` is `[pixels][in_c]`, `out` `[pixels][out_c]`), or with
/// `gather` any convolution whose patch (`k_h·k_w·in_c`) is at most [`GATHER_LEN`] (the
/// RGB stems, whose three input channels a GEMM handles badly, and heads that reduce a
/// whole feature map to one pixel, where the GEMM would pack all the weights on every run):
/// runs of interior pixels along a row read their patches in place through a table of
/// offsets (the same values in the same order as a gathered patch: the same sums), the
/// patches of the border pixels are gathered on the stack (im2col) a tile at a time. In
/// place saves the copy, a third of a stem's time (face mesh stem 0.27 -> 0.18 ms).
pub(super) fn pointwise(
    x: &[f32],
    pw: &Pointwise,
    g: &Geo,
    epi: &Epi,
    env: &Env,
    gather: bool,
    out: &mut [f32],
) {
    let n = g.out_c;
    let k = if gather {
        g.k_h * g.k_w * g.in_c
    } else {
        g.in_c
    };
    let m = out.len() / n;
    let rows = chunk_rows(m, m * k * n);
    let fused = in_registers(epi.act1)
        && in_registers(epi.act2)
        && epi.residual.is_none_or(|(_, rc)| rc == n);
    let residual = epi.residual.map(|(r, _)| env.get(r)).filter(|_| fused);
    let acts = fused.then_some((epi.act1, epi.act2));
    // Offsets of a patch's values from its first in the input, for pixels read in place.
    let offs: Vec<usize> = if gather { patch_offsets(g) } else { Vec::new() };
    let body = |ci: usize, o: &mut [f32]| {
        let p0 = ci * rows;
        let pm = o.len() / n;
        let job = |q0: usize, len: usize| Job {
            x: &[],
            pw,
            k,
            n,
            acts,
            residual: residual.map(|r| &r[q0 * n..][..len * n]),
            taps: (&[], 0),
        };
        if gather {
            // Runs of interior pixels (every tap inside the input) along one output row
            // read their patches in place; the others gather theirs, a tile at a time.
            let mut buf = [0f32; GATHER_LEN];
            let tile = gather_tile(k);
            let end = p0 + pm;
            let mut q = p0;
            while q < end {
                let run_end = inside_run(g, q, end);
                if run_end > q {
                    let ot = &mut o[(q - p0) * n..][..(run_end - q) * n];
                    let (oy, ox) = (q / g.out_w, q % g.out_w);
                    let (iy, ix) = (oy * g.stride_h - g.pad_top, ox * g.stride_w - g.pad_left);
                    let xq = &x[(iy * g.in_w + ix) * g.in_c..];
                    let step = g.stride_w * g.in_c;
                    let jb = Job {
                        x: xq,
                        taps: (&offs, step),
                        ..job(q, run_end - q)
                    };
                    pulp::Arch::new().dispatch(Run::<true>(jb, ot));
                    q = run_end;
                    continue;
                }
                let stop = next_inside(g, q, end);
                let ot = &mut o[(q - p0) * n..][..(stop - q) * n];
                for (t, ot) in ot.chunks_mut(tile * n).enumerate() {
                    let (q0, tm) = (q + t * tile, ot.len() / n);
                    let patches = &mut buf[..tm * k];
                    im2col(x, g, q0, patches);
                    let jb = Job {
                        x: patches,
                        ..job(q0, tm)
                    };
                    pulp::Arch::new().dispatch(Run::<false>(jb, ot));
                }
                q = stop;
            }
        } else {
            let jb = Job {
                x: &x[p0 * k..][..pm * k],
                ..job(p0, pm)
            };
            pulp::Arch::new().dispatch(Run::<false>(jb, &mut *o));
        }
        if !fused {
            epilogue(o, p0, n, epi, env, false);
        }
    };
    by_row_chunks(out, rows, n, m, body);
}

/// One chunk of pixels of [`pointwise`].
struct Job<'a> {
    x: &'a [f32],
    pw: &'a Pointwise,
    k: usize,
    n: usize,
    /// The activations to apply in registers, or `None` (bias only; the caller runs the
    /// epilogue).
    acts: Option<(Act, Act)>,
    /// The residual rows of this chunk (`[pixels][n]`), when fused.
    residual: Option<&'a [f32]>,
    /// For patches read in place (`Run<true>`): the offsets of a patch's `k` values from
    /// its first, and the step from one pixel's first value to the next's in `x`.
    taps: (&'a [usize], usize),
}

/// A [`Job`] and its output rows, run through `pulp`'s dispatch; with `TAPS` the patches
/// are read in place through [`Job::taps`], else `x` holds them (`[pixels][k]`).
struct Run<'a, const TAPS: bool>(Job<'a>, &'a mut [f32]);

impl<const T: bool> pulp::WithSimd for Run<'_, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let Run(job, out) = self;
        let l = S::F32_LANES;
        let vectors = job.n.div_ceil(l);
        let pixels = out.len() / job.n;
        // With weights small enough to stay in cache, a tile of pixels at a time gets all
        // its output channels (its inputs stay in L1, each output line is written whole
        // while in cache); with large weights, one group of channels at a time over all
        // the pixels keeps that group's weights in cache instead.
        let tile = if job.k * job.pw.n_pad <= SMALL_WEIGHTS {
            TILE_PIXELS
        } else {
            pixels
        };
        let mut t0 = 0;
        while t0 < pixels {
            let t1 = (t0 + tile).min(pixels);
            let mut v0 = 0;
            while v0 < vectors {
                // 12 accumulators: G vectors of output channels × 12 / G pixels, plus G
                // weight vectors and a broadcast input: 15 of the 16 AVX registers (more
                // spills). Fewer pixels than a block (a head reducing the map to a pixel or
                // a few): one pixel at a time, up to eight vectors of channels, so that
                // eight sums are in flight instead of one or two dependent chains.
                let left = vectors - v0;
                if t1 - t0 < 6 {
                    // (Direct calls, not a function pointer: inlined for the SIMD target.)
                    v0 += match left {
                        8.. => columns::<S, 8, 1, T>(s, &job, out, v0, t0..t1),
                        4..=7 => columns::<S, 4, 1, T>(s, &job, out, v0, t0..t1),
                        2..=3 => columns::<S, 2, 1, T>(s, &job, out, v0, t0..t1),
                        _ => columns::<S, 1, 1, T>(s, &job, out, v0, t0..t1),
                    };
                } else if left == 1 {
                    v0 += columns::<S, 1, 12, T>(s, &job, out, v0, t0..t1);
                } else {
                    v0 += columns::<S, 2, 6, T>(s, &job, out, v0, t0..t1);
                }
            }
            t0 = t1;
        }
    }
}

/// Weights (values) up to which [`pointwise`] runs a tile of pixels at a time: 64 KiB.
const SMALL_WEIGHTS: usize = 16 * 1024;

/// Pixels per tile (a multiple of the 12 and 6 pixels of a register block).
const TILE_PIXELS: usize = 48;

/// A full vector from the first lanes of `v` (an unaligned load).
#[inline(always)]
pub(super) fn load<S: Simd>(v: &[f32]) -> S::f32s {
    bytemuck::pod_read_unaligned(bytemuck::cast_slice(&v[..S::F32_LANES]))
}

#[inline(always)]
fn act<S: Simd>(s: S, a: Act, v: S::f32s, alpha: S::f32s) -> S::f32s {
    let zero = s.splat_f32s(0.0);
    match a {
        Act::Relu => s.max_f32s(v, zero),
        Act::Relu6 => s.min_f32s(s.max_f32s(v, zero), s.splat_f32s(6.0)),
        Act::ReluN1To1 => s.min_f32s(s.max_f32s(v, s.splat_f32s(-1.0)), s.splat_f32s(1.0)),
        // max(v, 0) + α·min(v, 0): v itself for v ≥ 0, α·v below (exactly, one rounding).
        Act::Prelu => s.mul_add_f32s(alpha, s.min_f32s(v, zero), s.max_f32s(v, zero)),
        _ => v,
    }
}

/// Output channel vectors `v0..v0 + G` of `pixels`, `P` pixels at a time; returns `G`.
/// The pixels left over after whole blocks are one more block ending at the last pixel,
/// overlapping the one before (those pixels computed twice, to the same values), rather than
/// one pixel at a time: a single pixel's sums are `G` dependent chains, latency-bound.
#[inline(always)]
fn columns<S: Simd, const G: usize, const P: usize, const T: bool>(
    s: S,
    job: &Job,
    out: &mut [f32],
    v0: usize,
    pixels: std::ops::Range<usize>,
) -> usize {
    let mut p = pixels.start;
    if pixels.len() < P {
        while p < pixels.end {
            block::<S, G, 1, T>(s, job, out, v0, p);
            p += 1;
        }
        return G;
    }
    while p + P <= pixels.end {
        block::<S, G, P, T>(s, job, out, v0, p);
        p += P;
    }
    if p < pixels.end {
        block::<S, G, P, T>(s, job, out, v0, pixels.end - P);
    }
    G
}

#[inline(always)]
fn block<S: Simd, const G: usize, const P: usize, const T: bool>(
    s: S,
    job: &Job,
    out: &mut [f32],
    v0: usize,
    p: usize,
) {
    let l = S::F32_LANES;
    let (k, n, pw) = (job.k, job.n, job.pw);
    let c0 = v0 * l;
    let bias: [S::f32s; G] = std::array::from_fn(|g| load::<S>(&pw.bias[c0 + g * l..]));
    let mut acc = [bias; P];
    // Pixel i's patch: `k` values in a row, or (T) read in place at `offs` from its first.
    let (offs, step) = job.taps;
    let xs: [&[f32]; P] = if T {
        let reach = offs.last().map_or(0, |o| o + 1);
        std::array::from_fn(|i| &job.x[(p + i) * step..][..reach])
    } else {
        std::array::from_fn(|i| &job.x[(p + i) * k..][..k])
    };
    // Vector g's weights for input 0, then every PANEL values the next input; one length for
    // all, so that an input's bounds check is one for all of them.
    let span = (k - 1) * PANEL + l;
    let ws: [&[f32]; G] = std::array::from_fn(|g| {
        let c = c0 + g * l;
        &pw.w[c / PANEL * k * PANEL + c % PANEL..][..span]
    });
    for ci in 0..k {
        let w: [S::f32s; G] = std::array::from_fn(|g| load::<S>(&ws[g][ci * PANEL..]));
        let at = if T { offs[ci] } else { ci };
        for (a, xr) in acc.iter_mut().zip(&xs) {
            let xv = s.splat_f32s(xr[at]);
            for (a, w) in a.iter_mut().zip(&w) {
                *a = s.mul_add_f32s(xv, *w, *a);
            }
        }
    }
    let alpha: [S::f32s; G] = std::array::from_fn(|g| {
        if pw.alpha.is_empty() {
            s.splat_f32s(0.0)
        } else {
            load::<S>(&pw.alpha[c0 + g * l..])
        }
    });
    for (i, a) in acc.iter_mut().enumerate() {
        let row = (p + i) * n;
        for (g, v) in a.iter_mut().enumerate() {
            let c = c0 + g * l;
            if c >= n {
                break;
            }
            if let Some((act1, act2)) = job.acts {
                *v = act(s, act1, *v, alpha[g]);
                if let Some(r) = job.residual {
                    let r = &r[row + c..(row + n).min(row + c + l)];
                    let rv = if r.len() == l {
                        load::<S>(r)
                    } else {
                        s.partial_load_f32s(r)
                    };
                    *v = s.add_f32s(*v, rv);
                }
                *v = act(s, act2, *v, alpha[g]);
            }
            let dst = &mut out[row + c..(row + n).min(row + c + l)];
            if dst.len() == l {
                dst.copy_from_slice(bytemuck::cast_slice(std::slice::from_ref(v)));
            } else {
                s.partial_store_f32s(dst, *v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence in [-1, 1).
    fn values(n: usize, seed: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f32 / 1001.5) - 1.0)
            .collect()
    }

    fn apply(a: Act, v: f32, alpha: f32) -> f32 {
        match a {
            Act::None => v,
            Act::Relu => v.max(0.0),
            Act::Relu6 => v.clamp(0.0, 6.0),
            Act::ReluN1To1 => v.clamp(-1.0, 1.0),
            Act::Tanh => v.tanh(),
            Act::HardSwish => v * (v + 3.0).clamp(0.0, 6.0) / 6.0,
            Act::Logistic => 1.0 / (1.0 + (-v).exp()),
            Act::Prelu => {
                if v >= 0.0 {
                    v
                } else {
                    v * alpha
                }
            }
        }
    }

    /// Runs [`pointwise`] on `g` and compares it with a plain convolution loop.
    fn check(g: Geo, act1: Act, act2: Act, with_residual: bool) {
        let k = g.k_h * g.k_w * g.in_c;
        let n = g.out_c;
        let pixels = g.out_h * g.out_w;
        let x = values(g.in_h * g.in_w * g.in_c, 1);
        let w = values(n * k, 2);
        let bias = values(n, 3);
        let alpha: Vec<f32> = values(n, 4).iter().map(|a| a * 0.5).collect();
        let residual = values(pixels * n, 5);
        let bufs = vec![residual.clone()];
        let env = Env {
            bufs: &bufs,
            consts: &[],
        };
        let epi = Epi {
            bias: Some(bias.clone()),
            act1,
            residual: with_residual.then_some((Src::Buf(0, pixels * n), n)),
            act2,
            alpha: alpha.clone(),
        };
        let pw = Pointwise::pack(&w, k, n, Some(&bias), &alpha);
        let gather = !(g.k_h == 1 && g.k_w == 1 && g.stride_h == 1 && g.pad_top == 0);
        let mut out = vec![f32::NAN; pixels * n];
        pointwise(&x, &pw, &g, &epi, &env, gather, &mut out);
        for p in 0..pixels {
            let (oy, ox) = (p / g.out_w, p % g.out_w);
            for oc in 0..n {
                let mut acc = bias[oc];
                for ky in 0..g.k_h {
                    for kx in 0..g.k_w {
                        let iy = (oy * g.stride_h + ky).checked_sub(g.pad_top);
                        let ix = (ox * g.stride_w + kx).checked_sub(g.pad_left);
                        let (Some(iy), Some(ix)) = (iy, ix) else {
                            continue;
                        };
                        if iy >= g.in_h || ix >= g.in_w {
                            continue;
                        }
                        for ic in 0..g.in_c {
                            acc += x[(iy * g.in_w + ix) * g.in_c + ic]
                                * w[oc * k + (ky * g.k_w + kx) * g.in_c + ic];
                        }
                    }
                }
                let mut v = apply(act1, acc, alpha[oc]);
                if with_residual {
                    v += residual[p * n + oc];
                }
                let want = apply(act2, v, alpha[oc]);
                let got = out[p * n + oc];
                assert!(
                    (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "pixel {p} channel {oc}: {got} != {want} ({g:?})"
                );
            }
        }
    }

    fn geo(in_hw: (usize, usize), in_c: usize, out_c: usize, k: usize, stride: usize) -> Geo {
        let pad = k / 2;
        let out = |i: usize| (i + 2 * pad - k) / stride + 1;
        Geo {
            in_h: in_hw.0,
            in_w: in_hw.1,
            in_c,
            out_h: out(in_hw.0),
            out_w: out(in_hw.1),
            out_c,
            k_h: k,
            k_w: k,
            stride_h: stride,
            stride_w: stride,
            dil_h: 1,
            dil_w: 1,
            pad_top: pad,
            pad_left: pad,
        }
    }

    #[test]
    fn pointwise_matches_a_plain_loop_with_prelu_residual_and_a_partial_vector() {
        // 28 outputs: three whole vectors and a half one; 35 pixels: not a whole number of
        // register blocks.
        check(geo((7, 5), 16, 28, 1, 1), Act::Prelu, Act::Relu, true);
    }

    #[test]
    fn pointwise_matches_a_plain_loop_with_one_vector_and_relu6() {
        check(geo((13, 1), 32, 8, 1, 1), Act::Relu6, Act::None, false);
    }

    #[test]
    fn activations_not_fused_in_registers_run_in_the_epilogue() {
        check(geo((6, 6), 24, 20, 1, 1), Act::Tanh, Act::None, true);
        check(
            geo((6, 6), 24, 12, 1, 1),
            Act::HardSwish,
            Act::Logistic,
            false,
        );
    }

    #[test]
    fn gathered_stem_matches_a_plain_loop_across_the_padding() {
        // An RGB stem: 3×3 stride 2 with padding; more pixels than one gathered tile.
        check(geo((21, 19), 3, 16, 3, 2), Act::Prelu, Act::None, false);
        check(geo((17, 17), 3, 24, 5, 2), Act::Relu, Act::None, false);
    }

    #[test]
    fn gathered_one_pixel_head_matches_a_plain_loop() {
        let mut g = geo((3, 3), 32, 40, 3, 3);
        g.pad_top = 0;
        g.pad_left = 0;
        g.out_h = 1;
        g.out_w = 1;
        check(g, Act::None, Act::None, false);
    }
}
