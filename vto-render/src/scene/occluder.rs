//! Depth-only occluders: the parts of the person that stand in front of parts of a product.
//!
//! The head ([`head`]): an ellipsoid built from the landmarks, as wide as the face at the ears
//! (234–454, +4 %), as tall as 1.24 × forehead–chin (10–152), its front 8 mm behind the nose
//! bridge, turned with the head. A hat's back hides behind the crown, an earring on a
//! turned-away ear behind the cheek.
//!
//! The skull for eyewear temples ([`temple_head`]): the same, but as broad as the skull above
//! the ears ([`SKULL_BREADTH_PER_FACE_WIDTH`] × the face width, where the temples rest) and a
//! rounded box in its horizontal sections (a superellipsoid, [`HEAD_SQUARENESS`]): a head is
//! flat in front and wide right behind the face (the brows already reach ±5.5 cm 2 cm behind
//! the nose bridge), while an ellipse through the ears and the nose bridge is ±4 cm wide
//! there, so on a turned head the far temple, which runs back at the skull's width, stayed
//! outside it and showed across the far cheek. On its near side (a turned head's side toward
//! the camera) the skull is no broader than the near temple, less
//! [`NEAR_TEMPLE_CLEARANCE_CM`]: a temple rests on the skull, so a skull as broad as it hid
//! the near temple, seen from the side on a head turned 45° or more, short of the ear. The
//! far side stays broad (it hides the far temple), and so does the front (rays from the far
//! temple leave the head through it); the near side narrows with the yaw, fully from
//! [`NEAR_SIDE_FULL_YAW_DEG`]. Behind the near ear ([`EAR_BACK_CM`] behind the ear point) a
//! flap beside the head, just outside the temple, hides the temple's tip: it tucks behind
//! the ear.
//!
//! Both sizes are measured in the head frame (the landmarks' 3D distances over the pose's
//! scale), not on the image: on a head turned by θ the image distance 234–454 shrinks by
//! cos θ, and the occluder shrank with it.

use super::camera::HeadCamera;
use super::head::{ear_point, head_centre};
use super::CameraMesh;
use crate::math::Vec3;
use crate::vision::Face;

/// The exponent of the temple skull's horizontal section (2: an ellipse; larger: a rounded
/// box).
pub const HEAD_SQUARENESS: f32 = 3.0;
/// The head occluder's breadth over the face width at the ears (234–454).
pub const HEAD_BREADTH_PER_FACE_WIDTH: f32 = 1.04;
/// The temple skull's breadth over the face width at the ears: the skull above the ears, where
/// temples rest (the value hats fit to, `tryon::hats::fit`).
pub const SKULL_BREADTH_PER_FACE_WIDTH: f32 = 1.12;
/// How far (cm) inside the near temple the temple skull's near side stays.
pub const NEAR_TEMPLE_CLEARANCE_CM: f32 = 0.3;
/// The head's yaw (degrees) from which the temple skull's near side is as narrow as the near
/// temple (it narrows linearly from a frontal pose, so both sides match there).
pub const NEAR_SIDE_FULL_YAW_DEG: f32 = 10.0;
/// How far (cm) behind the ear point ([`crate::scene::head::ear_point`]) the near temple stays
/// in sight: behind that the ear flap hides its tip, as the ear does.
pub const EAR_BACK_CM: f32 = 1.0;
/// How far (cm) outside the near temple the ear flap stands.
pub const EAR_FLAP_OUT_CM: f32 = 1.0;
/// The ear flap's depth (cm, back from where it starts) and height (the same below the ear
/// point, half of it above).
pub const EAR_FLAP_CM: f32 = 8.0;
/// The least the near side narrows to, as a fraction of the skull's half-breadth (a frame
/// whose temples run inside the face is not taken at its word).
pub const NEAR_SIDE_MIN_FRACTION: f32 = 0.6;

/// The 3D distance of two landmarks in centimetres of the head frame (rotation keeps lengths;
/// the pose's scale turns pixels into centimetres).
pub fn head_frame_distance(face: &Face, cam: &HeadCamera, a: usize, b: usize) -> f32 {
    let (p, q) = (face.landmarks[a], face.landmarks[b]);
    Vec3::new(p[0] - q[0], p[1] - q[1], p[2] - q[2]).length() / cam.scale()
}

/// The head occluder in the head frame: centre and semi-axes (cm) of the ellipsoid.
pub fn head_ellipsoid(face: &Face, cam: &HeadCamera) -> (Vec3, Vec3) {
    head_solid(face, cam, HEAD_BREADTH_PER_FACE_WIDTH)
}

/// Centre and semi-axes (cm, head frame) of a head `breadth` × the face width broad.
fn head_solid(face: &Face, cam: &HeadCamera, breadth: f32) -> (Vec3, Vec3) {
    let half_w = head_frame_distance(face, cam, 234, 454) / 2.0;
    let height = head_frame_distance(face, cam, 10, 152);
    let ax = breadth * half_w;
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

/// The skull that hides eyewear temples behind the head (see the module docs).
/// `temples_x`: the head-frame x of each temple's inner side between its hinge and the ear
/// (the −X side's first), when the frame has temples; without them the skull is symmetric.
pub fn temple_head(face: &Face, cam: &HeadCamera, temples_x: Option<[f32; 2]>) -> CameraMesh {
    let (c, r) = head_solid(face, cam, SKULL_BREADTH_PER_FACE_WIDTH);
    let yaw = face
        .head_pose
        .as_ref()
        .map_or(0.0, |p| p.yaw_pitch_roll_deg[0]);
    let mut rx = [r.x; 2];
    let Some(t) = temples_x else {
        return superellipsoid(cam, c, r, HEAD_SQUARENESS);
    };
    // The far side is the head frame's +X side when yaw > 0: the near side is −X.
    let near = usize::from(yaw < 0.0);
    let inner =
        ((t[near] - c.x).abs() - NEAR_TEMPLE_CLEARANCE_CM).clamp(NEAR_SIDE_MIN_FRACTION * r.x, r.x);
    let w = (yaw.abs() / NEAR_SIDE_FULL_YAW_DEG).clamp(0.0, 1.0);
    rx[near] = r.x + w * (inner - r.x);
    let mut mesh = superellipsoid_sides(cam, c, rx, r.y, r.z, HEAD_SQUARENESS);
    // The near ear: a flap beside the head, outside the temple, from EAR_BACK_CM behind the
    // ear point back, that hides the temple's tip (it tucks behind the ear; the skull's side
    // that hid it before stood in front of the ear, where the temple must show).
    let side = if near == 0 { -1.0 } else { 1.0 };
    let Some(ear) = ear_point(side) else {
        return mesh;
    };
    let x = c.x + side * ((t[near] - c.x).abs() + EAR_FLAP_OUT_CM);
    let (z0, z1) = (ear.z - EAR_BACK_CM, ear.z - EAR_BACK_CM - EAR_FLAP_CM);
    let (y0, y1) = (ear.y - EAR_FLAP_CM, ear.y + 0.5 * EAR_FLAP_CM);
    let base = mesh.positions.len() as u32;
    for (y, z) in [(y0, z0), (y1, z0), (y1, z1), (y0, z1)] {
        mesh.push_vertex(
            cam.to_camera(Vec3::new(x, y, z)),
            cam.dir_to_camera(Vec3::new(side, 0.0, 0.0)),
            [0.0; 2],
            0.0,
        );
    }
    mesh.triangles.push([base, base + 1, base + 2, 0]);
    mesh.triangles.push([base, base + 2, base + 3, 0]);
    mesh
}

/// An ellipsoid (head frame, axis-aligned there) as a camera-space mesh, only its
/// camera-facing half: the ellipsoid is convex, so that half holds the nearest depth
/// everywhere it covers.
pub fn ellipsoid(cam: &HeadCamera, centre: Vec3, radii: Vec3) -> CameraMesh {
    superellipsoid(cam, centre, radii, 2.0)
}

/// A superellipsoid (head frame, axis-aligned there): elliptic in its vertical sections, its
/// horizontal sections the superellipses `|x/rx|^n + |z/rz|^n = 1` (`n` = `squareness` ≥ 2,
/// so it stays convex), as a camera-space mesh of its camera-facing half.
pub fn superellipsoid(cam: &HeadCamera, centre: Vec3, radii: Vec3, squareness: f32) -> CameraMesh {
    superellipsoid_sides(cam, centre, [radii.x; 2], radii.y, radii.z, squareness)
}

/// [`superellipsoid`] with its −X and +X halves of semi-axes `rx[0]` and `rx[1]` (they meet
/// at x = 0 with the same tangent, so the solid stays convex).
pub fn superellipsoid_sides(
    cam: &HeadCamera,
    centre: Vec3,
    rx: [f32; 2],
    ry: f32,
    rz: f32,
    squareness: f32,
) -> CameraMesh {
    // A rounded box needs more meridians than an ellipse to keep its corners.
    const LAT: usize = 16;
    let lon: usize = if squareness > 2.0 { 64 } else { 32 };
    let mut mesh = CameraMesh::default();
    for i in 0..=LAT {
        let th = std::f32::consts::PI * i as f32 / LAT as f32;
        for j in 0..lon {
            let ph = std::f32::consts::TAU * j as f32 / lon as f32;
            let e = 2.0 / squareness.max(2.0);
            let (s, c) = ph.sin_cos();
            let unit = Vec3::new(
                th.sin() * c.signum() * c.abs().powf(e),
                th.cos(),
                th.sin() * s.signum() * s.abs().powf(e),
            );
            let radii = Vec3::new(rx[usize::from(unit.x > 0.0)], ry, rz);
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
        let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
        let mid = (a + b + c) / 3.0;
        // The face's normal, turned outward (away from the centre of the convex solid); facing
        // the camera (at the origin) when it points back at it. Degenerate faces at the poles
        // fall back to the direction from the centre.
        let n = (b - a).cross(c - a);
        let n = if n.length_squared() > 1e-12 {
            n
        } else {
            mid - centre_cam
        };
        let n = if n.dot(mid - centre_cam) < 0.0 { -n } else { n };
        n.dot(mid) < 0.0
    };
    let mut triangles = Vec::new();
    for i in 0..LAT {
        for j in 0..lon {
            let j2 = (j + 1) % lon;
            let a = (i * lon + j) as u32;
            let b = (i * lon + j2) as u32;
            let c = ((i + 1) * lon + j) as u32;
            let d = ((i + 1) * lon + j2) as u32;
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
