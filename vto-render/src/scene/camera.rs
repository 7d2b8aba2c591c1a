//! The photo camera and the head frame.
//!
//! Photos carry no reliable intrinsics, so the camera is a pinhole at the image centre with a
//! focal length of [`FOCAL_FACTOR`] × the longer image side (1.2 ≈ a 45° field of view along
//! that side, a phone's main camera or a portrait lens at arm's length).
//!
//! The head frame is the face template's model frame ([`crate::vision::head_pose`]:
//! centimetres, +X towards image right on a frontal face, +Y up, +Z out of the face). The head
//! sits at the depth where one centimetre at the face spans the head pose's `scale` pixels, so
//! the perspective projection agrees with MediaPipe's weak-perspective landmarks at the nose
//! bridge (landmark 168, the frame's anchor) and only parts far in front of or behind it get
//! perspective. Every head-worn product (eyewear, hats, earrings) is placed in this frame.

use crate::math::{Mat3, Vec2, Vec3};
use crate::vision::Face;

/// Focal length as a multiple of the longer image side (see the module docs).
pub const FOCAL_FACTOR: f32 = 1.2;

/// Why a camera could not be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the face's head pose could not be estimated")]
pub struct NoHeadPose;

/// The pinhole camera of a photo (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhotoCamera {
    /// Focal length in pixels.
    pub focal: f32,
    /// The principal point (the image centre), pixels.
    pub centre: Vec2,
}

impl PhotoCamera {
    /// The camera of a `width`×`height` photo.
    pub fn new(width: u32, height: u32) -> Self {
        PhotoCamera {
            focal: FOCAL_FACTOR * width.max(height) as f32,
            centre: Vec2::new(width as f32 / 2.0, height as f32 / 2.0),
        }
    }

    /// Projects a camera-space point (cm; x right, y down, z forward) to image pixels.
    pub fn project(&self, c: Vec3) -> Vec2 {
        Vec2::new(c.x / c.z, c.y / c.z) * self.focal + self.centre
    }

    /// The camera-space point at depth `z` that projects to pixel `p`.
    pub fn unproject(&self, p: Vec2, z: f32) -> Vec3 {
        let d = (p - self.centre) * (z / self.focal);
        Vec3::new(d.x, d.y, z)
    }
}

/// The photo camera plus the head frame of one face: maps head-frame points (cm) to camera
/// space and pixels.
#[derive(Debug, Clone)]
pub struct HeadCamera {
    camera: PhotoCamera,
    /// Head frame → pose frame rotation.
    rotation: Mat3,
    scale: f32,
    /// The head-frame point that lands on landmark 168.
    anchor_model: Vec3,
    /// Landmark 168 in camera space (cm).
    anchor_cam: Vec3,
}

impl HeadCamera {
    /// Sets up the camera for `face` in a `width`×`height` photo.
    pub fn new(face: &Face, width: u32, height: u32) -> Result<Self, NoHeadPose> {
        let pose = face.head_pose.as_ref().ok_or(NoHeadPose)?;
        let l = face.landmarks.get(168).ok_or(NoHeadPose)?;
        if !(pose.scale > 0.0 && pose.scale.is_finite()) {
            return Err(NoHeadPose);
        }
        let rotation = Mat3::from_cols_array_2d(&pose.rotation).transpose();
        let anchor_pose = Vec3::new(l[0], -l[1], -l[2]);
        let anchor_model =
            rotation.transpose() * ((anchor_pose - Vec3::from(pose.translation)) / pose.scale);
        let camera = PhotoCamera::new(width, height);
        let anchor_cam = camera.unproject(Vec2::new(l[0], l[1]), camera.focal / pose.scale);
        Ok(HeadCamera {
            camera,
            rotation,
            scale: pose.scale,
            anchor_model,
            anchor_cam,
        })
    }

    /// A head-frame point (cm) in camera space (cm; x right, y down, z forward).
    pub fn to_camera(&self, m: Vec3) -> Vec3 {
        let r = self.rotation * (m - self.anchor_model);
        self.anchor_cam + Vec3::new(r.x, -r.y, -r.z)
    }

    /// A head-frame direction in camera space.
    pub fn dir_to_camera(&self, n: Vec3) -> Vec3 {
        let r = self.rotation * n;
        Vec3::new(r.x, -r.y, -r.z)
    }

    /// A camera-space direction in the head frame.
    pub fn dir_to_model(&self, c: Vec3) -> Vec3 {
        self.rotation.transpose() * Vec3::new(c.x, -c.y, -c.z)
    }

    /// Projects a camera-space point to image pixels.
    pub fn project(&self, c: Vec3) -> Vec2 {
        self.camera.project(c)
    }

    /// Projects a head-frame point to image pixels.
    pub fn project_model(&self, m: Vec3) -> Vec2 {
        self.camera.project(self.to_camera(m))
    }

    /// The landmark 168 anchor in the head frame (cm).
    pub fn anchor_model(&self) -> Vec3 {
        self.anchor_model
    }

    /// Pixels per centimetre at the face.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// The focal length in pixels.
    pub fn focal(&self) -> f32 {
        self.camera.focal
    }

    /// The photo camera.
    pub fn camera(&self) -> &PhotoCamera {
        &self.camera
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unproject_inverts_project() {
        let cam = PhotoCamera::new(640, 480);
        let p = Vec2::new(100.0, 400.0);
        let back = cam.project(cam.unproject(p, 37.0));
        assert!((back - p).length() < 1e-3, "{back:?}");
        assert_eq!(cam.focal, 1.2 * 640.0);
    }
}
