//! The smooth fill: what the hole would be if colour only diffused in from its rim. It starts
//! the coarsest level of the pyramid (so that large shapes and gradients continue into the
//! hole before any patch is copied) and is the fallback where no source patch exists.
//!
//! A push–pull pass (a pyramid of weighted means of the known, allowed pixels, pulled back
//! down bilinearly into the hole) gives every hole pixel a value; over-relaxed Gauss–Seidel
//! sweeps of the Laplace equation then smooth it, with the rim as the boundary condition.
//!
//! Everything here works on the hole's pixels ([`Holes`]), not on the whole level: the sweeps
//! visit the hole's pixels only, in red–black order (`relax.rs`: parallel, the same result
//! whatever the number of threads), and the push–pull pyramid is read back at the hole's
//! pixels only. The smooth fill's sweeps and relaxation factor grow with the hole's depth
//! ([`relaxation`]), so that a deep hole's fill is the harmonic fill, converged.

use rayon::prelude::*;

use super::level::Level;
use super::relax::{Neighbour, RedBlack};

/// The hole of a level: its pixels, their rim and the red–black layout of their equations.
#[derive(Debug)]
pub(crate) struct Holes {
    /// The hole's pixels (`y · w + x`), in scan order.
    pub pixels: Vec<u32>,
    /// The known pixels that may be copied from and touch the hole (4-neighbours), in scan
    /// order.
    pub rim: Vec<u32>,
    /// The equations' layout for the sweeps.
    system: RedBlack,
    /// The parts of the hole with no rim pixel beside them, each as its pixels (indices into
    /// [`Holes::pixels`]): nothing anchors their equations. Found only when asked (see
    /// [`Holes::new`]); empty otherwise.
    pub unanchored: Vec<Vec<u32>>,
}

impl Holes {
    /// The hole of `level` (its hole pixels; the rim is the known, allowed pixels next to it),
    /// its rim-less parts found when `find_unanchored` says ([`Holes::unanchored`]).
    pub fn new(level: &Level, find_unanchored: bool) -> Self {
        let (w, h) = (level.w, level.h);
        let hole = &level.hole;
        // The hole's pixels and the rim, row by row.
        let rows: Vec<(Vec<u32>, Vec<u32>)> = (0..h)
            .into_par_iter()
            .map(|y| {
                let (mut scan, mut rim) = (Vec::new(), Vec::new());
                let row = &hole[y * w..(y + 1) * w];
                for x in 0..w {
                    let i = y * w + x;
                    if row[x] {
                        scan.push(i as u32);
                    } else if level.allowed[i]
                        && ((x > 0 && row[x - 1])
                            || (x + 1 < w && row[x + 1])
                            || (y > 0 && hole[i - w])
                            || (y + 1 < h && hole[i + w]))
                    {
                        rim.push(i as u32);
                    }
                }
                (scan, rim)
            })
            .collect();
        let pixels: Vec<u32> = rows.iter().flat_map(|r| r.0.iter().copied()).collect();
        let rim: Vec<u32> = rows.iter().flat_map(|r| r.1.iter().copied()).collect();
        // A neighbour's index among the hole's pixels or the rim: both are sorted.
        let find = |j: usize| -> Neighbour {
            let j = j as u32;
            if hole[j as usize] {
                Neighbour::Hole(pixels.partition_point(|&p| p < j) as u32)
            } else {
                match rim.binary_search(&j) {
                    Ok(k) => Neighbour::Rim(k as u32),
                    Err(_) => Neighbour::None,
                }
            }
        };
        let (colour, nbr): (Vec<u8>, Vec<[Neighbour; 4]>) = pixels
            .par_iter()
            .enumerate()
            .map(|(s, &i)| {
                let i = i as usize;
                let (x, y) = (i % w, i / w);
                let nbr = [
                    // The left and right neighbours of a hole pixel in the same run are the
                    // hole pixels just before and after it.
                    if x == 0 {
                        Neighbour::None
                    } else if hole[i - 1] {
                        Neighbour::Hole(s as u32 - 1)
                    } else {
                        find(i - 1)
                    },
                    if x + 1 == w {
                        Neighbour::None
                    } else if hole[i + 1] {
                        Neighbour::Hole(s as u32 + 1)
                    } else {
                        find(i + 1)
                    },
                    if y == 0 { Neighbour::None } else { find(i - w) },
                    if y + 1 == h {
                        Neighbour::None
                    } else {
                        find(i + w)
                    },
                ];
                (((x + y) & 1) as u8, nbr)
            })
            .unzip();
        let unanchored = if find_unanchored {
            unanchored(&nbr)
        } else {
            Vec::new()
        };
        let system = RedBlack::new(&colour, &nbr);
        Self {
            pixels,
            rim,
            system,
            unanchored,
        }
    }

    /// The number of hole pixels.
    pub fn len(&self) -> usize {
        self.pixels.len()
    }
}

/// The parts of the hole (4-connected, through `nbr`: four neighbours per hole pixel) that
/// touch no rim pixel, each as its hole pixels' indices.
fn unanchored(nbr: &[[Neighbour; 4]]) -> Vec<Vec<u32>> {
    let mut reached = vec![false; nbr.len()];
    let spread = |start: Vec<u32>, reached: &mut [bool]| {
        let mut part = Vec::new();
        let mut stack = start;
        for &s in &stack {
            reached[s as usize] = true;
        }
        while let Some(s) = stack.pop() {
            part.push(s);
            for n in nbr[s as usize] {
                if let Neighbour::Hole(j) = n {
                    if !reached[j as usize] {
                        reached[j as usize] = true;
                        stack.push(j);
                    }
                }
            }
        }
        part
    };
    let anchors: Vec<u32> = (0..nbr.len() as u32)
        .filter(|&s| {
            nbr[s as usize]
                .iter()
                .any(|n| matches!(n, Neighbour::Rim(_)))
        })
        .collect();
    spread(anchors, &mut reached);
    let mut parts = Vec::new();
    for s in 0..nbr.len() as u32 {
        if !reached[s as usize] {
            parts.push(spread(vec![s], &mut reached));
        }
    }
    parts
}

/// Sweeps of the rim's mismatch membrane (see [`membranes`]).
const MISMATCH_SWEEPS: usize = 16;

/// Sweeps and relaxation factor of the smooth fill of a hole `depth` pixels deep (the
/// largest chessboard distance to a known pixel), started from push–pull: as many sweeps as
/// the depth (12 to 64), and the optimal factor of successive over-relaxation for a grid as
/// wide as the hole, `2 / (1 + sin(π / (2 depth + 1)))` (at most 1.95). Relaxation carries
/// the rim's values a few pixels per sweep; a fixed 16 sweeps at 1.6 left a deep hole's
/// fill with push–pull's bumps and steps, which the benchmark saw: 64 sweeps instead of 16
/// (nothing else changed) raised PSNR in the holes from 20.10 to 20.24 dB and SSIM from
/// 0.6458 to 0.6473 (see `docs/fill.md`).
fn relaxation(depth: u32) -> (usize, f32) {
    let n = 2.0 * depth as f32 + 1.0;
    let omega = (2.0 / (1.0 + (std::f32::consts::PI / n).sin())).clamp(1.0, 1.95);
    ((depth as usize).clamp(12, 64), omega)
}

/// Fills the hole pixels of `level` smoothly from the known pixels it may copy from
/// (`!hole && allowed`): the harmonic fill (colour diffused in from the rim), see
/// [`membranes`]. Returns false (and changes nothing) when no pixel may be copied from.
pub(crate) fn smooth_fill(level: &mut Level) -> bool {
    let holes = Holes::new(level, false);
    let depth = super::level::depth(&level.hole, level.w, level.h)
        .into_iter()
        .max()
        .unwrap_or(0);
    match membranes(level, &holes, None, depth) {
        Some(v) => {
            for (s, c) in v.into_iter().enumerate() {
                let i = holes.pixels[s] as usize;
                level.set_rgb(i % level.w, i / level.w, to_u8(&c[..3]));
            }
            level.refresh_padding();
            true
        }
        None => false,
    }
}

#[inline(always)]
fn to_u8(c: &[f32]) -> [u8; 3] {
    [0, 1, 2].map(|k| c[k].round().clamp(0.0, 255.0) as u8)
}

/// The two membranes of the finest level, per hole pixel (in [`Holes::pixels`]' order): in
/// lanes 0–2 the smooth fill (the harmonic fill from the known pixels that may be copied
/// from: push–pull, then [`relaxation`]'s sweeps), in lanes 4–6 the membrane through `mismatch`
/// (per rim pixel of `holes`: the vote's error there, see `patchmatch::vote_finish`; 0
/// without it: push–pull of the rim's values, then [`MISMATCH_SWEEPS`] sweeps). `depth` is
/// the hole's largest depth. `None` when no pixel may be copied from.
pub(crate) fn membranes(
    level: &Level,
    holes: &Holes,
    mismatch: Option<&[[f32; 3]]>,
    depth: u32,
) -> Option<Vec<[f32; 8]>> {
    let (w, h) = (level.w, level.h);
    if !(0..w * h)
        .into_par_iter()
        .any(|i| !level.hole[i] && level.allowed[i])
    {
        return None;
    }
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    // The first coarser level of the push, for both at once: the sums of the 2×2 children
    // (colours premultiplied, weight in lanes 3 and 7).
    let mut coarse = vec![[0.0f32; 8]; cw * ch];
    coarse.par_chunks_mut(cw).enumerate().for_each(|(y, row)| {
        for yy in 2 * y..(2 * y + 2).min(h) {
            let (hole, allowed) = (
                &level.hole[yy * w..(yy + 1) * w],
                &level.allowed[yy * w..(yy + 1) * w],
            );
            for x in 0..w {
                if !hole[x] && allowed[x] {
                    let c = level.rgb(x, yy);
                    let d = &mut row[x / 2];
                    for k in 0..3 {
                        d[k] += f32::from(c[k]);
                    }
                    d[3] += 1.0;
                }
            }
        }
    });
    let colour_rim: Vec<[f32; 4]> = holes
        .rim
        .par_iter()
        .map(|&i| {
            let c = level.rgb(i as usize % w, i as usize / w).map(f32::from);
            [c[0], c[1], c[2], 0.0]
        })
        .collect();
    let mut mismatch_rim = vec![[0.0f32; 4]; holes.rim.len()];
    if let Some(mismatch) = mismatch {
        for ((&i, d), v) in holes.rim.iter().zip(mismatch).zip(&mut mismatch_rim) {
            let (x, y) = (i as usize % w, i as usize / w);
            let c = &mut coarse[(y / 2) * cw + x / 2];
            for k in 0..3 {
                c[4 + k] += d[k];
            }
            c[7] += 1.0;
            v[..3].copy_from_slice(d);
        }
    }
    let init = push_pull(w, h, coarse, &holes.pixels);
    let lanes = |from: usize| -> Vec<[f32; 4]> {
        init.iter()
            .map(|v| [v[from], v[from + 1], v[from + 2], 0.0])
            .collect()
    };
    let (sweeps, omega) = relaxation(depth);
    let smooth = holes
        .system
        .solve(&lanes(0), &colour_rim, None, omega, sweeps);
    let mut out: Vec<[f32; 8]> = smooth
        .into_iter()
        .map(|c| [c[0], c[1], c[2], 0.0, 0.0, 0.0, 0.0, 0.0])
        .collect();
    if mismatch.is_some() {
        let v = holes
            .system
            .solve(&lanes(4), &mismatch_rim, None, 1.6, MISMATCH_SWEEPS);
        for (o, v) in out.iter_mut().zip(v) {
            o[4..7].copy_from_slice(&v[..3]);
        }
    }
    Some(out)
}

/// Adds the correction `d` (lanes 4–6 of [`membranes`], per hole pixel) to the hole pixels of
/// `level`: the copied texture keeps its detail and meets the rim without a seam, and slow
/// changes of colour (a gradient, light falling off) continue through the hole as they would
/// in a diffusion.
pub(crate) fn correct(level: &mut Level, holes: &Holes, d: &[[f32; 8]]) {
    let w = level.w;
    for (&i, d) in holes.pixels.iter().zip(d) {
        let (x, y) = (i as usize % w, i as usize / w);
        let c = level.rgb(x, y);
        let v = [0, 1, 2].map(|k| (f32::from(c[k]) + d[4 + k]).round().clamp(0.0, 255.0) as u8);
        level.set_rgb(x, y, v);
    }
    level.refresh_padding();
}

/// Integrates the voted Laplacian `lap` (per hole pixel, in [`Holes::pixels`]' order) over
/// the hole of `level` by `sweeps` over-relaxed Gauss–Seidel sweeps of the Poisson equation,
/// starting from the current pixels, with the known allowed pixels as the boundary: the seams
/// between patches copied from different places, and a gradient that patches copy at the
/// wrong level, relax while the texture's detail stays. The rim-less parts `holes` holds
/// ([`Holes::unanchored`]) keep the vote.
pub(crate) fn poisson(level: &mut Level, holes: &Holes, lap: &[[f32; 3]], sweeps: usize) {
    let w = level.w;
    let rgb = |i: u32| {
        let c = level.rgb(i as usize % w, i as usize / w).map(f32::from);
        [c[0], c[1], c[2], 0.0]
    };
    let rim: Vec<[f32; 4]> = holes.rim.par_iter().map(|&i| rgb(i)).collect();
    let before: Vec<[f32; 4]> = holes.pixels.par_iter().map(|&i| rgb(i)).collect();
    // The equation of pixel n: cur = (Σ neighbours − lap · count / 4) / count.
    let extra: Vec<[f32; 4]> = lap
        .iter()
        .map(|l| [-l[0] / 4.0, -l[1] / 4.0, -l[2] / 4.0, 0.0])
        .collect();
    let mut cur = holes.system.solve(&before, &rim, Some(&extra), 1.7, sweeps);
    // A part with no rim has no boundary: the equations fix its pixels only up to a constant,
    // and the sweeps let it drift; the parts `holes` was asked to find keep the vote (see
    // `FillOptions::rimless_keep_vote`).
    for part in &holes.unanchored {
        for &s in part {
            cur[s as usize] = before[s as usize];
        }
    }
    for (s, c) in cur.into_iter().enumerate() {
        let i = holes.pixels[s] as usize;
        level.set_rgb(i % w, i / w, to_u8(&c[..3]));
    }
    level.refresh_padding();
}

/// Push–pull of `N / 4` fields at once: `coarse` holds the first coarser level of a `w × h`
/// grid (per field, premultiplied colours with their weight in the fourth lane, the sums of
/// the 2×2 children); returns the values pulled down at each pixel of `at` (pixels with no
/// data of their own). Only the cells the pull reads are computed.
fn push_pull<const N: usize>(
    w: usize,
    h: usize,
    coarse: Vec<[f32; N]>,
    at: &[u32],
) -> Vec<[f32; N]> {
    if w == 1 && h == 1 {
        return vec![[0.0; N]; at.len()];
    }
    let mut levels: Vec<(usize, usize, Vec<[f32; N]>)> =
        vec![(w.div_ceil(2), h.div_ceil(2), coarse)];
    loop {
        let (pw, ph) = {
            let l = &levels[levels.len() - 1];
            (l.0, l.1)
        };
        if pw == 1 && ph == 1 {
            break;
        }
        let (nw, nh) = (pw.div_ceil(2), ph.div_ceil(2));
        let mut next = vec![[0.0f32; N]; nw * nh];
        {
            let prev = &levels[levels.len() - 1].2;
            next.par_chunks_mut(nw).enumerate().for_each(|(y, row)| {
                for yy in 2 * y..(2 * y + 2).min(ph) {
                    for x in 0..pw {
                        let s = prev[yy * pw + x];
                        let d = &mut row[x / 2];
                        for c in 0..N {
                            d[c] += s[c];
                        }
                    }
                }
            });
        }
        levels.push((nw, nh, next));
    }
    // Which cells each level's pull reads: the bilinear footprints of the pixels asked for,
    // then of those cells, up to the top.
    let footprint = |x: usize, cw: usize| {
        let fx = ((x as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (cw - 1) as f32);
        let x0 = fx.floor() as usize;
        (x0, (x0 + 1).min(cw - 1), fx - x0 as f32)
    };
    let mut needed: Vec<Vec<u32>> = Vec::with_capacity(levels.len());
    {
        let mut cells: Vec<u32> = at.to_vec();
        let mut fine_w = w;
        for (cw, ch, _) in &levels {
            let (cw, ch) = (*cw, *ch);
            let mut mark = vec![false; cw * ch];
            for &i in &cells {
                let (x, y) = (i as usize % fine_w, i as usize / fine_w);
                let (x0, x1, _) = footprint(x, cw);
                let (y0, y1, _) = footprint(y, ch);
                for (xx, yy) in [(x0, y0), (x1, y0), (x0, y1), (x1, y1)] {
                    mark[yy * cw + xx] = true;
                }
            }
            cells = (0..cw * ch)
                .filter(|&i| mark[i])
                .map(|i| i as u32)
                .collect();
            needed.push(cells.clone());
            fine_w = cw;
        }
    }
    let bilinear = |coarse: &[[f32; N]], cw: usize, ch: usize, x: usize, y: usize| {
        let (x0, x1, tx) = footprint(x, cw);
        let (y0, y1, ty) = footprint(y, ch);
        let mut v = [0.0f32; N];
        for (xx, yy, wgt) in [
            (x0, y0, (1.0 - tx) * (1.0 - ty)),
            (x1, y0, tx * (1.0 - ty)),
            (x0, y1, (1.0 - tx) * ty),
            (x1, y1, tx * ty),
        ] {
            let c = coarse[yy * cw + xx];
            for k in 0..N {
                v[k] += c[k] * wgt;
            }
        }
        v
    };
    // Normalise each level; pull top down: a cell with little weight takes the coarser
    // level's value (bilinear), blended by its own weight.
    let mut up: Vec<[f32; N]> = {
        let top = &levels[levels.len() - 1].2[0];
        let mut v = [0.0f32; N];
        for g in (0..N).step_by(4) {
            let n = top[g + 3].max(1e-6);
            for k in 0..3 {
                v[g + k] = top[g + k] / n;
            }
        }
        vec![v]
    };
    for k in (0..levels.len() - 1).rev() {
        let (lw, _, ref data) = levels[k];
        let (cw, ch) = (levels[k + 1].0, levels[k + 1].1);
        let coarse = &up;
        let values: Vec<[f32; N]> = needed[k]
            .par_iter()
            .map(|&i| {
                let (x, y) = (i as usize % lw, i as usize / lw);
                let u = bilinear(coarse, cw, ch, x, y);
                let d = data[i as usize];
                let mut out = [0.0f32; N];
                for g in (0..N).step_by(4) {
                    // Weight 1 is one full pixel (at level 0); a coarse cell with weight ≥ 1
                    // is trusted fully.
                    let a = d[g + 3].min(1.0);
                    for c in 0..3 {
                        let own = if d[g + 3] > 0.0 {
                            d[g + c] / d[g + 3]
                        } else {
                            0.0
                        };
                        out[g + c] = own * a + u[g + c] * (1.0 - a);
                    }
                }
                out
            })
            .collect();
        let mut grid = vec![[0.0f32; N]; levels[k].0 * levels[k].1];
        for (&i, v) in needed[k].iter().zip(values) {
            grid[i as usize] = v;
        }
        up = grid;
    }
    // The pixels asked for have no data: they take the coarser level's value.
    let (cw, ch) = (levels[0].0, levels[0].1);
    at.par_iter()
        .map(|&i| bilinear(&up, cw, ch, i as usize % w, i as usize / w))
        .collect()
}
