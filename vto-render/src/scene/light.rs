//! The light estimate: ambient and one key light, read off the photo.
//!
//! From a face ([`from_face`]): linear luminance at the landmarks is fitted as `a + b · n`
//! (n: the normal of a head-sized sphere through the landmark, turned with the pose); `a`
//! gives the ambient level, `b` the key light's direction and strength, the face's mean colour
//! their tint (half-way to white, as skin colours its own reflection).

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
