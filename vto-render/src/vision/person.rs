//! The person as the vision stage hands it to a category: the photo and what was found in it
//! ([`Person`]: the face that wears the product, the body, the person mask, the hands), and
//! how that face was chosen among the candidates ([`FaceChoice`], [`Vision::choose_face`]).
//!
//! # The face policy
//! The short-range detector runs first; its candidates go through the face mesh largest first
//! (detection box area), and a candidate whose face flag rejects it falls through to the next.
//! When that gives a face at least [`SHORT_RANGE_ENOUGH`] of the photo's longer side wide, no
//! larger face can hide from the short-range detector and it wears the product. Otherwise
//! (small faces, group photos, or nothing the mesh accepts) the full-range detector runs too,
//! its candidates are merged with the short-range ones the mesh did not reject (overlaps
//! counted once), and the same largest-first fall-through runs over all of them. Either way
//! the face that wears the product is **the largest face that yields a mesh**. A small face
//! ([`super::face::REFINE_FROM_PX`] to [`super::face::REFINE_BELOW_PX`] between its side
//! landmarks) then gets a second mesh pass on the region its first landmarks give (MediaPipe's
//! tracking pass), which frames it better than a detector's box; the refined pass is kept
//! unless its face flag rejects it. [`FaceChoice`] says how
//! many candidates were seen, which was chosen and whether it was refined.
//!
//! # The body policy
//! The same for bodies: the pose detector's people go through the pose landmark model largest
//! first ([`super::pose::person_size`]: the circle the detector puts around the body, not its
//! face box, so a head-cropped or turned-away person counts at their body's size), and the
//! first the model accepts wears the product. A small person (a region under
//! [`REFINE_BODY_BELOW`] of the photo's shorter side) gets a second pass on the region the
//! first pass's alignment points give, as MediaPipe's pose tracking does from one frame to
//! the next: the crop is then centred and turned on the body the model found rather than on
//! the detector's rougher guess. [`BodyChoice`] says how many people were seen, which one
//! wears the product and whether it was refined.

use image::RgbaImage;

use super::face::{merge_candidates, FaceDetector};
use super::{Body, Detection, Face, Hand, Mask, RotatedRect, Vision, VisionError};
use crate::image_ops::GpuImage;

/// How the face that wears the product was chosen (the face policy of the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct FaceChoice {
    /// The face.
    pub face: Face,
    /// Face candidates both detectors found (after merging their overlaps).
    pub candidates: usize,
    /// The chosen face's rank among the candidates by detection box area (0: the largest);
    /// every larger candidate was rejected by the face mesh.
    pub rank: usize,
    /// Whether the landmarks come from a second mesh pass on a region refined from the first.
    pub refined: bool,
}

/// How the body that wears the product was chosen (the body policy of the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyChoice {
    /// People the pose detector found.
    pub candidates: usize,
    /// The chosen person's rank by size (0: the largest); every larger one was rejected by
    /// the pose landmark model.
    pub rank: usize,
    /// Whether the keypoints come from a second pass on a region refined from the first.
    pub refined: bool,
}

/// A person whose pose region's side is under this fraction of the photo's shorter side is
/// small: the landmark model runs a second time on the region its first pass gives (the
/// body policy of the module docs). A standing person filling a portrait photo's height has
/// a region about as large as the photo's longer side; a person a third of the photo's
/// height, about a half of it (0.52 measured on a real photo padded to three times its
/// height).
pub const REFINE_BODY_BELOW: f32 = 0.6;

/// The person: the photo and what the vision stage found, per the category's needs
/// (`tryon::Needs`, which the engine hands the vision stage).
#[derive(Debug, Clone)]
pub struct Person {
    /// The photo (RGBA, orientation applied).
    pub photo: RgbaImage,
    /// The face, when `Needs::face` (the engine fails the job when there is none).
    pub face: Option<FaceChoice>,
    /// The body, when `Needs::body` and one was found.
    pub body: Option<Body>,
    /// How the body was chosen among the people in the photo, when there is a body.
    pub body_choice: Option<BodyChoice>,
    /// The selfie-segmentation mask, when `Needs::person_mask`.
    pub mask: Option<Mask>,
    /// The hands, when `Needs::hands` (best palm first; empty when none was found).
    pub hands: Vec<Hand>,
    /// A face was found but set aside: it is not the chosen body's ([`face_belongs_to`]),
    /// the body's own face being turned away or hidden (another person's face beside them).
    pub face_set_aside: bool,
}

/// Whether `face` is the face of `body`: the pose's nose keypoint lies within the face's
/// detection box grown by half its width on every side. A couple in a photo: the pose
/// model's person may be the one whose face is turned away, and the face detector's face
/// the other's; a garment shaped around the wrong face would cover the wearer's head.
pub fn face_belongs_to(face: &Face, body: &Body) -> bool {
    let Some(nose) = body.keypoints.first() else {
        return true;
    };
    let d = &face.detection;
    let grow = 0.5 * d.width();
    nose.x >= d.xmin - grow
        && nose.x <= d.xmax + grow
        && nose.y >= d.ymin - grow
        && nose.y <= d.ymax + grow
}

/// A face found by the short-range detector at least this fraction of the photo's longer
/// side wide lies in that detector's design range: any larger face would be found by it too,
/// so the full-range detector (which can only add smaller faces) is skipped. A face of 15 % is
/// about 19 px in the detector's 128² input (a frontal portrait's face box is 18–40 % of the
/// photo).
pub const SHORT_RANGE_ENOUGH: f32 = 0.15;

impl Vision {
    /// The face that wears the product, by the face policy of the module docs, on an uploaded
    /// photo; `None` when no candidate yields a mesh.
    pub fn choose_face(&mut self, gpu: &GpuImage) -> Result<Option<FaceChoice>, VisionError> {
        let vision = self;
        let longer = gpu.width().max(gpu.height()) as f32;
        let by_area = |mut c: Vec<(Detection, FaceDetector)>| {
            c.sort_by(|a, b| b.0.area().total_cmp(&a.0.area()));
            c
        };
        let short = by_area(vision.detect_faces_with(gpu, FaceDetector::ShortRange)?);
        let mut rejected = Vec::new();
        let mut found = None;
        for (rank, (d, which)) in short.iter().enumerate() {
            if let Some(face) = vision.face_from_detection(gpu, d.clone(), *which)? {
                found = Some((rank, face));
                break;
            }
            rejected.push(d.clone());
        }
        let (candidates, found) = match found {
            Some((rank, face)) if face.detection.width() >= SHORT_RANGE_ENOUGH * longer => {
                (short.len(), Some((rank, face)))
            }
            _ => {
                // Small or no faces so far: the full-range detector's candidates join in, and the
                // largest that yields a mesh wins (meshes already run are not run again).
                // A short-range candidate the mesh rejected hides no full-range one: on a
                // small turned face the short-range box can be twice the face, and the
                // full-range box over the same face yields the mesh.
                let full = vision.detect_faces_with(gpu, FaceDetector::FullRange)?;
                let short = short.into_iter().filter(|c| !rejected.contains(&c.0));
                let all = by_area(merge_candidates(short.collect(), full));
                let mut best = None;
                for (rank, (d, which)) in all.iter().enumerate() {
                    if let Some((_, face)) = &found {
                        if face.detection == *d {
                            best = found.take().map(|(_, f)| (rank, f));
                            break;
                        }
                    }
                    if let Some(face) = vision.face_from_detection(gpu, d.clone(), *which)? {
                        best = Some((rank, face));
                        break;
                    }
                }
                (all.len(), best)
            }
        };
        let Some((rank, face)) = found else {
            return Ok(None);
        };
        let refined = if face.needs_refinement() {
            vision.refine_face(gpu, &face)?
        } else {
            None
        };
        Ok(Some(FaceChoice {
            refined: refined.is_some(),
            face: refined.unwrap_or(face),
            candidates,
            rank,
        }))
    }
}

impl Vision {
    /// The body that wears the product and how it was chosen, by the body policy of the
    /// module docs; `None` when the landmark model accepts no person.
    pub fn choose_body(
        &mut self,
        gpu: &GpuImage,
    ) -> Result<Option<(Body, BodyChoice)>, VisionError> {
        let people = self.detect_people(gpu)?;
        let shorter = gpu.width().min(gpu.height()) as f32;
        for (rank, d) in people.iter().enumerate() {
            let Some(roi) = RotatedRect::from_pose_detection(d) else {
                continue;
            };
            let Some((body, aux)) = self.pose_in(gpu, d.clone(), roi)? else {
                continue;
            };
            let mut refined = None;
            if roi.width < REFINE_BODY_BELOW * shorter {
                let again = Detection {
                    keypoints: aux.to_vec(),
                    ..d.clone()
                };
                if let Some(roi) = RotatedRect::from_pose_detection(&again) {
                    refined = self.pose_in(gpu, d.clone(), roi)?.map(|(b, _)| b);
                }
            }
            let choice = BodyChoice {
                candidates: people.len(),
                rank,
                refined: refined.is_some(),
            };
            return Ok(Some((refined.unwrap_or(body), choice)));
        }
        Ok(None)
    }
}
