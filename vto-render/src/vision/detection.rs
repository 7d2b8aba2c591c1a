//! SSD box decoding and weighted non-maximum suppression, as MediaPipe's
//! `TensorsToDetectionsCalculator` and `NonMaxSuppressionCalculator` (WEIGHTED, IoU) do them.

use serde::{Deserialize, Serialize};

use super::anchors::Anchor;
use super::VisionError;

/// How to read a detector's raw outputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecodeOptions {
    /// Values per box in the regressor tensor (16 for faces, 12 for pose).
    pub num_coords: usize,
    /// Keypoints per box (6 for faces, 4 for pose).
    pub num_keypoints: usize,
    /// Divides box and keypoint offsets (the input size).
    pub scale: f32,
    /// Raw scores are clipped to ±this before the sigmoid.
    pub score_clip: f32,
    /// Boxes below this probability are dropped.
    pub min_score: f32,
}

impl DecodeOptions {
    /// Face detection short range (128×128, threshold 0.5).
    pub fn face_short_range() -> Self {
        Self {
            num_coords: 16,
            num_keypoints: 6,
            scale: 128.0,
            score_clip: 100.0,
            min_score: 0.5,
        }
    }
    /// Face detection full range (192×192, threshold 0.6).
    pub fn face_full_range() -> Self {
        Self {
            scale: 192.0,
            min_score: 0.6,
            ..Self::face_short_range()
        }
    }
    /// Pose detection (224×224, threshold 0.5).
    pub fn pose() -> Self {
        Self {
            num_coords: 12,
            num_keypoints: 4,
            scale: 224.0,
            score_clip: 100.0,
            min_score: 0.5,
        }
    }
}

/// One detection: an axis-aligned box and keypoints, in whatever frame the caller is in
/// (normalized tensor coordinates after decoding; image pixels after projection).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// Probability in [0, 1].
    pub score: f32,
    /// Left.
    pub xmin: f32,
    /// Top.
    pub ymin: f32,
    /// Right.
    pub xmax: f32,
    /// Bottom.
    pub ymax: f32,
    /// Keypoints `(x, y)`.
    pub keypoints: Vec<[f32; 2]>,
}

impl Detection {
    /// Box width.
    pub fn width(&self) -> f32 {
        self.xmax - self.xmin
    }
    /// Box height.
    pub fn height(&self) -> f32 {
        self.ymax - self.ymin
    }
    /// Box area (0 for an empty box).
    pub fn area(&self) -> f32 {
        self.width().max(0.0) * self.height().max(0.0)
    }
    /// Intersection over union with another box.
    pub fn iou(&self, other: &Detection) -> f32 {
        let ix = (self.xmax.min(other.xmax) - self.xmin.max(other.xmin)).max(0.0);
        let iy = (self.ymax.min(other.ymax) - self.ymin.max(other.ymin)).max(0.0);
        let inter = ix * iy;
        let union = self.area() + other.area() - inter;
        if union <= 0.0 {
            0.0
        } else {
            inter / union
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Decodes raw regressors (`anchors × num_coords`) and scores (`anchors`) into detections
/// above the threshold, in normalized input-tensor coordinates.
pub fn decode(
    regressors: &[f32],
    scores: &[f32],
    anchors: &[Anchor],
    opts: &DecodeOptions,
) -> Result<Vec<Detection>, VisionError> {
    let n = anchors.len();
    if regressors.len() != n * opts.num_coords || scores.len() != n {
        return Err(VisionError::BadOutput(format!(
            "detector outputs have {} regressor and {} score values, expected {}×{} and {}",
            regressors.len(),
            scores.len(),
            n,
            opts.num_coords,
            n
        )));
    }
    let mut out = Vec::new();
    for (i, a) in anchors.iter().enumerate() {
        let score = sigmoid(scores[i].clamp(-opts.score_clip, opts.score_clip));
        if score < opts.min_score || score.is_nan() {
            continue;
        }
        let r = &regressors[i * opts.num_coords..(i + 1) * opts.num_coords];
        let xc = r[0] / opts.scale * a.w + a.x_center;
        let yc = r[1] / opts.scale * a.h + a.y_center;
        let w = r[2] / opts.scale * a.w;
        let h = r[3] / opts.scale * a.h;
        let keypoints = (0..opts.num_keypoints)
            .map(|k| {
                [
                    r[4 + 2 * k] / opts.scale * a.w + a.x_center,
                    r[5 + 2 * k] / opts.scale * a.h + a.y_center,
                ]
            })
            .collect();
        let d = Detection {
            score,
            xmin: xc - w / 2.0,
            ymin: yc - h / 2.0,
            xmax: xc + w / 2.0,
            ymax: yc + h / 2.0,
            keypoints,
        };
        if d.width() > 0.0 && d.height() > 0.0 && d.xmin.is_finite() && d.ymin.is_finite() {
            out.push(d);
        }
    }
    Ok(out)
}

/// Weighted non-maximum suppression: the best box absorbs every box overlapping it by more
/// than `threshold` IoU; the result's box and keypoints are the score-weighted mean of the
/// group, its score the best one's. Output sorted by score, best first.
pub fn weighted_nms(mut detections: Vec<Detection>, threshold: f32) -> Vec<Detection> {
    detections.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut out = Vec::new();
    while !detections.is_empty() {
        let best = detections.remove(0);
        let (mut group, rest): (Vec<Detection>, Vec<Detection>) = detections
            .into_iter()
            .partition(|d| d.iou(&best) > threshold);
        detections = rest;
        group.insert(0, best.clone());
        let total: f32 = group.iter().map(|d| d.score).sum();
        let mut merged = best.clone();
        if total > 0.0 {
            let avg = |f: &dyn Fn(&Detection) -> f32| {
                group.iter().map(|d| f(d) * d.score).sum::<f32>() / total
            };
            merged.xmin = avg(&|d| d.xmin);
            merged.ymin = avg(&|d| d.ymin);
            merged.xmax = avg(&|d| d.xmax);
            merged.ymax = avg(&|d| d.ymax);
            for k in 0..merged.keypoints.len() {
                merged.keypoints[k] = [avg(&|d| d.keypoints[k][0]), avg(&|d| d.keypoints[k][1])];
            }
        }
        out.push(merged);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn det(score: f32, x: f32) -> Detection {
        Detection {
            score,
            xmin: x,
            ymin: 0.0,
            xmax: x + 1.0,
            ymax: 1.0,
            keypoints: vec![[x, 0.0]],
        }
    }

    #[test]
    fn weighted_nms_merges_overlaps_and_keeps_separate_boxes() {
        let out = weighted_nms(vec![det(0.6, 0.1), det(0.9, 0.0), det(0.8, 5.0)], 0.3);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].score, 0.9);
        // Weighted mean of xmin 0.0 (0.9) and 0.1 (0.6) = 0.04.
        assert!((out[0].xmin - 0.04).abs() < 1e-6, "{}", out[0].xmin);
        assert!((out[0].keypoints[0][0] - 0.04).abs() < 1e-6);
        assert_eq!(out[1].xmin, 5.0);
    }

    #[test]
    fn decode_places_a_box_relative_to_its_anchor() {
        let anchors = vec![
            Anchor {
                x_center: 0.25,
                y_center: 0.5,
                w: 1.0,
                h: 1.0,
            },
            Anchor {
                x_center: 0.75,
                y_center: 0.5,
                w: 1.0,
                h: 1.0,
            },
        ];
        let opts = DecodeOptions {
            num_coords: 6,
            num_keypoints: 1,
            scale: 100.0,
            score_clip: 100.0,
            min_score: 0.5,
        };
        let regs = [
            10.0, -5.0, 20.0, 40.0, 1.0, 2.0, 0.0, 0.0, 10.0, 10.0, 0.0, 0.0,
        ];
        let out = decode(&regs, &[3.0, -3.0], &anchors, &opts).unwrap();
        assert_eq!(out.len(), 1, "the second anchor's score is below 0.5");
        let d = &out[0];
        assert!((d.xmin - (0.35 - 0.1)).abs() < 1e-6);
        assert!((d.ymax - (0.45 + 0.2)).abs() < 1e-6);
        assert!((d.keypoints[0][1] - 0.52).abs() < 1e-6);
        assert!((d.score - 1.0 / (1.0 + (-3.0f32).exp())).abs() < 1e-6);
        assert!(decode(&regs[..6], &[3.0, -3.0], &anchors, &opts).is_err());
    }
}
