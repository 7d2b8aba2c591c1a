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

use super::level::{dilate, Level};
use super::smooth::Holes;
use crate::tflite::simd::{simd, simd_kernel};

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
        let bad: Vec<bool> = level
            .hole
            .par_iter()
            .zip(&level.allowed)
            .map(|(&hole, &allowed)| hole || !allowed)
            .collect();
        let near_bad = dilate(&bad, w, h, r);
        let target = dilate(&level.hole, w, h, r);
        let mut valid = vec![false; w * h];
        let rows: Vec<Vec<u32>> = valid
            .par_chunks_mut(w)
            .enumerate()
            .map(|(y, row)| {
                let mut sources = Vec::new();
                if y >= r && y + r < h {
                    for x in r..w.saturating_sub(r) {
                        if !near_bad[y * w + x] {
                            row[x] = true;
                            sources.push((y * w + x) as u32);
                        }
                    }
                }
                sources
            })
            .collect();
        let sources = rows.concat();
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
#[inline(always)]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The patch distance between the patches centred at `t` and `s`, stopping early once it
/// reaches `bound`.
#[inline(always)]
fn ssd(level: &Level, r: usize, t: (usize, usize), s: (usize, usize), bound: u32) -> u32 {
    let row = 4 * level.stride();
    let ot = level.offset(t.0, t.1) - r * row - 4 * r;
    let os = level.offset(s.0, s.1) - r * row - 4 * r;
    if r == 3 {
        ssd_rows::<28>(&level.img, ot, os, row, 7, bound)
    } else {
        ssd_any(&level.img, ot, os, row, r, bound)
    }
}

/// [`ssd`] for rows of a fixed length `L` (in bytes: 4 per pixel), which vectorise whole.
#[inline(always)]
fn ssd_rows<const L: usize>(
    img: &[u8],
    mut ot: usize,
    mut os: usize,
    row: usize,
    rows: usize,
    bound: u32,
) -> u32 {
    let mut sum = 0u32;
    for _ in 0..rows {
        let a: &[u8; L] = img[ot..ot + L].try_into().expect("a patch row");
        let b: &[u8; L] = img[os..os + L].try_into().expect("a patch row");
        let mut part = 0i32;
        for k in 0..L {
            let d = i32::from(i16::from(a[k]) - i16::from(b[k]));
            part += d * d;
        }
        sum += part as u32;
        if sum >= bound {
            return sum;
        }
        ot += row;
        os += row;
    }
    sum
}

/// [`ssd`] for any patch radius.
#[inline(always)]
fn ssd_any(img: &[u8], mut ot: usize, mut os: usize, row: usize, r: usize, bound: u32) -> u32 {
    let len = 4 * (2 * r + 1);
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
    let w = field.w;
    nnf.dist
        .par_chunks_mut(BAND * w)
        .zip(nnf.src.par_chunks(BAND * w))
        .enumerate()
        .for_each(|(band, (dist, src))| simd(MeasureBand((level, field, band * BAND, dist, src))));
}

simd_kernel!(MeasureBand => measure_band((&'a Level, &'a Field, usize, &'a mut [u32], &'a [u32])));

/// [`measure`] for the rows from `y0` on.
#[inline(always)]
fn measure_band((level, field, y0, dist, src): (&Level, &Field, usize, &mut [u32], &[u32])) {
    let (w, r) = (field.w, field.r);
    for (i, (d, &s)) in dist.iter_mut().zip(src).enumerate() {
        if s != NONE {
            let (x, y) = (i % w, y0 + i / w);
            let s = s as usize;
            *d = ssd(level, r, (x, y), (s % w, s / w), u32::MAX);
        }
    }
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
    let (w, h) = (field.w, field.h);
    // The rows next to each band that its propagation reads, as they are before the pass
    // (above the band going forward, below it in reverse).
    let bands = h.div_ceil(BAND);
    let mut before = vec![NONE; bands * w];
    for b in 0..bands {
        let y = if reverse {
            (b + 1) * BAND
        } else {
            (b * BAND).wrapping_sub(1)
        };
        if y < h {
            before[b * w..(b + 1) * w].copy_from_slice(&nnf.src[y * w..(y + 1) * w]);
        }
    }
    let pass = Pass {
        level,
        field,
        before: &before,
        radius,
        seed,
        reverse,
    };
    nnf.src
        .par_chunks_mut(BAND * w)
        .zip(nnf.dist.par_chunks_mut(BAND * w))
        .enumerate()
        .for_each(|(band, (src, dist))| simd(SearchBand((&pass, band, src, dist))));
}

simd_kernel!(SearchBand => search_band((&'a Pass<'a>, usize, &'a mut [u32], &'a mut [u32])));

/// Compares the patch at `t` with the source candidate `s`: the best match becomes `s` if it
/// is a valid source, not the current best, and closer.
#[inline(always)]
fn try_source(
    level: &Level,
    field: &Field,
    t: (usize, usize),
    (sx, sy): (usize, usize),
    best: &mut (usize, usize),
    bd: &mut u32,
) {
    if (sx, sy) != *best && field.is_valid(sx, sy) {
        let d = ssd(level, field.r, t, (sx, sy), *bd);
        if d < *bd {
            *bd = d;
            *best = (sx, sy);
        }
    }
}

/// What every band of a [`search`] pass reads.
struct Pass<'a> {
    level: &'a Level,
    field: &'a Field,
    /// Per band, the sources of the row next to it before the pass (see [`search`]).
    before: &'a [u32],
    radius: usize,
    seed: u64,
    reverse: bool,
}

/// One band of rows of a [`search`] pass.
#[inline(always)]
fn search_band((pass, band, src, dist): (&Pass, usize, &mut [u32], &mut [u32])) {
    let Pass {
        level,
        field,
        before,
        radius,
        seed,
        reverse,
    } = *pass;
    let (w, h, r) = (field.w, field.h, field.r);
    let step: isize = if reverse { -1 } else { 1 };
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
            let mut best = (src[li] as usize % w, src[li] as usize / w);
            let mut bd = dist[li];
            // Propagation: the neighbour's source, shifted by one pixel.
            let nx = x as isize - step;
            if nx >= 0 && (nx as usize) < w {
                let s = src[ly * w + nx as usize];
                if s != NONE {
                    let sx = (s as usize % w) as isize + step;
                    if sx >= 0 && (sx as usize) < w {
                        try_source(
                            level,
                            field,
                            (x, y),
                            (sx as usize, s as usize / w),
                            &mut best,
                            &mut bd,
                        );
                    }
                }
            }
            let ny = y as isize - step;
            if ny >= 0 && (ny as usize) < h {
                let ny = ny as usize;
                let s = if ny >= y0 && ny < y0 + rows {
                    src[(ny - y0) * w + x]
                } else {
                    before[band * w + x]
                };
                if s != NONE {
                    let sy = (s as usize / w) as isize + step;
                    if sy >= 0 && (sy as usize) < h {
                        try_source(
                            level,
                            field,
                            (x, y),
                            (s as usize % w, sy as usize),
                            &mut best,
                            &mut bd,
                        );
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
                let (bx, by) = (best.0 as isize, best.1 as isize);
                let sx = (bx + dx).clamp(r as isize, (w - 1 - r) as isize) as usize;
                let sy = (by + dy).clamp(r as isize, (h - 1 - r) as isize) as usize;
                try_source(level, field, (x, y), (sx, sy), &mut best, &mut bd);
                rad /= 2;
                k += 1;
            }
            src[li] = (best.1 * w + best.0) as u32;
            dist[li] = bd;
        }
    }
}

/// σ² of the vote's weights: the 75th percentile of the targets' patch distances (see
/// [`Votes::weight`]).
fn sigma2(nnf: &Nnf) -> f32 {
    let mut d: Vec<u32> = nnf
        .dist
        .par_iter()
        .copied()
        .filter(|&d| d != u32::MAX)
        .collect();
    if d.is_empty() {
        1.0
    } else {
        let k = d.len() * 3 / 4;
        let (_, v, _) = d.select_nth_unstable(k);
        (*v as f32).max(1.0)
    }
}

/// Rows of pixels per parallel task of a vote.
const VOTE_BAND: usize = 32;

/// What a vote reads: the field's matches and how they are weighted.
struct Votes<'a> {
    nnf: &'a Nnf,
    /// The level's width, its padded width and its padding.
    w: usize,
    stride: usize,
    pad: usize,
    /// Every target counts the same (the first vote of a level, before any distance).
    uniform: bool,
    /// See [`sigma2`].
    sigma2: f32,
}

impl<'a> Votes<'a> {
    fn new(level: &Level, nnf: &'a Nnf, uniform: bool) -> Self {
        Self {
            nnf,
            w: level.w,
            stride: level.stride(),
            pad: level.pad,
            uniform,
            sigma2: if uniform { 1.0 } else { sigma2(nnf) },
        }
    }

    /// The weight of target `t` in a vote: Wexler et al.'s `exp(-d / 2σ²)` of its patch
    /// distance, so that good matches dominate (1 in a uniform vote); 0 where `t` is no
    /// target.
    #[inline(always)]
    fn weight(&self, t: usize) -> f32 {
        if self.nnf.src[t] == NONE {
            0.0
        } else if self.uniform {
            1.0
        } else {
            let d = self.nnf.dist[t];
            if d == u32::MAX {
                0.0
            } else {
                (-(d as f32) / (2.0 * self.sigma2)).exp().max(1e-6)
            }
        }
    }

    /// The index, in the padded pixel grid, of the source centre of target `t`.
    #[inline(always)]
    fn centre(&self, t: usize) -> usize {
        let s = self.nnf.src[t] as usize;
        (s / self.w + self.pad) * self.stride + s % self.w + self.pad
    }

    /// For every pixel of the rows `y0..y1`, the weighted sum over the targets whose patch
    /// covers it of the level's pixel their source puts there (4 lanes per pixel: the
    /// colour and 1, which sums the weights), and with `LAP` of `lap` there too (4 lanes per
    /// pixel of the padded grid). Each pixel's terms are added in the targets' scan order,
    /// so the sums do not depend on how the rows are cut into bands. Only the sums of the
    /// pixels where `need` is set (`w × h`) are complete: a patch row without such a pixel
    /// is skipped.
    fn accumulate<const LAP: bool>(
        &self,
        level: &Level,
        field: &Field,
        (y0, y1): (usize, usize),
        lap: &[i16],
        need: &[bool],
    ) -> (Vec<f32>, Vec<f32>) {
        struct Kernel<'a, const LAP: bool>(AccumulateArgs<'a>);
        impl<const LAP: bool> pulp::WithSimd for Kernel<'_, LAP> {
            type Output = (Vec<f32>, Vec<f32>);
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _simd: S) -> (Vec<f32>, Vec<f32>) {
                accumulate_rows::<LAP>(self.0)
            }
        }
        pulp::Arch::new().dispatch(Kernel::<LAP>((self, level, field, (y0, y1), lap, need)))
    }
}

/// What [`Votes::accumulate`] reads: the votes, the level, its field, the rows, the
/// Laplacian and where sums are needed.
type AccumulateArgs<'a> = (
    &'a Votes<'a>,
    &'a Level,
    &'a Field,
    (usize, usize),
    &'a [i16],
    &'a [bool],
);

/// [`Votes::accumulate`]: every row of every covering patch that holds a needed pixel as one
/// run of lanes (the pixels that need no value get sums too, unread: a run vectorises whole).
#[inline(always)]
fn accumulate_rows<const LAP: bool>(
    (votes, level, field, (y0, y1), lap, need): AccumulateArgs<'_>,
) -> (Vec<f32>, Vec<f32>) {
    let (w, h, r, stride) = (field.w, field.h, field.r, level.stride());
    let img = &level.img;
    let mut acc = vec![0.0f32; 4 * (y1 - y0) * w];
    let mut acc_lap = if LAP {
        vec![0.0f32; 4 * (y1 - y0) * w]
    } else {
        Vec::new()
    };
    for ty in y0.saturating_sub(r)..(y1 + r).min(h) {
        let (py0, py1) = (y0.max(ty.saturating_sub(r)), y1.min(ty + r + 1));
        for tx in 0..w {
            let t = ty * w + tx;
            let wt = votes.weight(t);
            if wt == 0.0 {
                continue;
            }
            let (px0, px1) = (tx.saturating_sub(r), (tx + r + 1).min(w));
            let n = 4 * (px1 - px0);
            // The pixel at the same offset from the source as (x, y) from t is
            // centre + (y - ty) stride + (x - tx).
            let shift = votes.centre(t) as isize - (ty * stride + tx) as isize;
            for y in py0..py1 {
                if !need[y * w + px0..y * w + px1].contains(&true) {
                    continue;
                }
                let s0 = 4 * (shift + (y * stride + px0) as isize) as usize;
                let a0 = 4 * ((y - y0) * w + px0);
                if n == 28 {
                    // A whole row of a 7×7 patch: fixed-length, so it vectorises whole.
                    add_row::<28, u8>(&mut acc[a0..a0 + 28], &img[s0..s0 + 28], wt);
                    if LAP {
                        add_row::<28, i16>(&mut acc_lap[a0..a0 + 28], &lap[s0..s0 + 28], wt);
                    }
                } else {
                    for (a, &v) in acc[a0..a0 + n].iter_mut().zip(&img[s0..s0 + n]) {
                        *a += wt * f32::from(v);
                    }
                    if LAP {
                        for (a, &v) in acc_lap[a0..a0 + n].iter_mut().zip(&lap[s0..s0 + n]) {
                            *a += wt * f32::from(v);
                        }
                    }
                }
            }
        }
    }
    (acc, acc_lap)
}

/// `acc[k] += wt · v[k]` for the `L` lanes of one patch row (the same sums, in the same order,
/// as the general loop of [`accumulate_rows`]).
#[inline(always)]
fn add_row<const L: usize, T: Copy + Into<f32>>(acc: &mut [f32], v: &[T], wt: f32) {
    let acc: &mut [f32; L] = acc.try_into().expect("a patch row");
    let v: &[T; L] = v.try_into().expect("a patch row");
    for k in 0..L {
        acc[k] += wt * v[k].into();
    }
}

#[inline(always)]
fn to_u8(acc: &[f32]) -> [u8; 3] {
    let n = acc[3];
    [0, 1, 2].map(|k| (acc[k] / n).round().clamp(0.0, 255.0) as u8)
}

/// The bands of rows of a vote.
fn bands(h: usize) -> impl IndexedParallelIterator<Item = (usize, usize)> {
    (0..h.div_ceil(VOTE_BAND))
        .into_par_iter()
        .map(move |b| (b * VOTE_BAND, ((b + 1) * VOTE_BAND).min(h)))
}

fn write(level: &mut Level, pixels: Vec<(usize, [u8; 3])>) {
    let w = level.w;
    for (i, c) in pixels {
        level.set_rgb(i % w, i / w, c);
    }
    level.refresh_padding();
}

/// Sets every hole pixel to the weighted mean of the colours the overlapping targets'
/// sources put there (see [`weights`]).
pub(crate) fn vote(level: &mut Level, field: &Field, nnf: &Nnf, uniform: bool) {
    let votes = Votes::new(level, nnf, uniform);
    let w = field.w;
    let lv: &Level = level;
    let pixels: Vec<(usize, [u8; 3])> = bands(field.h)
        .flat_map_iter(|(y0, y1)| {
            let (acc, _) = votes.accumulate::<false>(lv, field, (y0, y1), &[], &lv.hole);
            (y0 * w..y1 * w)
                .filter(|&i| lv.hole[i] && acc[4 * (i - y0 * w) + 3] > 0.0)
                .map(|i| (i, to_u8(&acc[4 * (i - y0 * w)..])))
                .collect::<Vec<_>>()
        })
        .collect();
    write(level, pixels);
}

simd_kernel!(LapRow => lap_row((&'a Level, &'a [bool], usize, &'a mut [i16])));

/// The 4-neighbour Laplacian of the pixels of row `y` of `level` (not the first or last)
/// into `row` (that row of the padded grid, 4 lanes per pixel), 0 where a neighbour is not
/// `ok` (a hole, or outside the allowed region) and in the first and last column.
#[inline(always)]
fn lap_row((level, ok, y, row): (&Level, &[bool], usize, &mut [i16])) {
    let (w, pad) = (level.w, level.pad);
    if w < 3 {
        return;
    }
    let s = 4 * level.stride();
    let n = 4 * (w - 2);
    let p = level.offset(1, y);
    let img = &level.img;
    let (c, l, r) = (
        &img[p..p + n],
        &img[p - 4..p - 4 + n],
        &img[p + 4..p + 4 + n],
    );
    let (u, d) = (&img[p - s..p - s + n], &img[p + s..p + s + n]);
    let out = &mut row[4 * (pad + 1)..4 * (pad + 1) + n];
    for k in 0..n {
        out[k] = i16::from(l[k]) + i16::from(r[k]) + i16::from(u[k]) + i16::from(d[k])
            - 4 * i16::from(c[k]);
    }
    let (above, here, below) = (
        &ok[(y - 1) * w..y * w],
        &ok[y * w..(y + 1) * w],
        &ok[(y + 1) * w..(y + 2) * w],
    );
    for x in 1..w - 1 {
        if !(here[x - 1] && here[x + 1] && above[x] && below[x]) {
            out[4 * (x - 1)..4 * x].fill(0);
        }
    }
}

/// What the structure stage needs from the finest level's last vote, besides the vote
/// itself.
pub(crate) struct Finish {
    /// The vote's error on the hole's rim, per pixel of [`Holes::rim`]: its colour minus what
    /// the matches would put there, averaged over the rim pixels of its 5×5 neighbourhood (so
    /// that a noisy texture's error does not print into the hole).
    pub mismatch: Vec<[f32; 3]>,
    /// The weighted mean, per hole pixel (in [`Holes::pixels`]' order), of the 4-neighbour
    /// Laplacian of the source pixels the matches put there (the texture's detail, to be
    /// integrated by the smooth stage's Poisson sweeps). A source pixel next to the hole or
    /// outside the allowed region contributes a Laplacian of 0.
    pub laplacian: Vec<[f32; 3]>,
}

/// The finest level's last vote ([`vote`]), and what the structure stage needs from the same
/// matches ([`Finish`]). Sources never overlap the hole, so none of these reads what the vote
/// writes.
pub(crate) fn vote_finish(level: &mut Level, field: &Field, nnf: &Nnf, holes: &Holes) -> Finish {
    let (w, h, stride) = (field.w, field.h, level.stride());
    let votes = Votes::new(level, nnf, false);
    // The Laplacian of every pixel, in the padded grid (0 in the padding).
    let lv: &Level = level;
    let usable = |i: usize| !lv.hole[i] && lv.allowed[i];
    let ok: Vec<bool> = (0..w * h).into_par_iter().map(usable).collect();
    let mut lap = vec![0i16; lv.img.len()];
    lap.par_chunks_mut(4 * stride)
        .skip(lv.pad + 1)
        .take(h.saturating_sub(2))
        .enumerate()
        .for_each(|(y, row)| simd(LapRow((lv, &ok, y + 1, row))));
    let mut need = lv.hole.clone();
    for &i in &holes.rim {
        need[i as usize] = true;
    }
    // Per pixel of the hole or its rim, in scan order: the voted colour and Laplacian (hole)
    // or the mismatch (rim).
    enum Out {
        Hole(usize, [u8; 3], [f32; 3]),
        Rim([f32; 3]),
    }
    let out: Vec<Out> = bands(h)
        .flat_map_iter(|(y0, y1)| {
            let (acc, acc_lap) = votes.accumulate::<true>(lv, field, (y0, y1), &lap, &need);
            (y0 * w..y1 * w)
                .filter_map(|i| {
                    let a = &acc[4 * (i - y0 * w)..4 * (i - y0 * w) + 4];
                    if lv.hole[i] {
                        // Every hole pixel is covered by targets with sources.
                        debug_assert!(a[3] > 0.0);
                        let l = &acc_lap[4 * (i - y0 * w)..];
                        Some(Out::Hole(
                            i,
                            to_u8(a),
                            [l[0] / a[3], l[1] / a[3], l[2] / a[3]],
                        ))
                    } else if need[i] {
                        let c = lv.rgb(i - (i / w) * w, i / w);
                        Some(Out::Rim([0, 1, 2].map(|k| f32::from(c[k]) - a[k] / a[3])))
                    } else {
                        None
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut raw = Vec::with_capacity(holes.rim.len());
    let mut laplacian = vec![[0.0f32; 3]; holes.len()];
    let mut pixels = Vec::with_capacity(holes.len());
    for o in out {
        match o {
            Out::Hole(i, c, l) => {
                laplacian[pixels.len()] = l;
                pixels.push((i, c));
            }
            Out::Rim(d) => raw.push(d),
        }
    }
    debug_assert_eq!(raw.len(), holes.rim.len());
    let rim = &holes.rim;
    let mismatch: Vec<[f32; 3]> = rim
        .par_iter()
        .map(|&i| {
            let (x, y) = (i as usize % w, i as usize / w);
            let mut acc = [0.0f32; 4];
            for yy in y.saturating_sub(2)..(y + 3).min(h) {
                let (a, b) = (
                    (yy * w + x.saturating_sub(2)) as u32,
                    (yy * w + (x + 3).min(w)) as u32,
                );
                let from = rim.partition_point(|&p| p < a);
                for k in from..rim.len() {
                    if rim[k] >= b {
                        break;
                    }
                    let v = raw[k];
                    for c in 0..3 {
                        acc[c] += v[c];
                    }
                    acc[3] += 1.0;
                }
            }
            [acc[0] / acc[3], acc[1] / acc[3], acc[2] / acc[3]]
        })
        .collect();
    write(level, pixels);
    Finish {
        mismatch,
        laplacian,
    }
}
