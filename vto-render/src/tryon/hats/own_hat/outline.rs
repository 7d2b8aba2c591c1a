//! The head's outline in the photo: the skull ellipsoid (grown by the hair), projected.
//!
//! What lies inside it is the head (hair, or a scalp under a removed hat); what lies beyond
//! it and was hat is background behind the head.

use crate::math::Vec3;
use crate::scene::camera::HeadCamera;

use super::super::fit::Skull;
use super::region::P2;

/// The projected outline of `skull` (head frame, cm) as seen by `cam`: the convex hull of
/// points sampled over the ellipsoid (the projection of an ellipsoid is convex), in image
/// pixels, counter-clockwise in the image's axes.
pub fn head_outline(cam: &HeadCamera, skull: &Skull) -> Vec<P2> {
    let mut pts = Vec::with_capacity(24 * 48);
    for i in 0..=24 {
        let theta = i as f32 / 24.0 * std::f32::consts::PI;
        for j in 0..48 {
            let phi = j as f32 / 48.0 * std::f32::consts::TAU;
            let d = Vec3::new(
                theta.sin() * phi.cos(),
                theta.cos(),
                theta.sin() * phi.sin(),
            );
            let p = cam.project_model(skull.centre + d * skull.radii);
            if p.x.is_finite() && p.y.is_finite() {
                pts.push([p.x, p.y]);
            }
        }
    }
    convex_hull(pts)
}

/// The convex outline `outline` grown by `by` pixels all round (the hull of its corners moved
/// `by` in 16 directions: within 2 % of `by` of the exact offset).
pub fn grown(outline: &[P2], by: f32) -> Vec<P2> {
    let mut pts = Vec::with_capacity(outline.len() * 16);
    for p in outline {
        for k in 0..16 {
            let t = k as f32 / 16.0 * std::f32::consts::TAU;
            pts.push([p[0] + by * t.cos(), p[1] + by * t.sin()]);
        }
    }
    convex_hull(pts)
}

/// The convex hull of `pts` (Andrew's monotone chain); fewer than three points come back as
/// they are.
pub fn convex_hull(mut pts: Vec<P2>) -> Vec<P2> {
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: P2, a: P2, b: P2| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let mut hull: Vec<P2> = Vec::with_capacity(pts.len() * 2);
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &P2>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hull_of_a_square_and_its_centre_is_the_square() {
        let h = convex_hull(vec![
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [0.0, 1.0],
            [0.5, 0.5],
        ]);
        assert_eq!(h.len(), 4);
        assert!(!h.contains(&[0.5, 0.5]));
    }

    #[test]
    fn a_grown_square_holds_points_within_the_distance_and_not_beyond() {
        let square = vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        let g = grown(&square, 2.0);
        use crate::tryon::own_eyewear::detect::inside;
        assert!(inside(&g, [11.9, 5.0]) && inside(&g, [5.0, -1.9]));
        assert!(!inside(&g, [12.1, 5.0]) && !inside(&g, [5.0, -2.1]));
        // A corner grows round: (11.3, 11.3) is 1.84 away, (11.5, 11.5) 2.12.
        assert!(inside(&g, [11.3, 11.3]) && !inside(&g, [11.5, 11.5]));
    }
}
