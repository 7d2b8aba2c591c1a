//! Small geometry and pixel-grid helpers every garment stage uses: vectors, segments,
//! polygons, smoothsteps, mask lookups and 4-neighbourhoods.

use glam::Vec2;

/// `v` turned a quarter to the right in image coordinates (y down): `(x, y) → (-y, x)`.
pub(crate) fn perp(v: Vec2) -> Vec2 {
    Vec2::new(-v.y, v.x)
}

/// A person mask's value (`w` × `h`, row-major) at the pixel nearest `p`; 0 outside the image.
pub(crate) fn mask_at(mask: &[f32], (w, h): (u32, u32), p: Vec2) -> f32 {
    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
    if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
        return 0.0;
    }
    mask.get(y as usize * w as usize + x as usize)
        .copied()
        .unwrap_or(0.0)
}

/// The 4-connected neighbours of pixel index `i` in a `w` × `h` row-major grid.
pub(crate) fn neighbours4(i: usize, w: usize, h: usize) -> impl Iterator<Item = usize> {
    let (x, y) = (i % w, i / w);
    [
        (x > 0).then(|| i - 1),
        (x + 1 < w).then(|| i + 1),
        (y > 0).then(|| i - w),
        (y + 1 < h).then(|| i + w),
    ]
    .into_iter()
    .flatten()
}

/// Distance from `p` to the segment `a`–`b`, and where along it (0 at `a`, 1 at `b`) the
/// nearest point lies.
pub(crate) fn seg_dist(p: Vec2, a: Vec2, b: Vec2) -> (f32, f32) {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
    (p.distance(a + ab * t), t)
}

/// Distance from `p` to the outline of the closed polygon `poly` (its edges, the last
/// point joined to the first); `f32::INFINITY` without a point.
pub(crate) fn outline_dist(poly: &[Vec2], p: Vec2) -> f32 {
    let Some(&last) = poly.last() else {
        return f32::INFINITY;
    };
    let mut prev = last;
    let mut d = f32::INFINITY;
    for &q in poly {
        d = d.min(seg_dist(p, prev, q).0);
        prev = q;
    }
    d
}

/// Inside a polygon (even–odd rule).
pub(crate) fn inside(poly: &[Vec2], p: Vec2) -> bool {
    if poly.len() < 3 {
        return false;
    }
    let mut c = false;
    let mut j = poly.len() - 1;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[j]);
        if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x {
            c = !c;
        }
        j = i;
    }
    c
}

/// Hermite smoothstep: 0 below `e0`, 1 above `e1`, smooth between.
pub(crate) fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}
