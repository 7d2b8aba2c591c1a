//! Regions of interest: rotated rectangles in image pixels, how MediaPipe derives them from
//! detections (`DetectionsToRectsCalculator`, `AlignmentPointsRectsCalculator`,
//! `RectTransformationCalculator`), and the affine maps between a ROI and a model's tensor.

use serde::{Deserialize, Serialize};

use super::detection::Detection;
use crate::image_ops::Affine2;

/// A rotated rectangle in image pixels. `rotation` is in radians, clockwise on screen (the
/// image's y axis points down), as MediaPipe's `NormalizedRect.rotation`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RotatedRect {
    /// Centre x.
    pub cx: f32,
    /// Centre y.
    pub cy: f32,
    /// Width (along the rotated x axis).
    pub width: f32,
    /// Height.
    pub height: f32,
    /// Rotation in radians.
    pub rotation: f32,
}

/// Wraps an angle into [-π, π).
pub fn normalize_radians(angle: f32) -> f32 {
    use std::f32::consts::PI;
    angle - 2.0 * PI * ((angle + PI) / (2.0 * PI)).floor()
}

/// The rotation that brings the vector `from → to` (pixels) to `target` radians.
fn rotation_from(from: [f32; 2], to: [f32; 2], target: f32) -> f32 {
    normalize_radians(target - (-(to[1] - from[1])).atan2(to[0] - from[0]))
}

impl RotatedRect {
    /// The whole image, padded to `aspect` (= tensor height / width) around its centre as
    /// `ImageToTensorCalculator` does with `keep_aspect_ratio` (letterbox).
    pub fn letterbox(image_w: u32, image_h: u32, aspect: f32) -> Self {
        Self {
            cx: image_w as f32 / 2.0,
            cy: image_h as f32 / 2.0,
            width: image_w as f32,
            height: image_h as f32,
            rotation: 0.0,
        }
        .pad_to_aspect(aspect)
    }

    /// The whole image, stretched (no aspect kept).
    pub fn whole(image_w: u32, image_h: u32) -> Self {
        Self {
            cx: image_w as f32 / 2.0,
            cy: image_h as f32 / 2.0,
            width: image_w as f32,
            height: image_h as f32,
            rotation: 0.0,
        }
    }

    /// Grows the rectangle to the aspect `height / width` of a tensor (keeps its centre).
    pub fn pad_to_aspect(mut self, aspect: f32) -> Self {
        let roi_aspect = self.height / self.width;
        if aspect > roi_aspect {
            self.height = self.width * aspect;
        } else {
            self.width = self.height / aspect;
        }
        self
    }

    /// The face ROI from a face detection (pixels): box centre, rotation from the first to the
    /// second keypoint (the eyes) to 0°, square on the long side, scaled by 1.5
    /// (`face_detection_front_detection_to_roi.pbtxt`).
    pub fn from_face_detection(d: &Detection) -> Self {
        let rotation = match (d.keypoints.first(), d.keypoints.get(1)) {
            (Some(a), Some(b)) => rotation_from(*a, *b, 0.0),
            _ => 0.0,
        };
        Self {
            cx: (d.xmin + d.xmax) / 2.0,
            cy: (d.ymin + d.ymax) / 2.0,
            width: d.width(),
            height: d.height(),
            rotation,
        }
        .square_long()
        .scaled(1.5)
    }

    /// The face ROI from a previous pass's 468 landmarks (pixels), as MediaPipe's tracking
    /// pass derives it (`face_landmarks_to_roi.pbtxt`): the landmarks' bounding box centre,
    /// rotation from landmark 33 to 263 (the outer eye corners) to 0°, square on the long side,
    /// scaled by 1.5. `None` for fewer than 468 landmarks or a degenerate box.
    pub fn from_face_landmarks(landmarks: &[[f32; 3]]) -> Option<Self> {
        if landmarks.len() < 468 {
            return None;
        }
        let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
        for p in landmarks {
            for k in 0..2 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let (w, h) = (hi[0] - lo[0], hi[1] - lo[1]);
        if !(w > 1.0 && h > 1.0 && w.is_finite() && h.is_finite()) {
            return None;
        }
        let (a, b) = (landmarks[33], landmarks[263]);
        Some(
            Self {
                cx: (lo[0] + hi[0]) / 2.0,
                cy: (lo[1] + hi[1]) / 2.0,
                width: w,
                height: h,
                rotation: rotation_from([a[0], a[1]], [b[0], b[1]], 0.0),
            }
            .square_long()
            .scaled(1.5),
        )
    }

    /// The body ROI from a pose detection (pixels): centred on keypoint 0 (hips' centre), size
    /// twice the distance to keypoint 1, rotated so that 0 → 1 points up (90°), scaled by 1.25
    /// (`pose_detection_to_roi.pbtxt`).
    pub fn from_pose_detection(d: &Detection) -> Option<Self> {
        let (c, s) = (d.keypoints.first()?, d.keypoints.get(1)?);
        let size = 2.0 * ((s[0] - c[0]).powi(2) + (s[1] - c[1]).powi(2)).sqrt();
        if size.is_nan() || size <= 0.0 {
            return None;
        }
        Some(
            Self {
                cx: c[0],
                cy: c[1],
                width: size,
                height: size,
                rotation: rotation_from(*c, *s, std::f32::consts::FRAC_PI_2),
            }
            .square_long()
            .scaled(1.25),
        )
    }

    /// Makes the rectangle square on its long side.
    pub fn square_long(mut self) -> Self {
        let long = self.width.max(self.height);
        self.width = long;
        self.height = long;
        self
    }

    /// Scales both sides.
    pub fn scaled(mut self, s: f32) -> Self {
        self.width *= s;
        self.height *= s;
        self
    }

    /// Maps normalized ROI coordinates (`(0, 0)` top-left of the ROI, `(1, 1)` bottom-right,
    /// before rotation) to image pixels.
    pub fn project(&self, u: f32, v: f32) -> [f32; 2] {
        let (s, c) = self.rotation.sin_cos();
        let x = (u - 0.5) * self.width;
        let y = (v - 0.5) * self.height;
        [self.cx + c * x - s * y, self.cy + s * x + c * y]
    }

    /// The map from the pixels of a `tw`×`th` tensor to image pixels (tensor pixel `(x, y)`
    /// is ROI point `(x / tw, y / th)`, the OpenCV warp convention MediaPipe's CPU path uses).
    pub fn tensor_to_image(&self, tw: u32, th: u32) -> Affine2 {
        let (s, c) = self.rotation.sin_cos();
        let (w, h) = (self.width, self.height);
        Affine2 {
            m: [
                c * w / tw as f32,
                -s * h / th as f32,
                self.cx - 0.5 * (c * w - s * h),
                s * w / tw as f32,
                c * h / th as f32,
                self.cy - 0.5 * (s * w + c * h),
            ],
        }
    }

    /// Maps a detection decoded in this ROI's normalized tensor coordinates to image pixels
    /// (`DetectionProjectionCalculator`; the box stays axis-aligned, so use it on unrotated
    /// ROIs such as the letterbox).
    pub fn project_detection(&self, d: &Detection) -> Detection {
        let a = self.project(d.xmin, d.ymin);
        let b = self.project(d.xmax, d.ymax);
        Detection {
            score: d.score,
            xmin: a[0].min(b[0]),
            ymin: a[1].min(b[1]),
            xmax: a[0].max(b[0]),
            ymax: a[1].max(b[1]),
            keypoints: d
                .keypoints
                .iter()
                .map(|k| self.project(k[0], k[1]))
                .collect(),
        }
    }

    /// The four corners in pixels (top-left, top-right, bottom-right, bottom-left of the ROI).
    pub fn corners(&self) -> [[f32; 2]; 4] {
        [
            self.project(0.0, 0.0),
            self.project(1.0, 0.0),
            self.project(1.0, 1.0),
            self.project(0.0, 1.0),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letterbox_of_a_landscape_image_is_a_centred_square() {
        let r = RotatedRect::letterbox(200, 100, 1.0);
        assert_eq!((r.width, r.height, r.cx, r.cy), (200.0, 200.0, 100.0, 50.0));
        assert_eq!(r.project(0.0, 0.0), [0.0, -50.0]);
    }

    #[test]
    fn tensor_map_agrees_with_projection() {
        let r = RotatedRect {
            cx: 100.0,
            cy: 80.0,
            width: 60.0,
            height: 60.0,
            rotation: 0.4,
        };
        let a = r.tensor_to_image(192, 192);
        let (x, y) = a.apply(48.0, 144.0);
        let p = r.project(0.25, 0.75);
        assert!((x - p[0]).abs() < 1e-4 && (y - p[1]).abs() < 1e-4);
    }

    #[test]
    fn tilted_eyes_give_the_roll_of_the_face() {
        // Keypoint 1 lies 45° below keypoint 0 on screen: the face ROI turns clockwise by 45°.
        let d = Detection {
            score: 1.0,
            xmin: 0.0,
            ymin: 0.0,
            xmax: 10.0,
            ymax: 20.0,
            keypoints: vec![[0.0, 0.0], [1.0, 1.0]],
        };
        let r = RotatedRect::from_face_detection(&d);
        assert!((r.rotation - std::f32::consts::FRAC_PI_4).abs() < 1e-6);
        assert_eq!((r.width, r.height), (30.0, 30.0));
        // Pose: scale point straight above the hips → no rotation.
        let p = Detection {
            keypoints: vec![[50.0, 50.0], [50.0, 10.0]],
            ..d
        };
        let r = RotatedRect::from_pose_detection(&p).unwrap();
        assert!(r.rotation.abs() < 1e-6);
        assert_eq!(r.width, 100.0);
    }

    #[test]
    fn radians_wrap_into_range() {
        use std::f32::consts::PI;
        assert!((normalize_radians(3.0 * PI / 2.0) + PI / 2.0).abs() < 1e-5);
        assert!((normalize_radians(0.3) - 0.3).abs() < 1e-6);
    }
}
