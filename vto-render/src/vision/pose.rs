//! Body analysis: BlazePose detection → ROI from the alignment keypoints → pose_landmark_full
//! → 33 keypoints (refined on the heatmap, as `tensors_to_pose_landmarks_and_segmentation`
//! does) and the person mask at image resolution. Which person, when there are several, and
//! the second pass on a small one: [`super::person`].

use serde::{Deserialize, Serialize};

use super::detection::Detection;
use super::face::DetectorSpec;
use super::roi::RotatedRect;
use super::{output, sigmoid, Mask, Vision, VisionError};
use crate::image_ops::{Border, GpuImage, TensorSpec};
use crate::models::ModelId;

/// Pose landmark model input size.
pub(crate) const SIZE: u32 = 256;
/// Heatmap side.
const HEATMAP: usize = 64;
/// Landmarks the model outputs (33 body + 6 auxiliary).
const RAW_LANDMARKS: usize = 39;
/// Heatmap refinement window (`RefineLandmarksFromHeatmapCalculator`, kernel_size 7).
const KERNEL: usize = 7;
/// Minimum heatmap confidence to refine a landmark (the calculator's default).
const MIN_REFINE_CONFIDENCE: f32 = 0.5;
/// The auxiliary landmark at the body's centre (the tracking ROI's centre in MediaPipe's
/// `pose_landmarks_to_roi`).
const AUX_CENTRE: usize = 33;
/// The auxiliary landmark that sets the tracking ROI's size and rotation.
const AUX_SCALE: usize = 34;

/// The pose model's auxiliary alignment points in image pixels: the body's centre and the
/// point that sets the tracking region's size and rotation ([`AUX_CENTRE`], [`AUX_SCALE`]).
pub(crate) type AlignmentPoints = [[f32; 2]; 2];

/// How large a detected person is, in pixels: the radius of the circle the pose detector
/// puts around the body (hips' centre to its scale keypoint). The detector's box is the
/// face's, so it says nothing about a person whose head is cropped or turned away.
pub fn person_size(d: &Detection) -> f32 {
    match (d.keypoints.first(), d.keypoints.get(1)) {
        (Some(c), Some(s)) => ((s[0] - c[0]).powi(2) + (s[1] - c[1]).powi(2)).sqrt(),
        _ => 0.0,
    }
}

/// Names of the 33 BlazePose keypoints, by index ("left" is the subject's left).
pub const POSE_KEYPOINT_NAMES: [&str; 33] = [
    "nose",
    "left_eye_inner",
    "left_eye",
    "left_eye_outer",
    "right_eye_inner",
    "right_eye",
    "right_eye_outer",
    "left_ear",
    "right_ear",
    "mouth_left",
    "mouth_right",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_pinky",
    "right_pinky",
    "left_index",
    "right_index",
    "left_thumb",
    "right_thumb",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
    "left_heel",
    "right_heel",
    "left_foot_index",
    "right_foot_index",
];

/// The skeleton's bones (pairs of keypoint indices), as MediaPipe draws them.
pub const POSE_CONNECTIONS: [(usize, usize); 35] = [
    (0, 1),
    (1, 2),
    (2, 3),
    (3, 7),
    (0, 4),
    (4, 5),
    (5, 6),
    (6, 8),
    (9, 10),
    (11, 12),
    (11, 13),
    (13, 15),
    (15, 17),
    (15, 19),
    (15, 21),
    (17, 19),
    (12, 14),
    (14, 16),
    (16, 18),
    (16, 20),
    (16, 22),
    (18, 20),
    (11, 23),
    (12, 24),
    (23, 24),
    (23, 25),
    (24, 26),
    (25, 27),
    (26, 28),
    (27, 29),
    (28, 30),
    (29, 31),
    (30, 32),
    (27, 31),
    (28, 32),
];

/// One body keypoint.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PoseKeypoint {
    /// x in image pixels.
    pub x: f32,
    /// y in image pixels.
    pub y: f32,
    /// Depth in the same pixel scale, relative to the hips, negative towards the camera.
    pub z: f32,
    /// Probability the point is visible (not occluded).
    pub visibility: f32,
    /// Probability the point is inside the image.
    pub presence: f32,
}

/// One analysed body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// The pose detection in pixels (keypoints: hips' centre, a point above the head that
    /// sets size and rotation, shoulders' centre, another scale point).
    pub detection: Detection,
    /// The ROI the landmark model ran on.
    pub roi: RotatedRect,
    /// The landmark model's pose probability.
    pub score: f32,
    /// 33 keypoints ([`POSE_KEYPOINT_NAMES`]).
    pub keypoints: Vec<PoseKeypoint>,
    /// Fraction of the image's pixels with person probability > 0.5.
    pub mask_coverage: f32,
    /// The person mask at image resolution (not serialized).
    #[serde(skip)]
    pub mask: Option<Mask>,
}

/// Raw landmarks in normalized ROI coordinates: `[x, y, z, visibility, presence]` with the
/// activations applied, refined on the heatmap (`64 × 64 × 39`, HWC).
pub fn decode_pose_landmarks(raw: &[f32], heatmap: &[f32]) -> Vec<[f32; 5]> {
    let mut lms: Vec<[f32; 5]> = raw
        .chunks_exact(5)
        .take(RAW_LANDMARKS)
        .map(|v| {
            [
                v[0] / SIZE as f32,
                v[1] / SIZE as f32,
                v[2] / SIZE as f32,
                sigmoid(v[3]),
                sigmoid(v[4]),
            ]
        })
        .collect();
    if heatmap.len() != HEATMAP * HEATMAP * lms.len() {
        return lms;
    }
    let channels = lms.len();
    let half = (KERNEL - 1) / 2;
    for (k, lm) in lms.iter_mut().enumerate() {
        let col = (lm[0] * HEATMAP as f32) as i64;
        let row = (lm[1] * HEATMAP as f32) as i64;
        if lm[0] < 0.0 || lm[1] < 0.0 || col >= HEATMAP as i64 || row >= HEATMAP as i64 {
            continue;
        }
        let (col, row) = (col as usize, row as usize);
        let (mut sum, mut wc, mut wr, mut max) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for r in row.saturating_sub(half)..(row + half + 1).min(HEATMAP) {
            for c in col.saturating_sub(half)..(col + half + 1).min(HEATMAP) {
                let conf = sigmoid(heatmap[(r * HEATMAP + c) * channels + k]);
                sum += conf;
                max = max.max(conf);
                wc += c as f32 * conf;
                wr += r as f32 * conf;
            }
        }
        if max >= MIN_REFINE_CONFIDENCE && sum > 0.0 {
            lm[0] = wc / HEATMAP as f32 / sum;
            lm[1] = wr / HEATMAP as f32 / sum;
        }
    }
    lms
}

impl Vision {
    /// The body that wears the product, or `None` when there is none: the largest person the
    /// pose detector finds, refined on a small person (the body policy of
    /// [`super::person`]; [`Vision::choose_body`] also says how it was chosen).
    pub fn body(&mut self, image: &GpuImage) -> Result<Option<Body>, VisionError> {
        Ok(self.choose_body(image)?.map(|(body, _)| body))
    }

    /// The pose detector's people in `image`, largest first (by [`person_size`]).
    pub(crate) fn detect_people(
        &mut self,
        image: &GpuImage,
    ) -> Result<Vec<Detection>, VisionError> {
        let mut dets = self.detect(image, &DetectorSpec::pose())?;
        dets.sort_by(|a, b| person_size(b).total_cmp(&person_size(a)));
        Ok(dets)
    }

    /// The pose landmark model on `roi`: the body, and the auxiliary alignment points (body
    /// centre, scale point) in image pixels for a second pass; `None` when the model's pose
    /// flag rejects it.
    pub(crate) fn pose_in(
        &mut self,
        image: &GpuImage,
        detection: Detection,
        roi: RotatedRect,
    ) -> Result<Option<(Body, AlignmentPoints)>, VisionError> {
        let to_image = roi.tensor_to_image(SIZE, SIZE);
        let tensor = self.crop_to_tensor(
            image,
            &to_image,
            &TensorSpec {
                width: SIZE,
                height: SIZE,
                range_min: 0.0,
                range_max: 1.0,
                border: Border::Replicate,
            },
        )?;
        let outputs = self.nets.run(ModelId::PoseLandmarkFull, &tensor)?;
        let li = output(&outputs, RAW_LANDMARKS * 5, "pose landmarks")?;
        let fi = output(&outputs, 1, "pose flag")?;
        let si = output(&outputs, (SIZE * SIZE) as usize, "pose segmentation")?;
        let hi = output(&outputs, HEATMAP * HEATMAP * RAW_LANDMARKS, "pose heatmap")?;
        let score = sigmoid(outputs[fi][0]);
        if score.is_nan() || score < 0.5 {
            return Ok(None);
        }
        let raw = decode_pose_landmarks(&outputs[li], &outputs[hi]);
        let keypoints = raw
            .iter()
            .take(33)
            .map(|l| {
                let [x, y] = roi.project(l[0], l[1]);
                PoseKeypoint {
                    x,
                    y,
                    z: l[2] * roi.width,
                    visibility: l[3],
                    presence: l[4],
                }
            })
            .collect();
        let aux = |i: usize| raw.get(i).map(|l| roi.project(l[0], l[1]));
        let (Some(centre), Some(scale)) = (aux(AUX_CENTRE), aux(AUX_SCALE)) else {
            return Ok(None);
        };
        let probs: Vec<f32> = outputs[si].iter().map(|&v| sigmoid(v)).collect();
        let mask = self.mask_to_image(&probs, &to_image, image)?;
        Ok(Some((
            Body {
                detection,
                roi,
                score,
                keypoints,
                mask_coverage: mask.coverage(),
                mask: Some(mask),
            },
            [centre, scale],
        )))
    }

    /// Warps a `SIZE`×`SIZE` probability map whose pixels `to_image` maps into the image back
    /// onto the image grid.
    pub(crate) fn mask_to_image(
        &self,
        probs: &[f32],
        to_image: &crate::image_ops::Affine2,
        image: &GpuImage,
    ) -> Result<Mask, VisionError> {
        let to_mask = to_image
            .inverse()
            .ok_or_else(|| VisionError::BadOutput("degenerate ROI".into()))?;
        let data = self.warp_mask(
            probs,
            (SIZE, SIZE),
            &to_mask,
            (image.width(), image.height()),
        )?;
        Ok(Mask {
            width: image.width(),
            height: image.height(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heatmap_refinement_moves_a_landmark_to_the_peak() {
        // One landmark at (10, 10) of 256 (heatmap cell 2, 2); the heatmap peaks at cell (4, 3).
        let mut raw = vec![0.0f32; RAW_LANDMARKS * 5];
        raw[0] = 10.0;
        raw[1] = 10.0;
        let mut hm = vec![-20.0f32; HEATMAP * HEATMAP * RAW_LANDMARKS];
        hm[(3 * HEATMAP + 4) * RAW_LANDMARKS] = 20.0;
        let out = decode_pose_landmarks(&raw, &hm);
        assert!((out[0][0] - 4.0 / 64.0).abs() < 1e-3, "{}", out[0][0]);
        assert!((out[0][1] - 3.0 / 64.0).abs() < 1e-3, "{}", out[0][1]);
        // Landmark 1 at (0, 0) sees no confident cell: unchanged.
        assert_eq!(out[1][0], 0.0);
        assert!((out[0][3] - 0.5).abs() < 1e-6, "visibility is sigmoid(0)");
    }
}
