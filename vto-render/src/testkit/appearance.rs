//! What a subject wears and looks like: skin tone, clothes, hair; and which material each
//! vertex of the base mesh gets.

use glam::Vec3;

use super::body::{BaseBody, Part};

/// Sleeve length of the top the subject wears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sleeves {
    /// To the wrist.
    Long,
    /// Ending at mid upper arm.
    Short,
}

/// The bottom the subject wears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bottom {
    /// To the ankles.
    Trousers,
    /// Ending a hand above the knees.
    Shorts,
}

/// A subject's appearance (sRGB colours).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Appearance {
    /// Skin.
    pub skin: [u8; 3],
    /// Hair (and brows).
    pub hair: [u8; 3],
    /// The top.
    pub top: [u8; 3],
    /// The top's sleeves.
    pub sleeves: Sleeves,
    /// The bottom's colour.
    pub bottom_colour: [u8; 3],
    /// The bottom.
    pub bottom: Bottom,
    /// The shoes.
    pub shoes: [u8; 3],
}

/// Skin tones, light to dark.
pub const SKIN_TONES: [[u8; 3]; 4] = [
    [234, 196, 170],
    [205, 152, 114],
    [150, 98, 68],
    [96, 62, 44],
];

/// Materials of the rendered body, in [`Appearance::palette`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Mat {
    /// Skin.
    Skin = 0,
    /// Lips.
    Lips,
    /// Irises and pupils.
    Eyes,
    /// The whites of the eyes.
    Sclera,
    /// Hair and brows.
    Hair,
    /// The top.
    Top,
    /// The bottom.
    Bottom,
    /// The shoes.
    Shoes,
}

impl Appearance {
    /// (sRGB colour, roughness) per [`Mat`].
    pub fn palette(&self) -> [([u8; 3], f32); 8] {
        let s = self.skin;
        let lips = [
            (s[0] as f32 * 0.86 + 14.0) as u8,
            (s[1] as f32 * 0.66) as u8,
            (s[2] as f32 * 0.68) as u8,
        ];
        [
            (s, 0.55),
            (lips, 0.4),
            ([38, 28, 22], 0.2),
            ([226, 222, 214], 0.25),
            (self.hair, 0.7),
            (self.top, 0.9),
            (self.bottom_colour, 0.85),
            (self.shoes, 0.45),
        ]
    }
}

/// Landmarks of the rest mesh the clothes and face are painted from.
struct Rest {
    hip_y: f32,
    knee_y: f32,
    ankle_y: f32,
    eye: [Vec3; 2],
    mouth: Vec3,
    face_z: f32,
    neck_y: f32,
}

fn rest(body: &BaseBody) -> Rest {
    let face_z = body
        .rest
        .iter()
        .zip(&body.parts)
        .filter(|(_, p)| **p == Part::Head)
        .map(|(v, _)| v.z)
        .fold(f32::MIN, f32::max);
    Rest {
        hip_y: body.head("upperleg01.L").y,
        knee_y: body.head("lowerleg01.L").y,
        ankle_y: body.head("foot.L").y,
        eye: [body.head("eye.L"), body.head("eye.R")],
        // The lips' centre, 7 cm below the eyes on the face's midline.
        mouth: Vec3::new(0.0, body.head("eye.L").y - 7.0, 0.0),
        face_z,
        neck_y: body.head("neck01").y,
    }
}

/// The material of every triangle of `body` for `look`, decided once per OBJ face (quad) at
/// its centroid so hems run straight along the mesh's rows instead of zigzagging across its
/// diagonals.
pub fn triangle_materials(body: &BaseBody, look: &Appearance) -> Vec<Mat> {
    let mut points = Vec::new();
    let mut face_of = Vec::with_capacity(body.triangles.len());
    let mut start = 0;
    while start < body.triangles.len() {
        let face = body.faces[start];
        let mut end = start;
        while end < body.triangles.len() && body.faces[end] == face {
            end += 1;
        }
        let mut ids: Vec<u32> = body.triangles[start..end]
            .iter()
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let centre = ids.iter().map(|&i| body.rest[i as usize]).sum::<Vec3>() / ids.len() as f32;
        let mut parts: Vec<Part> = ids.iter().map(|&i| body.parts[i as usize]).collect();
        parts.sort_by_key(|p| *p as u8);
        let mut best = (parts[0], 0);
        for p in &parts {
            let n = parts.iter().filter(|q| *q == p).count();
            if n > best.1 {
                best = (*p, n);
            }
        }
        let eye = ids.iter().any(|&i| body.eyes[i as usize]);
        points.push((centre, best.0, eye));
        face_of.extend(std::iter::repeat_n(points.len() - 1, end - start));
        start = end;
    }
    let mats = materials_at(body, look, &points);
    face_of.iter().map(|&f| mats[f]).collect()
}

/// The material of every vertex of `body` for `look`.
pub fn vertex_materials(body: &BaseBody, look: &Appearance) -> Vec<Mat> {
    let points: Vec<(Vec3, Part, bool)> = (0..body.rest.len())
        .map(|i| (body.rest[i], body.parts[i], body.eyes[i]))
        .collect();
    materials_at(body, look, &points)
}

/// The material at rest-pose points (position, part, on an eyeball).
fn materials_at(body: &BaseBody, look: &Appearance, points: &[(Vec3, Part, bool)]) -> Vec<Mat> {
    let r = rest(body);
    let upper_arm = |side: f32| {
        let n = if side > 0.0 { "L" } else { "R" };
        (
            body.head(&format!("upperarm01.{n}")),
            body.head(&format!("lowerarm01.{n}")),
        )
    };
    let waist = r.hip_y + 9.0;
    let neckline = r.neck_y - 1.5;
    points
        .iter()
        .map(|&(v, part, eye)| match part {
            _ if eye => {
                let e = if v.x > 0.0 { r.eye[0] } else { r.eye[1] };
                if v.z > e.z + 0.9 && ((v.x - e.x).powi(2) + (v.y - e.y).powi(2)).sqrt() < 0.62 {
                    Mat::Eyes
                } else {
                    Mat::Sclera
                }
            }
            Part::Head | Part::Torso | Part::Pelvis if v.y < r.neck_y + 3.0 && v.y > neckline => {
                let front = v.z > 2.0;
                // A crew neck: lower in front.
                if v.y > neckline + if front { -0.5 } else { 1.5 } {
                    Mat::Skin
                } else {
                    Mat::Top
                }
            }
            Part::Head => {
                let e = if v.x > 0.0 { r.eye[0] } else { r.eye[1] };
                let brow = v.y > e.y + 1.8
                    && v.y < e.y + 2.7 - 0.12 * (v.x.abs() - e.x.abs()).max(0.0)
                    && (v.x - e.x).abs() < 2.4
                    && v.z > r.face_z - 6.0;
                let m = v - r.mouth;
                let lips =
                    m.x.abs() < 2.5 - m.y.abs() * 0.8 && m.y.abs() < 1.2 && v.z > r.face_z - 2.8;
                let hair = v.y > e.y + 6.3
                    || (v.y > e.y + 1.5 && v.z < e.z - 3.5)
                    || (v.z < e.z - 9.0 && v.y > e.y - 6.0);
                if brow {
                    Mat::Hair
                } else if lips {
                    Mat::Lips
                } else if hair {
                    Mat::Hair
                } else {
                    Mat::Skin
                }
            }
            Part::Torso | Part::Pelvis => {
                if v.y > waist - 2.0 {
                    Mat::Top
                } else {
                    Mat::Bottom
                }
            }
            Part::UpperArm => {
                let (sh, el) = upper_arm(v.x);
                let t = (v - sh).dot(el - sh) / (el - sh).length_squared().max(1e-6);
                if look.sleeves == Sleeves::Long || t < 0.5 {
                    Mat::Top
                } else {
                    Mat::Skin
                }
            }
            Part::LowerArm => match look.sleeves {
                Sleeves::Long => Mat::Top,
                Sleeves::Short => Mat::Skin,
            },
            Part::Hand => Mat::Skin,
            Part::UpperLeg | Part::LowerLeg => {
                let hem = match look.bottom {
                    Bottom::Trousers => r.ankle_y - 1.0,
                    Bottom::Shorts => r.knee_y + 0.35 * (r.hip_y - r.knee_y),
                };
                if v.y > hem {
                    Mat::Bottom
                } else {
                    Mat::Skin
                }
            }
            Part::Foot => Mat::Shoes,
        })
        .collect()
}
