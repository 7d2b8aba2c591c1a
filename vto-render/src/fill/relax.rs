//! Over-relaxed Gauss–Seidel sweeps over a hole's pixels in red–black order: the relaxation
//! behind the smooth stage's membranes and its Poisson integration.
//!
//! The pixels of the hole are split by the parity of `x + y` (a chessboard): a pixel's four
//! neighbours all have the other colour, so every red pixel can be updated at once from the
//! black ones, then every black one from the red. Each half-sweep runs in parallel, in chunks
//! of a fixed size, and gives the same values whatever the number of threads: nothing a chunk
//! reads is written in the same half-sweep. A lexicographic sweep (the order before) is
//! sequential by nature and was the largest single cost of a 1024² fill; red–black ordering
//! converges at the same rate (both orderings are consistently ordered for the 5-point
//! Laplacian, with the same optimal relaxation factor).

use rayon::prelude::*;

use crate::tflite::simd::simd;

/// Pixels per parallel task of a half-sweep.
const CHUNK: usize = 2048;

/// The red–black layout of a hole's equations.
#[derive(Debug)]
pub(crate) struct RedBlack {
    /// Per colour, the hole pixels of that colour (their indices in the hole's pixel list), in
    /// the hole's order.
    members: [Vec<u32>; 2],
    /// Per colour, per member: its neighbours in the hole, as indices into the other colour's
    /// values (the other colour's length, an always-zero value, where there is none).
    nbr: [Vec<[u32; 4]>; 2],
    /// Per colour, per member: the reciprocal of its number of neighbours (hole and rim).
    inv: [Vec<f32>; 2],
    /// Per colour, per member: its rim neighbours (indices into the rim), at most four, the
    /// unused ones `u32::MAX`.
    rim: [Vec<[u32; 4]>; 2],
}

/// A neighbour of a hole pixel, as [`RedBlack::new`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Neighbour {
    /// No neighbour there (outside the level, or a pixel that is neither hole nor rim).
    None,
    /// The hole pixel with this index.
    Hole(u32),
    /// The rim pixel with this index.
    Rim(u32),
}

impl RedBlack {
    /// The layout of the hole whose pixels have the colours `colour` (0 or 1, neighbours
    /// differing) and the four neighbours `nbr` each.
    pub fn new(colour: &[u8], nbr: &[[Neighbour; 4]]) -> Self {
        let mut pos = vec![0u32; colour.len()];
        let mut members: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        for (s, &c) in colour.iter().enumerate() {
            pos[s] = members[c as usize].len() as u32;
            members[c as usize].push(s as u32);
        }
        let layout = |c: usize| {
            let zero = members[1 - c].len() as u32;
            let rows: Vec<([u32; 4], f32, [u32; 4])> = members[c]
                .par_iter()
                .map(|&s| {
                    let (mut own, mut rim, mut count) = ([zero; 4], [u32::MAX; 4], 0u32);
                    for (k, n) in nbr[s as usize].iter().enumerate() {
                        match *n {
                            Neighbour::None => continue,
                            Neighbour::Hole(j) => {
                                debug_assert_ne!(colour[j as usize], c as u8);
                                own[k] = pos[j as usize];
                            }
                            Neighbour::Rim(j) => rim[k] = j,
                        }
                        count += 1;
                    }
                    let inv = if count > 0 { 1.0 / count as f32 } else { 0.0 };
                    (own, inv, rim)
                })
                .collect();
            let mut out = (Vec::with_capacity(rows.len()), Vec::new(), Vec::new());
            out.1.reserve(rows.len());
            out.2.reserve(rows.len());
            for (own, inv, rim) in rows {
                out.0.push(own);
                out.1.push(inv);
                out.2.push(rim);
            }
            out
        };
        let (n0, i0, r0) = layout(0);
        let (n1, i1, r1) = layout(1);
        Self {
            members,
            nbr: [n0, n1],
            inv: [i0, i1],
            rim: [r0, r1],
        }
    }

    /// `sweeps` over-relaxed (factor `omega`) Gauss–Seidel sweeps of the equations
    /// `v[n] = extra[n] + (Σ v[hole neighbours] + Σ rim[rim neighbours]) / count[n]`, from
    /// `init`, every lane on its own; `init`, `extra` (0 without it) and the result per hole
    /// pixel, `rim` per rim pixel.
    pub fn solve<const N: usize>(
        &self,
        init: &[[f32; N]],
        rim: &[[f32; N]],
        extra: Option<&[[f32; N]]>,
        omega: f32,
        sweeps: usize,
    ) -> Vec<[f32; N]> {
        // Per colour: the values (with the always-zero one at the end) and the constants.
        let split = |c: usize| {
            let mut v: Vec<[f32; N]> = self.members[c].iter().map(|&s| init[s as usize]).collect();
            v.push([0.0; N]);
            let b: Vec<[f32; N]> = self.members[c]
                .par_iter()
                .zip(&self.rim[c])
                .zip(&self.inv[c])
                .map(|((&s, rn), &inv)| {
                    let mut sum = [0.0f32; N];
                    for &j in rn {
                        if j != u32::MAX {
                            let r = rim[j as usize];
                            for k in 0..N {
                                sum[k] += r[k];
                            }
                        }
                    }
                    let e = extra.map_or([0.0; N], |e| e[s as usize]);
                    let mut out = [0.0f32; N];
                    for k in 0..N {
                        out[k] = e[k] + sum[k] * inv;
                    }
                    out
                })
                .collect();
            (v, b)
        };
        let (mut red, b_red) = split(0);
        let (mut black, b_black) = split(1);
        for _ in 0..sweeps {
            half_sweep(&mut red, &black, &self.nbr[0], &self.inv[0], &b_red, omega);
            half_sweep(
                &mut black,
                &red,
                &self.nbr[1],
                &self.inv[1],
                &b_black,
                omega,
            );
        }
        let mut out = vec![[0.0f32; N]; init.len()];
        for (c, v) in [(0, &red), (1, &black)] {
            for (&s, x) in self.members[c].iter().zip(v.iter()) {
                out[s as usize] = *x;
            }
        }
        out
    }
}

/// One colour's half of a sweep: every value of `own` (but the last, always zero) relaxed
/// towards `b + inv · Σ other[neighbours]`.
fn half_sweep<const N: usize>(
    own: &mut [[f32; N]],
    other: &[[f32; N]],
    nbr: &[[u32; 4]],
    inv: &[f32],
    b: &[[f32; N]],
    omega: f32,
) {
    let n = own.len() - 1;
    own[..n]
        .par_chunks_mut(CHUNK)
        .zip(nbr.par_chunks(CHUNK))
        .zip(inv.par_chunks(CHUNK))
        .zip(b.par_chunks(CHUNK))
        .for_each(|(((v, nbr), inv), b)| simd(Half((v, other, nbr, inv, b, omega))));
}

/// The arguments of one chunk of [`half_sweep`].
type HalfArgs<'a, const N: usize> = (
    &'a mut [[f32; N]],
    &'a [[f32; N]],
    &'a [[u32; 4]],
    &'a [f32],
    &'a [[f32; N]],
    f32,
);

struct Half<'a, const N: usize>(HalfArgs<'a, N>);

impl<const N: usize> pulp::WithSimd for Half<'_, N> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        half_chunk(self.0)
    }
}

#[inline(always)]
fn half_chunk<const N: usize>((v, other, nbr, inv, b, omega): HalfArgs<'_, N>) {
    for (((x, &[p, q, r, s]), &inv), b) in v.iter_mut().zip(nbr).zip(inv).zip(b) {
        let (vp, vq, vr, vs) = (
            other[p as usize],
            other[q as usize],
            other[r as usize],
            other[s as usize],
        );
        for k in 0..N {
            let target = b[k] + inv * (vp[k] + vq[k] + vr[k] + vs[k]);
            x[k] += omega * (target - x[k]);
        }
    }
}
