//! What happens around the new shoes: the legs that stand in front of them and the shadow
//! on the floor (the old shoes are taken out by [`super::old_shoe`]).
//!
//! - [`leg`]: a depth-only shin (knee → ankle) whose radius follows the person mask's width
//!   across the leg (below 12 cm above the floor, where the old shoe widens the mask, the
//!   width at 12 cm), its camera-facing half only. It starts [`LEG_START_CM`] above the floor
//!   under the ankle, so the trouser hem or the ankle's skin stays in front of the collar and
//!   the back of the collar passes behind the leg; a leg in front of the other foot hides it.
//! - [`contact_shadow`]: under each sole, a tight dark core and a wide soft penumbra, shifted
//!   away from the key light, multiplied onto the floor.

use image::RgbaImage;

use super::feet::{FloorFrame, FootPose, ANKLE_HEIGHT_CM};
use crate::math::{normalize_or, Vec2, Vec3};
use crate::scene::CameraMesh;
use crate::vision::Mask;

/// The shin occluder starts this high above the floor (cm): at the ankle keypoint, where
/// the old feet's fill ends ([`super::old_shoe`]) (below it the photo no longer shows the leg).
pub const LEG_START_CM: f32 = ANKLE_HEIGHT_CM;
/// The leg's radius inside a shoe's collar or shaft (cm).
pub const ANKLE_RADIUS_CM: f32 = 3.0;

/// Person-mask width (pixels) across the segment `a` → `b` at fraction `u`: the run of
/// mask > 0.5 through the point, perpendicular to the segment, at most `max` each way.
fn mask_width(mask: &Mask, a: Vec2, b: Vec2, u: f32, max: f32) -> Option<f32> {
    let p = a.lerp(b, u);
    let d = (b - a).normalize_or_zero();
    let n = Vec2::new(-d.y, d.x);
    let at = |q: Vec2| -> f32 {
        let (x, y) = (q.x.round(), q.y.round());
        if x < 0.0 || y < 0.0 || x >= mask.width as f32 || y >= mask.height as f32 {
            return 0.0;
        }
        mask.data[y as usize * mask.width as usize + x as usize]
    };
    if at(p) < 0.5 {
        return None;
    }
    let run = |sign: f32| {
        let mut r = 0.0;
        while r < max && at(p + n * (r + 1.0) * sign) >= 0.5 {
            r += 1.0;
        }
        r
    };
    Some(run(1.0) + run(-1.0) + 1.0)
}

/// The shin of `foot` as a depth-only mesh (see the module docs), `None` without a knee.
pub fn leg(
    foot: &FootPose,
    frame: &FloorFrame,
    mask: Option<&Mask>,
    shoe_top_cm: f32,
) -> Option<CameraMesh> {
    let knee_px = foot.knee_px?;
    let s = frame.px_per_cm;
    // The ankle's axis: above the heel, a third of the way to the toe keypoint's floor
    // point... kept simple: over the heel's floor point, 5 cm forward.
    let base = foot.heel + foot.heading * 5.0;
    let depth = base.z;
    let ankle = frame.point_at(foot.ankle_px, depth);
    let knee = frame.point_at(knee_px, depth);
    let axis = normalize_or(knee - ankle, Vec3::NEG_Y);
    // From LEG_START_CM above the floor up to the knee.
    let start = ankle - axis * (ANKLE_HEIGHT_CM - LEG_START_CM);
    let len = (knee - start).length();
    const RINGS: usize = 10;
    const SEG: usize = 16;
    // The leg's width from the mask, measured where no low shoe reaches (from 12 cm above
    // the floor up): the ankle inside a collar is no wider than the shin just above it.
    let u_low = ((12.0 - LEG_START_CM) / len.max(1.0)).clamp(0.0, 0.9);
    let measured = |u: f32| -> Option<f32> {
        let m = mask?;
        let w = mask_width(m, foot.ankle_px, knee_px, u, 16.0 * s)?;
        Some((w / 2.0 / s).clamp(2.5, 12.0))
    };
    let low = measured(u_low);
    let radius = |u: f32| -> f32 {
        let default = 3.2 + 2.0 * u;
        let r = if u <= u_low {
            low.unwrap_or(default)
        } else {
            measured(u).or(low).unwrap_or(default)
        };
        // Inside the shoe (up to 1 cm over its top) the leg is an ankle in a collar: no wider
        // than a slim ankle, so the collar and a boot's shaft stay whole (a tucked-in look).
        if LEG_START_CM + len * u <= shoe_top_cm + 1.0 {
            r.min(ANKLE_RADIUS_CM)
        } else {
            r
        }
    };
    let side = normalize_or(axis.cross(Vec3::Z), Vec3::X);
    let front = side.cross(axis);
    let mut mesh = CameraMesh::default();
    for i in 0..=RINGS {
        let u = i as f32 / RINGS as f32;
        let c = start + axis * (len * u);
        let r = radius(u);
        for j in 0..SEG {
            let a = std::f32::consts::TAU * j as f32 / SEG as f32;
            let out = side * a.cos() + front * a.sin();
            mesh.push_vertex(c + out * r, out, [0.0; 2], 0.0);
        }
    }
    let centre_of = |i: usize| start + axis * (len * i as f32 / RINGS as f32);
    for i in 0..RINGS {
        for j in 0..SEG {
            let j2 = (j + 1) % SEG;
            let [a, b, c, d] = [
                i * SEG + j,
                i * SEG + j2,
                (i + 1) * SEG + j,
                (i + 1) * SEG + j2,
            ]
            .map(|k| k as u32);
            for t in [[a, c, b], [b, c, d]] {
                let mid: Vec3 = t.iter().map(|&k| mesh.positions[k as usize]).sum::<Vec3>() / 3.0;
                // Camera-facing half only (the camera is at the origin).
                if (mid - centre_of(i)).dot(mid) < 0.0 {
                    mesh.triangles.push([t[0], t[1], t[2], 0]);
                }
            }
        }
    }
    Some(mesh)
}

/// Darkens the floor under each sole (`soles`: the projected sole outline points of each
/// shoe, pixels) — see the module docs. `light_x` is the key light's image-x direction
/// (−1 … 1); `strength` the core's darkening. Returns the darkened pixel count.
pub fn contact_shadow(
    photo: &mut RgbaImage,
    soles: &[Vec<Vec2>],
    px_per_cm: f32,
    light_x: f32,
    strength: f32,
) -> usize {
    if strength <= 0.0 {
        return 0;
    }
    let (w, h) = (photo.width() as i64, photo.height() as i64);
    let mut count = 0;
    for sole in soles.iter().filter(|s| s.len() >= 3) {
        let hull = convex_hull(sole);
        let wide = (3.0 * px_per_cm).max(2.0);
        let core = (0.8 * px_per_cm).max(1.0);
        let shift = Vec2::new(-light_x * 1.2 * px_per_cm, 0.4 * px_per_cm);
        let (lo, hi) = hull.iter().fold(
            (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
            |(a, b), p| (a.min(*p), b.max(*p)),
        );
        let x0 = (lo.x - 2.0 * wide + shift.x.min(0.0)).floor().max(0.0) as i64;
        let x1 = (hi.x + 2.0 * wide + shift.x.max(0.0)).ceil().min(w as f32) as i64;
        let y0 = (lo.y - wide).floor().max(0.0) as i64;
        let y1 = (hi.y + 2.0 * wide + shift.y).ceil().min(h as f32) as i64;
        for y in y0..y1 {
            for x in x0..x1 {
                let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                let d_core = signed_distance(&hull, p);
                let d_wide = signed_distance(&hull, p - shift);
                // Soft falloffs outside the outline (negative inside).
                let a = (1.0 - (d_core / core).max(0.0)).clamp(0.0, 1.0);
                let b = (1.0 - (d_wide / wide).max(0.0)).clamp(0.0, 1.0);
                let dark = strength * (0.65 * a * a + 0.45 * b * b * (3.0 - 2.0 * b) * 0.6);
                if dark <= 0.002 {
                    continue;
                }
                let px = photo.get_pixel_mut(x as u32, y as u32);
                let k = (1.0 - dark).clamp(0.2, 1.0);
                for c in 0..3 {
                    px.0[c] = (f32::from(px.0[c]) * k).round() as u8;
                }
                count += 1;
            }
        }
    }
    count
}

/// The convex hull (counter-clockwise in image coordinates' orientation) of `pts`.
pub fn convex_hull(pts: &[Vec2]) -> Vec<Vec2> {
    let mut p: Vec<Vec2> = pts.to_vec();
    p.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: Vec2, a: Vec2, b: Vec2| (a - o).perp_dot(b - o);
    let mut hull: Vec<Vec2> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &Vec2>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0
            {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    hull
}

/// Distance from `p` to a convex polygon, negative inside.
fn signed_distance(poly: &[Vec2], p: Vec2) -> f32 {
    let mut best = f32::MAX;
    let mut inside = true;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        let ab = b - a;
        let t = ((p - a).dot(ab) / ab.length_squared().max(1e-9)).clamp(0.0, 1.0);
        best = best.min(p.distance(a + ab * t));
        if ab.perp_dot(p - a) < 0.0 {
            inside = false;
        }
    }
    if inside {
        -best
    } else {
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_and_distance() {
        let pts = [
            Vec2::new(0.0, 0.0),
            Vec2::new(10.0, 0.0),
            Vec2::new(10.0, 10.0),
            Vec2::new(0.0, 10.0),
            Vec2::new(5.0, 5.0),
        ];
        let hull = convex_hull(&pts);
        assert_eq!(hull.len(), 4);
        assert!(signed_distance(&hull, Vec2::new(5.0, 5.0)) < -4.9);
        assert!((signed_distance(&hull, Vec2::new(13.0, 5.0)) - 3.0).abs() < 1e-4);
    }
}
