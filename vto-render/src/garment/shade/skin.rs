//! Skin the new garment uncovers: the neck and chest in a neckline, forearms where a long
//! sleeve became a short one.
//!
//! - **The light** comes from the face (without one, from the body:
//!   [`crate::garment::body::tone`]): the luminance of its skin-like pixels, regressed on
//!   the position across the face, gives which side is lit and how strongly ([`FaceLight`]);
//!   the neck continues that gradient, and each arm is shaded as a cylinder lit from that
//!   side (a lit flank, a shadowed one, soft ambient), so neither reads as a flat patch.
//! - **The neck's outline** follows a body: a neck about a third of the shoulder keypoints'
//!   span wide under the chin, flaring smoothly into the shoulders' slope below it
//!   ([`neck_half_width`]), with a soft edge; a shadow under the jaw fades down the neck.
//! - **The colour** is the person's own: the neck's visible skin when the old collar leaves
//!   some in view, else the face's.

use glam::Vec2;
use image::RgbaImage;

use crate::garment::body::frame::BodyFrame;
use crate::garment::colour::skin_likeness;
use crate::garment::geom::{inside, smoothstep};

/// How the face is lit, for skin the garment uncovers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaceLight {
    /// Relative change of the skin's luminance per face half-width along the body's
    /// across axis (positive: lit from the `across` side), clamped to ±0.6.
    pub gradient: f32,
    /// The face's half-width (pixels).
    pub half_width: f32,
    /// The face's centre (photo pixels).
    pub centre: Vec2,
}

impl FaceLight {
    /// The light from the lower two thirds of the face (below the eyes) of `photo`, a crop
    /// whose top-left is `offset` on the photo; `None` without skin in it. Without a face,
    /// the light the body gave ([`BodyFrame::tone`]: visible skin or the old garment's
    /// shading), `None` when that is neutral.
    pub fn measure(photo: &RgbaImage, offset: Vec2, f: &BodyFrame, skin: [f32; 3]) -> Option<Self> {
        let oval = &f.face_oval;
        if oval.len() < 3 {
            return f.tone.and_then(|t| t.light).map(|l| FaceLight {
                gradient: l.gradient,
                half_width: l.half_width,
                centre: l.centre,
            });
        }
        let centre = oval.iter().copied().sum::<Vec2>() / oval.len() as f32;
        let xs = oval.iter().map(|p| (*p - centre).dot(f.across));
        let half_width = xs.fold(0.0f32, |m, x| m.max(x.abs())).max(2.0);
        let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
        for p in oval {
            lo = lo.min(*p - offset);
            hi = hi.max(*p - offset);
        }
        let (w, h) = photo.dimensions();
        let x0 = lo.x.max(0.0) as u32;
        let y0 = lo.y.max(0.0) as u32;
        let x1 = (hi.x.max(0.0) as u32).min(w);
        let y1 = (hi.y.max(0.0) as u32).min(h);
        let (mut sx, mut sy, mut sxx, mut sxy, mut n) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let step = ((x1.saturating_sub(x0)) / 60).max(1) as usize;
        for y in (y0..y1).step_by(step) {
            for x in (x0..x1).step_by(step) {
                let p = Vec2::new(x as f32, y as f32) + offset;
                let d = p - centre;
                // Below the eyes (a third of the face down from its centre's level up).
                if d.dot(f.down) < -0.2 * half_width || !inside(oval, p) {
                    continue;
                }
                let c = photo.get_pixel(x, y).0;
                let c = [f32::from(c[0]), f32::from(c[1]), f32::from(c[2])];
                if skin_likeness(c, skin) < 0.6 {
                    continue;
                }
                let xr = f64::from(d.dot(f.across) / half_width);
                let l = f64::from(0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]);
                sx += xr;
                sy += l;
                sxx += xr * xr;
                sxy += xr * l;
                n += 1.0;
            }
        }
        if n < 30.0 {
            return None;
        }
        let var = sxx / n - (sx / n).powi(2);
        let mean = sy / n;
        if var < 1e-4 || mean < 1.0 {
            return None;
        }
        let slope = (sxy / n - sx / n * sy / n) / var;
        Some(FaceLight {
            gradient: ((slope / mean) as f32).clamp(-0.6, 0.6),
            half_width,
            centre,
        })
    }

    /// The light's direction for a cylinder seen from the front: (across, towards the
    /// camera), unit length.
    pub fn direction(&self) -> Vec2 {
        let x = (self.gradient * 1.5).clamp(-0.8, 0.8);
        Vec2::new(x, (1.0 - x * x).sqrt())
    }

    /// The face's light continued to `p`: 1 at the face's centre line.
    pub fn at(&self, p: Vec2, across: Vec2) -> f32 {
        let x = ((p - self.centre).dot(across) / self.half_width).clamp(-1.5, 1.5);
        (1.0 + 0.5 * self.gradient * x).clamp(0.7, 1.3)
    }
}

/// Shading of a cylinder (an arm, the neck) at signed position `s` across it (−1 to 1, the
/// `across` side positive), lit from `light` ([`FaceLight::direction`]): soft ambient plus a
/// Lambert term, so the lit flank is brighter and the far one falls into shadow.
pub fn cylinder(s: f32, light: Vec2) -> f32 {
    let s = s.clamp(-1.0, 1.0);
    let n = Vec2::new(s, (1.0 - s * s).max(0.0).sqrt());
    0.62 + 0.42 * n.dot(light).max(0.0)
}

/// The neck's half-width under the jaw for a body whose shoulder keypoints are `sw` apart:
/// about 0.6 of the face's half-width, within 0.1–0.19 of `sw`.
pub fn neck_base(f: &BodyFrame) -> f32 {
    let sw = f.shoulder_width;
    let oval = &f.face_oval;
    if oval.is_empty() {
        return 0.16 * sw;
    }
    let centre = oval.iter().copied().sum::<Vec2>() / oval.len() as f32;
    let half = oval
        .iter()
        .fold(0.0f32, |m, p| m.max((*p - centre).dot(f.across).abs()));
    (0.6 * half).clamp(0.1 * sw, 0.19 * sw)
}

/// The neck's half-width at `t` (0 at the chin, 1 at the shoulder keypoints' line), for a
/// body whose shoulder keypoints are `sw` apart and whose neck is `base` half-wide under
/// the jaw ([`neck_base`]): even under the chin, then flaring into the slope of the
/// shoulders.
pub fn neck_half_width(t: f32, sw: f32, base: f32) -> f32 {
    let flare = smoothstep(0.35, 1.15, t);
    base + (0.59 * sw - base).max(0.0) * flare * flare
}

/// The neck zone of photo pixel `p`: `(signed distance across over the half-width, t)`
/// (see [`neck_half_width`]), when `p` lies below the chin within 1.3 half-widths.
pub fn neck_zone(f: &BodyFrame, chin: Vec2, p: Vec2, base: f32) -> Option<(f32, f32)> {
    neck_coords(f, chin, p, base).filter(|(s, _)| s.abs() < 1.3)
}

/// [`neck_zone`]'s coordinates of `p` at any distance across (`t` from −0.45 to 1.6).
pub fn neck_coords(f: &BodyFrame, chin: Vec2, p: Vec2, base: f32) -> Option<(f32, f32)> {
    let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5;
    let axis = mid - chin;
    let len = axis.length();
    if len < 1.0 {
        return None;
    }
    let down = axis / len;
    let d = p - chin;
    let t = d.dot(down) / len;
    if !(-0.45..=1.6).contains(&t) {
        return None;
    }
    let across = d.dot(crate::garment::geom::perp(down))
        * crate::garment::geom::perp(down).dot(f.across).signum();
    Some((across / neck_half_width(t, f.shoulder_width, base), t))
}

/// The mean colour of the skin the old garment leaves in view on the neck (pixels of
/// `photo`, a crop at `offset`, under the jaw, outside the face and skin-like), when there
/// is enough of it.
pub fn neck_colour(
    photo: &RgbaImage,
    offset: Vec2,
    f: &BodyFrame,
    skin: [f32; 3],
) -> Option<[f32; 3]> {
    let chin = f.chin()?;
    let (w, h) = photo.dimensions();
    let sw = f.shoulder_width;
    let c = chin - offset;
    let base = neck_base(f);
    let r = (0.5 * sw) as i64;
    let up = (0.3 * sw) as i64;
    let (mut sum, mut n) = ([0.0f64; 3], 0usize);
    for y in (c.y as i64 - up).max(0)..(c.y as i64 + r).min(i64::from(h)) {
        for x in (c.x as i64 - r).max(0)..(c.x as i64 + r).min(i64::from(w)) {
            let p = Vec2::new(x as f32, y as f32) + offset;
            let Some((s, t)) = neck_zone(f, chin, p, base) else {
                continue;
            };
            if s.abs() > 0.8 || t > 0.3 || inside(&f.face_oval, p) {
                continue;
            }
            let px = photo.get_pixel(x as u32, y as u32).0;
            let px = [f32::from(px[0]), f32::from(px[1]), f32::from(px[2])];
            if skin_likeness(px, skin) > 0.8 {
                for k in 0..3 {
                    sum[k] += f64::from(px[k]);
                }
                n += 1;
            }
        }
    }
    let need = ((0.005 * sw * sw) as usize).max(30);
    (n >= need).then(|| sum.map(|v| (v / n as f64) as f32))
}

/// Low-amplitude value noise (±1) so filled skin is not a flat plastic colour.
pub fn grain(x: u32, y: u32) -> f32 {
    let mut v = x.wrapping_mul(0x9E37_79B9) ^ y.wrapping_mul(0x85EB_CA6B);
    v ^= v >> 15;
    v = v.wrapping_mul(0x2C1B_3C6D);
    v ^= v >> 12;
    (v & 0xFFFF) as f32 / 32767.5 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The neck is narrow under the chin and flares into the shoulders; the cylinder's lit
    /// flank is brighter than its far one.
    #[test]
    fn the_neck_flares_and_the_cylinder_is_lit_from_one_side() {
        let sw = 200.0;
        assert!((neck_half_width(0.0, sw, 30.0) - 30.0).abs() < 0.5);
        assert!(neck_half_width(0.3, sw, 30.0) < 31.0);
        assert!(neck_half_width(1.0, sw, 30.0) > 2.0 * neck_half_width(0.3, sw, 30.0));
        let light = Vec2::new(0.6, 0.8);
        assert!(cylinder(0.8, light) > cylinder(-0.8, light) + 0.2);
        assert!(cylinder(0.0, Vec2::Y) > cylinder(0.95, Vec2::Y));
    }
}
