//! Face analysis: detection (short and full range), the rotated ROI, the 468-landmark face
//! mesh and the head pose.
//!
//! # Detector policy
//! The short-range detector (what MediaPipe's FaceMesh uses) is run first: it is the most
//! accurate for faces that fill a good part of the photo (portraits, selfies, try-on
//! photos). The full-range detector is run as well and its detections are added when they
//! overlap no short-range face (IoU ≤ 0.3): it finds the small, far faces of group photos that
//! the short-range model misses (or whose short-range detection the mesh rejected). Every
//! candidate then goes through the face mesh, whose face flag (≥ 0.5 after the sigmoid)
//! rejects non-faces. The mesh's region of a full-range
//! candidate comes from the short-range detector run again on the candidate's surroundings
//! ([`Vision::redetect_short_range`]): the mesh expects that detector's regions.

use serde::{Deserialize, Serialize};

use super::anchors::{self, Anchor, AnchorOptions};
use super::detection::{self, DecodeOptions, Detection};
use super::head_pose::{self, HeadPose};
use super::roi::RotatedRect;
use super::{output, sigmoid, Vision, VisionError};
use crate::image_ops::{Border, GpuImage, TensorSpec};
use crate::models::ModelId;

/// Which detector found a face.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaceDetector {
    /// BlazeFace short range.
    ShortRange,
    /// BlazeFace full range.
    FullRange,
}

/// One analysed face.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Face {
    /// The detection in image pixels (box and the six keypoints: right eye, left eye, nose
    /// tip, mouth, right ear tragion, left ear tragion — "right" being the subject's right).
    pub detection: Detection,
    /// The detector that found it.
    pub detector: FaceDetector,
    /// The ROI the face mesh ran on.
    pub roi: RotatedRect,
    /// The face mesh's face probability (its face flag through a sigmoid).
    pub score: f32,
    /// 468 landmarks: `x`, `y` in image pixels, `z` depth in the same pixel scale (negative
    /// towards the camera, relative to the face's centre).
    pub landmarks: Vec<[f32; 3]>,
    /// The head pose (see [`super::head_pose`] for its frame).
    pub head_pose: Option<HeadPose>,
}

/// Faces at least this wide and narrower than [`REFINE_BELOW_PX`] (pixels between landmarks
/// 234 and 454) get a second face-mesh pass on the region their first landmarks give
/// ([`Vision::refine_face`]), as MediaPipe's tracking pass takes it from the previous frame.
///
/// Measured against MediaPipe 0.10.14 (`scripts/face_landmarks_vs_mediapipe.py`, static and
/// `--tracking` FaceMesh) on `../shared/testdata/people` and the face cases (#30): under ~30 px
/// the first landmarks are too coarse to frame a better region than the detector's, and the
/// second pass moved them away from both MediaPipe answers (a 23 px face 2.2 → 4.5 %, a 27 px
/// one 1.7 → 2.5 % of the face width).
pub const REFINE_FROM_PX: f32 = 30.0;

/// Faces narrower than this (and at least [`REFINE_FROM_PX`]) get the second mesh pass.
///
/// Between 30 and 80 px a detector's box frames the face badly: the short-range detector's
/// box of a 46–60 px face is 1.4–1.8 times the face's width, and the mesh in its 1.5 times
/// larger region put the mouth on the chin (two astronauts of a group photo, a man standing
/// 59 px wide). MediaPipe's static FaceMesh keeps that answer; its tracking pass, which frames
/// the face from the first landmarks, moves them by 9–14 % of the face width, and so do these
/// passes (vs MediaPipe's tracking answer: 17.1 → 0.2 %, 10.4 → 0.9 %, 9.9 → 0.5 %; the 52 and
/// 63 px profiles 7.3 → 3.1 % and 5.6 → 0.7 %). Above 80 px the detectors frame the face well
/// and the first pass is MediaPipe's static answer to 0.7 % (0.1 % on most faces).
pub const REFINE_BELOW_PX: f32 = 80.0;

/// Mesh passes of [`Vision::refine_face`], each on the region the previous landmarks give:
/// MediaPipe's tracking graph fed the same photo three times (a detector pass, then two on
/// its own landmarks). With two, the short-range faces of `REFINE_FROM_PX`..`REFINE_BELOW_PX`
/// land on MediaPipe's tracking answer (0.01–0.9 % of the face width; one pass left 0.3–5.7 %),
/// and the portraits of `../shared/testdata/people` scaled down to 18–70 px faces lie 3.4 %
/// (mean) from MediaPipe's landmarks on the large face, 3.8 % with one pass.
pub const REFINE_PASSES: usize = 2;

impl Face {
    /// The face's width in pixels: landmarks 234 to 454 (0 without landmarks).
    pub fn width_px(&self) -> f32 {
        match (self.landmarks.get(234), self.landmarks.get(454)) {
            (Some(a), Some(b)) => ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt(),
            _ => 0.0,
        }
    }

    /// Whether the face's size calls for a second mesh pass ([`REFINE_FROM_PX`] to
    /// [`REFINE_BELOW_PX`]).
    pub fn needs_refinement(&self) -> bool {
        (REFINE_FROM_PX..REFINE_BELOW_PX).contains(&self.width_px())
    }

    /// The bounding box of the landmarks `[xmin, ymin, xmax, ymax]` in pixels.
    pub fn landmark_box(&self) -> [f32; 4] {
        let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in &self.landmarks {
            b[0] = b[0].min(p[0]);
            b[1] = b[1].min(p[1]);
            b[2] = b[2].max(p[0]);
            b[3] = b[3].max(p[1]);
        }
        b
    }
}

/// A detector's fixed parameters.
pub(crate) struct DetectorSpec {
    pub model: ModelId,
    pub size: u32,
    pub anchors: Vec<Anchor>,
    pub decode: DecodeOptions,
}

impl DetectorSpec {
    pub fn face_short() -> Self {
        Self {
            model: ModelId::FaceDetectionShortRange,
            size: 128,
            anchors: anchors::generate(&AnchorOptions::face_short_range()),
            decode: DecodeOptions::face_short_range(),
        }
    }
    pub fn face_full() -> Self {
        Self {
            model: ModelId::FaceDetectionFullRange,
            size: 192,
            anchors: anchors::generate(&AnchorOptions::face_full_range()),
            decode: DecodeOptions::face_full_range(),
        }
    }
    pub fn pose() -> Self {
        Self {
            model: ModelId::PoseDetection,
            size: 224,
            anchors: anchors::generate(&AnchorOptions::pose()),
            decode: DecodeOptions::pose(),
        }
    }
}

/// The square the short-range detector looks at again around a full-range detection, in
/// multiples of the detection box's longer side ([`Vision::redetect_short_range`]): the face
/// then fills about a third of the detector's input, as in the photos it was made for (and as
/// `scripts/face_landmarks_vs_mediapipe.py` gives MediaPipe's FaceMesh the faces it misses).
pub const REDETECT_CROP: f32 = 3.0;

/// NMS overlap threshold of all three detectors.
const NMS_IOU: f32 = 0.3;
/// Face mesh input size.
pub(crate) const MESH: u32 = 192;

/// Decodes a detector's raw outputs (any order) into detections in the letterbox tensor's
/// normalized coordinates, after weighted NMS.
pub fn decode_detector_outputs(
    outputs: &[Vec<f32>],
    anchors: &[Anchor],
    opts: &DecodeOptions,
) -> Result<Vec<Detection>, VisionError> {
    let n = anchors.len();
    let ri = output(outputs, n * opts.num_coords, "detector regressors")?;
    let si = output(outputs, n, "detector scores")?;
    let raw = detection::decode(&outputs[ri], &outputs[si], anchors, opts)?;
    Ok(detection::weighted_nms(raw, NMS_IOU))
}

/// Short-range candidates, then the full-range ones that overlap none of them (IoU ≤ 0.3).
pub fn merge_candidates(
    short: Vec<(Detection, FaceDetector)>,
    full: Vec<(Detection, FaceDetector)>,
) -> Vec<(Detection, FaceDetector)> {
    let mut out = short;
    for f in full {
        if out.iter().all(|s| s.0.iou(&f.0) <= NMS_IOU) {
            out.push(f);
        }
    }
    out
}

/// Projects the face mesh's raw landmarks (1404 values, 192×192 tensor pixels) through the
/// ROI into image pixels.
pub fn project_face_landmarks(raw: &[f32], roi: &RotatedRect) -> Vec<[f32; 3]> {
    raw.chunks_exact(3)
        .map(|p| {
            let [x, y] = roi.project(p[0] / MESH as f32, p[1] / MESH as f32);
            [x, y, p[2] / MESH as f32 * roi.width]
        })
        .collect()
}

impl Vision {
    /// Runs one detector on the letterboxed image; detections in image pixels.
    pub(crate) fn detect(
        &mut self,
        image: &GpuImage,
        spec: &DetectorSpec,
    ) -> Result<Vec<Detection>, VisionError> {
        let roi = RotatedRect::letterbox(image.width(), image.height(), 1.0);
        self.detect_in(image, spec, &roi)
    }

    /// Runs one detector on an unrotated square region of the image (it may reach past the
    /// image's edges: zeros there, as the letterbox); detections in image pixels.
    fn detect_in(
        &mut self,
        image: &GpuImage,
        spec: &DetectorSpec,
        roi: &RotatedRect,
    ) -> Result<Vec<Detection>, VisionError> {
        let tensor = self.crop_to_tensor(
            image,
            &roi.tensor_to_image(spec.size, spec.size),
            &TensorSpec {
                width: spec.size,
                height: spec.size,
                range_min: -1.0,
                range_max: 1.0,
                border: Border::Zero,
            },
        )?;
        let outputs = self.nets.run(spec.model, &tensor)?;
        let dets = decode_detector_outputs(&outputs, &spec.anchors, &spec.decode)?;
        Ok(dets.iter().map(|d| roi.project_detection(d)).collect())
    }

    /// Face candidates by the policy of the module docs.
    pub fn detect_faces(
        &mut self,
        image: &GpuImage,
    ) -> Result<Vec<(Detection, FaceDetector)>, VisionError> {
        let short = self.detect_faces_with(image, FaceDetector::ShortRange)?;
        let full = self.detect_faces_with(image, FaceDetector::FullRange)?;
        Ok(merge_candidates(short, full))
    }

    /// The candidates of one detector, in image pixels.
    pub fn detect_faces_with(
        &mut self,
        image: &GpuImage,
        detector: FaceDetector,
    ) -> Result<Vec<(Detection, FaceDetector)>, VisionError> {
        let spec = match detector {
            FaceDetector::ShortRange => DetectorSpec::face_short(),
            FaceDetector::FullRange => DetectorSpec::face_full(),
        };
        Ok(self
            .detect(image, &spec)?
            .into_iter()
            .map(|d| (d, detector))
            .collect())
    }

    /// Runs the face mesh on one detection; `None` when the face flag rejects it.
    ///
    /// A full-range detection only says where to look: its ROI comes from the short-range
    /// detector run again around it ([`Vision::redetect_short_range`]), when that finds the
    /// face, as the face mesh expects; otherwise from the full-range box itself.
    pub fn face_from_detection(
        &mut self,
        image: &GpuImage,
        detection: Detection,
        detector: FaceDetector,
    ) -> Result<Option<Face>, VisionError> {
        let roi = match detector {
            FaceDetector::ShortRange => RotatedRect::from_face_detection(&detection),
            FaceDetector::FullRange => match self.redetect_short_range(image, &detection)? {
                Some(near) => RotatedRect::from_face_detection(&near),
                None => RotatedRect::from_face_detection(&detection),
            },
        };
        self.face_in_roi(image, detection, detector, roi)
    }

    /// The short-range detector's detection of the face a full-range detection `found`
    /// (image pixels): the detector runs on a square [`REDETECT_CROP`] times the box's longer
    /// side around the box's centre, where a small face is as large as in the photos it was
    /// trained for, and the detection whose centre lies in `found`'s box nearest its centre
    /// is kept. `None` when there is none.
    ///
    /// The face mesh was trained on the short-range detector's regions; the full-range
    /// detector's boxes sit higher and are sized differently on small turned faces (on a
    /// 52 px profile, 16 px higher and 18 % smaller), which put the mesh 13 % of the face
    /// width off MediaPipe's landmarks for that face. MediaPipe's own answer for a face its
    /// FaceMesh misses is this one: the short-range detector on the face's surroundings.
    pub fn redetect_short_range(
        &mut self,
        image: &GpuImage,
        found: &Detection,
    ) -> Result<Option<Detection>, VisionError> {
        let side = REDETECT_CROP * found.width().max(found.height());
        if !(side.is_finite() && side > 1.0) {
            return Ok(None);
        }
        let (cx, cy) = (
            (found.xmin + found.xmax) / 2.0,
            (found.ymin + found.ymax) / 2.0,
        );
        let region = RotatedRect {
            cx,
            cy,
            width: side,
            height: side,
            rotation: 0.0,
        };
        let near = self
            .detect_in(image, &DetectorSpec::face_short(), &region)?
            .into_iter()
            .map(|d| {
                let (x, y) = ((d.xmin + d.xmax) / 2.0, (d.ymin + d.ymax) / 2.0);
                let inside = (found.xmin..=found.xmax).contains(&x)
                    && (found.ymin..=found.ymax).contains(&y);
                (inside, (x - cx).powi(2) + (y - cy).powi(2), d)
            })
            .filter(|c| c.0)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|c| c.2);
        Ok(near)
    }

    /// Runs the face mesh again on the region MediaPipe's tracking pass would take from
    /// `face`'s own landmarks ([`RotatedRect::from_face_landmarks`]), [`REFINE_PASSES`]
    /// times, each pass on the region the previous one's landmarks give: a tighter, better
    /// rotated crop than the detector's box gives, which matters most for small and turned
    /// faces. A pass whose face flag rejects its crop ends the passes with the last accepted
    /// one; `None` when the first is rejected.
    pub fn refine_face(
        &mut self,
        image: &GpuImage,
        face: &Face,
    ) -> Result<Option<Face>, VisionError> {
        let mut refined: Option<Face> = None;
        for _ in 0..REFINE_PASSES {
            let from = refined.as_ref().unwrap_or(face);
            let Some(roi) = RotatedRect::from_face_landmarks(&from.landmarks) else {
                break;
            };
            match self.face_in_roi(image, face.detection.clone(), face.detector, roi)? {
                Some(next) => refined = Some(next),
                None => break,
            }
        }
        Ok(refined)
    }

    fn face_in_roi(
        &mut self,
        image: &GpuImage,
        detection: Detection,
        detector: FaceDetector,
        roi: RotatedRect,
    ) -> Result<Option<Face>, VisionError> {
        if roi.width.is_nan() || roi.width <= 1.0 {
            return Ok(None);
        }
        let tensor = self.crop_to_tensor(
            image,
            &roi.tensor_to_image(MESH, MESH),
            &TensorSpec {
                width: MESH,
                height: MESH,
                range_min: 0.0,
                range_max: 1.0,
                border: Border::Replicate,
            },
        )?;
        let outputs = self.nets.run(ModelId::FaceLandmark, &tensor)?;
        let li = output(&outputs, 468 * 3, "face landmarks")?;
        let fi = output(&outputs, 1, "face flag")?;
        let score = sigmoid(outputs[fi][0]);
        if score.is_nan() || score < 0.5 {
            return Ok(None);
        }
        let landmarks = project_face_landmarks(&outputs[li], &roi);
        let head_pose = head_pose::estimate(&landmarks);
        Ok(Some(Face {
            detection,
            detector,
            roi,
            score,
            landmarks,
            head_pose,
        }))
    }

    /// All faces in the image, largest (detection box area) first: the short-range
    /// candidates the mesh accepts, then the full-range candidates that overlap none of those
    /// (a short-range candidate the mesh rejected hides none: on a small turned face its box
    /// can be twice the face, while the full-range box over the same face yields the mesh).
    pub fn faces(&mut self, image: &GpuImage) -> Result<Vec<Face>, VisionError> {
        let mut faces = Vec::new();
        let mut accepted = Vec::new();
        for (d, which) in self.detect_faces_with(image, FaceDetector::ShortRange)? {
            if let Some(f) = self.face_from_detection(image, d.clone(), which)? {
                faces.push(f);
                accepted.push((d, which));
            }
        }
        let full = self.detect_faces_with(image, FaceDetector::FullRange)?;
        let short = accepted.len();
        for (d, which) in merge_candidates(accepted, full).into_iter().skip(short) {
            if let Some(f) = self.face_from_detection(image, d, which)? {
                faces.push(f);
            }
        }
        faces.sort_by(|a, b| b.detection.area().total_cmp(&a.detection.area()));
        Ok(faces)
    }
}
