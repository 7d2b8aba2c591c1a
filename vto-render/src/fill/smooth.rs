//! The smooth fill: what the hole would be if colour only diffused in from its rim. It starts
//! the coarsest level of the pyramid (so that large shapes and gradients continue into the
//! hole before any patch is copied) and is the fallback where no source patch exists.
//!
//! A push–pull pass (a pyramid of weighted means of the known, allowed pixels, pulled back
//! down bilinearly into the hole) gives every hole pixel a value; over-relaxed Gauss–Seidel
//! sweeps of the Laplace equation then smooth it, with the rim as the boundary condition.
//!
//! Everything here works on the hole's pixels ([`Holes`]), not on the whole level: the sweeps
//! visit the hole's pixels only, one connected part of the hole per parallel task (the parts
//! do not touch, so this is the sequential sweep, whatever the number of threads), and the
//! push–pull pyramid is read back at the hole's pixels only.

use rayon::prelude::*;

use super::level::Level;
use crate::tflite::simd::simd;

/// No neighbour (outside the level, or neither hole nor rim).
const NONE: u32 = u32::MAX;
/// A neighbour code with this bit set is an index into the rim; without it, an index into the
/// hole pixels of the same part.
const RIM: u32 = 1 << 31;

/// The hole of a level: its pixels, grouped by 4-connected part, and their neighbours.
#[derive(Debug)]
pub(crate) struct Holes {
    /// The hole's pixels (`y · w + x`), part by part, each part in scan order.
    pub pixels: Vec<u32>,
    /// Part `k` is `pixels[parts[k]..parts[k + 1]]`.
    parts: Vec<usize>,
    /// Per hole pixel (same order): its left, right, upper and lower neighbour, as the index
    /// of a hole pixel of the same part (counted from the part's start), [`RIM`] | the index
    /// of a rim pixel, or [`NONE`].
    nbr: Vec<[u32; 4]>,
    /// The known pixels that may be copied from and touch the hole (4-neighbours), in scan
    /// order.
    pub rim: Vec<u32>,
    /// For the `n`-th hole pixel in scan order, its index in [`Holes::pixels`].
    pub slot: Vec<u32>,
}

impl Holes {
    /// The hole of `level` (its hole pixels; the rim is the known, allowed pixels next to it).
    pub fn new(level: &Level) -> Self {
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
        let scan: Vec<u32> = rows.iter().flat_map(|r| r.0.iter().copied()).collect();
        let rim: Vec<u32> = rows.iter().flat_map(|r| r.1.iter().copied()).collect();
        // Where each pixel is in the scan (hole) or the rim.
        let mut index = vec![NONE; w * h];
        for (k, &i) in scan.iter().enumerate() {
            index[i as usize] = k as u32;
        }
        for (k, &i) in rim.iter().enumerate() {
            index[i as usize] = RIM | k as u32;
        }
        // The parts: union–find over the hole pixels in scan order (left and upper links).
        let n = scan.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(parent: &mut [u32], mut a: u32) -> u32 {
            while parent[a as usize] != a {
                let p = parent[parent[a as usize] as usize];
                parent[a as usize] = p;
                a = p;
            }
            a
        }
        for (k, &i) in scan.iter().enumerate() {
            let i = i as usize;
            let (x, y) = (i % w, i / w);
            for (ok, j) in [(x > 0, i.wrapping_sub(1)), (y > 0, i.wrapping_sub(w))] {
                if ok && hole[j] {
                    let (a, b) = (root(&mut parent, k as u32), root(&mut parent, index[j]));
                    if a != b {
                        parent[a.max(b) as usize] = a.min(b);
                    }
                }
            }
        }
        // Number the parts by their first pixel, and lay the pixels out part by part.
        let mut part_of = vec![0u32; n];
        let mut sizes: Vec<usize> = Vec::new();
        let mut label = vec![u32::MAX; n];
        for (k, part) in part_of.iter_mut().enumerate() {
            let rt = root(&mut parent, k as u32) as usize;
            if label[rt] == u32::MAX {
                label[rt] = sizes.len() as u32;
                sizes.push(0);
            }
            *part = label[rt];
            sizes[label[rt] as usize] += 1;
        }
        let mut parts = Vec::with_capacity(sizes.len() + 1);
        parts.push(0);
        for s in &sizes {
            parts.push(parts[parts.len() - 1] + s);
        }
        let mut next: Vec<usize> = parts[..sizes.len()].to_vec();
        let mut slot = vec![0u32; n];
        let mut pixels = vec![0u32; n];
        for k in 0..n {
            let p = part_of[k] as usize;
            slot[k] = next[p] as u32;
            pixels[next[p]] = scan[k];
            next[p] += 1;
        }
        let nbr: Vec<[u32; 4]> = (0..n)
            .into_par_iter()
            .map(|s| {
                let i = pixels[s] as usize;
                let (x, y) = (i % w, i / w);
                // The first slot of the part of slot s.
                let start = parts[parts.partition_point(|&b| b <= s) - 1] as u32;
                [
                    (x > 0, i.wrapping_sub(1)),
                    (x + 1 < w, i + 1),
                    (y > 0, i.wrapping_sub(w)),
                    (y + 1 < h, i + w),
                ]
                .map(|(ok, j)| {
                    if !ok || index[j] == NONE {
                        NONE
                    } else if index[j] & RIM != 0 {
                        index[j]
                    } else {
                        slot[index[j] as usize] - start
                    }
                })
            })
            .collect();
        Self {
            pixels,
            parts,
            nbr,
            rim,
            slot,
        }
    }

    /// The number of hole pixels.
    pub fn len(&self) -> usize {
        self.pixels.len()
    }

    /// The parts, each with its first index in [`Holes::pixels`] and its values in
    /// `values` (one per hole pixel, in the same order).
    fn parts_of<'v, T>(&self, values: &'v mut [T]) -> Vec<(usize, &'v mut [T])> {
        let mut slices = Vec::with_capacity(self.parts.len());
        let mut rest = values;
        for k in 0..self.parts.len() - 1 {
            let (a, b) = rest.split_at_mut(self.parts[k + 1] - self.parts[k]);
            slices.push((self.parts[k], a));
            rest = b;
        }
        slices
    }
}

/// Fills the hole pixels of `level` smoothly from the known pixels it may copy from
/// (`!hole && allowed`), with `sweeps` relaxation sweeps after the push–pull pass. Returns
/// false (and changes nothing) when no pixel may be copied from.
pub(crate) fn smooth_fill(level: &mut Level, sweeps: usize) -> bool {
    let holes = Holes::new(level);
    match membranes(level, &holes, None, sweeps) {
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

/// The two membranes of the finest level, in one pass, per hole pixel (in [`Holes::pixels`]'
/// order): in lanes 0–2 the smooth fill (a diffusion from the known pixels that may be
/// copied from), in lanes 4–6 the membrane through `mismatch` (per rim pixel of `holes`: the
/// vote's error there, see `patchmatch::vote_finish`; 0 without it). Each is a push–pull
/// pass, then `sweeps` over-relaxed Gauss–Seidel sweeps of the Laplace equation with the rim
/// as the boundary. `None` when no pixel may be copied from.
pub(crate) fn membranes(
    level: &Level,
    holes: &Holes,
    mismatch: Option<&[[f32; 3]]>,
    sweeps: usize,
) -> Option<Vec<[f32; 8]>> {
    let (w, h) = (level.w, level.h);
    if !(0..w * h)
        .into_par_iter()
        .any(|i| !level.hole[i] && level.allowed[i])
    {
        return None;
    }
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    // The first coarser level of the push: the sums of the 2×2 children, in the children's
    // scan order (colours premultiplied, weight in lanes 3 and 7).
    let mut coarse = vec![[0.0f32; 8]; cw * ch];
    coarse.par_chunks_mut(cw).enumerate().for_each(|(y, row)| {
        for yy in 2 * y..(2 * y + 2).min(h) {
            for x in 0..w {
                let i = yy * w + x;
                if !level.hole[i] && level.allowed[i] {
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
    let mut rim: Vec<[f32; 8]> = holes
        .rim
        .iter()
        .map(|&i| {
            let c = level.rgb(i as usize % w, i as usize / w).map(f32::from);
            [c[0], c[1], c[2], 0.0, 0.0, 0.0, 0.0, 0.0]
        })
        .collect();
    if let Some(mismatch) = mismatch {
        for ((&i, d), v) in holes.rim.iter().zip(mismatch).zip(&mut rim) {
            let (x, y) = (i as usize % w, i as usize / w);
            let c = &mut coarse[(y / 2) * cw + x / 2];
            for k in 0..3 {
                c[4 + k] += d[k];
            }
            v[4..7].copy_from_slice(d);
            c[7] += 1.0;
        }
    }
    let init = push_pull(w, h, coarse, &holes.pixels);
    Some(membrane(holes, init, &rim, sweeps))
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
/// wrong level, relax while the texture's detail stays. A part of the hole with no such
/// pixel beside it is left as it is.
pub(crate) fn poisson(level: &mut Level, holes: &Holes, lap: &[[f32; 3]], sweeps: usize) {
    let w = level.w;
    let rgb = |i: u32| {
        let c = level.rgb(i as usize % w, i as usize / w).map(f32::from);
        [c[0], c[1], c[2], 0.0]
    };
    let rim: Vec<[f32; 4]> = holes.rim.iter().map(|&i| rgb(i)).collect();
    let mut cur: Vec<[f32; 4]> = holes.pixels.iter().map(|&i| rgb(i)).collect();
    holes
        .parts_of(&mut cur)
        .into_par_iter()
        .for_each(|(start, cur)| {
            let nbr = &holes.nbr[start..start + cur.len()];
            // A part with no rim has no boundary: the equations only fix its pixels up to a
            // constant, and the sweeps drift (a sliver between the person and the ground's
            // excluded ring turned white). It keeps the vote.
            if !nbr.iter().flatten().any(|&j| j != NONE && j & RIM != 0) {
                return;
            }
            let system = System::new(nbr, &rim);
            // The equation of pixel n: cur = (Σ neighbours − lap · count / 4) / count, with the
            // rim's part and the Laplacian's folded into its constant.
            let mut b = system.fixed.clone();
            for (n, b) in b.iter_mut().enumerate() {
                for k in 0..3 {
                    b[k] -= lap[start + n][k] / 4.0;
                }
            }
            simd(Sweeps((cur, &system, &b, 1.7, sweeps)));
        });
    for (s, c) in cur.into_iter().enumerate() {
        let i = holes.pixels[s] as usize;
        level.set_rgb(i % w, i / w, to_u8(&c[..3]));
    }
    level.refresh_padding();
}

/// The equations of one part of the hole: per hole pixel, its neighbours in the part (the
/// index of an always-zero extra value where it has fewer than four), the reciprocal of its
/// number of neighbours, and the rim's part of the mean of its neighbours.
struct System<const N: usize> {
    nbr: Vec<[u32; 4]>,
    inv: Vec<f32>,
    fixed: Vec<[f32; N]>,
}

impl<const N: usize> System<N> {
    fn new(nbr: &[[u32; 4]], rim: &[[f32; N]]) -> Self {
        let zero = nbr.len() as u32;
        let mut out = Self {
            nbr: Vec::with_capacity(nbr.len()),
            inv: Vec::with_capacity(nbr.len()),
            fixed: Vec::with_capacity(nbr.len()),
        };
        for codes in nbr {
            let mut own = [zero; 4];
            let mut sum = [0.0f32; N];
            let mut count = 0u32;
            for (slot, &j) in own.iter_mut().zip(codes) {
                if j == NONE {
                    continue;
                }
                count += 1;
                if j & RIM != 0 {
                    let v = rim[(j & !RIM) as usize];
                    for k in 0..N {
                        sum[k] += v[k];
                    }
                } else {
                    *slot = j;
                }
            }
            let inv = if count > 0 { 1.0 / count as f32 } else { 0.0 };
            out.nbr.push(own);
            out.inv.push(inv);
            out.fixed.push(sum.map(|v| v * inv));
        }
        out
    }
}

/// Over-relaxed Gauss–Seidel sweeps, in order, of the equations `cur[n] = b[n] + inv[n] ·
/// Σ cur[neighbours]` (relaxation factor `omega`).
/// The values, the system, its constants, the relaxation factor and the number of sweeps.
type SweepArgs<'a, const N: usize> = (
    &'a mut [[f32; N]],
    &'a System<N>,
    &'a [[f32; N]],
    f32,
    usize,
);

struct Sweeps<'a, const N: usize>(SweepArgs<'a, N>);

impl<const N: usize> pulp::WithSimd for Sweeps<'_, N> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        sweeps(self.0)
    }
}

#[inline(always)]
#[allow(clippy::type_complexity)]
fn sweeps<const N: usize>(
    (cur, system, b, omega, sweeps): (&mut [[f32; N]], &System<N>, &[[f32; N]], f32, usize),
) {
    let n = cur.len();
    let mut v: Vec<[f32; N]> = Vec::with_capacity(n + 1);
    v.extend_from_slice(cur);
    v.push([0.0; N]);
    for _ in 0..sweeps {
        for i in 0..n {
            let [a, bb, c, d] = system.nbr[i];
            let (va, vb, vc, vd) = (v[a as usize], v[bb as usize], v[c as usize], v[d as usize]);
            let inv = system.inv[i];
            let mut x = v[i];
            for k in 0..N {
                let target = b[i][k] + inv * (va[k] + vb[k] + vc[k] + vd[k]);
                x[k] += omega * (target - x[k]);
            }
            v[i] = x;
        }
    }
    cur.copy_from_slice(&v[..n]);
}

/// The membrane over the hole of `holes`: from `init` (per hole pixel), `sweeps`
/// over-relaxed Gauss–Seidel sweeps of the Laplace equation in scan order, with `rim` (per rim
/// pixel) as the boundary, every lane on its own.
fn membrane(
    holes: &Holes,
    mut cur: Vec<[f32; 8]>,
    rim: &[[f32; 8]],
    sweeps: usize,
) -> Vec<[f32; 8]> {
    holes
        .parts_of(&mut cur)
        .into_par_iter()
        .for_each(|(start, cur)| {
            let system = System::new(&holes.nbr[start..start + cur.len()], rim);
            simd(Sweeps((cur, &system, &system.fixed, 1.6, sweeps)));
        });
    cur
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
