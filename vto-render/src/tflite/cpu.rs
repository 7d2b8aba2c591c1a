//! Reference implementation of every operator on the CPU: plain loops, written for clarity.
//!
//! This is the oracle the kernel tests compare the GPU against (and a way to localise a
//! golden mismatch), not a product path: it is slow.

use std::collections::HashMap;

use super::prepare::{lower, Geo, Step};
use super::{Model, TfliteError};

/// Runs a model on the CPU reference; outputs in model output order.
pub fn run_reference(model: &Model, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, TfliteError> {
    let plan = lower(model.graph())?;
    if inputs.len() != plan.inputs.len() {
        return Err(TfliteError::BadInput(format!(
            "{} inputs given, the model has {}",
            inputs.len(),
            plan.inputs.len()
        )));
    }
    let mut vals: HashMap<usize, Vec<f32>> = plan.consts.clone();
    for (k, (&t, data)) in plan.inputs.iter().zip(inputs).enumerate() {
        if data.len() != plan.numel(t) {
            return Err(TfliteError::BadInput(format!(
                "input {k} has {} values, expected {}",
                data.len(),
                plan.numel(t)
            )));
        }
        vals.insert(t, data.to_vec());
    }
    for step in &plan.steps {
        let y = step.writes();
        let out = run_step(step, &vals, plan.numel(y));
        vals.insert(y, out);
    }
    Ok(plan.outputs.iter().map(|o| vals[o].clone()).collect())
}

/// Runs one step; `vals` holds every tensor it reads.
pub(crate) fn run_step(step: &Step, vals: &HashMap<usize, Vec<f32>>, out_len: usize) -> Vec<f32> {
    let v = |t: &usize| vals[t].as_slice();
    match step {
        Step::Conv {
            x, w, b, geo, epi, ..
        } => {
            let bias = b.as_ref().map(v);
            let mut out = conv2d(v(x), v(w), bias, geo);
            for (i, o) in out.iter_mut().enumerate() {
                *o = epi.apply(*o, i / geo.out_c, i % geo.out_c, vals);
            }
            out
        }
        Step::Depthwise {
            x,
            w,
            b,
            geo,
            mult,
            epi,
            ..
        } => {
            let bias = b.as_ref().map(v);
            let mut out = depthwise(v(x), v(w), bias, geo, *mult);
            for (i, o) in out.iter_mut().enumerate() {
                *o = epi.apply(*o, i / geo.out_c, i % geo.out_c, vals);
            }
            out
        }
        Step::TransposeConv { x, w, b, geo, .. } => {
            transpose_conv(v(x), v(w), b.as_ref().map(v), geo)
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
        } => {
            let (av, bv) = (v(a), v(b));
            let mut out = vec![0.0; out_len];
            let idx = |s: &[usize; 4], i: [usize; 4]| {
                let mut f = 0;
                for d in 0..4 {
                    f = f * s[d] + if s[d] == 1 { 0 } else { i[d] };
                }
                f
            };
            let mut o = 0;
            for n in 0..out_shape[0] {
                for h in 0..out_shape[1] {
                    for w in 0..out_shape[2] {
                        for c in 0..out_shape[3] {
                            let i = [n, h, w, c];
                            out[o] = act.apply(op.apply(av[idx(a_shape, i)], bv[idx(b_shape, i)]));
                            o += 1;
                        }
                    }
                }
            }
            out
        }
        Step::Unary { op, x, .. } => v(x).iter().map(|&e| op.apply(e)).collect(),
        Step::Pad {
            x,
            in_shape,
            out_shape,
            before,
            ..
        } => {
            let xv = v(x);
            let mut out = vec![0.0; out_len];
            let mut i = 0;
            for n in 0..in_shape[0] {
                for h in 0..in_shape[1] {
                    for w in 0..in_shape[2] {
                        for c in 0..in_shape[3] {
                            let o = [n + before[0], h + before[1], w + before[2], c + before[3]];
                            let f = ((o[0] * out_shape[1] + o[1]) * out_shape[2] + o[2])
                                * out_shape[3]
                                + o[3];
                            out[f] = xv[i];
                            i += 1;
                        }
                    }
                }
            }
            out
        }
        Step::Pool {
            max, x, geo, act, ..
        } => {
            let mut out = pool(v(x), geo, *max);
            out.iter_mut().for_each(|o| *o = act.apply(*o));
            out
        }
        Step::Reshape { x, .. } => v(x).to_vec(),
        Step::Concat {
            parts,
            outer,
            inner,
            out_axis,
            act,
            ..
        } => {
            let mut out = vec![0.0; out_len];
            let mut off = 0;
            for (t, len) in parts {
                let xv = v(t);
                for o in 0..*outer {
                    for a in 0..*len {
                        for i in 0..*inner {
                            out[(o * out_axis + off + a) * inner + i] =
                                act.apply(xv[(o * len + a) * inner + i]);
                        }
                    }
                }
                off += len;
            }
            out
        }
        Step::Resize {
            x,
            geo,
            align_corners,
            half_pixel_centers,
            ..
        } => resize_bilinear(v(x), geo, *align_corners, *half_pixel_centers),
        Step::DepthToSpace { x, geo, block, .. } => {
            let xv = v(x);
            let mut out = vec![0.0; out_len];
            for oy in 0..geo.out_h {
                for ox in 0..geo.out_w {
                    for oc in 0..geo.out_c {
                        let (iy, ix) = (oy / block, ox / block);
                        let ic = ((oy % block) * block + ox % block) * geo.out_c + oc;
                        out[(oy * geo.out_w + ox) * geo.out_c + oc] =
                            xv[(iy * geo.in_w + ix) * geo.in_c + ic];
                    }
                }
            }
            out
        }
    }
}

/// Input coordinate of an output coordinate and a kernel tap, or `None` when in the padding.
fn tap(o: usize, k: usize, stride: usize, dil: usize, pad: usize, size: usize) -> Option<usize> {
    let p = (o * stride + k * dil).checked_sub(pad)?;
    (p < size).then_some(p)
}

/// CONV_2D: weights `[out_c, k_h, k_w, in_c]`.
pub(crate) fn conv2d(x: &[f32], w: &[f32], b: Option<&[f32]>, g: &Geo) -> Vec<f32> {
    let mut out = vec![0.0; g.out_h * g.out_w * g.out_c];
    for oy in 0..g.out_h {
        for ox in 0..g.out_w {
            for oc in 0..g.out_c {
                let mut acc = b.map_or(0.0, |b| b[oc]);
                for ky in 0..g.k_h {
                    let Some(iy) = tap(oy, ky, g.stride_h, g.dil_h, g.pad_top, g.in_h) else {
                        continue;
                    };
                    for kx in 0..g.k_w {
                        let Some(ix) = tap(ox, kx, g.stride_w, g.dil_w, g.pad_left, g.in_w) else {
                            continue;
                        };
                        for ic in 0..g.in_c {
                            acc += x[(iy * g.in_w + ix) * g.in_c + ic]
                                * w[((oc * g.k_h + ky) * g.k_w + kx) * g.in_c + ic];
                        }
                    }
                }
                out[(oy * g.out_w + ox) * g.out_c + oc] = acc;
            }
        }
    }
    out
}

/// DEPTHWISE_CONV_2D: weights `[1, k_h, k_w, out_c]`, output channel `c` reads input `c / mult`.
pub(crate) fn depthwise(x: &[f32], w: &[f32], b: Option<&[f32]>, g: &Geo, mult: usize) -> Vec<f32> {
    let mut out = vec![0.0; g.out_h * g.out_w * g.out_c];
    for oy in 0..g.out_h {
        for ox in 0..g.out_w {
            for oc in 0..g.out_c {
                let ic = oc / mult;
                let mut acc = b.map_or(0.0, |b| b[oc]);
                for ky in 0..g.k_h {
                    let Some(iy) = tap(oy, ky, g.stride_h, g.dil_h, g.pad_top, g.in_h) else {
                        continue;
                    };
                    for kx in 0..g.k_w {
                        let Some(ix) = tap(ox, kx, g.stride_w, g.dil_w, g.pad_left, g.in_w) else {
                            continue;
                        };
                        acc += x[(iy * g.in_w + ix) * g.in_c + ic]
                            * w[(ky * g.k_w + kx) * g.out_c + oc];
                    }
                }
                out[(oy * g.out_w + ox) * g.out_c + oc] = acc;
            }
        }
    }
    out
}

/// Transposed convolution with bias: every input pixel scatters `k_h × k_w` taps.
pub(crate) fn transpose_conv(x: &[f32], w: &[f32], b: Option<&[f32]>, g: &Geo) -> Vec<f32> {
    let mut out = vec![0.0; g.out_h * g.out_w * g.out_c];
    for iy in 0..g.in_h {
        for ix in 0..g.in_w {
            for ky in 0..g.k_h {
                for kx in 0..g.k_w {
                    let oy = (iy * g.stride_h + ky).checked_sub(g.pad_top);
                    let ox = (ix * g.stride_w + kx).checked_sub(g.pad_left);
                    let (Some(oy), Some(ox)) = (oy, ox) else {
                        continue;
                    };
                    if oy >= g.out_h || ox >= g.out_w {
                        continue;
                    }
                    for oc in 0..g.out_c {
                        let mut acc = 0.0;
                        for ic in 0..g.in_c {
                            acc += x[(iy * g.in_w + ix) * g.in_c + ic]
                                * w[((oc * g.k_h + ky) * g.k_w + kx) * g.in_c + ic];
                        }
                        out[(oy * g.out_w + ox) * g.out_c + oc] += acc;
                    }
                }
            }
        }
    }
    if let Some(b) = b {
        for (i, o) in out.iter_mut().enumerate() {
            *o += b[i % g.out_c];
        }
    }
    out
}

/// MAX_POOL_2D / AVERAGE_POOL_2D over in-bounds elements.
pub(crate) fn pool(x: &[f32], g: &Geo, max: bool) -> Vec<f32> {
    let mut out = vec![0.0; g.out_h * g.out_w * g.out_c];
    for oy in 0..g.out_h {
        for ox in 0..g.out_w {
            for c in 0..g.out_c {
                let mut acc = if max { f32::NEG_INFINITY } else { 0.0 };
                let mut count = 0;
                for ky in 0..g.k_h {
                    let Some(iy) = tap(oy, ky, g.stride_h, 1, g.pad_top, g.in_h) else {
                        continue;
                    };
                    for kx in 0..g.k_w {
                        let Some(ix) = tap(ox, kx, g.stride_w, 1, g.pad_left, g.in_w) else {
                            continue;
                        };
                        let e = x[(iy * g.in_w + ix) * g.in_c + c];
                        acc = if max { acc.max(e) } else { acc + e };
                        count += 1;
                    }
                }
                out[(oy * g.out_w + ox) * g.out_c + c] = if max || count == 0 {
                    acc
                } else {
                    acc / count as f32
                };
            }
        }
    }
    out
}

/// TFLite's RESIZE_BILINEAR.
pub(crate) fn resize_bilinear(x: &[f32], g: &Geo, align: bool, half: bool) -> Vec<f32> {
    let scale = |i: usize, o: usize| {
        if align && o > 1 {
            (i as f32 - 1.0) / (o as f32 - 1.0)
        } else {
            i as f32 / o as f32
        }
    };
    let (sy, sx) = (scale(g.in_h, g.out_h), scale(g.in_w, g.out_w));
    let interp = |v: usize, s: f32, size: usize| {
        let p = if half {
            (v as f32 + 0.5) * s - 0.5
        } else {
            v as f32 * s
        };
        let lo = p.floor().max(0.0);
        let hi = (p.ceil() as isize).min(size as isize - 1).max(0) as usize;
        (p, lo as usize, hi, p - lo)
    };
    let mut out = vec![0.0; g.out_h * g.out_w * g.out_c];
    for oy in 0..g.out_h {
        let (_, y0, y1, dy) = interp(oy, sy, g.in_h);
        for ox in 0..g.out_w {
            let (_, x0, x1, dx) = interp(ox, sx, g.in_w);
            for c in 0..g.out_c {
                let at = |y: usize, xx: usize| x[(y * g.in_w + xx) * g.in_c + c];
                out[(oy * g.out_w + ox) * g.out_c + c] = at(y0, x0) * (1.0 - dy) * (1.0 - dx)
                    + at(y1, x0) * dy * (1.0 - dx)
                    + at(y0, x1) * (1.0 - dy) * dx
                    + at(y1, x1) * dy * dx;
            }
        }
    }
    out
}
