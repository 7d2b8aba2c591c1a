//! Depthwise convolutions of the native executor, register-blocked over pixels and channels.
//!
//! Every output pixel is `bias + Σ x·w` over the taps that land inside the input, the taps in
//! kernel order (rows, then columns): the same sums in the same order whichever path computes
//! them, so results do not depend on where a pixel sits or how a layer is split.
//!
//! With a channel multiplier of 1 and at least one vector of channels, a block of neighbouring
//! output pixels whose taps are the same rectangle of the kernel (the interior of a row, or
//! one pixel of the border) runs [`pixels`]: per vector of channels one accumulator per
//! pixel in registers over all the taps, the weights loaded once per tap for every pixel, the
//! output written once. Channel counts that are not a multiple of the vector end with a block
//! overlapping the one before (the overlap computed twice, identically). Other layers
//! (multipliers above 1, fewer channels than lanes) take [`pixel_checked`].

use pulp::Simd;

use super::*;

/// Output pixels per register block of the interior: eight accumulators, enough independent
/// sums to keep both floating-point adders busy through their latency.
pub(super) const PIXELS: usize = 8;

/// Output coordinates `lo..hi` whose every kernel tap lands inside the input (no padding).
pub(super) fn interior(
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

/// The first and one-past-last kernel index whose tap of output coordinate `o` lands inside
/// the input (an empty range when every tap is in the padding).
#[inline]
pub(super) fn taps_inside(
    o: usize,
    k: usize,
    stride: usize,
    dil: usize,
    pad: usize,
    size: usize,
) -> (usize, usize) {
    let mut lo = k;
    let mut hi = 0;
    for t in 0..k {
        if tap(o, t, stride, dil, pad, size).is_some() {
            lo = lo.min(t);
            hi = t + 1;
        }
    }
    (lo.min(hi), hi)
}

/// `P` output pixels of a depthwise convolution (multiplier 1, at least one vector of
/// channels), the same taps for every one: pixel `p` reads the input from `base + p · step`,
/// tap `t` at `taps[t].0` past that with the weights at `w[taps[t].1..]`. Writes the pixels'
/// `[P][c]` outputs to `o`, with `act` applied (an activation [`fusable`] in registers).
/// Multiplies and adds are separate instructions, not fused: the same roundings as the
/// plain loop.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pixels<S: Simd, const P: usize>(
    s: S,
    o: &mut [f32],
    x: &[f32],
    (base, step): (usize, usize),
    taps: &[(usize, usize)],
    w: &[f32],
    bias: &[f32],
    act: Act,
) {
    let (c, l) = (bias.len(), S::F32_LANES);
    // Each pixel's input as a slice of one length (the reach of its taps): the bounds checks
    // of a tap are then the same for every pixel, and the compiler does them once.
    let reach = taps.iter().map(|t| t.0).max().unwrap_or(0) + c;
    let xs: [&[f32]; P] = std::array::from_fn(|p| &x[base + p * step..][..reach]);
    let mut c0 = 0;
    loop {
        let mut acc = [load::<S>(&bias[c0..]); P];
        for &(off, wo) in taps {
            let wv = load::<S>(&w[wo + c0..]);
            for (a, xp) in acc.iter_mut().zip(&xs) {
                let xv = load::<S>(&xp[off + c0..]);
                *a = s.add_f32s(*a, s.mul_f32s(xv, wv));
            }
        }
        for (p, a) in acc.iter().enumerate() {
            let v = activate_vector(s, act, *a);
            o[p * c + c0..][..l].copy_from_slice(bytemuck::cast_slice(std::slice::from_ref(&v)));
        }
        if c0 + l >= c {
            break;
        }
        // The last block ends at `c`, overlapping the one before when `c` is not a multiple.
        c0 = (c0 + l).min(c - l);
    }
}

/// Whether [`pixels`] applies `a` itself (the same arithmetic as [`activate`]).
pub(super) fn fusable(a: Act) -> bool {
    matches!(a, Act::None | Act::Relu | Act::Relu6 | Act::ReluN1To1)
}

/// [`activate`]'s comparisons lane by lane (`clamp` keeps NaN and -0, as these selects do).
#[inline(always)]
fn activate_vector<S: Simd>(s: S, act: Act, v: S::f32s) -> S::f32s {
    let clamp = |v: S::f32s, lo: f32, hi: f32| {
        let (lo, hi) = (s.splat_f32s(lo), s.splat_f32s(hi));
        let v = s.select_f32s(s.less_than_f32s(v, lo), lo, v);
        s.select_f32s(s.less_than_f32s(hi, v), hi, v)
    };
    match act {
        Act::Relu => {
            let zero = s.splat_f32s(0.0);
            s.select_f32s(s.less_than_f32s(v, zero), zero, v)
        }
        Act::Relu6 => clamp(v, 0.0, 6.0),
        Act::ReluN1To1 => clamp(v, -1.0, 1.0),
        _ => v,
    }
}

/// One output pixel of a depthwise convolution with the bounds of every tap checked (layers
/// with channel multipliers above 1 or fewer channels than vector lanes).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn pixel_checked(
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

/// The taps of kernel rows `ky` and columns `kx` as `(input offset from the first tap's
/// pixel, weight offset)`, into `taps`.
fn rect_taps(g: &Geo, ky: (usize, usize), kx: (usize, usize), taps: &mut Vec<(usize, usize)>) {
    taps.clear();
    for y in ky.0..ky.1 {
        for x in kx.0..kx.1 {
            let off = ((y - ky.0) * g.dil_h * g.in_w + (x - kx.0) * g.dil_w) * g.in_c;
            taps.push((off, (y * g.k_w + x) * g.out_c));
        }
    }
}

/// One chunk of output rows of [`depthwise`] (rows `ci · rows..` in `chunk`), run through
/// `pulp`'s dispatch.
struct Rows<'a> {
    ci: usize,
    chunk: &'a mut [f32],
    x: &'a [f32],
    w: &'a [f32],
    g: &'a Geo,
    mult: usize,
    epi: &'a Epi,
    env: &'a Env<'a>,
    rows: usize,
    bias: &'a [f32],
    /// Output columns whose every tap lands inside the input ([`interior`]).
    x_in: (usize, usize),
}

impl pulp::WithSimd for Rows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let Rows {
            ci,
            chunk,
            x,
            w,
            g,
            mult,
            epi,
            env,
            rows,
            bias,
            x_in: (x_lo, x_hi),
        } = self;
        let c = g.out_c;
        let row_len = g.out_w * c;
        let blocked = mult == 1 && c >= S::F32_LANES;
        let fused = blocked && fusable(epi.act1) && epi.act2 == Act::None && epi.residual.is_none();
        let act = if fused { epi.act1 } else { Act::None };
        let mut taps = Vec::with_capacity(g.k_h * g.k_w);
        for (r, row) in chunk.chunks_exact_mut(row_len).enumerate() {
            let oy = ci * rows + r;
            if !blocked {
                for (ox, o) in row.chunks_exact_mut(c).enumerate() {
                    pixel_checked(o, x, w, g, mult, oy, ox, bias);
                }
                continue;
            }
            let ky = taps_inside(oy, g.k_h, g.stride_h, g.dil_h, g.pad_top, g.in_h);
            // The input row of the first tap inside (any row when there is none: no tap reads
            // it then).
            let iy = (oy * g.stride_h + ky.0 * g.dil_h).saturating_sub(g.pad_top);
            let at = |ix: usize| (iy * g.in_w + ix) * g.in_c;
            // The interior: every column tap inside, blocks of pixels.
            rect_taps(g, ky, (0, g.k_w), &mut taps);
            let step = g.stride_w * g.in_c;
            let mut ox = x_lo;
            while ox + PIXELS <= x_hi {
                let (o, base) = (
                    &mut row[ox * c..][..PIXELS * c],
                    at(ox * g.stride_w - g.pad_left),
                );
                pixels::<S, PIXELS>(s, o, x, (base, step), &taps, w, bias, act);
                ox += PIXELS;
            }
            if ox + 4 <= x_hi {
                let (o, base) = (
                    &mut row[ox * c..][..4 * c],
                    at(ox * g.stride_w - g.pad_left),
                );
                pixels::<S, 4>(s, o, x, (base, step), &taps, w, bias, act);
                ox += 4;
            }
            while ox < x_hi {
                let (o, base) = (&mut row[ox * c..][..c], at(ox * g.stride_w - g.pad_left));
                pixels::<S, 1>(s, o, x, (base, step), &taps, w, bias, act);
                ox += 1;
            }
            // The border columns, each with the column taps that land inside.
            for ox in (0..x_lo).chain(x_hi..g.out_w) {
                let kx = taps_inside(ox, g.k_w, g.stride_w, g.dil_w, g.pad_left, g.in_w);
                rect_taps(g, ky, kx, &mut taps);
                let ix = (ox * g.stride_w + kx.0 * g.dil_w).saturating_sub(g.pad_left);
                let o = &mut row[ox * c..][..c];
                pixels::<S, 1>(s, o, x, (at(ix), 0), &taps, w, bias, act);
            }
        }
        if !fused {
            epilogue(chunk, ci * rows * g.out_w, c, epi, env, false);
        }
    }
}

/// A depthwise convolution: `x` `[in_h][in_w][in_c]`, weights `w` `[k_h·k_w][out_c]`
/// (TFLite's layout), channel multiplier `mult`; rows split over threads when the layer is
/// large enough.
#[allow(clippy::too_many_arguments)]
pub(super) fn depthwise(
    x: &[f32],
    w: &[f32],
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
    let x_in = interior(g.out_w, g.k_w, g.stride_w, g.dil_w, g.pad_left, g.in_w);
    let body = |ci: usize, chunk: &mut [f32]| {
        pulp::Arch::new().dispatch(Rows {
            ci,
            chunk,
            x,
            w,
            g,
            mult,
            epi,
            env,
            rows,
            bias,
            x_in,
        });
    };
    by_row_chunks(out, rows, row_len, g.out_h, body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain loop: bias, then every tap inside the input in kernel order.
    fn reference(x: &[f32], w: &[f32], bias: &[f32], g: &Geo, mult: usize) -> Vec<f32> {
        let c = g.out_c;
        let mut out = vec![0f32; g.out_h * g.out_w * c];
        for oy in 0..g.out_h {
            for ox in 0..g.out_w {
                for oc in 0..c {
                    let mut acc = bias[oc];
                    for ky in 0..g.k_h {
                        for kx in 0..g.k_w {
                            let iy = tap(oy, ky, g.stride_h, g.dil_h, g.pad_top, g.in_h);
                            let ix = tap(ox, kx, g.stride_w, g.dil_w, g.pad_left, g.in_w);
                            if let (Some(iy), Some(ix)) = (iy, ix) {
                                acc += x[(iy * g.in_w + ix) * g.in_c + oc / mult]
                                    * w[(ky * g.k_w + kx) * c + oc];
                            }
                        }
                    }
                    out[(oy * g.out_w + ox) * c + oc] = acc;
                }
            }
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn geo(h: usize, w: usize, c: usize, mult: usize, k: usize, s: usize, d: usize) -> Geo {
        let pad = (k - 1) * d / 2;
        let out = |i: usize| (i + 2 * pad - (k - 1) * d - 1) / s + 1;
        Geo {
            in_h: h,
            in_w: w,
            in_c: c,
            out_h: out(h),
            out_w: out(w),
            out_c: c * mult,
            k_h: k,
            k_w: k,
            stride_h: s,
            stride_w: s,
            dil_h: d,
            dil_w: d,
            pad_top: pad,
            pad_left: pad,
        }
    }

    /// Every path (blocks of 8, 4 and 1 pixels, the border, overlapping channel blocks, the
    /// checked path, fused activations) gives exactly the plain loop's values.
    #[test]
    fn depthwise_equals_the_plain_loop_exactly() {
        let v = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 137.0;
        let cases = [
            geo(13, 29, 16, 1, 3, 1, 1),
            geo(13, 29, 28, 1, 3, 1, 1),
            geo(12, 21, 42, 1, 5, 1, 1),
            geo(17, 23, 24, 1, 3, 2, 1),
            geo(11, 19, 32, 1, 5, 2, 1),
            geo(9, 15, 8, 1, 3, 1, 2),
            geo(2, 2, 24, 1, 3, 1, 1),
            geo(7, 7, 40, 1, 5, 1, 1),
            geo(9, 10, 3, 1, 3, 1, 1),
            geo(9, 10, 4, 2, 3, 2, 1),
        ];
        for (i, g) in cases.iter().enumerate() {
            let mult = g.out_c / g.in_c;
            let x: Vec<f32> = (0..g.in_h * g.in_w * g.in_c).map(v).collect();
            let w: Vec<f32> = (0..g.k_h * g.k_w * g.out_c).map(|i| v(i + 31)).collect();
            let bias: Vec<f32> = (0..g.out_c).map(|i| v(i + 77)).collect();
            for act in [Act::None, Act::Relu6] {
                let epi = Epi {
                    bias: Some(bias.clone()),
                    act1: act,
                    residual: None,
                    act2: Act::None,
                    alpha: Vec::new(),
                };
                let env = Env {
                    bufs: &[],
                    consts: &[],
                };
                let mut out = vec![f32::NAN; g.out_h * g.out_w * g.out_c];
                depthwise(&x, &w, g, mult, &epi, &env, &mut out);
                let mut want = reference(&x, &w, &bias, g, mult);
                activate(act, &mut want, &[]);
                for (j, (a, b)) in out.iter().zip(&want).enumerate() {
                    assert_eq!(a.to_bits(), b.to_bits(), "case {i} ({g:?}) {act:?} at {j}");
                }
            }
        }
    }
}
