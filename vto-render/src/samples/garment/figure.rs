//! Drawn full-body test figures with hand-given keypoints, masks and face landmarks.
//!
//! No permissively licensed full-body photo is shipped by a package registry (the
//! skimage photos are portraits; ultralytics' bus.jpg is AGPL), so the lower-body garments
//! are tested and shown on drawn people: a standing figure in a top, trousers and shoes
//! against a wall and floor, with rounded shading across each limb, built from the same
//! parameters that give its 33 pose keypoints, its person mask and its 468 face landmarks.
//! The result is a [`Person`] as the vision stage would hand it to a category — the seam
//! the garment and shoe tests use.

use glam::Vec2;
use image::{Rgba, RgbaImage};

use super::upper::{inside, noise};
use crate::garment::body::frame::FACE_OVAL;
use crate::vision::face::FaceDetector;
use crate::vision::{Body, Detection, Face, Mask, PoseKeypoint, RotatedRect};
use crate::vision::{FaceChoice, Person};

/// One drawn person.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// Photo width.
    pub width: u32,
    /// Photo height.
    pub height: u32,
    /// Skin (sRGB).
    pub skin: [f32; 3],
    /// Hair.
    pub hair: [f32; 3],
    /// The top worn now.
    pub top: [f32; 3],
    /// The trousers worn now.
    pub trousers: [f32; 3],
    /// The shoes.
    pub shoes: [f32; 3],
    /// How far apart the feet stand (0: together, 1: a wide stance).
    pub stance: f32,
    /// Where the top's hem lies, as a fraction of the height (0.5 is at the hip joints).
    pub top_hem: f32,
    /// Sleeve length as a fraction of the arm (shoulder to wrist).
    pub sleeve: f32,
}

impl Figure {
    /// A light-skinned person in a grey t-shirt, jeans and white sneakers, feet together.
    pub fn jeans(width: u32, height: u32) -> Figure {
        Figure {
            width,
            height,
            skin: [226.0, 182.0, 156.0],
            hair: [70.0, 48.0, 34.0],
            top: [150.0, 152.0, 156.0],
            trousers: [52.0, 72.0, 112.0],
            shoes: [236.0, 236.0, 232.0],
            stance: 0.2,
            top_hem: 0.56,
            sleeve: 0.3,
        }
    }

    /// A darker-skinned person in a long-sleeved mustard top, black trousers and brown
    /// shoes, in a wider stance.
    pub fn wide_stance(width: u32, height: u32) -> Figure {
        Figure {
            width,
            height,
            skin: [150.0, 100.0, 72.0],
            hair: [24.0, 20.0, 18.0],
            top: [196.0, 150.0, 48.0],
            trousers: [34.0, 34.0, 38.0],
            shoes: [110.0, 66.0, 40.0],
            stance: 1.0,
            top_hem: 0.53,
            sleeve: 1.0,
        }
    }

    fn u(&self) -> f32 {
        self.height as f32
    }

    fn cx(&self) -> f32 {
        self.width as f32 * 0.5
    }

    /// The 33 pose keypoints (pixels; the subject's left, odd indices, on the image's
    /// right).
    pub fn keypoints(&self) -> Vec<Vec2> {
        let (u, cx) = (self.u(), self.cx());
        let s = self.stance;
        let p = |dx: f32, y: f32| Vec2::new(cx + dx * u, y * u);
        let mut k = vec![p(0.0, 0.1); 33];
        // Face points: nose, eyes, ears, mouth.
        k[0] = p(0.0, 0.105);
        for (i, dx, y) in [
            (1, 0.012, 0.092),
            (2, 0.018, 0.092),
            (3, 0.024, 0.092),
            (4, -0.012, 0.092),
            (5, -0.018, 0.092),
            (6, -0.024, 0.092),
            (7, 0.045, 0.1),
            (8, -0.045, 0.1),
            (9, 0.012, 0.125),
            (10, -0.012, 0.125),
        ] {
            k[i] = p(dx, y);
        }
        for (side, sign) in [(0usize, 1.0f32), (1, -1.0)] {
            let q = |dx: f32, y: f32| p(sign * dx, y);
            k[11 + side] = q(0.1, 0.205);
            k[13 + side] = q(0.13, 0.355);
            k[15 + side] = q(0.14, 0.49);
            k[17 + side] = q(0.15, 0.545);
            k[19 + side] = q(0.14, 0.55);
            k[21 + side] = q(0.125, 0.525);
            k[23 + side] = q(0.05, 0.5);
            k[25 + side] = q(0.052 + 0.02 * s, 0.72);
            k[27 + side] = q(0.054 + 0.05 * s, 0.93);
            k[29 + side] = q(0.052 + 0.05 * s, 0.95);
            k[31 + side] = q(0.07 + 0.06 * s, 0.975);
        }
        k
    }

    /// The colour at `p` and whether it is the person (front to back: hair, head, neck,
    /// hands, forearms, sleeves, torso, shoes, legs), with rounded shading across limbs.
    fn shade(&self, p: Vec2, k: &[Vec2]) -> Option<[f32; 3]> {
        let u = self.u();
        let cap = |a: Vec2, b: Vec2, ra: f32, rb: f32| -> Option<f32> {
            let ab = b - a;
            let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
            let r = ra + (rb - ra) * t;
            let d = p.distance(a + ab * t) / r;
            (d < 1.0).then_some(d)
        };
        let round = |c: [f32; 3], d: f32| c.map(|v| v * (1.0 - 0.28 * d * d));
        let head = Vec2::new(self.cx(), 0.1 * u);
        let hd = ((p - head) / Vec2::new(0.047 * u, 0.062 * u)).length();
        let hair =
            ((p - head - Vec2::new(0.0, -0.012 * u)) / Vec2::new(0.05 * u, 0.058 * u)).length();
        if hair < 1.0 && (p.y < head.y - 0.035 * u || hd >= 1.0) {
            return Some(round(self.hair, hair));
        }
        if hd < 1.0 {
            return Some(round(self.skin, hd * 0.8));
        }
        let neck_top = Vec2::new(self.cx(), 0.14 * u);
        let neck_bottom = Vec2::new(self.cx(), 0.2 * u);
        if let Some(d) = cap(neck_top, neck_bottom, 0.022 * u, 0.025 * u) {
            return Some(round(self.skin.map(|v| v * 0.9), d));
        }
        for side in 0..2 {
            let (sh, el, wr) = (k[11 + side], k[13 + side], k[15 + side]);
            let hand = (k[17 + side] + k[19 + side] + k[21 + side]) / 3.0;
            if let Some(d) = cap(wr, hand + (hand - wr) * 0.4, 0.016 * u, 0.021 * u) {
                return Some(round(self.skin, d));
            }
            let arm = sh.distance(el) + el.distance(wr);
            let reach = self.sleeve * arm;
            let upper = sh.distance(el);
            let in_upper = cap(sh, el, 0.03 * u, 0.024 * u);
            let in_fore = cap(el, wr, 0.024 * u, 0.018 * u);
            if let Some(d) = in_upper.or(in_fore) {
                // Sleeve or skin by how far along the arm the point lies.
                let along = if in_upper.is_some() {
                    (p - sh).dot((el - sh).normalize_or_zero())
                } else {
                    upper + (p - el).dot((wr - el).normalize_or_zero())
                };
                let c = if along <= reach + 0.002 * u {
                    self.top
                } else {
                    self.skin
                };
                return Some(round(c, d));
            }
        }
        let torso = [
            k[12] + Vec2::new(-0.012 * u, -0.004 * u),
            Vec2::new(self.cx() - 0.03 * u, 0.19 * u),
            Vec2::new(self.cx() + 0.03 * u, 0.19 * u),
            k[11] + Vec2::new(0.012 * u, -0.004 * u),
            Vec2::new(self.cx() + 0.098 * u, 0.3 * u),
            Vec2::new(self.cx() + 0.088 * u, 0.42 * u),
            Vec2::new(self.cx() + 0.098 * u, self.top_hem * u),
            Vec2::new(self.cx() - 0.098 * u, self.top_hem * u),
            Vec2::new(self.cx() - 0.088 * u, 0.42 * u),
            Vec2::new(self.cx() - 0.098 * u, 0.3 * u),
        ];
        if inside(&torso, p) {
            let d = ((p.x - self.cx()) / (0.1 * u)).abs();
            return Some(round(self.top, d));
        }
        for side in 0..2 {
            let (heel, toe) = (k[29 + side], k[31 + side]);
            if let Some(d) = cap(heel + Vec2::new(0.0, -0.01 * u), toe, 0.018 * u, 0.016 * u) {
                return Some(round(self.shoes, d * 0.7));
            }
        }
        let pelvis = [
            Vec2::new(self.cx() - 0.092 * u, 0.44 * u),
            Vec2::new(self.cx() + 0.092 * u, 0.44 * u),
            Vec2::new(self.cx() + 0.098 * u, 0.52 * u),
            Vec2::new(self.cx(), 0.56 * u),
            Vec2::new(self.cx() - 0.098 * u, 0.52 * u),
        ];
        if inside(&pelvis, p) {
            let d = ((p.x - self.cx()) / (0.1 * u)).abs();
            return Some(round(self.trousers, d));
        }
        for side in 0..2 {
            let (hip, knee, ankle) = (k[23 + side], k[25 + side], k[27 + side]);
            let out = if side == 0 { 1.0 } else { -1.0 };
            let hip_c = hip + Vec2::new(out * 0.004 * u, 0.0);
            if let Some(d) = cap(hip_c, knee, 0.05 * u, 0.034 * u)
                .or_else(|| cap(knee, ankle, 0.034 * u, 0.026 * u))
            {
                return Some(round(self.trousers, d));
            }
        }
        None
    }

    /// The photo and the person mask.
    pub fn draw(&self) -> (RgbaImage, Vec<f32>) {
        let (w, h) = (self.width, self.height);
        let k = self.keypoints();
        let floor_y = 0.9 * h as f32;
        let mut img = RgbaImage::new(w, h);
        let mut mask = vec![0.0f32; (w * h) as usize];
        let feet = [k[29], k[30], k[31], k[32]];
        for y in 0..h {
            for x in 0..w {
                let mut acc = [0.0f32; 3];
                let mut cover = 0.0;
                for (dx, dy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
                    let p = Vec2::new(x as f32 + dx, y as f32 + dy);
                    let c = match self.shade(p, &k) {
                        Some(c) => {
                            cover += 0.25;
                            c
                        }
                        None => {
                            let n = noise(x, y, 3) * 2.0;
                            if p.y < floor_y {
                                let t = p.y / floor_y;
                                [
                                    214.0 - 14.0 * t + n,
                                    208.0 - 12.0 * t + n,
                                    198.0 - 8.0 * t + n,
                                ]
                            } else {
                                // The floor with a soft shadow around the feet.
                                let d = feet
                                    .iter()
                                    .map(|f| ((p - *f) / Vec2::new(2.4, 1.0)).length())
                                    .fold(f32::MAX, f32::min);
                                let s = 1.0 - 0.3 * (-d / (0.02 * h as f32)).exp();
                                [150.0 * s + n, 128.0 * s + n, 104.0 * s + n]
                            }
                        }
                    };
                    for i in 0..3 {
                        acc[i] += c[i] * 0.25;
                    }
                }
                let n = noise(x, y, 17) * 2.5;
                img.put_pixel(
                    x,
                    y,
                    Rgba([
                        (acc[0] + n).clamp(0.0, 255.0) as u8,
                        (acc[1] + n).clamp(0.0, 255.0) as u8,
                        (acc[2] + n).clamp(0.0, 255.0) as u8,
                        255,
                    ]),
                );
                mask[(y * w + x) as usize] = cover;
            }
        }
        (img, mask)
    }

    /// 468 face landmarks: the face oval around the drawn head, every other point inside
    /// it (on an ellipse of half its size), with the skin-sampling cheeks and forehead on
    /// skin.
    pub fn face_landmarks(&self) -> Vec<[f32; 3]> {
        let u = self.u();
        let c = Vec2::new(self.cx(), 0.1 * u);
        let r = Vec2::new(0.045 * u, 0.058 * u);
        let mut lm: Vec<[f32; 3]> = (0..468)
            .map(|i| {
                let a = i as f32 * 2.399;
                let p = c + Vec2::new(a.cos(), a.sin()) * r * 0.5;
                [p.x, p.y, 0.0]
            })
            .collect();
        for (j, &i) in FACE_OVAL.iter().enumerate() {
            // Landmark 10 at the top, going round clockwise on the image.
            let a = -std::f32::consts::FRAC_PI_2
                + j as f32 / FACE_OVAL.len() as f32 * std::f32::consts::TAU;
            let p = c + Vec2::new(a.cos(), a.sin()) * r * 0.95;
            lm[i] = [p.x, p.y, 0.0];
        }
        // Landmarks 234 and 454 (the face's width) on the oval's sides.
        lm[234] = [c.x - r.x * 0.95, c.y, 0.0];
        lm[454] = [c.x + r.x * 0.95, c.y, 0.0];
        lm
    }

    /// The person as the vision stage would hand them to a category.
    pub fn person(&self) -> Person {
        let (photo, data) = self.draw();
        let (w, h) = (self.width, self.height);
        let mask = Mask {
            width: w,
            height: h,
            data,
        };
        let box_all = Detection {
            score: 0.9,
            xmin: 0.0,
            ymin: 0.0,
            xmax: w as f32,
            ymax: h as f32,
            keypoints: Vec::new(),
        };
        let roi = RotatedRect {
            cx: w as f32 / 2.0,
            cy: h as f32 / 2.0,
            width: w as f32,
            height: h as f32,
            rotation: 0.0,
        };
        let keypoints = self
            .keypoints()
            .iter()
            .map(|p| PoseKeypoint {
                x: p.x,
                y: p.y,
                z: 0.0,
                visibility: 0.99,
                presence: 0.99,
            })
            .collect();
        let landmarks = self.face_landmarks();
        let u = self.u();
        let face = Face {
            detection: Detection {
                score: 0.9,
                xmin: self.cx() - 0.05 * u,
                ymin: 0.04 * u,
                xmax: self.cx() + 0.05 * u,
                ymax: 0.16 * u,
                keypoints: Vec::new(),
            },
            detector: FaceDetector::FullRange,
            roi,
            score: 0.9,
            landmarks,
            head_pose: None,
        };
        Person {
            photo,
            face: Some(FaceChoice {
                face,
                candidates: 1,
                rank: 0,
                refined: false,
            }),
            body: Some(Body {
                detection: box_all,
                roi,
                score: 0.9,
                keypoints,
                mask_coverage: mask.coverage(),
                mask: Some(mask.clone()),
            }),
            body_choice: None,
            mask: Some(mask),
            hands: Vec::new(),
            face_set_aside: false,
        }
    }
}
