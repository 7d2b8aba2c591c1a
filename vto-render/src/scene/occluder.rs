//! Depth-only occluders: the parts of the person that stand in front of parts of a product.
//!
//! The head ([`head`]): an ellipsoid built from the landmarks, as wide as the face at the ears
//! (234–454, +4 %), as tall as 1.24 × forehead–chin (10–152), its front 8 mm behind the nose
//! bridge, turned with the head. Eyewear temples pass into it behind the hinges, a hat's back
//! behind the crown, an earring on a turned-away ear behind the cheek.

use super::camera::HeadCamera;
use super::head::head_centre;
use super::CameraMesh;
use crate::math::{dist_xy, Vec3};
use crate::vision::Face;

/// The head ellipsoid in the head frame: centre and semi-axes (cm).
pub fn head_ellipsoid(face: &Face, cam: &HeadCamera) -> (Vec3, Vec3) {
    let lm = &face.landmarks;
    let s = cam.scale();
    let half_w = dist_xy(lm[234], lm[454]) / 2.0 / s;
    let height = dist_xy(lm[10], lm[152]) / s;
    let ax = 1.04 * half_w;
    let ay = 0.62 * height;
    let az = 0.95 * ax;
    let front = cam.anchor_model().z - 0.8;
    // Horizontally and vertically centred on the face template (middle of 234–454 and of
    // forehead–chin), in the head frame.
    let c = head_centre();
    (Vec3::new(c.x, c.y, front - az), Vec3::new(ax, ay, az))
}

/// The head occluder of `face` in camera space (see the module docs).
pub fn head(face: &Face, cam: &HeadCamera) -> CameraMesh {
    let (c, r) = head_ellipsoid(face, cam);
    ellipsoid(cam, c, r)
}

/// An ellipsoid (head frame, axis-aligned there) as a camera-space mesh, only its
/// camera-facing half: the ellipsoid is convex, so that half holds the nearest depth
/// everywhere it covers.
pub fn ellipsoid(cam: &HeadCamera, centre: Vec3, radii: Vec3) -> CameraMesh {
    const LAT: usize = 16;
    const LON: usize = 32;
    let mut mesh = CameraMesh::default();
    for i in 0..=LAT {
        let th = std::f32::consts::PI * i as f32 / LAT as f32;
        for j in 0..LON {
            let ph = std::f32::consts::TAU * j as f32 / LON as f32;
            let unit = Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin());
            mesh.push_vertex(
                cam.to_camera(centre + radii * unit),
                Vec3::NEG_Z,
                [0.0; 2],
                0.0,
            );
        }
    }
    let centre_cam = cam.to_camera(centre);
    let facing = |t: [u32; 3]| {
        let mid = t.iter().map(|&i| mesh.positions[i as usize]).sum::<Vec3>() / 3.0;
        // Facing the camera (at the origin) when the outward direction points back at it.
        (mid - centre_cam).dot(mid) < 0.0
    };
    let mut triangles = Vec::new();
    for i in 0..LAT {
        for j in 0..LON {
            let j2 = (j + 1) % LON;
            let a = (i * LON + j) as u32;
            let b = (i * LON + j2) as u32;
            let c = ((i + 1) * LON + j) as u32;
            let d = ((i + 1) * LON + j2) as u32;
            for t in [[a, c, b], [b, c, d]] {
                if facing(t) {
                    triangles.push([t[0], t[1], t[2], 0]);
                }
            }
        }
    }
    mesh.triangles = triangles;
    mesh
}
