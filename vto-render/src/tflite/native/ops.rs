//! The elementwise, padding, pooling and resize kernels of the native executor.

use super::*;

/// Row-major strides of a rank-4 shape, 0 along broadcast (size-1) axes.
pub(super) fn strides(s: &[usize; 4]) -> [usize; 4] {
    let mut st = [0; 4];
    let mut acc = 1;
    for d in (0..4).rev() {
        st[d] = if s[d] == 1 { 0 } else { acc };
        acc *= s[d];
    }
    st
}

pub(super) fn binary<F: Fn(f32, f32) -> f32>(
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

pub(super) fn pad(
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

pub(super) fn pool(x: &[f32], g: &Geo, max: bool, out: &mut [f32]) {
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

pub(super) fn resize_bilinear(x: &[f32], g: &Geo, align: bool, half: bool, out: &mut [f32]) {
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
