//! Folds in a warp, found and taken out: the Jacobian's sign per cell of the node grid, and
//! a harmonic fill where it is not positive.
//!
//! The kernel interpolates each part's garment coordinates bilinearly between the grid's
//! nodes, so within a cell the map is `f(s, t) = a + b s + c t + d s t`, whose Jacobian
//! determinant `b×c + s (b×d) + t (d×c)` is affine in `s` and in `t`: positive at the four
//! corners means positive over the whole cell. A cell whose determinant is not positive
//! somewhere is folded — two photo pixels take the same garment pixel, and stripes turn
//! into spirals ([`folds`]).
//!
//! A spline that folds (control points crowding where an arm crosses the body, a shoulder
//! pulled onto the mask's contour) is repaired where it folds ([`unfold`]): the folded
//! cells, grown by a margin, form a patch whose border nodes stay and whose inner nodes are
//! replaced by the harmonic fill of the border (each node the mean of its four neighbours,
//! a discrete Tutte embedding — one-to-one when the border is convex, and in practice on
//! the near-convex patches a fold leaves). The patch grows until no fold is left or the
//! rounds run out; a fold still left then gives the whole part its best affine map (which
//! cannot fold). A part folded nearly everywhere is mirrored, not folded: it is left as it
//! is and reported.

use glam::Vec2;

/// A cell counts as folded when its least corner determinant is below this share of the
/// part's median (a cell squeezed fifty-fold is as good as folded for a print).
const DEGENERATE: f32 = 0.02;

/// How the cells of one part's node grid stand.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Folds {
    /// Cells checked (those inside the part's region).
    pub cells: usize,
    /// Cells whose Jacobian determinant is not positive at some corner (or degenerate).
    pub folded: usize,
    /// The least corner determinant over the checked cells (garment pixels² per photo
    /// pixel²).
    pub min_det: f32,
}

/// The four corner determinants of cell `(i, j)` of an `nx`-wide grid of garment
/// coordinates (per grid step, so a unit map has determinant `step²`).
pub fn cell_dets(nodes: &[Vec2], nx: usize, i: usize, j: usize) -> [f32; 4] {
    let n00 = nodes[j * nx + i];
    let n10 = nodes[j * nx + i + 1];
    let n01 = nodes[(j + 1) * nx + i];
    let n11 = nodes[(j + 1) * nx + i + 1];
    let cross = |a: Vec2, b: Vec2| a.x * b.y - a.y * b.x;
    [
        cross(n10 - n00, n01 - n00),
        cross(n10 - n00, n11 - n10),
        cross(n11 - n01, n01 - n00),
        cross(n11 - n01, n11 - n10),
    ]
}

/// The cells of an `nx`×`ny` node grid to check: `inside(i, j)` for cell `(i, j)`.
fn min_dets(
    nodes: &[Vec2],
    nx: usize,
    ny: usize,
    inside: &impl Fn(usize, usize) -> bool,
) -> Vec<Option<f32>> {
    let mut out = vec![None; (nx - 1) * (ny - 1)];
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            if inside(i, j) {
                let d = cell_dets(nodes, nx, i, j);
                out[j * (nx - 1) + i] = Some(d.iter().copied().fold(f32::MAX, f32::min));
            }
        }
    }
    out
}

/// The threshold below which a cell counts as folded, from the cells' least determinants.
fn threshold(dets: &[Option<f32>]) -> f32 {
    let mut pos: Vec<f32> = dets
        .iter()
        .flatten()
        .copied()
        .filter(|d| *d > 0.0)
        .collect();
    if pos.is_empty() {
        return 0.0;
    }
    let mid = pos.len() / 2;
    let median = *pos.select_nth_unstable_by(mid, f32::total_cmp).1;
    DEGENERATE * median
}

/// How the cells `inside(i, j)` of an `nx`×`ny` node grid stand (see [`Folds`]).
pub fn folds(
    nodes: &[Vec2],
    (nx, ny): (usize, usize),
    inside: impl Fn(usize, usize) -> bool,
) -> Folds {
    if nx < 2 || ny < 2 || nodes.len() < nx * ny {
        return Folds::default();
    }
    let dets = min_dets(nodes, nx, ny, &inside);
    let limit = threshold(&dets);
    let mut f = Folds {
        min_det: f32::MAX,
        ..Folds::default()
    };
    for d in dets.iter().flatten() {
        f.cells += 1;
        f.folded += usize::from(*d <= limit);
        f.min_det = f.min_det.min(*d);
    }
    if f.cells == 0 {
        f.min_det = 0.0;
    }
    f
}

/// Takes the folds out of one part's `nx`×`ny` node grid over the cells `inside(i, j)` (see
/// the module docs). Returns the folds before and after.
pub fn unfold(
    nodes: &mut [Vec2],
    (nx, ny): (usize, usize),
    inside: impl Fn(usize, usize) -> bool,
) -> (Folds, Folds) {
    let before = folds(nodes, (nx, ny), &inside);
    // Nothing to do, or mirrored rather than folded.
    if before.folded == 0 || before.folded * 2 > before.cells {
        return (before, before);
    }
    let (cx, cy) = (nx - 1, ny - 1);
    for grow in [1usize, 2, 4, 8] {
        let dets = min_dets(nodes, nx, ny, &inside);
        let limit = threshold(&dets);
        let bad: Vec<bool> = dets.iter().map(|d| d.is_some_and(|d| d <= limit)).collect();
        if !bad.contains(&true) {
            break;
        }
        // The patch: the folded cells grown by `grow` cells.
        let mut patch = vec![false; cx * cy];
        for j in 0..cy {
            for i in 0..cx {
                if !bad[j * cx + i] {
                    continue;
                }
                for jj in j.saturating_sub(grow)..(j + grow + 1).min(cy) {
                    for ii in i.saturating_sub(grow)..(i + grow + 1).min(cx) {
                        patch[jj * cx + ii] = true;
                    }
                }
            }
        }
        // Free nodes: all cells around them in the patch. A node on the grid's border
        // relaxes along the border only (its missing neighbour mirrored), so a fold at the
        // photo's edge is taken out too; the grid's corners stay.
        let cell = |i: usize, j: usize| patch[j * cx + i];
        let free: Vec<(usize, usize)> = (0..ny)
            .flat_map(|j| (0..nx).map(move |i| (i, j)))
            .filter(|&(i, j)| {
                let xs = [i.checked_sub(1), (i < cx).then_some(i)];
                let ys = [j.checked_sub(1), (j < cy).then_some(j)];
                let (nxs, nys) = (xs.iter().flatten().count(), ys.iter().flatten().count());
                (nxs + nys >= 3)
                    && xs
                        .iter()
                        .flatten()
                        .all(|&a| ys.iter().flatten().all(|&b| cell(a, b)))
            })
            .collect();
        if free.is_empty() {
            continue;
        }
        // Successive over-relaxation of the Laplace equation on the free nodes.
        let rounds = 60 + 20 * grow;
        for _ in 0..rounds {
            for &(i, j) in &free {
                let k = j * nx + i;
                let mean = if i == 0 || i == nx - 1 {
                    (nodes[k - nx] + nodes[k + nx]) * 0.5
                } else if j == 0 || j == ny - 1 {
                    (nodes[k - 1] + nodes[k + 1]) * 0.5
                } else {
                    (nodes[k - 1] + nodes[k + 1] + nodes[k - nx] + nodes[k + nx]) * 0.25
                };
                nodes[k] += (mean - nodes[k]) * 1.7;
            }
        }
    }
    let after = folds(nodes, (nx, ny), &inside);
    if after.folded > 0 {
        // The last resort: the part's best affine map over its cells, which cannot fold
        // when it keeps orientation.
        if let Some(a) = affine_fit(nodes, (nx, ny), &inside) {
            let det = a[1] * a[5] - a[2] * a[4];
            if det > 0.0 {
                for j in 0..ny {
                    for i in 0..nx {
                        let (x, y) = (i as f32, j as f32);
                        nodes[j * nx + i] =
                            Vec2::new(a[0] + a[1] * x + a[2] * y, a[3] + a[4] * x + a[5] * y);
                    }
                }
            }
        }
    }
    (before, folds(nodes, (nx, ny), &inside))
}

/// The least-squares affine map from node indices to the nodes over the cells `inside`:
/// `u = a[0] + a[1] i + a[2] j`, `v = a[3] + a[4] i + a[5] j`.
fn affine_fit(
    nodes: &[Vec2],
    (nx, ny): (usize, usize),
    inside: &impl Fn(usize, usize) -> bool,
) -> Option<[f32; 6]> {
    // Normal equations over the nodes of the checked cells.
    let mut m = [[0.0f64; 3]; 3];
    let mut bu = [0.0f64; 3];
    let mut bv = [0.0f64; 3];
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            if !inside(i, j) {
                continue;
            }
            let q = nodes[j * nx + i];
            let r = [1.0, i as f64, j as f64];
            for a in 0..3 {
                for b in 0..3 {
                    m[a][b] += r[a] * r[b];
                }
                bu[a] += r[a] * f64::from(q.x);
                bv[a] += r[a] * f64::from(q.y);
            }
        }
    }
    let det3 = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det3(&m);
    if d.abs() < 1e-9 {
        return None;
    }
    // Cramer's rule for each coordinate.
    let solve = |b: [f64; 3]| {
        let mut out = [0.0f32; 3];
        for (c, o) in out.iter_mut().enumerate() {
            let mut mc = m;
            for r in 0..3 {
                mc[r][c] = b[r];
            }
            *o = (det3(&mc) / d) as f32;
        }
        out
    };
    let (u, v) = (solve(bu), solve(bv));
    Some([u[0], u[1], u[2], v[0], v[1], v[2]])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 12×12 grid of the identity (scaled by 8) with one node pulled across its
    /// neighbours: folded; unfolding leaves no fold and keeps the far nodes.
    #[test]
    fn a_pulled_node_is_unfolded_and_the_rest_kept() {
        let (nx, ny) = (12usize, 12usize);
        let mut nodes: Vec<Vec2> = (0..ny)
            .flat_map(|j| (0..nx).map(move |i| Vec2::new(i as f32, j as f32) * 8.0))
            .collect();
        nodes[5 * nx + 5] += Vec2::new(20.0, 14.0);
        let all = |_: usize, _: usize| true;
        let f = folds(&nodes, (nx, ny), all);
        assert!(f.folded > 0 && f.min_det < 0.0, "{f:?}");
        let corner = nodes[0];
        let (before, after) = unfold(&mut nodes, (nx, ny), all);
        assert_eq!(before, f);
        assert_eq!(after.folded, 0, "{after:?}");
        assert!(after.min_det > 0.0);
        assert_eq!(nodes[0], corner);
        assert_eq!(nodes[11 * nx + 11], Vec2::new(88.0, 88.0));
    }

    /// A mirrored map (det < 0 everywhere) is reported, not "repaired".
    #[test]
    fn a_mirror_is_left_alone() {
        let (nx, ny) = (6usize, 6usize);
        let mut nodes: Vec<Vec2> = (0..ny)
            .flat_map(|j| (0..nx).map(move |i| Vec2::new(-(i as f32), j as f32)))
            .collect();
        let copy = nodes.clone();
        let (before, after) = unfold(&mut nodes, (nx, ny), |_, _| true);
        assert_eq!(before.folded, 25);
        assert_eq!(after, before);
        assert_eq!(nodes, copy);
    }
}
