//! Running one kernel of the native executor, and the epilogue (bias, activations,
//! residual) the convolution kernels share.

use super::*;

/// The tensors a kernel reads.
pub(super) struct Env<'a> {
    pub(super) bufs: &'a [Vec<f32>],
    pub(super) consts: &'a [Vec<f32>],
}

impl Env<'_> {
    pub(super) fn get(&self, s: Src) -> &[f32] {
        match s {
            Src::Buf(slot, n) => &self.bufs[slot][..n],
            Src::Const(i) => &self.consts[i],
        }
    }
}

pub(super) fn run_kernel(kernel: &Kernel, env: &Env, scratch: &mut [f32], out: &mut [f32]) {
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
            geo,
            mult,
            epi,
        } => depthwise(env.get(*x), w, geo, *mult, epi, env, out),
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
pub(super) fn activate(act: Act, v: &mut [f32], alpha: &[f32]) {
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
pub(super) fn epilogue(
    out: &mut [f32],
    p0: usize,
    c: usize,
    epi: &Epi,
    env: &Env,
    with_bias: bool,
) {
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
