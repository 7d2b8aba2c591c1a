//! The scene of a head-worn product (eyewear, hats, earrings and necklaces): the head camera
//! of the face, the light estimated from the face, a [`SceneBuilder`] for the photo seen by
//! that camera, and the head occluder. A category adds only its own decisions: where the
//! product goes, how its lenses and shadow are drawn, and any occluder of its own.

use image::RgbaImage;

use super::camera::{HeadCamera, NoHeadPose};
use super::{light, occluder, CameraMesh, SceneBuilder};
use crate::product::Product;
use crate::vision::Face;

/// A face in a photo, ready to carry a head-worn product (see the module docs).
#[derive(Debug, Clone)]
pub struct HeadScene<'a> {
    photo: &'a RgbaImage,
    face: &'a Face,
    cam: HeadCamera,
}

impl<'a> HeadScene<'a> {
    /// The head camera of `face` in `photo`; [`NoHeadPose`] when the face has no head pose
    /// or not its 468 landmarks.
    pub fn new(photo: &'a RgbaImage, face: &'a Face) -> Result<Self, NoHeadPose> {
        let cam = HeadCamera::new(face, photo.width(), photo.height())?;
        if face.landmarks.len() < 468 {
            return Err(NoHeadPose);
        }
        Ok(HeadScene { photo, face, cam })
    }

    /// The head camera (head frame ↔ camera space ↔ pixels).
    pub fn cam(&self) -> &HeadCamera {
        &self.cam
    }

    /// The face's 468 landmarks (pixels, and depth in pixel units).
    pub fn landmarks(&self) -> &'a [[f32; 3]] {
        &self.face.landmarks
    }

    /// A builder for `product` in the photo seen by the head camera, lit by the light the
    /// face shows ([`light::from_face`]); the category sets the transparency, the
    /// supersampling and the contact shadow.
    pub fn builder(&self, product: &Product) -> SceneBuilder {
        let lighting = light::from_face(self.photo, self.face, &self.cam);
        SceneBuilder::new(
            *self.cam.camera(),
            self.photo.width(),
            self.photo.height(),
            product,
        )
        .lighting(lighting)
    }

    /// The head occluder ([`occluder::head`]): hides what passes behind the head.
    pub fn head_occluder(&self) -> CameraMesh {
        occluder::head(self.face, &self.cam)
    }

    /// The skull that hides eyewear temples ([`occluder::temple_head`]): broader and boxier
    /// than the head occluder, as the skull is where temples rest; on a turned head its near
    /// side no broader than the near temple (`temples_x`: each temple's inner x in the head
    /// frame, −X side first).
    pub fn temple_occluder(&self, temples_x: Option<[f32; 2]>) -> CameraMesh {
        occluder::temple_head(self.face, &self.cam, temples_x)
    }
}
