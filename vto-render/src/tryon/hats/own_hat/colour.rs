//! The colours the own-hat detector compares: the skin's medians and their likeness test
//! ([`skin_like`]), colour histograms ([`Palette`]) and the pixel helpers they share.

use image::RgbaImage;

/// A pixel this close (RGB distance) to the brows' or the cheeks' median colour is skin.
pub const SKIN_DIST: f32 = 20.0;
/// A pixel of the skin's chromaticity within this (r and g shares) is skin, at a brightness
/// within [`SKIN_LUMA_RATIO`] of the skin's.
pub const SKIN_CHROMA: f32 = 0.035;
/// The brightness range (over the skin's) of skin in shade or light.
pub const SKIN_LUMA_RATIO: (f32, f32) = (0.45, 1.7);
/// A colour histogram, 8 levels per channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    bins: Vec<u32>,
    /// The number of samples.
    pub samples: usize,
}

impl Palette {
    pub(super) fn new() -> Palette {
        Palette {
            bins: vec![0; 512],
            samples: 0,
        }
    }

    fn bin(c: [u8; 3]) -> usize {
        (usize::from(c[0] >> 5) << 6) | (usize::from(c[1] >> 5) << 3) | usize::from(c[2] >> 5)
    }

    pub(super) fn add(&mut self, c: [u8; 3]) {
        self.bins[Self::bin(c)] += 1;
        self.samples += 1;
    }

    /// Whether `c`'s bin holds at least `share` of the samples (never, under `min` samples).
    pub fn holds(&self, c: [u8; 3], share: f32, min: usize) -> bool {
        let n = self.bins[Self::bin(c)];
        self.samples >= min && n >= 4 && n as f32 >= share * self.samples as f32
    }
}

pub(super) fn rgb(photo: &RgbaImage, x: u32, y: u32) -> [u8; 3] {
    let p = photo.get_pixel(x, y).0;
    [p[0], p[1], p[2]]
}

pub(super) fn dist(c: [u8; 3], m: [f32; 3]) -> f32 {
    (0..3)
        .map(|k| (f32::from(c[k]) - m[k]).powi(2))
        .sum::<f32>()
        .sqrt()
}

/// Calls `f` with the colour of every pixel within `r` (a square) of `centre`.
pub(super) fn for_patch(photo: &RgbaImage, centre: [f32; 3], r: i64, mut f: impl FnMut([u8; 3])) {
    let (w, h) = (photo.width() as i64, photo.height() as i64);
    let (cx, cy) = (centre[0] as i64, centre[1] as i64);
    for y in (cy - r).max(0)..(cy + r + 1).min(h) {
        for x in (cx - r).max(0)..(cx + r + 1).min(w) {
            f(rgb(photo, x as u32, y as u32));
        }
    }
}

/// The median colour of the patches of radius `r` round landmarks `ids`.
pub(super) fn median_colour(
    photo: &RgbaImage,
    lm: &[[f32; 3]],
    ids: &[usize],
    r: i64,
) -> Option<[f32; 3]> {
    let mut s: [Vec<u8>; 3] = Default::default();
    for &i in ids {
        for_patch(photo, lm[i], r, |c| {
            for k in 0..3 {
                s[k].push(c[k]);
            }
        });
    }
    if s[0].is_empty() {
        return None;
    }
    Some(s.map(|mut v| {
        v.sort_unstable();
        f32::from(v[v.len() / 2])
    }))
}

pub(super) fn luma(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// The chromaticity (r and g shares) of `c`.
pub(super) fn chroma(c: [f32; 3]) -> [f32; 2] {
    let s = c[0] + c[1] + c[2] + 3.0;
    [(c[0] + 1.0) / s, (c[1] + 1.0) / s]
}

/// Whether `c` is skin-like against the medians `skin`: within [`SKIN_DIST`] (RGB) of one,
/// or of its chromaticity (within [`SKIN_CHROMA`]) at a brightness between
/// [`SKIN_LUMA_RATIO`]`.0` and `.1` times its own (skin in shade or in light, not a black
/// felt hat over dark skin nor a straw hat over light skin: they differ in hue).
pub fn skin_like(skin: &[[f32; 3]; 2], c: [u8; 3]) -> bool {
    let cf = c.map(f32::from);
    skin.iter().any(|&m| {
        if dist(c, m) < SKIN_DIST {
            return true;
        }
        let ratio = (luma(cf) + 8.0) / (luma(m) + 8.0);
        let (a, b) = (chroma(cf), chroma(m));
        let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
        (SKIN_LUMA_RATIO.0..=SKIN_LUMA_RATIO.1).contains(&ratio) && d < SKIN_CHROMA
    })
}
