//! The GEMM-based convolutions of the native executor (im2col, `matrixmultiply`), the shared
//! helpers of the convolution kernels (taps, patches, row chunks) and transposed
//! convolutions.

use super::*;

/// Output columns below which [`gemm`] takes dot products itself: `matrixmultiply`'s
/// kernels compute 8 columns at a time and pack both operands, wasted work for a layer with
/// one to a few output channels (segmentation heads, transposed-convolution upsampling).
pub(super) const SMALL_N: usize = 8;

/// Lanes of the partial sums of [`dot`] (one AVX register of f32).
pub(super) const LANES: usize = 8;

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

/// The offsets of a patch's values (`[k_y][k_x][in_c]`) from its first in the input.
pub(super) fn patch_offsets(g: &Geo) -> Vec<usize> {
    let mut offs = Vec::with_capacity(g.k_h * g.k_w * g.in_c);
    for ky in 0..g.k_h {
        for kx in 0..g.k_w {
            let tap = (ky * g.dil_h * g.in_w + kx * g.dil_w) * g.in_c;
            offs.extend(tap..tap + g.in_c);
        }
    }
    offs
}

/// The output rows and columns whose every tap lands inside the input.
pub(super) fn inside(g: &Geo) -> ((usize, usize), (usize, usize)) {
    (
        interior(g.out_h, g.k_h, g.stride_h, g.dil_h, g.pad_top, g.in_h),
        interior(g.out_w, g.k_w, g.stride_w, g.dil_w, g.pad_left, g.in_w),
    )
}

/// The end (at most `end`) of the run of interior pixels along one output row that starts
/// at flat output pixel `q`; `q` itself when `q` is not interior.
pub(super) fn inside_run(g: &Geo, q: usize, end: usize) -> usize {
    let ((y_lo, y_hi), (x_lo, x_hi)) = inside(g);
    let (oy, ox) = (q / g.out_w, q % g.out_w);
    if (y_lo..y_hi).contains(&oy) && (x_lo..x_hi).contains(&ox) {
        (q - ox + x_hi).min(end)
    } else {
        q
    }
}

/// The first interior pixel after `q` (at most `end`).
pub(super) fn next_inside(g: &Geo, q: usize, end: usize) -> usize {
    let ((y_lo, y_hi), (x_lo, x_hi)) = inside(g);
    if x_lo >= x_hi || y_lo >= y_hi {
        return end;
    }
    let (oy, ox) = (q / g.out_w, q % g.out_w);
    let next = if oy < y_lo {
        y_lo * g.out_w + x_lo
    } else if oy < y_hi && ox < x_lo {
        oy * g.out_w + x_lo
    } else if oy + 1 < y_hi {
        (oy + 1) * g.out_w + x_lo
    } else {
        end
    };
    next.min(end)
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
