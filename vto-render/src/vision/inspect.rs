//! `inspect`: everything the vision stack sees in one photo, as a serializable report, and an
//! overlay image to look at it.

use image::{Rgba, RgbaImage};
use serde::{Deserialize, Serialize};

use super::face::Face;
use super::pose::{Body, POSE_CONNECTIONS};
use super::{Mask, Vision, VisionError};
use crate::image_ops::cpu_composite;

/// What the vision stack found in a photo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectReport {
    /// Photo width in pixels.
    pub width: u32,
    /// Photo height in pixels.
    pub height: u32,
    /// Faces, largest first; faces of [`super::face::REFINE_FROM_PX`] to
    /// [`super::face::REFINE_BELOW_PX`] after their second mesh pass, as a try-on uses them.
    pub faces: Vec<Face>,
    /// The body, when there is one.
    pub body: Option<Body>,
    /// Selfie segmentation's person coverage (fraction of pixels > 0.5).
    pub selfie_mask_coverage: f32,
    /// Selfie segmentation's mask (not serialized).
    #[serde(skip)]
    pub selfie_mask: Option<Mask>,
}

impl Vision {
    /// Runs faces, body and selfie segmentation on a photo.
    pub fn inspect(&mut self, image: &RgbaImage) -> Result<InspectReport, VisionError> {
        let gpu = self.ops.upload(image)?;
        // Small faces get the second mesh pass a try-on gives them, so the landmarks reported
        // are the ones a try-on would use.
        let mut faces = Vec::new();
        for face in self.faces(&gpu)? {
            let refined = if face.needs_refinement() {
                self.refine_face(&gpu, &face)?
            } else {
                None
            };
            faces.push(refined.unwrap_or(face));
        }
        let body = self.body(&gpu)?;
        let selfie = self.selfie_mask(&gpu)?;
        Ok(InspectReport {
            width: image.width(),
            height: image.height(),
            faces,
            body,
            selfie_mask_coverage: selfie.coverage(),
            selfie_mask: Some(selfie),
        })
    }
}

/// Runs [`Vision::inspect`].
pub fn inspect(vision: &mut Vision, image: &RgbaImage) -> Result<InspectReport, VisionError> {
    vision.inspect(image)
}

const MASK_TINT: Rgba<u8> = Rgba([40, 200, 255, 255]);
const BOX: Rgba<u8> = Rgba([60, 255, 60, 255]);
const ROI: Rgba<u8> = Rgba([255, 220, 0, 255]);
const LANDMARK: Rgba<u8> = Rgba([255, 40, 40, 255]);
const BONE: Rgba<u8> = Rgba([255, 255, 255, 255]);
const JOINT: Rgba<u8> = Rgba([255, 120, 0, 255]);

fn put(img: &mut RgbaImage, x: i64, y: i64, c: Rgba<u8>) {
    if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
        img.put_pixel(x as u32, y as u32, c);
    }
}

fn dot(img: &mut RgbaImage, x: f32, y: f32, r: i64, c: Rgba<u8>) {
    let (cx, cy) = (x.round() as i64, y.round() as i64);
    for dy in -r..=r {
        for dx in -r..=r {
            if dx * dx + dy * dy <= r * r {
                put(img, cx + dx, cy + dy, c);
            }
        }
    }
}

fn line(img: &mut RgbaImage, a: [f32; 2], b: [f32; 2], width: i64, c: Rgba<u8>) {
    let steps = ((b[0] - a[0]).abs().max((b[1] - a[1]).abs()).ceil() as i64).clamp(1, 100_000);
    for i in 0..=steps {
        let t = i as f32 / steps as f32;
        let (x, y) = (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t);
        dot(img, x, y, width / 2, c);
    }
}

fn polygon(img: &mut RgbaImage, pts: &[[f32; 2]], width: i64, c: Rgba<u8>) {
    for i in 0..pts.len() {
        line(img, pts[i], pts[(i + 1) % pts.len()], width, c);
    }
}

/// Draws a report over the photo: the person mask tinted (the body's, else selfie
/// segmentation's), face boxes (green) and ROIs (yellow), face landmarks (red dots), and the
/// skeleton (white bones, orange joints; points with visibility < 0.5 left out).
pub fn draw_overlay(image: &RgbaImage, report: &InspectReport) -> RgbaImage {
    let scale = (image.width().max(image.height()) as f32 / 512.0).max(1.0);
    let thick = scale.round() as i64;
    let mask = report
        .body
        .as_ref()
        .and_then(|b| b.mask.as_ref())
        .or(report.selfie_mask.as_ref())
        .filter(|m| (m.width, m.height) == image.dimensions());
    let mut out = match mask {
        Some(m) => {
            let tint = RgbaImage::from_fn(image.width(), image.height(), |x, y| {
                let p = m.data[(y * m.width + x) as usize].clamp(0.0, 1.0);
                Rgba([
                    MASK_TINT[0],
                    MASK_TINT[1],
                    MASK_TINT[2],
                    (p * 255.0).round() as u8,
                ])
            });
            cpu_composite(image, &tint, 0.4)
        }
        None => image.clone(),
    };
    for f in &report.faces {
        let d = &f.detection;
        polygon(
            &mut out,
            &[
                [d.xmin, d.ymin],
                [d.xmax, d.ymin],
                [d.xmax, d.ymax],
                [d.xmin, d.ymax],
            ],
            thick,
            BOX,
        );
        polygon(&mut out, &f.roi.corners(), thick, ROI);
        for p in &f.landmarks {
            dot(&mut out, p[0], p[1], thick / 2, LANDMARK);
        }
    }
    if let Some(b) = &report.body {
        let k = &b.keypoints;
        for &(i, j) in &POSE_CONNECTIONS {
            if let (Some(p), Some(q)) = (k.get(i), k.get(j)) {
                if p.visibility >= 0.5 && q.visibility >= 0.5 {
                    line(&mut out, [p.x, p.y], [q.x, q.y], 2 * thick, BONE);
                }
            }
        }
        for p in k.iter().filter(|p| p.visibility >= 0.5) {
            dot(&mut out, p.x, p.y, 2 * thick, JOINT);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::{Detection, PoseKeypoint, RotatedRect};

    #[test]
    fn overlay_draws_boxes_skeleton_and_mask() {
        let img = RgbaImage::from_pixel(64, 64, Rgba([0, 0, 0, 255]));
        let kp = |x, y| PoseKeypoint {
            x,
            y,
            z: 0.0,
            visibility: 0.9,
            presence: 0.9,
        };
        let mut keypoints = vec![kp(0.0, 0.0); 33];
        keypoints[11] = kp(10.0, 50.0);
        keypoints[12] = kp(50.0, 50.0);
        let det = Detection {
            score: 1.0,
            xmin: 5.0,
            ymin: 5.0,
            xmax: 20.0,
            ymax: 20.0,
            keypoints: vec![],
        };
        let report = InspectReport {
            width: 64,
            height: 64,
            faces: vec![Face {
                detection: det.clone(),
                detector: crate::vision::face::FaceDetector::ShortRange,
                roi: RotatedRect::whole(1, 1),
                score: 1.0,
                landmarks: vec![[40.0, 10.0, 0.0]],
                head_pose: None,
            }],
            body: Some(Body {
                detection: det,
                roi: RotatedRect::whole(1, 1),
                score: 1.0,
                keypoints,
                mask_coverage: 0.5,
                mask: Some(Mask {
                    width: 64,
                    height: 64,
                    data: (0..64 * 64)
                        .map(|i| if i % 64 < 32 { 1.0 } else { 0.0 })
                        .collect(),
                }),
            }),
            selfie_mask_coverage: 0.0,
            selfie_mask: None,
        };
        let out = draw_overlay(&img, &report);
        assert_eq!(*out.get_pixel(12, 5), BOX, "top edge of the face box");
        assert_eq!(*out.get_pixel(30, 50), BONE, "shoulder line");
        assert_eq!(*out.get_pixel(40, 10), LANDMARK);
        let tinted = out.get_pixel(2, 30);
        assert!(
            tinted[2] > 50 && tinted[0] < 40,
            "masked half is tinted: {tinted:?}"
        );
        assert_eq!(
            *out.get_pixel(60, 30),
            Rgba([0, 0, 0, 255]),
            "unmasked half untouched"
        );
        let json = serde_json::to_string(&report).unwrap();
        assert!(json.contains("\"mask_coverage\":0.5") && !json.contains("\"mask\":"));
    }
}
