//! Hands: MediaPipe's palm detector and hand landmark model, with the pre- and
//! post-processing of `palm_detection_cpu.pbtxt`, `palm_detection_detection_to_roi.pbtxt` and
//! `hand_landmark_cpu.pbtxt` (mediapipe 0.10.14).
//!
//! 1. **Palms**: the photo letterboxed into 192² (zero border, values in [0, 1]) →
//!    `palm_detection_full` → SSD decoding over 2016 anchors (the BlazeFace short-range grid
//!    at 192²: strides 8, 16, 16, 16, two anchors per cell and layer) with 18 values per box
//!    (box + 7 keypoints), sigmoid scores ≥ 0.5 → weighted NMS at IoU 0.3 → pixels.
//! 2. **Hand ROI** ([`hand_roi`]): the palm box, rotated so that keypoint 0 (the wrist's
//!    centre) → keypoint 2 (the middle finger's MCP) points up, shifted half its height towards
//!    the fingers, squared on its long side and scaled by 2.6 so that it covers the whole hand.
//! 3. **Landmarks**: the ROI cropped to 224² (values in [0, 1], replicated border) →
//!    `hand_landmark_full` → 21 landmarks (x, y in tensor pixels, z in the same scale), a hand
//!    flag (≥ 0.5 keeps the hand) and the handedness, both already probabilities.
//!
//! **Handedness.** MediaPipe's classifier answers for a mirrored (selfie) image: its "Left"
//! (probability > 0.5) is the subject's *right* hand in an ordinary photo. [`Hand::handedness`]
//! is the subject's side, already swapped.
//!
//! At most [`MAX_HANDS`] hands, best palm score first.

use serde::{Deserialize, Serialize};

use super::anchors::{self, Anchor, AnchorOptions};
use super::detection::{DecodeOptions, Detection};
use super::face::decode_detector_outputs;
use super::roi::{normalize_radians, RotatedRect};
use super::{Vision, VisionError};
use crate::image_ops::{Border, GpuImage, TensorSpec};
use crate::models::ModelId;

/// Palm detector input side.
pub const PALM_SIZE: u32 = 192;
/// Hand landmark model input side.
pub const LANDMARK_SIZE: u32 = 224;
/// Landmarks per hand.
pub const HAND_LANDMARKS: usize = 21;
/// Least hand flag for a hand to count (`hand_landmark_cpu.pbtxt`'s threshold).
pub const MIN_HAND_SCORE: f32 = 0.5;
/// Hands analysed per photo (the best palms).
pub const MAX_HANDS: usize = 2;
/// The hand ROI's scale over the palm box (`palm_detection_detection_to_roi.pbtxt`).
const ROI_SCALE: f32 = 2.6;
/// The hand ROI's shift along its y axis, in palm-box heights (towards the fingers).
const ROI_SHIFT_Y: f32 = -0.5;

/// Names of the 21 hand landmarks, by index.
pub const HAND_LANDMARK_NAMES: [&str; HAND_LANDMARKS] = [
    "wrist",
    "thumb_cmc",
    "thumb_mcp",
    "thumb_ip",
    "thumb_tip",
    "index_mcp",
    "index_pip",
    "index_dip",
    "index_tip",
    "middle_mcp",
    "middle_pip",
    "middle_dip",
    "middle_tip",
    "ring_mcp",
    "ring_pip",
    "ring_dip",
    "ring_tip",
    "pinky_mcp",
    "pinky_pip",
    "pinky_dip",
    "pinky_tip",
];

/// Which of the subject's hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Handedness {
    /// The subject's left hand.
    Left,
    /// The subject's right hand.
    Right,
}

impl Handedness {
    /// `"left"` or `"right"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Handedness::Left => "left",
            Handedness::Right => "right",
        }
    }
}

/// One analysed hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hand {
    /// The palm detection in pixels (keypoints: wrist centre, index MCP, middle MCP, ring
    /// MCP, pinky MCP, thumb CMC, thumb MCP as the palm model orders them).
    pub detection: Detection,
    /// The ROI the landmark model ran on.
    pub roi: RotatedRect,
    /// The hand flag (probability that a hand is in the ROI).
    pub score: f32,
    /// The subject's side (see the module docs).
    pub handedness: Handedness,
    /// The probability of [`Hand::handedness`].
    pub handedness_score: f32,
    /// 21 landmarks ([`HAND_LANDMARK_NAMES`]): x, y in image pixels, z (depth relative to
    /// the wrist, negative towards the camera) in the same pixel scale.
    pub landmarks: Vec<[f32; 3]>,
}

impl Hand {
    /// A hand from given landmarks (tests and callers with their own hand tracker): the ROI
    /// and the detection are the landmarks' bounding box, the scores 1.
    pub fn from_landmarks(landmarks: Vec<[f32; 3]>, handedness: Handedness) -> Hand {
        let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
        for p in &landmarks {
            for k in 0..2 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let detection = Detection {
            score: 1.0,
            xmin: lo[0],
            ymin: lo[1],
            xmax: hi[0],
            ymax: hi[1],
            keypoints: Vec::new(),
        };
        let roi = RotatedRect {
            cx: (lo[0] + hi[0]) / 2.0,
            cy: (lo[1] + hi[1]) / 2.0,
            width: hi[0] - lo[0],
            height: hi[1] - lo[1],
            rotation: 0.0,
        };
        Hand {
            detection,
            roi,
            score: 1.0,
            handedness,
            handedness_score: 1.0,
            landmarks,
        }
    }

    /// The landmarks' bounding box `[xmin, ymin, xmax, ymax]`, pixels.
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

/// The palm detector's anchors: BlazeFace's short-range grid at 192².
pub fn palm_anchors() -> Vec<Anchor> {
    anchors::generate(&AnchorOptions {
        input_width: PALM_SIZE,
        input_height: PALM_SIZE,
        ..AnchorOptions::face_short_range()
    })
}

/// The palm detector's decoding options.
pub fn palm_decode_options() -> DecodeOptions {
    DecodeOptions {
        num_coords: 18,
        num_keypoints: 7,
        scale: PALM_SIZE as f32,
        score_clip: 100.0,
        min_score: 0.5,
    }
}

/// The hand ROI from a palm detection in pixels (see the module docs); `None` for a
/// degenerate detection.
pub fn hand_roi(d: &Detection) -> Option<RotatedRect> {
    let (w, h) = (d.width(), d.height());
    let (k0, k2) = (d.keypoints.first()?, d.keypoints.get(2)?);
    if !(w > 0.0 && h > 0.0 && w.is_finite() && h.is_finite()) {
        return None;
    }
    // Rotation that brings wrist → middle MCP to 90° (up on screen).
    let angle = (-(k2[1] - k0[1])).atan2(k2[0] - k0[0]);
    let rotation = normalize_radians(std::f32::consts::FRAC_PI_2 - angle);
    if !rotation.is_finite() {
        return None;
    }
    let (s, c) = rotation.sin_cos();
    // The shift is along the rotated rectangle's own y axis, in its height.
    let (dx, dy) = (-h * ROI_SHIFT_Y * s, h * ROI_SHIFT_Y * c);
    Some(
        RotatedRect {
            cx: (d.xmin + d.xmax) / 2.0 + dx,
            cy: (d.ymin + d.ymax) / 2.0 + dy,
            width: w,
            height: h,
            rotation,
        }
        .square_long()
        .scaled(ROI_SCALE),
    )
}

/// The landmark model's outputs (in model order: landmarks, hand flag, handedness, world
/// landmarks) → the hand in image pixels, or `None` when the flag is under
/// [`MIN_HAND_SCORE`].
pub fn decode_hand(
    outputs: &[Vec<f32>],
    detection: Detection,
    roi: RotatedRect,
) -> Result<Option<Hand>, VisionError> {
    let sizes: Vec<usize> = outputs.iter().map(Vec::len).collect();
    let n = HAND_LANDMARKS * 3;
    let (Some(li), Some(fi)) = (
        sizes.iter().position(|&s| s == n),
        sizes.iter().position(|&s| s == 1),
    ) else {
        return Err(VisionError::BadOutput(format!(
            "hand landmarks: expected outputs of {n} and 1 values, got sizes {sizes:?}"
        )));
    };
    // The handedness is the second one-value output (model order: flag, handedness).
    let hi = sizes
        .iter()
        .enumerate()
        .filter(|(_, &s)| s == 1)
        .nth(1)
        .map(|(i, _)| i)
        .ok_or_else(|| VisionError::BadOutput("hand landmarks: no handedness output".into()))?;
    let score = outputs[fi][0];
    if score.is_nan() || score < MIN_HAND_SCORE {
        return Ok(None);
    }
    // MediaPipe's "Left" (index 0 of handedness.txt) is the subject's right in a photo that
    // is not mirrored.
    let mp_left = outputs[hi][0];
    let (handedness, handedness_score) = if mp_left > 0.5 {
        (Handedness::Right, mp_left)
    } else {
        (Handedness::Left, 1.0 - mp_left)
    };
    let size = LANDMARK_SIZE as f32;
    let landmarks = outputs[li]
        .chunks_exact(3)
        .map(|p| {
            let [x, y] = roi.project(p[0] / size, p[1] / size);
            [x, y, p[2] / size * roi.width]
        })
        .collect();
    Ok(Some(Hand {
        detection,
        roi,
        score,
        handedness,
        handedness_score,
        landmarks,
    }))
}

impl Vision {
    /// Palm detections in image pixels, best first.
    pub fn detect_palms(&mut self, image: &GpuImage) -> Result<Vec<Detection>, VisionError> {
        let letterbox = RotatedRect::letterbox(image.width(), image.height(), 1.0);
        let tensor = self.crop_to_tensor(
            image,
            &letterbox.tensor_to_image(PALM_SIZE, PALM_SIZE),
            &TensorSpec {
                width: PALM_SIZE,
                height: PALM_SIZE,
                range_min: 0.0,
                range_max: 1.0,
                border: Border::Zero,
            },
        )?;
        let outputs = self.nets.run(ModelId::PalmDetectionFull, &tensor)?;
        let dets = decode_detector_outputs(&outputs, &palm_anchors(), &palm_decode_options())?;
        Ok(dets
            .iter()
            .map(|d| letterbox.project_detection(d))
            .collect())
    }

    /// The hand landmarks in `roi` (from `detection`), or `None` when the landmark model sees
    /// no hand there.
    pub fn hand_in(
        &mut self,
        image: &GpuImage,
        detection: Detection,
        roi: RotatedRect,
    ) -> Result<Option<Hand>, VisionError> {
        let tensor = self.crop_to_tensor(
            image,
            &roi.tensor_to_image(LANDMARK_SIZE, LANDMARK_SIZE),
            &TensorSpec {
                width: LANDMARK_SIZE,
                height: LANDMARK_SIZE,
                range_min: 0.0,
                range_max: 1.0,
                border: Border::Replicate,
            },
        )?;
        let outputs = self.nets.run(ModelId::HandLandmarkFull, &tensor)?;
        decode_hand(&outputs, detection, roi)
    }

    /// The hands in the image (at most [`MAX_HANDS`], best palm first). Two palms whose
    /// landmarks land on the same hand (landmark boxes overlapping by IoU > 0.5, as MediaPipe's
    /// `AssociationNormRectCalculator`) count once.
    pub fn hands(&mut self, image: &GpuImage) -> Result<Vec<Hand>, VisionError> {
        let mut hands: Vec<Hand> = Vec::new();
        for d in self.detect_palms(image)?.into_iter().take(2 * MAX_HANDS) {
            if hands.len() == MAX_HANDS {
                break;
            }
            let Some(roi) = hand_roi(&d) else {
                continue;
            };
            if let Some(hand) = self.hand_in(image, d, roi)? {
                if hands.iter().all(|h| box_iou(h, &hand) <= 0.5) {
                    hands.push(hand);
                }
            }
        }
        Ok(hands)
    }
}

/// IoU of two hands' landmark boxes.
pub fn box_iou(a: &Hand, b: &Hand) -> f32 {
    let (a, b) = (a.landmark_box(), b.landmark_box());
    let ix = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let iy = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let area = |r: [f32; 4]| (r[2] - r[0]).max(0.0) * (r[3] - r[1]).max(0.0);
    let union = area(a) + area(b) - ix * iy;
    if union > 0.0 {
        ix * iy / union
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palm_anchors_are_the_2016_of_the_model() {
        let a = palm_anchors();
        assert_eq!(a.len(), 2016);
        // Stride 8: 24×24 cells, two anchors each; the first centred in cell (0, 0).
        assert!((a[0].x_center - 0.5 / 24.0).abs() < 1e-6);
        assert_eq!(a[0], a[1]);
        // The stride-16 layers start after 1152 anchors: 12×12 cells, six per cell.
        assert!((a[1152].x_center - 0.5 / 12.0).abs() < 1e-6);
        assert!((a[2015].y_center - 11.5 / 12.0).abs() < 1e-6);
    }

    fn palm(k0: [f32; 2], k2: [f32; 2]) -> Detection {
        Detection {
            score: 0.9,
            xmin: 100.0,
            ymin: 200.0,
            xmax: 140.0,
            ymax: 240.0,
            keypoints: vec![k0, [0.0, 0.0], k2],
        }
    }

    #[test]
    fn hand_roi_points_from_the_wrist_to_the_fingers() {
        // Fingers up: no rotation, shifted 20 px up, 40 × 2.6 = 104 px square.
        let r = hand_roi(&palm([120.0, 235.0], [120.0, 205.0])).unwrap();
        assert!(r.rotation.abs() < 1e-6, "{}", r.rotation);
        assert!(
            (r.cx - 120.0).abs() < 1e-4 && (r.cy - 200.0).abs() < 1e-4,
            "{r:?}"
        );
        assert!((r.width - 104.0).abs() < 1e-4 && (r.height - 104.0).abs() < 1e-4);
        // Fingers pointing right (image +x): rotated +90° (clockwise on screen), shifted right.
        let r = hand_roi(&palm([105.0, 220.0], [135.0, 220.0])).unwrap();
        assert!(
            (r.rotation - std::f32::consts::FRAC_PI_2).abs() < 1e-5,
            "{}",
            r.rotation
        );
        assert!(
            (r.cx - 140.0).abs() < 1e-3 && (r.cy - 220.0).abs() < 1e-3,
            "{r:?}"
        );
        // The ROI's top edge (v = 0) lies towards the fingers.
        let top = r.project(0.5, 0.0);
        assert!(top[0] > r.cx + 50.0, "{top:?}");
    }

    #[test]
    fn the_same_hand_twice_overlaps_and_two_hands_do_not() {
        let square = |x0: f32| {
            Hand::from_landmarks(
                vec![[x0, 0.0, 0.0], [x0 + 100.0, 100.0, 0.0]],
                Handedness::Left,
            )
        };
        assert!((box_iou(&square(0.0), &square(0.0)) - 1.0).abs() < 1e-6);
        assert!(box_iou(&square(0.0), &square(10.0)) > 0.5);
        assert_eq!(box_iou(&square(0.0), &square(150.0)), 0.0);
    }

    #[test]
    fn decode_hand_projects_landmarks_and_swaps_handedness() {
        let roi = RotatedRect {
            cx: 300.0,
            cy: 200.0,
            width: 224.0,
            height: 224.0,
            rotation: 0.0,
        };
        let mut lms = vec![0.0f32; 63];
        lms[0] = 112.0; // landmark 0 at the ROI's centre
        lms[1] = 112.0;
        lms[3] = 0.0; // landmark 1 at its top-left corner
        lms[4] = 0.0;
        let outputs = vec![lms.clone(), vec![0.9], vec![0.8], vec![0.0; 63]];
        let hand = decode_hand(&outputs, palm([0.0; 2], [0.0; 2]), roi)
            .unwrap()
            .unwrap();
        assert_eq!(hand.landmarks.len(), 21);
        assert!((hand.landmarks[0][0] - 300.0).abs() < 1e-4);
        assert!((hand.landmarks[1][0] - 188.0).abs() < 1e-4);
        assert!((hand.landmarks[1][1] - 88.0).abs() < 1e-4);
        // MediaPipe's "Left" at 0.8 is the subject's right hand.
        assert_eq!(hand.handedness, Handedness::Right);
        assert!((hand.handedness_score - 0.8).abs() < 1e-6);
        let outputs = vec![lms.clone(), vec![0.9], vec![0.1], vec![0.0; 63]];
        let hand = decode_hand(&outputs, palm([0.0; 2], [0.0; 2]), roi)
            .unwrap()
            .unwrap();
        assert_eq!(hand.handedness, Handedness::Left);
        // A low hand flag is no hand; missing outputs are an error, not a panic.
        let outputs = vec![lms, vec![0.2], vec![0.1], vec![0.0; 63]];
        assert!(decode_hand(&outputs, palm([0.0; 2], [0.0; 2]), roi)
            .unwrap()
            .is_none());
        assert!(decode_hand(&[vec![0.0; 5]], palm([0.0; 2], [0.0; 2]), roi).is_err());
    }
}
