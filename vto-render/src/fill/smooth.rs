//! The smooth fill: what the hole would be if colour only diffused in from its rim. It starts
//! the coarsest level of the pyramid (so that large shapes and gradients continue into the
//! hole before any patch is copied) and is the fallback where no source patch exists.
//!
//! A push–pull pass (a pyramid of weighted means of the known, allowed pixels, pulled back
//! down bilinearly into the hole) gives every hole pixel a value; Jacobi sweeps of the
//! Laplace equation then smooth it, with the rim as the boundary condition.

use super::level::Level;

/// Fills the hole pixels of `level` smoothly from the known pixels it may copy from
/// (`!hole && allowed`), with `sweeps` relaxation sweeps after the push–pull pass. Returns
/// false (and changes nothing) when no pixel may be copied from.
pub(crate) fn smooth_fill(level: &mut Level, sweeps: usize) -> bool {
    let (w, h) = (level.w, level.h);
    let base: Vec<[f32; 4]> = (0..w * h)
        .map(|i| {
            if level.hole[i] || !level.allowed[i] {
                [0.0; 4]
            } else {
                let c = level.rgb(i % w, i / w);
                [f32::from(c[0]), f32::from(c[1]), f32::from(c[2]), 1.0]
            }
        })
        .collect();
    if !base.iter().any(|p| p[3] > 0.0) {
        return false;
    }
    let filled = membrane(base, w, h, &level.hole, sweeps);
    for (i, c) in filled {
        level.set_rgb(i % w, i / w, c.map(|v| v.round().clamp(0.0, 255.0) as u8));
    }
    level.refresh_padding();
    true
}

/// Adds to the hole pixels of `level` the membrane through `mismatch` (the vote's error on the
/// rim, see `patchmatch::rim_mismatch`): the copied texture keeps its detail and meets the
/// rim without a seam, and slow changes of colour (a gradient, light falling off) continue
/// through the hole as they would in a diffusion.
pub(crate) fn correct(level: &mut Level, mismatch: Vec<[f32; 4]>, sweeps: usize) {
    if !mismatch.iter().any(|p| p[3] > 0.0) {
        return;
    }
    let (w, h) = (level.w, level.h);
    for (i, d) in membrane(mismatch, w, h, &level.hole, sweeps) {
        let (x, y) = (i % w, i / w);
        let c = level.rgb(x, y);
        let v = [0, 1, 2].map(|k| (f32::from(c[k]) + d[k]).round().clamp(0.0, 255.0) as u8);
        level.set_rgb(x, y, v);
    }
    level.refresh_padding();
}

/// Integrates the voted Laplacian `lap` (per hole pixel) over the hole of `level` by
/// `sweeps` over-relaxed Gauss–Seidel sweeps of the Poisson equation, starting from the
/// current pixels, with the known allowed pixels as the boundary: the seams between patches
/// copied from different places, and a gradient that patches copy at the wrong level, relax
/// while the texture's detail stays.
pub(crate) fn poisson(level: &mut Level, lap: &[(usize, [f32; 3])], sweeps: usize) {
    let (w, h) = (level.w, level.h);
    let mut idx = vec![u32::MAX; w * h];
    for (n, &(i, _)) in lap.iter().enumerate() {
        idx[i] = n as u32;
    }
    let mut cur: Vec<[f32; 3]> = lap
        .iter()
        .map(|&(i, _)| level.rgb(i % w, i / w).map(f32::from))
        .collect();
    const OMEGA: f32 = 1.7;
    for _ in 0..sweeps {
        for (n, &(i, l)) in lap.iter().enumerate() {
            let (x, y) = (i % w, i / w);
            let mut acc = [0.0f32; 3];
            let mut cnt = 0.0f32;
            for (ok, j) in [
                (x > 0, i.wrapping_sub(1)),
                (x + 1 < w, i + 1),
                (y > 0, i.wrapping_sub(w)),
                (y + 1 < h, i + w),
            ] {
                if !ok {
                    continue;
                }
                let v = if idx[j] != u32::MAX {
                    cur[idx[j] as usize]
                } else if !level.hole[j] && level.allowed[j] {
                    level.rgb(j % w, j / w).map(f32::from)
                } else {
                    continue;
                };
                for k in 0..3 {
                    acc[k] += v[k];
                }
                cnt += 1.0;
            }
            if cnt > 0.0 {
                for k in 0..3 {
                    let target = (acc[k] - l[k] * cnt / 4.0) / cnt;
                    cur[n][k] += OMEGA * (target - cur[n][k]);
                }
            }
        }
    }
    for (n, &(i, _)) in lap.iter().enumerate() {
        level.set_rgb(
            i % w,
            i / w,
            cur[n].map(|v| v.round().clamp(0.0, 255.0) as u8),
        );
    }
    level.refresh_padding();
}

/// The membrane through `data` (premultiplied colours, weight in `[3]`) over the `free`
/// pixels: push–pull, then `sweeps` over-relaxed Gauss–Seidel sweeps of the Laplace equation
/// in scan order (sequential, so deterministic), where only free pixels and pixels with data
/// count as neighbours. Returns the free pixels' values.
fn membrane(
    data: Vec<[f32; 4]>,
    w: usize,
    h: usize,
    free: &[bool],
    sweeps: usize,
) -> Vec<(usize, [f32; 3])> {
    let usable: Vec<bool> = (0..w * h).map(|i| free[i] || data[i][3] > 0.0).collect();
    let mut cur = push_pull(data, w, h);
    let holes: Vec<usize> = (0..w * h).filter(|&i| free[i]).collect();
    const OMEGA: f32 = 1.6;
    for _ in 0..sweeps {
        for &i in &holes {
            let (x, y) = (i % w, i / w);
            let mut acc = [0.0f32; 3];
            let mut n = 0.0f32;
            for (ok, j) in [
                (x > 0, i.wrapping_sub(1)),
                (x + 1 < w, i + 1),
                (y > 0, i.wrapping_sub(w)),
                (y + 1 < h, i + w),
            ] {
                if ok && usable[j] {
                    for k in 0..3 {
                        acc[k] += cur[j][k];
                    }
                    n += 1.0;
                }
            }
            if n > 0.0 {
                for k in 0..3 {
                    cur[i][k] += OMEGA * (acc[k] / n - cur[i][k]);
                }
            }
        }
    }
    holes.into_iter().map(|i| (i, cur[i])).collect()
}

/// Push–pull: `base` holds premultiplied colours with their weight in `[3]`; returns every
/// pixel's colour, the known ones unchanged, the rest pulled from the coarser means.
fn push_pull(base: Vec<[f32; 4]>, w: usize, h: usize) -> Vec<[f32; 3]> {
    let mut levels: Vec<(usize, usize, Vec<[f32; 4]>)> = vec![(w, h, base)];
    loop {
        let (pw, ph) = {
            let l = &levels[levels.len() - 1];
            (l.0, l.1)
        };
        if pw == 1 && ph == 1 {
            break;
        }
        let (nw, nh) = (pw.div_ceil(2), ph.div_ceil(2));
        let mut next = vec![[0.0f32; 4]; nw * nh];
        {
            let prev = &levels[levels.len() - 1].2;
            for y in 0..ph {
                for x in 0..pw {
                    let s = prev[y * pw + x];
                    let d = &mut next[(y / 2) * nw + x / 2];
                    for c in 0..4 {
                        d[c] += s[c];
                    }
                }
            }
        }
        levels.push((nw, nh, next));
    }
    // Normalise each level; pull top down: a pixel with little weight takes the coarser
    // level's value (bilinear), blended by its own weight.
    let mut coarse: Vec<[f32; 3]> = {
        let top = &levels[levels.len() - 1].2[0];
        let n = top[3].max(1e-6);
        vec![[top[0] / n, top[1] / n, top[2] / n]]
    };
    for k in (0..levels.len() - 1).rev() {
        let (lw, lh, ref data) = levels[k];
        let (cw, ch) = (levels[k + 1].0, levels[k + 1].1);
        let mut out = vec![[0.0f32; 3]; lw * lh];
        for y in 0..lh {
            let fy = ((y as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (ch - 1) as f32);
            let y0 = fy.floor() as usize;
            let y1 = (y0 + 1).min(ch - 1);
            let ty = fy - y0 as f32;
            for x in 0..lw {
                let fx = ((x as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (cw - 1) as f32);
                let x0 = fx.floor() as usize;
                let x1 = (x0 + 1).min(cw - 1);
                let tx = fx - x0 as f32;
                let mut up = [0.0f32; 3];
                for (xx, yy, wgt) in [
                    (x0, y0, (1.0 - tx) * (1.0 - ty)),
                    (x1, y0, tx * (1.0 - ty)),
                    (x0, y1, (1.0 - tx) * ty),
                    (x1, y1, tx * ty),
                ] {
                    let v = coarse[yy * cw + xx];
                    for c in 0..3 {
                        up[c] += v[c] * wgt;
                    }
                }
                let d = data[y * lw + x];
                // Weight 1 is one full pixel (at level 0); a coarse pixel with weight ≥ 1
                // is trusted fully.
                let a = d[3].min(1.0);
                let own = if d[3] > 0.0 {
                    [d[0] / d[3], d[1] / d[3], d[2] / d[3]]
                } else {
                    [0.0; 3]
                };
                out[y * lw + x] = [
                    own[0] * a + up[0] * (1.0 - a),
                    own[1] * a + up[1] * (1.0 - a),
                    own[2] * a + up[2] * (1.0 - a),
                ];
            }
        }
        coarse = out;
    }
    coarse
}
