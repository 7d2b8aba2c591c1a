//! PatchMatch (Barnes et al. 2009) and patch voting (Wexler et al. 2007) at one pyramid level.
//!
//! A *target* is the centre of a patch that overlaps the hole; a *source* is the centre of a
//! patch that lies wholly in the level, outside the hole and inside the allowed region. The
//! nearest-neighbour field (NNF) gives each target the source whose patch looks most like it
//! (sum of squared RGB differences), found by propagation from the neighbours and a random
//! search of shrinking radius. Voting then sets each hole pixel to the weighted mean of what
//! the overlapping targets' sources put there.
//!
//! Parallel and deterministic: the rows are cut into bands of a fixed height, one rayon task
//! each; inside a band the scan propagates as in the sequential algorithm, across a band's
//! edge it reads the field as it was before the pass. The bands do not depend on the number
//! of threads and every random draw is a hash of (seed, pixel, draw), so the result is the
//! same on every machine.

use rayon::prelude::*;

use super::level::{Counts, Level};

/// No source: the pixel is not a target.
pub(crate) const NONE: u32 = u32::MAX;

/// Rows per parallel band of the search.
const BAND: usize = 8;

/// The targets and sources of one level.
#[derive(Debug)]
pub(crate) struct Field {
    /// The patch radius (7×7 patches: 3).
    pub r: usize,
    w: usize,
    h: usize,
    /// `w × h`: true at the centres of patches that may be copied.
    valid: Vec<bool>,
    /// Every valid source centre, as `y · w + x`.
    pub sources: Vec<u32>,
    /// `w × h`: true at the centres of patches that overlap the hole.
    pub target: Vec<bool>,
}

impl Field {
    /// The field of `level` for patches of radius `r` (`level.pad` must be at least `r`).
    pub fn new(level: &Level, r: usize) -> Self {
        debug_assert!(level.pad >= r);
        let (w, h) = (level.w, level.h);
        let bad: Vec<bool> = (0..w * h)
            .map(|i| level.hole[i] || !level.allowed[i])
            .collect();
        let bad = Counts::new(&bad, w, h);
        let holes = Counts::new(&level.hole, w, h);
        let mut valid = vec![false; w * h];
        let mut target = vec![false; w * h];
        let mut sources = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let (x0, y0) = (x.saturating_sub(r), y.saturating_sub(r));
                let (x1, y1) = ((x + r + 1).min(w), (y + r + 1).min(h));
                target[y * w + x] = holes.count(x0, y0, x1, y1) > 0;
                if x >= r && y >= r && x + r < w && y + r < h && bad.count(x0, y0, x1, y1) == 0 {
                    valid[y * w + x] = true;
                    sources.push((y * w + x) as u32);
                }
            }
        }
        Self {
            r,
            w,
            h,
            valid,
            sources,
            target,
        }
    }

    #[inline]
    fn is_valid(&self, x: usize, y: usize) -> bool {
        self.valid[y * self.w + x]
    }

    /// A source drawn from `hash` among all of them (there must be one).
    #[inline]
    fn any_source(&self, hash: u64) -> u32 {
        self.sources[(hash % self.sources.len() as u64) as usize]
    }
}

/// A nearest-neighbour field: per pixel, its source centre (`y · w + x`, or [`NONE`] where
/// the pixel is no target) and the patch distance to it.
#[derive(Debug, Clone)]
pub(crate) struct Nnf {
    /// The source centre of each target.
    pub src: Vec<u32>,
    /// Its patch distance (sum of squared differences over the patch's RGB).
    pub dist: Vec<u32>,
}

/// SplitMix64's finaliser: a well-mixed hash of `z`.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The patch distance between the patches centred at `t` and `s`, stopping early once it
/// reaches `bound`.
#[inline]
fn ssd(level: &Level, r: usize, t: (usize, usize), s: (usize, usize), bound: u32) -> u32 {
    let row = 4 * level.stride();
    let len = 4 * (2 * r + 1);
    let mut ot = level.offset(t.0, t.1) - r * row - 4 * r;
    let mut os = level.offset(s.0, s.1) - r * row - 4 * r;
    let img = &level.img;
    let mut sum = 0u32;
    for _ in 0..2 * r + 1 {
        sum += img[ot..ot + len]
            .iter()
            .zip(&img[os..os + len])
            .map(|(&a, &b)| {
                let d = i32::from(a) - i32::from(b);
                (d * d) as u32
            })
            .sum::<u32>();
        if sum >= bound {
            return sum;
        }
        ot += row;
        os += row;
    }
    sum
}

/// A field with a random source for every target.
pub(crate) fn random_init(field: &Field, seed: u64) -> Nnf {
    let n = field.w * field.h;
    let src = (0..n)
        .map(|i| {
            if field.target[i] {
                field.any_source(mix(seed ^ (i as u64).wrapping_mul(0x2545_F491)))
            } else {
                NONE
            }
        })
        .collect();
    Nnf {
        src,
        dist: vec![u32::MAX; n],
    }
}

/// The field of the next finer level from this one's: each fine target starts at twice its
/// coarse pixel's source plus its own offset inside the coarse pixel (coherent upsampling),
/// or near it, or anywhere, when that is no valid source at the fine level.
pub(crate) fn upsample(coarse: &Nnf, cw: usize, ch: usize, fine: &Field, seed: u64) -> Nnf {
    let (w, h, r) = (fine.w, fine.h, fine.r);
    let n = w * h;
    let src = (0..n)
        .into_par_iter()
        .map(|i| {
            if !fine.target[i] {
                return NONE;
            }
            let (x, y) = (i % w, i / w);
            let c = (y / 2).min(ch - 1) * cw + (x / 2).min(cw - 1);
            let s = coarse.src[c];
            let hash = mix(seed ^ (i as u64).wrapping_mul(0x2545_F491));
            if s == NONE {
                return fine.any_source(hash);
            }
            let (sx, sy) = ((s as usize % cw) * 2 + x % 2, (s as usize / cw) * 2 + y % 2);
            let (sx, sy) = (sx.clamp(r, w - 1 - r), sy.clamp(r, h - 1 - r));
            if fine.is_valid(sx, sy) {
                return (sy * w + sx) as u32;
            }
            // Near the coarse match: a few tries, then anywhere.
            for k in 0..8u64 {
                let hk = mix(hash ^ k);
                let dx = (hk % 9) as usize;
                let dy = ((hk >> 32) % 9) as usize;
                let cx = (sx + dx).saturating_sub(4).clamp(r, w - 1 - r);
                let cy = (sy + dy).saturating_sub(4).clamp(r, h - 1 - r);
                if fine.is_valid(cx, cy) {
                    return (cy * w + cx) as u32;
                }
            }
            fine.any_source(hash)
        })
        .collect();
    Nnf {
        src,
        dist: vec![u32::MAX; n],
    }
}

/// Recomputes every target's distance to its source (after the image changed).
pub(crate) fn measure(level: &Level, field: &Field, nnf: &mut Nnf) {
    let (w, r) = (field.w, field.r);
    nnf.dist
        .par_chunks_mut(w)
        .zip(nnf.src.par_chunks(w))
        .enumerate()
        .for_each(|(y, (dist, src))| {
            for x in 0..w {
                let s = src[x];
                if s != NONE {
                    let s = s as usize;
                    dist[x] = ssd(level, r, (x, y), (s % w, s / w), u32::MAX);
                }
            }
        });
}

/// One PatchMatch pass over every target: propagation from the two neighbours already
/// visited (left and above, or right and below when `reverse`), then a random search around
/// the best match with radius `radius`, `radius / 2`, … 1. Distances must be current.
pub(crate) fn search(
    level: &Level,
    field: &Field,
    nnf: &mut Nnf,
    radius: usize,
    seed: u64,
    reverse: bool,
) {
    let (w, h, r) = (field.w, field.h, field.r);
    let before = nnf.src.clone();
    let step: isize = if reverse { -1 } else { 1 };
    nnf.src
        .par_chunks_mut(BAND * w)
        .zip(nnf.dist.par_chunks_mut(BAND * w))
        .enumerate()
        .for_each(|(band, (src, dist))| {
            let y0 = band * BAND;
            let rows = src.len() / w;
            for ry in 0..rows {
                let ly = if reverse { rows - 1 - ry } else { ry };
                let y = y0 + ly;
                for rx in 0..w {
                    let x = if reverse { w - 1 - rx } else { rx };
                    let li = ly * w + x;
                    if src[li] == NONE {
                        continue;
                    }
                    let mut best = src[li] as usize;
                    let mut bd = dist[li];
                    let try_source = |sx: usize, sy: usize, best: &mut usize, bd: &mut u32| {
                        let cand = sy * w + sx;
                        if cand != *best && field.is_valid(sx, sy) {
                            let d = ssd(level, r, (x, y), (sx, sy), *bd);
                            if d < *bd {
                                *bd = d;
                                *best = cand;
                            }
                        }
                    };
                    // Propagation: the neighbour's source, shifted by one pixel.
                    let nx = x as isize - step;
                    if nx >= 0 && (nx as usize) < w {
                        let s = src[ly * w + nx as usize];
                        if s != NONE {
                            let sx = (s as usize % w) as isize + step;
                            if sx >= 0 && (sx as usize) < w {
                                try_source(sx as usize, s as usize / w, &mut best, &mut bd);
                            }
                        }
                    }
                    let ny = y as isize - step;
                    if ny >= 0 && (ny as usize) < h {
                        let ny = ny as usize;
                        let s = if ny >= y0 && ny < y0 + rows {
                            src[(ny - y0) * w + x]
                        } else {
                            before[ny * w + x]
                        };
                        if s != NONE {
                            let sy = (s as usize / w) as isize + step;
                            if sy >= 0 && (sy as usize) < h {
                                try_source(s as usize % w, sy as usize, &mut best, &mut bd);
                            }
                        }
                    }
                    // Random search around the best match, halving the radius.
                    let mut rad = radius;
                    let mut k = 0u64;
                    let pixel = ((y * w + x) as u64).wrapping_mul(0x9E37_79B9);
                    while rad >= 1 {
                        let hk = mix(seed ^ pixel ^ (k << 56));
                        let span = (2 * rad + 1) as u64;
                        let dx = (hk % span) as isize - rad as isize;
                        let dy = ((hk >> 32) % span) as isize - rad as isize;
                        let (bx, by) = ((best % w) as isize, (best / w) as isize);
                        let sx = (bx + dx).clamp(r as isize, (w - 1 - r) as isize) as usize;
                        let sy = (by + dy).clamp(r as isize, (h - 1 - r) as isize) as usize;
                        try_source(sx, sy, &mut best, &mut bd);
                        rad /= 2;
                        k += 1;
                    }
                    src[li] = best as u32;
                    dist[li] = bd;
                }
            }
        });
}

/// Each target's weight in a vote: Wexler et al.'s `exp(-d / 2σ²)` of its patch distance,
/// σ² the 75th percentile of the distances, so that good matches dominate; with `uniform`
/// every target counts the same (for the first vote of a level, before any distance).
fn weights(nnf: &Nnf, uniform: bool) -> Vec<f32> {
    if uniform {
        return vec![1.0; nnf.src.len()];
    }
    let mut d: Vec<u32> = nnf
        .dist
        .iter()
        .copied()
        .filter(|&d| d != u32::MAX)
        .collect();
    let sigma2 = if d.is_empty() {
        1.0
    } else {
        let k = d.len() * 3 / 4;
        let (_, v, _) = d.select_nth_unstable(k);
        (*v as f32).max(1.0)
    };
    nnf.dist
        .iter()
        .map(|&d| {
            if d == u32::MAX {
                0.0
            } else {
                (-(d as f32) / (2.0 * sigma2)).exp().max(1e-6)
            }
        })
        .collect()
}

/// What the overlapping targets' sources put at `(x, y)`: their weighted mean colour, or
/// `None` when no target covers it.
#[inline]
fn predict(
    level: &Level,
    field: &Field,
    nnf: &Nnf,
    weight: &[f32],
    x: usize,
    y: usize,
) -> Option<[f32; 3]> {
    let (w, h, r) = (field.w, field.h, field.r);
    let mut acc = [0.0f32; 3];
    let mut wsum = 0.0f32;
    for ty in y.saturating_sub(r)..(y + r + 1).min(h) {
        for tx in x.saturating_sub(r)..(x + r + 1).min(w) {
            let t = ty * w + tx;
            let s = nnf.src[t];
            if s == NONE {
                continue;
            }
            let (s, wt) = (s as usize, weight[t]);
            // The pixel at the same offset from the source as (x, y) from t.
            let c = level.rgb(s % w + x - tx, s / w + y - ty);
            for k in 0..3 {
                acc[k] += wt * f32::from(c[k]);
            }
            wsum += wt;
        }
    }
    (wsum > 0.0).then(|| acc.map(|v| v / wsum))
}

/// Sets every hole pixel to the weighted mean of the colours the overlapping targets'
/// sources put there (see [`weights`]).
pub(crate) fn vote(level: &mut Level, field: &Field, nnf: &Nnf, uniform: bool) {
    let (w, h) = (field.w, field.h);
    let weight = weights(nnf, uniform);
    let lv: &Level = level;
    let out: Vec<Vec<(usize, [u8; 3])>> = (0..h)
        .into_par_iter()
        .map(|y| {
            let mut row = Vec::new();
            for x in 0..w {
                if lv.hole[y * w + x] {
                    if let Some(c) = predict(lv, field, nnf, &weight, x, y) {
                        row.push((x, c.map(|v| v.round().clamp(0.0, 255.0) as u8)));
                    }
                }
            }
            row
        })
        .collect();
    for (y, row) in out.into_iter().enumerate() {
        for (x, c) in row {
            level.set_rgb(x, y, c);
        }
    }
    level.refresh_padding();
}

/// The vote's error on the hole's rim: for every known, allowed pixel next to the hole
/// (4-neighbour), its colour minus what the matches would put there, averaged over the rim
/// pixels of its 5×5 neighbourhood (so that a noisy texture's error does not print into the
/// hole), with weight 1 (premultiplied, as the smooth fill's data); 0 elsewhere.
pub(crate) fn rim_mismatch(level: &Level, field: &Field, nnf: &Nnf) -> Vec<[f32; 4]> {
    let (w, h) = (field.w, field.h);
    let weight = weights(nnf, false);
    let is_rim = |x: usize, y: usize| {
        let i = y * w + x;
        !level.hole[i]
            && level.allowed[i]
            && ((x > 0 && level.hole[i - 1])
                || (x + 1 < w && level.hole[i + 1])
                || (y > 0 && level.hole[i - w])
                || (y + 1 < h && level.hole[i + w]))
    };
    let raw: Vec<[f32; 4]> = (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let weight = &weight;
            (0..w).map(move |x| {
                if !is_rim(x, y) {
                    return [0.0; 4];
                }
                match predict(level, field, nnf, weight, x, y) {
                    Some(p) => {
                        let c = level.rgb(x, y);
                        [0, 1, 2, 3].map(|k| if k == 3 { 1.0 } else { f32::from(c[k]) - p[k] })
                    }
                    None => [0.0; 4],
                }
            })
        })
        .collect();
    (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let raw = &raw;
            (0..w).map(move |x| {
                if raw[y * w + x][3] == 0.0 {
                    return [0.0; 4];
                }
                let mut acc = [0.0f32; 4];
                for yy in y.saturating_sub(2)..(y + 3).min(h) {
                    for xx in x.saturating_sub(2)..(x + 3).min(w) {
                        let v = raw[yy * w + xx];
                        for k in 0..4 {
                            acc[k] += v[k];
                        }
                    }
                }
                [acc[0] / acc[3], acc[1] / acc[3], acc[2] / acc[3], 1.0]
            })
        })
        .collect()
}

/// The weighted mean, per hole pixel, of the 4-neighbour Laplacian of the source pixels the
/// matches put there (the texture's detail, to be integrated by the smooth stage's Poisson
/// sweeps). A source pixel next to the hole or outside the allowed region contributes a
/// Laplacian of 0.
pub(crate) fn vote_laplacian(level: &Level, field: &Field, nnf: &Nnf) -> Vec<(usize, [f32; 3])> {
    let (w, h, r) = (field.w, field.h, field.r);
    let weight = weights(nnf, false);
    let lap = |x: usize, y: usize| -> [f32; 3] {
        if x == 0 || y == 0 || x + 1 >= w || y + 1 >= h {
            return [0.0; 3];
        }
        let i = y * w + x;
        for j in [i - 1, i + 1, i - w, i + w] {
            if level.hole[j] || !level.allowed[j] {
                return [0.0; 3];
            }
        }
        let (c, l, rr, u, d) = (
            level.rgb(x, y),
            level.rgb(x - 1, y),
            level.rgb(x + 1, y),
            level.rgb(x, y - 1),
            level.rgb(x, y + 1),
        );
        [0, 1, 2].map(|k| {
            f32::from(l[k]) + f32::from(rr[k]) + f32::from(u[k]) + f32::from(d[k])
                - 4.0 * f32::from(c[k])
        })
    };
    (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let (weight, lap) = (&weight, &lap);
            (0..w).filter_map(move |x| {
                if !level.hole[y * w + x] {
                    return None;
                }
                let mut acc = [0.0f32; 3];
                let mut wsum = 0.0f32;
                for ty in y.saturating_sub(r)..(y + r + 1).min(h) {
                    for tx in x.saturating_sub(r)..(x + r + 1).min(w) {
                        let t = ty * w + tx;
                        let s = nnf.src[t];
                        if s == NONE {
                            continue;
                        }
                        let (s, wt) = (s as usize, weight[t]);
                        let l = lap(s % w + x - tx, s / w + y - ty);
                        for k in 0..3 {
                            acc[k] += wt * l[k];
                        }
                        wsum += wt;
                    }
                }
                (wsum > 0.0).then(|| (y * w + x, acc.map(|v| v / wsum)))
            })
        })
        .collect()
}
