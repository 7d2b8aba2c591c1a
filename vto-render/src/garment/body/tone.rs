//! The person's skin tone and light when the photo shows no face (a head-cropped shop photo,
//! a back view, a person too small for the face detector): what a garment uses to paint the
//! skin it uncovers.
//!
//! With a face, both come from it ([`crate::garment::body::frame`] samples the cheeks,
//! [`crate::garment::shade::skin::FaceLight`] the face's light). Without one, in this order:
//! - **Visible skin** of the forearms, hands, neck and shins: discs around the pose keypoints
//!   there, inside the person mask; a disc counts when at least half its pixels lie in the
//!   skin range of the YCbCr plane ([`skin_range`], wide enough for light and dark skin).
//!   Their median is the skin colour; the regression of their luminance on the position
//!   across the body gives the light's side, as the face's does.
//! - **The old garment's shading**, for the light only: the same regression over the torso
//!   between the shoulders and the hips (a garment's own pattern can bias it; it is kept to
//!   the face light's range).
//! - **Neutral**: [`FALLBACK_SKIN`] (its grey on a black-and-white photo) and a flat front
//!   light (no gradient).
//!
//! [`Tone::source_names`] reports which was used, for the result's metadata.

use glam::Vec2;
use image::RgbaImage;

use crate::garment::colour::{median, FALLBACK_SKIN};
use crate::garment::geom::mask_at;
use crate::vision::pose::PoseKeypoint;

/// Where the skin colour or the light came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToneSource {
    /// The face.
    Face,
    /// Skin the person shows on arms, hands, neck or legs.
    VisibleSkin,
    /// The shading of the garment the person wears (light only).
    OldGarment,
    /// Nothing in the photo: the documented neutral.
    Neutral,
}

impl ToneSource {
    /// The name reported in metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            ToneSource::Face => "face",
            ToneSource::VisibleSkin => "visible_skin",
            ToneSource::OldGarment => "old_garment",
            ToneSource::Neutral => "neutral",
        }
    }
}

/// A light measured on the body: relative change of luminance per `half_width` across the
/// body from `centre` (the same terms as the face's light).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyLight {
    /// Relative change of luminance per half-width along `across`, clamped to ±0.6.
    pub gradient: f32,
    /// Half the shoulders' width (pixels).
    pub half_width: f32,
    /// The torso's centre (pixels).
    pub centre: Vec2,
}

/// The skin tone and light of a person without a face (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tone {
    /// The skin colour (sRGB 0–255).
    pub skin: [f32; 3],
    /// Where `skin` came from.
    pub skin_source: ToneSource,
    /// The light, unless neutral.
    pub light: Option<BodyLight>,
    /// Where `light` came from.
    pub light_source: ToneSource,
}

impl Tone {
    /// `(skin, light)` source names for metadata.
    pub fn source_names(&self) -> (&'static str, &'static str) {
        (self.skin_source.as_str(), self.light_source.as_str())
    }
}

/// What [`Tone::measure`] looks at: the photo, the person mask and the body's geometry.
#[derive(Debug, Clone, Copy)]
pub struct ToneInput<'a> {
    /// The photo.
    pub photo: &'a RgbaImage,
    /// The person mask at the photo's size.
    pub mask: &'a [f32],
    /// The pose keypoints (image pixels).
    pub keypoints: &'a [PoseKeypoint],
    /// The shoulder keypoints (image left, right).
    pub shoulder: [Vec2; 2],
    /// The hips' midpoint.
    pub hips: Vec2,
    /// Unit vector from the image-left shoulder to the right.
    pub across: Vec2,
    /// Unit vector down the torso.
    pub down: Vec2,
}

/// Least visibility of a keypoint a skin disc is centred on.
const SAMPLE_VISIBLE: f32 = 0.5;
/// Least skin pixels for a skin colour (besides a share of the discs' area).
const MIN_SKIN_PX: usize = 40;
/// Least share of a disc's pixels on the person that must be skin-coloured for the disc to
/// count as bare skin.
const DISC_SKIN: f32 = 0.5;
/// Least pixels for a light regression.
const MIN_LIGHT_PX: usize = 30;

/// Whether a colour lies in the skin range of the YCbCr plane (Cb −51…−1, Cr 5…45 around
/// grey, with some lightness): light and dark skin, most of it under warm or daylight.
pub fn skin_range(c: [f32; 3]) -> bool {
    let y = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
    let cb = 0.564 * (c[2] - y);
    let cr = 0.713 * (c[0] - y);
    y > 35.0 && (-51.0..=-1.0).contains(&cb) && (5.0..=45.0).contains(&cr)
}

/// Whether the photo is black and white (its pixels' mean chroma under 4 levels), sampled
/// on a grid of about 64 × 64.
pub fn is_grey(photo: &RgbaImage) -> bool {
    let (w, h) = photo.dimensions();
    let step = (w.max(h) / 64).max(1);
    let (mut sum, mut n) = (0.0f64, 0.0f64);
    for y in (0..h).step_by(step as usize) {
        for x in (0..w).step_by(step as usize) {
            let p = photo.get_pixel(x, y).0;
            let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
            sum += f64::from((r - g).abs().max((g - b).abs()).max((r - b).abs()));
            n += 1.0;
        }
    }
    n > 0.0 && sum / n < 4.0
}

/// The pixels of a linear regression of luminance on the across position; the light's
/// gradient when they spread across the body.
#[derive(Default)]
struct Regression {
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
    n: usize,
}

impl Regression {
    fn add(&mut self, x: f32, c: [f32; 3]) {
        let l = f64::from(0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]);
        let x = f64::from(x);
        self.sx += x;
        self.sy += l;
        self.sxx += x * x;
        self.sxy += x * l;
        self.n += 1;
    }

    /// The relative change per unit of `x`, clamped to ±0.6, when the points spread at least
    /// a fifth of a half-width and are not black.
    fn gradient(&self) -> Option<f32> {
        if self.n < MIN_LIGHT_PX {
            return None;
        }
        let n = self.n as f64;
        let var = self.sxx / n - (self.sx / n).powi(2);
        let mean = self.sy / n;
        if var < 0.04 || mean < 1.0 {
            return None;
        }
        let slope = (self.sxy / n - self.sx / n * self.sy / n) / var;
        Some(((slope / mean) as f32).clamp(-0.6, 0.6))
    }
}

impl Tone {
    /// The tone of a person without a face (the order of the module docs).
    pub fn measure(t: &ToneInput<'_>) -> Tone {
        let (w, h) = t.photo.dimensions();
        let sw = t.shoulder[0].distance(t.shoulder[1]).max(1.0);
        let centre = (t.shoulder[0] + t.shoulder[1] + t.hips * 2.0) * 0.25;
        let half = 0.5 * sw;
        let across = |p: Vec2| (p - centre).dot(t.across) / half;
        let colour = |p: Vec2| {
            let c = t.photo.get_pixel(p.x as u32, p.y as u32).0;
            [f32::from(c[0]), f32::from(c[1]), f32::from(c[2])]
        };
        let on_person = |p: Vec2| {
            p.x >= 0.0
                && p.y >= 0.0
                && p.x < w as f32
                && p.y < h as f32
                && mask_at(t.mask, (w, h), p) >= 0.5
        };
        let grey = is_grey(t.photo);

        // Visible skin: discs on the forearms, hands, neck and shins; a disc counts when at
        // least DISC_SKIN of its pixels on the person are skin-coloured (a sleeve or a
        // collar with a little beige in it does not).
        let mut skin_px: Vec<(Vec2, [f32; 3])> = Vec::new();
        if !grey {
            let r = (0.07 * sw).max(2.0);
            for c in sample_points(t, sw) {
                let step = (r / 6.0).max(1.0);
                let (mut disc, mut on) = (Vec::new(), 0usize);
                let mut dy = -r;
                while dy <= r {
                    let mut dx = -r;
                    while dx <= r {
                        let p = c + Vec2::new(dx, dy);
                        if dx * dx + dy * dy <= r * r && on_person(p) {
                            on += 1;
                            let col = colour(p);
                            if skin_range(col) {
                                disc.push((p, col));
                            }
                        }
                        dx += step;
                    }
                    dy += step;
                }
                if on > 0 && disc.len() as f32 >= DISC_SKIN * on as f32 {
                    skin_px.extend(disc);
                }
            }
        }
        let skin = (skin_px.len() >= MIN_SKIN_PX)
            .then(|| median(skin_px.iter().map(|(_, c)| *c).collect()))
            .flatten();
        let (skin, skin_source) = match skin {
            Some(s) => (s, ToneSource::VisibleSkin),
            None if grey => {
                let y =
                    0.299 * FALLBACK_SKIN[0] + 0.587 * FALLBACK_SKIN[1] + 0.114 * FALLBACK_SKIN[2];
                ([y; 3], ToneSource::Neutral)
            }
            None => (FALLBACK_SKIN, ToneSource::Neutral),
        };
        let light = |g: f32| BodyLight {
            gradient: g,
            half_width: half,
            centre,
        };
        if skin_source == ToneSource::VisibleSkin {
            let mut reg = Regression::default();
            for (p, c) in &skin_px {
                reg.add(across(*p), *c);
            }
            if let Some(g) = reg.gradient() {
                return Tone {
                    skin,
                    skin_source,
                    light: Some(light(g)),
                    light_source: ToneSource::VisibleSkin,
                };
            }
        }
        // The old garment: the torso between the shoulders and the hips, inset a fifth.
        let mut reg = Regression::default();
        let top = (t.shoulder[0] + t.shoulder[1]) * 0.5 + t.down * 0.15 * sw;
        let depth = (t.hips - top).dot(t.down).max(0.0);
        let steps = 40;
        for i in 0..steps {
            for j in 0..steps {
                let u = (i as f32 + 0.5) / steps as f32 - 0.5;
                let v = (j as f32 + 0.5) / steps as f32;
                let p = top + t.across * (u * 0.8 * sw) + t.down * (v * 0.9 * depth);
                if on_person(p) {
                    reg.add(across(p), colour(p));
                }
            }
        }
        match reg.gradient() {
            Some(g) => Tone {
                skin,
                skin_source,
                light: Some(light(g)),
                light_source: ToneSource::OldGarment,
            },
            None => Tone {
                skin,
                skin_source,
                light: None,
                light_source: ToneSource::Neutral,
            },
        }
    }
}

/// Where skin may show: the forearms (half-way and near the wrist), the hands, the neck just
/// above the shoulders' line, and the shins; only keypoints the pose model sees.
fn sample_points(t: &ToneInput<'_>, sw: f32) -> Vec<Vec2> {
    let kp = |i: usize| {
        t.keypoints
            .get(i)
            .filter(|k| k.visibility.min(k.presence) >= SAMPLE_VISIBLE)
            .map(|k| Vec2::new(k.x, k.y))
    };
    let mut pts = Vec::new();
    for (elbow, wrist, hand) in [(13, 15, [17, 19, 21]), (14, 16, [18, 20, 22])] {
        if let (Some(e), Some(w)) = (kp(elbow), kp(wrist)) {
            pts.push(e + (w - e) * 0.5);
            pts.push(e + (w - e) * 0.8);
        }
        let fingers: Vec<Vec2> = hand.iter().filter_map(|&i| kp(i)).collect();
        if !fingers.is_empty() {
            pts.push(fingers.iter().copied().sum::<Vec2>() / fingers.len() as f32);
        }
    }
    let mid = (t.shoulder[0] + t.shoulder[1]) * 0.5;
    for up in [0.12, 0.18, 0.24] {
        pts.push(mid - t.down * up * sw);
    }
    for (knee, ankle) in [(25, 27), (26, 28)] {
        if let (Some(k), Some(a)) = (kp(knee), kp(ankle)) {
            pts.push(k + (a - k) * 0.4);
            pts.push(k + (a - k) * 0.7);
        }
    }
    pts
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    fn keypoints(pts: &[(usize, Vec2)]) -> Vec<PoseKeypoint> {
        let mut k = vec![
            PoseKeypoint {
                x: -1000.0,
                y: -1000.0,
                z: 0.0,
                visibility: 0.0,
                presence: 0.0,
            };
            33
        ];
        for &(i, p) in pts {
            k[i] = PoseKeypoint {
                x: p.x,
                y: p.y,
                z: 0.0,
                visibility: 0.9,
                presence: 0.9,
            };
        }
        k
    }

    /// A 200 × 300 photo: a person mask over the middle, a grey-blue sweater on the torso and
    /// bare forearms in a skin colour, lit from the image's right.
    fn figure(skin: [u8; 3], sleeves: [u8; 3]) -> (RgbaImage, Vec<f32>, Vec<PoseKeypoint>) {
        let (w, h) = (200u32, 300u32);
        let img = RgbaImage::from_fn(w, h, |x, y| {
            let lit = 0.6 + 0.8 * x as f32 / w as f32;
            let base = if y > 150 { skin } else { sleeves };
            let c = base.map(|v| (f32::from(v) * lit).min(255.0) as u8);
            Rgba([c[0], c[1], c[2], 255])
        });
        let mask = vec![1.0; (w * h) as usize];
        let k = keypoints(&[
            (11, Vec2::new(60.0, 60.0)),
            (12, Vec2::new(140.0, 60.0)),
            (13, Vec2::new(40.0, 130.0)),
            (14, Vec2::new(160.0, 130.0)),
            (15, Vec2::new(40.0, 230.0)),
            (16, Vec2::new(160.0, 230.0)),
        ]);
        (img, mask, k)
    }

    fn input<'a>(img: &'a RgbaImage, mask: &'a [f32], k: &'a [PoseKeypoint]) -> ToneInput<'a> {
        ToneInput {
            photo: img,
            mask,
            keypoints: k,
            shoulder: [Vec2::new(60.0, 60.0), Vec2::new(140.0, 60.0)],
            hips: Vec2::new(100.0, 200.0),
            across: Vec2::X,
            down: Vec2::Y,
        }
    }

    /// Bare forearms give the skin colour and the light's side (lit from the right: a
    /// positive gradient).
    #[test]
    fn bare_forearms_give_the_skin_and_the_light() {
        let (img, mask, k) = figure([190, 140, 110], [70, 80, 120]);
        let t = Tone::measure(&input(&img, &mask, &k));
        assert_eq!(t.skin_source, ToneSource::VisibleSkin);
        // The skin's hue (its level depends on which arm the median falls on).
        let ratio = t.skin[0] / t.skin[2];
        assert!((1.5..2.0).contains(&ratio), "{:?}", t.skin);
        assert_eq!(t.light_source, ToneSource::VisibleSkin);
        assert!(t.light.unwrap().gradient > 0.1, "{:?}", t.light);
    }

    /// Long sleeves everywhere: no skin; the light from the garment's shading; the skin is
    /// the neutral.
    #[test]
    fn covered_arms_take_the_light_from_the_garment_and_a_neutral_skin() {
        let (img, mask, k) = figure([70, 80, 120], [70, 80, 120]);
        let t = Tone::measure(&input(&img, &mask, &k));
        assert_eq!(t.skin_source, ToneSource::Neutral);
        assert_eq!(t.skin, FALLBACK_SKIN);
        assert_eq!(t.light_source, ToneSource::OldGarment);
        assert!(t.light.unwrap().gradient > 0.1, "{:?}", t.light);
    }

    /// A black-and-white photo: the neutral skin is grey, not pink.
    #[test]
    fn a_grey_photo_gets_a_grey_neutral_skin() {
        let (img, mask, k) = figure([150, 150, 150], [90, 90, 90]);
        let t = Tone::measure(&input(&img, &mask, &k));
        assert_eq!(t.skin_source, ToneSource::Neutral);
        assert!(
            t.skin[0] == t.skin[1] && t.skin[1] == t.skin[2],
            "{:?}",
            t.skin
        );
    }

    /// The skin range takes light and dark skin and refuses blue, green and grey.
    #[test]
    fn the_skin_range_takes_light_and_dark_skin_only() {
        for s in [
            [230.0, 190.0, 170.0],
            [190.0, 140.0, 110.0],
            [110.0, 70.0, 50.0],
        ] {
            assert!(skin_range(s), "{s:?}");
        }
        for c in [
            [70.0, 80.0, 120.0],
            [60.0, 140.0, 60.0],
            [128.0, 128.0, 128.0],
        ] {
            assert!(!skin_range(c), "{c:?}");
        }
    }
}
