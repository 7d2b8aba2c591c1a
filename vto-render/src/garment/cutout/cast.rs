//! The colour a strongly coloured backdrop casts on a near-neutral garment lying on it.
//!
//! A black tee photographed on an orange-red sheet comes out dark brown (median sRGB
//! 53, 41, 40): the light the sheet throws back (and the camera's white balance) tints
//! it, and worn on a person it read as a brown tee. The cast is recognised by three things
//! together:
//! - the backdrop (the pixels outside the mask) is clearly coloured: its `(r, g)`
//!   chromaticity lies at least [`MIN_BACKDROP_CHROMA`] from neutral;
//! - the garment is near-neutral in absolute terms: its median colour's chroma (YCbCr,
//!   sRGB levels) is under [`MAX_TINT`] (a black, grey or white garment; khaki on a wood
//!   floor, 14 levels, or a floral print on red, 16, are colours of their own);
//! - what tint it has points the backdrop's way: its chromaticity offset from neutral lies
//!   along the backdrop's (positive projection, the part across it under half the part
//!   along it).
//!
//! Then each garment pixel's chroma along the backdrop's direction is taken off (up to
//! twice the garment median's, and a level: the spill is stronger at the sleeves and hem,
//! nearer the backdrop, than in the middle, so one gain for all left the middle cyan); its
//! lightness and the chroma across are kept, so a print keeps its colours but for a few
//! levels. A coloured garment, or any garment on a white, grey, beige or wood backdrop, is
//! left as it is.

use image::RgbaImage;

use crate::garment::colour::median;

/// The least distance of the backdrop's `(r, g)` chromaticity from neutral (1/3, 1/3):
/// a red or magenta sheet lies at 0.24–0.37, beige and wood floors at 0.04–0.15, white
/// and grey at under 0.02.
pub const MIN_BACKDROP_CHROMA: f32 = 0.2;

/// The largest chroma (YCbCr, sRGB levels) of a garment's median colour that may be a
/// backdrop's cast on a neutral garment.
pub const MAX_TINT: f32 = 10.0;

/// The per-channel median ([`median`]) of the pixels `keep` selects, `None` when there are
/// none.
fn median_where(img: &RgbaImage, keep: impl Fn(usize) -> bool) -> Option<[f32; 3]> {
    median(
        img.pixels()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, p)| [p.0[0], p.0[1], p.0[2]].map(f32::from))
            .collect(),
    )
}

/// A colour's `(r, g)` chromaticity offset from neutral.
fn chromaticity(c: [f32; 3]) -> [f32; 2] {
    let s = c[0] + c[1] + c[2] + 1.0;
    [c[0] / s - 1.0 / 3.0, c[1] / s - 1.0 / 3.0]
}

/// A backdrop's cast on the garment: the backdrop's chroma direction and the most a
/// pixel's chroma is moved back along it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cast {
    /// The backdrop's chroma direction (unit `(Cb, Cr)`).
    pub dir: [f32; 2],
    /// The most a pixel's chroma is moved (sRGB levels): twice the garment median's tint
    /// along `dir`, and a level more (the spill is stronger near the backdrop, at the
    /// sleeves and hem, than in the middle).
    pub cap: f32,
}

fn ycc(c: [f32; 3]) -> [f32; 3] {
    let y = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
    [y, 0.564 * (c[2] - y), 0.713 * (c[0] - y)]
}

/// The backdrop's cast on the garment `fg` selects in `img` (see the module docs), or
/// `None` when there is none to remove.
pub fn backdrop_cast(img: &RgbaImage, fg: &[bool]) -> Option<Cast> {
    let garment = median_where(img, |i| fg[i])?;
    let backdrop = median_where(img, |i| !fg[i])?;
    let b = chromaticity(backdrop);
    let b_len = b[0].hypot(b[1]);
    if b_len < MIN_BACKDROP_CHROMA {
        return None;
    }
    let [_, cb, cr] = ycc(garment);
    if cb.hypot(cr) >= MAX_TINT {
        return None;
    }
    let g = chromaticity(garment);
    let along = (g[0] * b[0] + g[1] * b[1]) / b_len;
    let across = (g[0] * b[1] - g[1] * b[0]).abs() / b_len;
    if along <= 0.0 || across > 0.5 * along {
        return None;
    }
    let [_, bb, br] = ycc(backdrop);
    let n = bb.hypot(br).max(1e-3);
    let dir = [bb / n, br / n];
    let tint = cb * dir[0] + cr * dir[1];
    (tint > 0.0).then_some(Cast {
        dir,
        cap: 2.0 * tint + 1.0,
    })
}

impl Cast {
    /// `img` with the cast taken off the pixels `mask` covers: each pixel's chroma along
    /// the backdrop's direction, up to [`Cast::cap`], removed; its luma and the chroma
    /// across kept.
    pub fn remove(&self, img: &mut RgbaImage, mask: &[f32]) {
        for (p, &m) in img.pixels_mut().zip(mask) {
            if m <= 0.0 {
                continue;
            }
            let [y, cb, cr] = ycc([p.0[0], p.0[1], p.0[2]].map(f32::from));
            let along = (cb * self.dir[0] + cr * self.dir[1]).clamp(0.0, self.cap);
            let (cb, cr) = (cb - along * self.dir[0], cr - along * self.dir[1]);
            let r = y + cr / 0.713;
            let b = y + cb / 0.564;
            let g = (y - 0.299 * r - 0.114 * b) / 0.587;
            for (v, c) in p.0.iter_mut().zip([r, g, b]) {
                *v = c.round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;

    /// A photo of `garment` (a centred rectangle, with some shading) on `backdrop`.
    fn photo(garment: [u8; 3], backdrop: [u8; 3]) -> (RgbaImage, Vec<bool>) {
        let (w, h) = (80u32, 60u32);
        let inside = |x: u32, y: u32| (20..60).contains(&x) && (15..45).contains(&y);
        let img = RgbaImage::from_fn(w, h, |x, y| {
            if inside(x, y) {
                let k = 0.8 + 0.4 * (x as f32 / w as f32);
                let c = garment.map(|v| (f32::from(v) * k).min(255.0) as u8);
                Rgba([c[0], c[1], c[2], 255])
            } else {
                Rgba([backdrop[0], backdrop[1], backdrop[2], 255])
            }
        });
        let fg = (0..w * h).map(|i| inside(i % w, i / w)).collect();
        (img, fg)
    }

    /// The black tee on red (its photo's medians) loses its brown: after the removal its
    /// median's channels lie within 2 levels of each other. Khaki on wood, a red garment on
    /// white, a grey one on grey and a floral print's reddish median on red keep theirs.
    #[test]
    fn a_dark_garments_red_cast_is_removed_and_colours_kept() {
        let (mut img, fg) = photo([53, 41, 40], [228, 79, 72]);
        let cast = backdrop_cast(&img, &fg).expect("the red sheet's cast is found");
        let mask: Vec<f32> = fg.iter().map(|&v| f32::from(u8::from(v))).collect();
        cast.remove(&mut img, &mask);
        let m = median_where(&img, |i| fg[i]).expect("the garment");
        let spread =
            m.iter().copied().fold(f32::MIN, f32::max) - m.iter().copied().fold(f32::MAX, f32::min);
        assert!(spread <= 2.0, "median after the gains {m:?}");
        for (garment, backdrop) in [
            ([194, 182, 162], [110, 71, 47]),
            ([163, 29, 29], [223, 214, 204]),
            ([120, 120, 124], [170, 170, 170]),
            ([108, 76, 80], [164, 51, 39]),
            ([30, 40, 60], [228, 79, 72]),
        ] {
            let (img, fg) = photo(garment, backdrop);
            assert_eq!(
                backdrop_cast(&img, &fg),
                None,
                "{garment:?} on {backdrop:?}"
            );
        }
    }
}
