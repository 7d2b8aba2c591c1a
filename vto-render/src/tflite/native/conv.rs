//! The convolution kernels of the native executor: GEMM-based, direct and depthwise
//! convolutions, transposed convolutions.

use super::*;

/// Output columns below which [`gemm`] takes dot products itself: `matrixmultiply`'s
/// kernels compute 8 columns at a time and pack both operands, wasted work for a layer with
/// one to a few output channels (segmentation heads, transposed-convolution upsampling).
pub(super) const SMALL_N: usize = 8;

/// `Σ a·b`, eight partial sums in registers.
#[inline(always)]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
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
pub(super) fn gemm_dots((a, m, k, w, n, c): (&[f32], usize, usize, &[f32], usize, &mut [f32])) {
    for (row, out) in a.chunks_exact(k).zip(c[..m * n].chunks_exact_mut(n)) {
        for (o, wr) in out.iter_mut().zip(w.chunks_exact(k)) {
            *o = dot(row, wr);
        }
    }
}

/// `c[m×n] = a[m×k] · wᵀ` where `w` is `[n][k]` row-major.
pub(super) fn gemm(a: &[f32], m: usize, k: usize, w: &[f32], n: usize, c: &mut [f32]) {
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
pub(super) fn chunk_rows(m: usize, work: usize) -> usize {
    if work < PARALLEL_WORK {
        return m.max(1);
    }
    let threads = rayon::current_num_threads().max(1);
    // A few chunks per thread, for balance; at least 16 rows for the GEMM's blocking.
    m.div_ceil(threads * 3).max(16)
}

/// Runs `body(chunk index, chunk)` over `out` in chunks of `rows` rows of `row_len` values
/// each: on this thread when one chunk holds all `total` rows, else on rayon's threads.
pub(super) fn by_row_chunks(
    out: &mut [f32],
    rows: usize,
    row_len: usize,
    total: usize,
    body: impl Fn(usize, &mut [f32]) + Send + Sync,
) {
    if rows >= total {
        body(0, out);
    } else {
        out.par_chunks_mut(rows * row_len)
            .enumerate()
            .for_each(|(ci, chunk)| body(ci, chunk));
    }
}

/// Input coordinate of an output coordinate and a kernel tap, or `None` in the padding.
#[inline]
pub(super) fn tap(
    o: usize,
    k: usize,
    stride: usize,
    dil: usize,
    pad: usize,
    size: usize,
) -> Option<usize> {
    let p = (o * stride + k * dil).checked_sub(pad)?;
    (p < size).then_some(p)
}

/// Gathers the patches of output pixels `p0..p0 + rows.len() / kk` into `rows`
/// (`[pixel][k_y][k_x][in_c]`, zeros in the padding).
#[inline(always)]
pub(super) fn im2col(x: &[f32], g: &Geo, p0: usize, rows: &mut [f32]) {
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
pub(super) fn conv(
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

/// Lanes per register block of the depthwise kernel (one AVX register of f32).
pub(super) const LANES: usize = 8;

/// One interior output pixel of a depthwise convolution (multiplier 1): `o = bias + Σ x·w`
/// over the taps at `offs` from `base`, eight channels at a time in registers.
#[inline(always)]
pub(super) fn depthwise_pixel(
    o: &mut [f32],
    x: &[f32],
    base: usize,
    offs: &[usize],
    w: &[f32],
    bias: &[f32],
) {
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

/// Output pixels per register block of [`depthwise_pixels`].
pub(super) const PIXELS: usize = 4;

/// [`PIXELS`] neighbouring interior output pixels of a depthwise convolution (multiplier 1,
/// `c` a multiple of [`LANES`]): per block of eight channels, one accumulator per pixel kept
/// in registers over every tap (the weights loaded once per tap for all of them), so the
/// output is written once, not once per tap, and the pixels' sums run side by side instead
/// of one dependent chain. Input pixel `p` starts at `base + p · step`. The sums are formed in
/// the same order as [`depthwise_pixel`]'s (bias, then the taps in order): the same values.
#[inline(always)]
pub(super) fn depthwise_pixels(
    o: &mut [f32],
    x: &[f32],
    (base, step): (usize, usize),
    offs: &[usize],
    w: &[f32],
    bias: &[f32],
) {
    let c = bias.len();
    for c0 in (0..c).step_by(LANES) {
        let mut acc = [[0f32; LANES]; PIXELS];
        for a in &mut acc {
            a.copy_from_slice(&bias[c0..c0 + LANES]);
        }
        for (t, &off) in offs.iter().enumerate() {
            let ws = &w[t * c + c0..][..LANES];
            for (p, a) in acc.iter_mut().enumerate() {
                let xs = &x[base + p * step + off + c0..][..LANES];
                for ((a, x), w) in a.iter_mut().zip(xs).zip(ws) {
                    *a += x * w;
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            o[p * c + c0..][..LANES].copy_from_slice(a);
        }
    }
}

/// One output pixel of a depthwise convolution with the bounds of every tap checked (the
/// border, and channel multipliers above 1).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn depthwise_pixel_checked(
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
pub(super) fn direct_rows(
    (ci, chunk, x, w, g, epi, env, rows): (
        usize,
        &mut [f32],
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
            for (o, wr) in o.iter_mut().zip(w.chunks_exact(k)) {
                *o = dot(patch, wr);
            }
        }
    }
    epilogue(chunk, ci * rows * g.out_w, n, epi, env, true);
}

/// Patch length up to which a convolution may run as [`direct_conv`] (its patch lives on
/// the stack).
pub(super) const DIRECT_MAX_K: usize = 128;

/// A convolution with fewer than [`SMALL_N`] outputs (a mask head) without im2col: for every
/// output pixel its patch is gathered on the stack, then one dot product per output channel
/// (`w`, `[n][k]`). (Layers with more outputs run on [`super::pointwise`].)
pub(super) fn direct_conv(x: &[f32], w: &[f32], g: &Geo, epi: &Epi, env: &Env, out: &mut [f32]) {
    let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
    let row_len = g.out_w * n;
    let rows = chunk_rows(g.out_h, g.out_h * g.out_w * k * n);
    let body = |ci: usize, chunk: &mut [f32]| {
        simd(DirectRows((ci, chunk, x, w, g, epi, env, rows)));
    };
    by_row_chunks(out, rows, row_len, g.out_h, body);
}

/// The rows of one chunk of [`depthwise`].
#[inline(always)]
#[allow(clippy::type_complexity)]
pub(super) fn depthwise_rows(
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
        // Eight-channel blocks: four pixels at a time in registers; else runs of the tiled
        // weights.
        let blocked = inner_row && c % LANES == 0;
        let mut done_to = x_lo;
        if blocked {
            let iy = oy * g.stride_h - g.pad_top;
            let step = g.stride_w * g.in_c;
            while done_to + PIXELS <= x_hi {
                let ix = done_to * g.stride_w - g.pad_left;
                let o = &mut row[done_to * c..][..PIXELS * c];
                depthwise_pixels(o, x, ((iy * g.in_w + ix) * g.in_c, step), offs, w, bias);
                done_to += PIXELS;
            }
        } else if inner_row && !tile.is_empty() {
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
            if blocked && (x_lo..done_to).contains(&ox) {
                continue;
            }
            if !blocked && inner_row && !tile.is_empty() && (x_lo..x_hi).contains(&ox) {
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
pub(super) fn tile_pixels(c: usize) -> usize {
    (256 / c.max(1)).max(1)
}

/// The depthwise weights `[tap][c]` repeated over a run of [`tile_pixels`] pixels, then the
/// bias repeated the same way, for the stride-1 path; empty for other layers and for those
/// whose channels come in blocks of [`LANES`] (they run [`depthwise_pixels`]).
pub(super) fn depthwise_tile(w: &[f32], bias: Option<&[f32]>, g: &Geo, mult: usize) -> Vec<f32> {
    if g.stride_w != 1 || g.dil_w != 1 || mult != 1 || g.in_c != g.out_c || g.out_c % LANES == 0 {
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
pub(super) fn depthwise(
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
    by_row_chunks(out, rows, row_len, g.out_h, body);
}

pub(super) fn transpose_conv(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Four pixels in registers give exactly what four single pixels give (the same sums in
    /// the same order), at stride 1 and 2.
    #[test]
    fn four_pixels_at_once_equal_one_at_a_time() {
        let (c, taps) = (16usize, 9usize);
        let v = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 137.0;
        let x: Vec<f32> = (0..4096).map(v).collect();
        let w: Vec<f32> = (0..taps * c).map(|i| v(i + 31)).collect();
        let bias: Vec<f32> = (0..c).map(|i| v(i + 77)).collect();
        let offs: Vec<usize> = (0..taps).map(|t| (t / 3 * 20 + t % 3) * c).collect();
        for stride in [1usize, 2] {
            let step = stride * c;
            let mut four = vec![0f32; PIXELS * c];
            depthwise_pixels(&mut four, &x, (c, step), &offs, &w, &bias);
            for p in 0..PIXELS {
                let mut one = vec![0f32; c];
                depthwise_pixel(&mut one, &x, c + p * step, &offs, &w, &bias);
                assert_eq!(
                    &four[p * c..(p + 1) * c],
                    &one[..],
                    "stride {stride}, pixel {p}"
                );
            }
        }
    }
}
