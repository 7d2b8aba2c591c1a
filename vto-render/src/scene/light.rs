//! The light estimate: ambient and one key light, read off the photo.
//!
//! From a face ([`from_face`]): linear luminance at the landmarks is fitted as `a + b · n`
//! (n: the normal of a head-sized sphere through the landmark, turned with the pose); `a`
//! gives the ambient level, `b` the key light's direction and strength, the face's mean colour
//! their tint (half-way to white, as skin colours its own reflection).
//!
//! From a region of the body ([`from_region`], for products worn far from the face: shoes):
//! the region's mean linear colour sets the exposure and tint (half-way to white); the key
//! light comes from the side of the person (inside the mask) that is brighter, from above and
//! in front.

use image::RgbaImage;

use super::camera::HeadCamera;
use super::head::head_centre;
use crate::math::{normalize_or, solve4, Vec3};
use crate::raster::Lighting;
use crate::vision::head_pose::canonical_face;
use crate::vision::Face;

/// The light when the photo says too little: soft ambient, a key light from the upper left.
pub fn neutral() -> Lighting {
    Lighting {
        ambient: [0.35; 3],
        key_dir: default_dir().to_array(),
        key_color: [0.8; 3],
    }
}

fn default_dir() -> Vec3 {
    Vec3::new(0.3, -0.6, -0.75).normalize()
}

/// sRGB byte → linear.
pub fn linear(v: u8) -> f32 {
    let c = f32::from(v) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Light estimated from the face (see the module docs).
pub fn from_face(photo: &RgbaImage, face: &Face, cam: &HeadCamera) -> Lighting {
    let model = canonical_face();
    if model.len() < 468 {
        return neutral();
    }
    let centre = head_centre();
    // Normal equations of lum ≈ a + b·n over front-facing landmarks.
    let mut ata = [[0.0f64; 4]; 4];
    let mut atb = [0.0f64; 4];
    let mut mean = Vec3::ZERO;
    let mut count = 0.0f32;
    for (lm, m) in face.landmarks.iter().zip(model) {
        let n = cam.dir_to_camera(normalize_or(Vec3::from(*m) - centre, Vec3::Z));
        if n.z > -0.2 {
            continue;
        }
        let Some(rgb) = mean_rgb_3x3(photo, lm[0], lm[1]) else {
            continue;
        };
        let lum = 0.2126 * rgb.x + 0.7152 * rgb.y + 0.0722 * rgb.z;
        let row = [1.0, f64::from(n.x), f64::from(n.y), f64::from(n.z)];
        for i in 0..4 {
            for j in 0..4 {
                ata[i][j] += row[i] * row[j];
            }
            atb[i] += row[i] * f64::from(lum);
        }
        mean += rgb;
        count += 1.0;
    }
    if count < 20.0 {
        return neutral();
    }
    for row in ata.iter_mut() {
        row.iter_mut().for_each(|v| *v += 1e-6);
    }
    let sol = solve4(ata, atb).unwrap_or([0.3, 0.0, 0.0, 0.0]);
    let b = Vec3::new(sol[1] as f32, sol[2] as f32, sol[3] as f32);
    let b_len = b.length();
    // The light comes from where the face is brightest; keep it in front of the face.
    let mut dir = if b_len > 1e-4 {
        b / b_len
    } else {
        default_dir()
    };
    if dir.z > -0.2 {
        dir = normalize_or(Vec3::new(dir.x, dir.y, -0.4), default_dir());
    }
    let mean = mean / count;
    let mean_lum = (0.2126 * mean.x + 0.7152 * mean.y + 0.0722 * mean.z).max(1e-3);
    let tint = Vec3::splat(0.5) + 0.5 * mean / mean_lum;
    // Skin albedo taken as 0.45 (linear luminance).
    let ambient_level = ((sol[0] as f32 - b_len * 0.5) / 0.45).clamp(0.08, 1.5);
    let key_level = (b_len / 0.45).clamp(0.1, 2.0);
    Lighting {
        ambient: (tint * ambient_level).to_array(),
        key_dir: dir.to_array(),
        key_color: (tint * key_level).to_array(),
    }
}

/// Mean linear RGB of the 3×3 pixels around `(x, y)`, `None` when all are outside the photo.
fn mean_rgb_3x3(photo: &RgbaImage, x: f32, y: f32) -> Option<Vec3> {
    let (x, y) = (x.round() as i64, y.round() as i64);
    let mut rgb = Vec3::ZERO;
    let mut k = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            let (xx, yy) = (x + dx, y + dy);
            if xx < 0 || yy < 0 || xx >= i64::from(photo.width()) || yy >= i64::from(photo.height())
            {
                continue;
            }
            let p = photo.get_pixel(xx as u32, yy as u32).0;
            rgb += Vec3::new(linear(p[0]), linear(p[1]), linear(p[2]));
            k += 1.0;
        }
    }
    (k > 0.0).then(|| rgb / k)
}

/// Light estimated from the `x0..x1 × y0..y1` region of the photo and, when given, the person
/// mask there (see the module docs).
pub fn from_region(
    photo: &RgbaImage,
    region: [u32; 4],
    mask: Option<&crate::vision::Mask>,
) -> Lighting {
    let [x0, y0, x1, y1] = region;
    let (x1, y1) = (x1.min(photo.width()), y1.min(photo.height()));
    if x1 <= x0 || y1 <= y0 {
        return neutral();
    }
    let mid = (x0 + x1) / 2;
    let mut mean = Vec3::ZERO;
    let mut count = 0.0f32;
    // Person luminance left and right of the region's middle.
    let mut sides = [(0.0f32, 0.0f32); 2];
    for y in (y0..y1).step_by(2) {
        for x in (x0..x1).step_by(2) {
            let p = photo.get_pixel(x, y).0;
            let rgb = Vec3::new(linear(p[0]), linear(p[1]), linear(p[2]));
            mean += rgb;
            count += 1.0;
            let person = mask.is_some_and(|m| {
                m.width == photo.width()
                    && m.height == photo.height()
                    && m.data[(y * m.width + x) as usize] > 0.5
            });
            if person {
                let s = &mut sides[usize::from(x >= mid)];
                s.0 += 0.2126 * rgb.x + 0.7152 * rgb.y + 0.0722 * rgb.z;
                s.1 += 1.0;
            }
        }
    }
    if count < 1.0 {
        return neutral();
    }
    let mean = mean / count;
    let lum = (0.2126 * mean.x + 0.7152 * mean.y + 0.0722 * mean.z).max(1e-3);
    let tint = Vec3::splat(0.5) + 0.5 * mean / lum;
    // Exposure against a mid-grey scene (linear 0.2), within reason.
    let exposure = (lum / 0.2).sqrt().clamp(0.5, 1.6);
    let side_lum = |s: (f32, f32)| if s.1 > 0.0 { s.0 / s.1 } else { 0.0 };
    let (l, r) = (side_lum(sides[0]), side_lum(sides[1]));
    let lean = if l + r > 1e-4 {
        (3.0 * (r - l) / (l + r)).clamp(-0.8, 0.8)
    } else {
        default_dir().x
    };
    Lighting {
        ambient: (tint * 0.45 * exposure).to_array(),
        key_dir: normalize_or(Vec3::new(lean, -0.7, -0.6), default_dir()).to_array(),
        key_color: (tint * 0.75 * exposure).to_array(),
    }
}
