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
//! rounds run out. A part folded nearly everywhere is mirrored, not folded: it is left as
//! it is and reported.

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
fn min_dets(nodes: &[Vec2], nx: usize, ny: usize, inside: &impl Fn(usize, usize) -> bool) -> Vec<Option<f32>> {
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
    let mut pos: Vec<f32> = dets.iter().flatten().copied().filter(|d| *d > 0.0).collect();
    if pos.is_empty() {
        return 0.0;
    }
    let mid = pos.len() / 2;
    let median = *pos.select_nth_unstable_by(mid, f32::total_cmp).1;
    DEGENERATE * median
}

/// How the cells `inside(i, j)` of an `nx`×`ny` node grid stand (see [`Folds`]).
pub fn folds(nodes: &[Vec2], (nx, ny): (usize, usize), inside: impl Fn(usize, usize) -> bool) -> Folds {
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
        // Free nodes: all four cells around them in the patch (the grid's border stays).
        let free: Vec<usize> = (1..ny - 1)
            .flat_map(|j| (1..nx - 1).map(move |i| (i, j)))
            .filter(|&(i, j)| {
                patch[(j - 1) * cx + i - 1]
                    && patch[(j - 1) * cx + i]
                    && patch[j * cx + i - 1]
                    && patch[j * cx + i]
            })
            .map(|(i, j)| j * nx + i)
            .collect();
        if free.is_empty() {
            continue;
        }
        // Successive over-relaxation of the Laplace equation on the free nodes.
        let rounds = 60 + 20 * grow;
        for _ in 0..rounds {
            for &k in &free {
                let mean = (nodes[k - 1] + nodes[k + 1] + nodes[k - nx] + nodes[k + nx]) * 0.25;
                nodes[k] += (mean - nodes[k]) * 1.7;
            }
        }
    }
    (before, folds(nodes, (nx, ny), &inside))
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
