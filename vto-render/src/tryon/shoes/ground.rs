//! What happens around the new shoes: the legs that stand in front of them, the old shoes
//! that must not peek out, and the shadow on the floor.
//!
//! - [`leg`]: a depth-only shin (knee → ankle) whose radius follows the person mask's width
//!   across the leg (below 12 cm above the floor, where the old shoe widens the mask, the
//!   width at 12 cm), its camera-facing half only. It starts [`LEG_START_CM`] above the floor
//!   under the ankle, so the trouser hem or the ankle's skin stays in front of the collar and
//!   the back of the collar passes behind the leg; a leg in front of the other foot hides it.
//! - [`erase_old_feet`]: the person-mask pixels of each shod foot below its ankle (or below
//!   where the old shoe ends up the leg, [`old_shoe_top`]; nearer that foot than the other)
//!   are filled from their surroundings (a push-pull pyramid), so what
//!   the new shoe does not cover shows floor, not the old shoe; the leg's own column (its
//!   mask run just above the cut) is continued 4 cm further down instead, so a sock, an
//!   ankle or a trouser hem shows between a low collar and the cut, not floor.
//! - [`contact_shadow`]: under each sole, a tight dark core and a wide soft penumbra, shifted
//!   away from the key light, multiplied onto the floor.

use image::RgbaImage;

use super::feet::{FloorFrame, FootPose, ANKLE_HEIGHT_CM};
use crate::math::{normalize_or, Vec2, Vec3};
use crate::scene::CameraMesh;
use crate::vision::Mask;

/// The shin occluder starts this high above the floor (cm): at the ankle keypoint, where
/// the old feet's fill ends (below it the photo no longer shows the leg).
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

/// Fills the old feet of `feet` in `photo` from their surroundings (see the module docs).
/// Returns how many pixels were filled.
pub fn erase_old_feet(
    photo: &mut RgbaImage,
    mask: &Mask,
    feet: &[FootPose],
    frame: &FloorFrame,
) -> usize {
    let (w, h) = (photo.width() as i64, photo.height() as i64);
    if mask.width as i64 != w || mask.height as i64 != h {
        return 0;
    }
    let s = frame.px_per_cm;
    let seg_dist = |p: Vec2, f: &FootPose| {
        let (a, b) = (f.heel_px, f.toe_px);
        let ab = b - a;
        let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
        p.distance(a + ab * t)
    };
    let mut filled = 0;
    for f in feet {
        let reach = 7.0 * s;
        let top = f.ankle_px.y.min(f.heel_px.y).min(f.toe_px.y - 2.0 * s);
        let top = old_shoe_top(photo, mask, f, s, top);
        // (The shin occluder starts at the same height: nothing filled shows through it.)
        let x0 = (f.heel_px.x.min(f.toe_px.x) - reach - 4.0).floor().max(0.0) as i64;
        let x1 = (f.heel_px.x.max(f.toe_px.x) + reach + 4.0)
            .ceil()
            .min(w as f32) as i64;
        let y0 = (top - 4.0).floor().max(0.0) as i64;
        let y1 = (f.heel_px.y.max(f.toe_px.y) + 6.0 * s + 4.0)
            .ceil()
            .min(h as f32) as i64;
        if x1 <= x0 || y1 <= y0 {
            continue;
        }
        let (bw, bh) = ((x1 - x0) as usize, (y1 - y0) as usize);
        let mut hole = vec![false; bw * bh];
        for y in 0..bh {
            for x in 0..bw {
                let (px, py) = (x0 + x as i64, y0 + y as i64);
                let p = Vec2::new(px as f32, py as f32);
                if p.y < top || mask.data[(py * w + px) as usize] < 0.35 {
                    continue;
                }
                let d = seg_dist(p, f);
                let nearest = feet
                    .iter()
                    .all(|g| std::ptr::eq(g, f) || seg_dist(p, g) >= d);
                if d <= reach && nearest {
                    hole[y * bw + x] = true;
                }
            }
        }
        // Grow the hole by 2 px: the mask's edge is soft.
        let grown: Vec<bool> = (0..bw * bh)
            .map(|i| {
                let (x, y) = ((i % bw) as i64, (i / bw) as i64);
                (-2..=2).any(|dy| {
                    (-2..=2).any(|dx| {
                        let (xx, yy) = (x + dx, y + dy);
                        xx >= 0
                            && yy >= 0
                            && (xx as usize) < bw
                            && (yy as usize) < bh
                            && hole[yy as usize * bw + xx as usize]
                    })
                }) && (y0 + y) as f32 >= top
            })
            .collect();
        let crop: Vec<[f32; 3]> = (0..bw * bh)
            .map(|i| {
                let p =
                    photo.get_pixel((x0 + (i % bw) as i64) as u32, (y0 + (i / bw) as i64) as u32);
                [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])]
            })
            .collect();
        let out = push_pull(&crop, &grown, bw, bh);
        // The leg's column just above the cut, continued down a few centimetres (socks,
        // trouser hems, ankles between the new collar and the cut stay leg-coloured).
        let cut = (top.floor() as i64 - 2).clamp(y0, y1 - 1);
        let row_y = (cut - y0) as usize;
        let ax = (f.ankle_px.x.round() as i64 - x0).clamp(0, bw as i64 - 1) as usize;
        let leg_at = |x: usize| mask.data[(cut * w + x0 + x as i64) as usize] >= 0.5;
        let (mut l, mut r) = (ax, ax);
        if leg_at(ax) {
            while l > 0 && leg_at(l - 1) && ax - l < (8.0 * s) as usize {
                l -= 1;
            }
            while r + 1 < bw && leg_at(r + 1) && r - ax < (8.0 * s) as usize {
                r += 1;
            }
        }
        let column_rows = (4.0 * s) as usize;
        for (i, in_hole) in grown.iter().enumerate() {
            if *in_hole {
                let (x, y) = (i % bw, i / bw);
                let in_column = leg_at(ax) && (l..=r).contains(&x) && y > row_y;
                let c = if in_column && y - row_y <= column_rows {
                    crop[row_y * bw + x]
                } else {
                    out[i]
                };
                let px = photo
                    .get_pixel_mut((x0 + (i % bw) as i64) as u32, (y0 + (i / bw) as i64) as u32);
                px.0 = [c[0] as u8, c[1] as u8, c[2] as u8, px.0[3]];
                filled += 1;
            }
        }
    }
    filled
}

/// How high up the leg the old shoe reaches above `top` (the ankle's cut), pixels: rows
/// across the ankle (±2.5 cm, person-mask pixels) whose colour is nearer the old shoe's (just
/// under the cut) than the leg's (8–10 cm above it), at most 6 cm up. A boot or a high-top
/// worn in the photo would otherwise show above a low new shoe's collar. Unchanged when the
/// two colours are alike (within 40 of 255: dark trousers over dark shoes).
pub fn old_shoe_top(photo: &RgbaImage, mask: &Mask, f: &FootPose, s: f32, top: f32) -> f32 {
    let (w, h) = (i64::from(photo.width()), i64::from(photo.height()));
    if mask.width as i64 != w || mask.height as i64 != h {
        return top;
    }
    let half = (2.5 * s).max(2.0);
    let row_mean = |y: f32| -> Option<Vec3> {
        let yy = y.round() as i64;
        if yy < 0 || yy >= h {
            return None;
        }
        let (mut sum, mut n) = (Vec3::ZERO, 0u32);
        let (xa, xb) = (
            (f.ankle_px.x - half).round() as i64,
            (f.ankle_px.x + half).round() as i64,
        );
        for x in xa.max(0)..=xb.min(w - 1) {
            if mask.data[(yy * w + x) as usize] < 0.5 {
                continue;
            }
            let p = photo.get_pixel(x as u32, yy as u32);
            sum += Vec3::new(f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
            n += 1;
        }
        (n >= 2).then(|| sum / n as f32)
    };
    let band = |a: f32, b: f32| -> Option<Vec3> {
        let v: Vec<Vec3> = (0..5)
            .filter_map(|i| row_mean(a + (b - a) * i as f32 / 4.0))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<Vec3>() / v.len() as f32)
    };
    let (Some(shoe), Some(leg)) = (
        band(top + 0.5 * s, top + 2.0 * s),
        band(top - 10.0 * s, top - 8.0 * s),
    ) else {
        return top;
    };
    if shoe.distance(leg) < 40.0 {
        return top;
    }
    let mut t = top;
    while t > top - 6.0 * s {
        let Some(c) = row_mean(t - 1.0) else { break };
        if c.distance(shoe) >= c.distance(leg) {
            break;
        }
        t -= 1.0;
    }
    t
}

/// Fills the `hole` pixels of a `w`×`h` image from the others: averages down a pyramid of
/// the known pixels, then back up, each level filling what the finer one lacks.
pub fn push_pull(img: &[[f32; 3]], hole: &[bool], w: usize, h: usize) -> Vec<[f32; 3]> {
    // Level 0: colour × weight.
    let mut levels: Vec<(Vec<[f32; 4]>, usize, usize)> = vec![(
        img.iter()
            .zip(hole)
            .map(|(c, &hl)| {
                if hl {
                    [0.0; 4]
                } else {
                    [c[0], c[1], c[2], 1.0]
                }
            })
            .collect(),
        w,
        h,
    )];
    loop {
        let (prev, pw, ph) = &levels[levels.len() - 1];
        let (pw, ph) = (*pw, *ph);
        if pw <= 1 && ph <= 1 {
            break;
        }
        let (nw, nh) = (pw.div_ceil(2), ph.div_ceil(2));
        let mut next = vec![[0.0f32; 4]; nw * nh];
        for y in 0..ph {
            for x in 0..pw {
                let v = prev[y * pw + x];
                let o = &mut next[(y / 2) * nw + x / 2];
                for k in 0..4 {
                    o[k] += v[k];
                }
            }
        }
        levels.push((next, nw, nh));
    }
    // Pull: from the coarsest level down, unknown weight filled from the parent.
    for l in (0..levels.len() - 1).rev() {
        let (parent, pw, _) = levels[l + 1].clone();
        let (cur, cw, ch) = &mut levels[l];
        for y in 0..*ch {
            for x in 0..*cw {
                let p = parent[(y / 2) * pw + x / 2];
                let c = &mut cur[y * *cw + x];
                let wgt = c[3].min(1.0);
                if p[3] > 0.0 {
                    for k in 0..3 {
                        let pc = p[k] / p[3];
                        let cc = if c[3] > 0.0 { c[k] / c[3] } else { 0.0 };
                        c[k] = cc * wgt + pc * (1.0 - wgt);
                    }
                    c[3] = 1.0;
                } else if c[3] > 0.0 {
                    for k in 0..3 {
                        c[k] /= c[3];
                    }
                    c[3] = 1.0;
                }
            }
        }
    }
    levels[0]
        .0
        .iter()
        .zip(img.iter().zip(hole))
        .map(|(f, (c, &hl))| if hl { [f[0], f[1], f[2]] } else { *c })
        .collect()
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
    fn push_pull_fills_a_hole_from_its_surroundings() {
        // Left half red, right half blue, a hole across the middle.
        let (w, h) = (32, 16);
        let img: Vec<[f32; 3]> = (0..w * h)
            .map(|i| {
                if i % w < w / 2 {
                    [200.0, 0.0, 0.0]
                } else {
                    [0.0, 0.0, 200.0]
                }
            })
            .collect();
        let hole: Vec<bool> = (0..w * h).map(|i| (10..22).contains(&(i % w))).collect();
        let out = push_pull(&img, &hole, w, h);
        // Known pixels unchanged, the hole's left end reddish, its right end bluish.
        assert_eq!(out[0], img[0]);
        let (l, r) = (out[8 * w + 10], out[8 * w + 21]);
        assert!(l[0] > l[2] && r[2] > r[0], "{l:?} {r:?}");
    }

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
