//! Convolutions with fewer than [`SMALL_N`] outputs (mask heads) without im2col: every output
//! is [`dot`] of the pixel's patch with the output channel's weights (`w`, `[n][k]`).
//!
//! Where a pixel's patch lies inside the input and each of its rows (`k_w · in_c` values,
//! contiguous in the input) is a whole number of [`dot`]'s 8-lane chunks, [`BLOCK`]
//! neighbouring pixels are computed at once straight from the input: one vector of partial
//! sums per pixel, the lanes being [`dot`]'s eight partial sums (the same products added in
//! the same order), then summed the way [`dot`] sums them — the same values, with no patch
//! gathered. Other pixels (the border) gather their patch on the stack first.

use pulp::Simd;

use super::*;

/// Patch length up to which a convolution may run as [`direct_conv`] (its patch lives on
/// the stack).
pub(super) const DIRECT_MAX_K: usize = 128;

/// Output pixels per block of the interior path.
const BLOCK: usize = 8;

/// One chunk of output rows of [`direct_conv`] (rows `ci · rows..` in `chunk`).
struct Rows<'a> {
    ci: usize,
    chunk: &'a mut [f32],
    x: &'a [f32],
    w: &'a [f32],
    g: &'a Geo,
    epi: &'a Epi,
    env: &'a Env<'a>,
    rows: usize,
    /// Output rows and columns whose every tap lands inside the input ([`interior`]).
    inside: ((usize, usize), (usize, usize)),
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
            epi,
            env,
            rows,
            inside: ((y_lo, y_hi), (x_lo, x_hi)),
        } = self;
        let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
        let row_len = g.out_w * n;
        let mut buf = [0f32; DIRECT_MAX_K];
        let patch = &mut buf[..k];
        // The vector's lanes are dot()'s partial sums only with as many lanes, and a patch row
        // is contiguous in the input only without dilation along x.
        let vector = S::F32_LANES == LANES && (g.k_w * g.in_c) % LANES == 0 && g.dil_w == 1;
        for (r, row) in chunk.chunks_exact_mut(row_len).enumerate() {
            let oy = ci * rows + r;
            let blocks = if vector && (y_lo..y_hi).contains(&oy) {
                (x_hi - x_lo) / BLOCK
            } else {
                0
            };
            let done = x_lo..x_lo + blocks * BLOCK;
            for b in 0..blocks {
                let ox = x_lo + b * BLOCK;
                interior_block(s, &mut row[ox * n..][..BLOCK * n], x, w, g, (oy, ox));
            }
            for ox in (0..g.out_w).filter(|ox| !done.contains(ox)) {
                im2col(x, g, oy * g.out_w + ox, patch);
                for (o, wr) in row[ox * n..][..n].iter_mut().zip(w.chunks_exact(k)) {
                    *o = dot(patch, wr);
                }
            }
        }
        epilogue(chunk, ci * rows * g.out_w, n, epi, env, true);
    }
}

/// [`BLOCK`] interior output pixels from `(oy, ox)` along the row: every output channel's
/// [`dot`] of each pixel's patch, read from the input in place.
#[inline(always)]
fn interior_block<S: Simd>(
    s: S,
    o: &mut [f32],
    x: &[f32],
    w: &[f32],
    g: &Geo,
    (oy, ox): (usize, usize),
) {
    let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
    let run = g.k_w * g.in_c;
    let step = g.stride_w * g.in_c;
    let (iy0, ix0) = (oy * g.stride_h - g.pad_top, ox * g.stride_w - g.pad_left);
    for (oc, wr) in w.chunks_exact(k).enumerate().take(n) {
        let mut acc = [s.splat_f32s(0.0); BLOCK];
        for ky in 0..g.k_h {
            let row0 = ((iy0 + ky * g.dil_h) * g.in_w + ix0) * g.in_c;
            // One length for every pixel's run: the bounds checks of a chunk are then the
            // same for all of them.
            let xs: [&[f32]; BLOCK] = std::array::from_fn(|p| &x[row0 + p * step..][..run]);
            let wk = &wr[ky * run..][..run];
            for j in (0..run).step_by(LANES) {
                let wv = load::<S>(&wk[j..]);
                for (a, xp) in acc.iter_mut().zip(&xs) {
                    *a = s.add_f32s(*a, s.mul_f32s(load::<S>(&xp[j..]), wv));
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            let lanes: &[f32] = bytemuck::cast_slice(std::slice::from_ref(a));
            o[p * n + oc] = lanes.iter().sum::<f32>();
        }
    }
}

/// A convolution with fewer than [`SMALL_N`] outputs and a patch of at most
/// [`DIRECT_MAX_K`] values; rows split over threads when the layer is large enough.
pub(super) fn direct_conv(x: &[f32], w: &[f32], g: &Geo, epi: &Epi, env: &Env, out: &mut [f32]) {
    let (k, n) = (g.k_h * g.k_w * g.in_c, g.out_c);
    let row_len = g.out_w * n;
    let rows = chunk_rows(g.out_h, g.out_h * g.out_w * k * n);
    let inside = (
        interior(g.out_h, g.k_h, g.stride_h, g.dil_h, g.pad_top, g.in_h),
        interior(g.out_w, g.k_w, g.stride_w, g.dil_w, g.pad_left, g.in_w),
    );
    let body = |ci: usize, chunk: &mut [f32]| {
        pulp::Arch::new().dispatch(Rows {
            ci,
            chunk,
            x,
            w,
            g,
            epi,
            env,
            rows,
            inside,
        });
    };
    by_row_chunks(out, rows, row_len, g.out_h, body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interior blocks and the gathered border give exactly what gathering every patch
    /// and taking [`dot`] gives (3×3 over 8 channels, strides 1 and 2, two outputs; 4
    /// channels take the gathered path throughout).
    #[test]
    fn direct_conv_equals_patch_dot_products_exactly() {
        let v = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 137.0;
        for (in_c, n, stride) in [(8usize, 1usize, 1usize), (8, 2, 1), (8, 1, 2), (4, 3, 1)] {
            let (h, wd) = (13usize, 37usize);
            let g = Geo {
                in_h: h,
                in_w: wd,
                in_c,
                out_h: (h - 1) / stride + 1,
                out_w: (wd - 1) / stride + 1,
                out_c: n,
                k_h: 3,
                k_w: 3,
                stride_h: stride,
                stride_w: stride,
                dil_h: 1,
                dil_w: 1,
                pad_top: 1,
                pad_left: 1,
            };
            let k = 9 * in_c;
            let x: Vec<f32> = (0..h * wd * in_c).map(v).collect();
            let w: Vec<f32> = (0..n * k).map(|i| v(i + 13)).collect();
            let epi = Epi {
                bias: None,
                act1: Act::None,
                residual: None,
                act2: Act::None,
                alpha: Vec::new(),
            };
            let env = Env {
                bufs: &[],
                consts: &[],
            };
            let mut out = vec![f32::NAN; g.out_h * g.out_w * n];
            direct_conv(&x, &w, &g, &epi, &env, &mut out);
            let mut patch = vec![0f32; k];
            for p in 0..g.out_h * g.out_w {
                im2col(&x, &g, p, &mut patch);
                for oc in 0..n {
                    let want = dot(&patch, &w[oc * k..][..k]);
                    let got = out[p * n + oc];
                    assert_eq!(got.to_bits(), want.to_bits(), "{in_c}/{n}/{stride} at {p}");
                }
            }
        }
    }
}
