//! An old collar above the chin line. The compose keeps the head zone (above the chin line,
//! near the face) as the photo has it, for the hair that falls there; but a uniform's or a
//! shirt's collar, or a spacesuit's neck ring, often rises there beside the jaw, and left
//! alone it ends in a hard line at the chin's height over the new garment's bare neck.

use glam::Vec2;
use image::RgbaImage;

use crate::garment::colour::hue_dist;
use crate::garment::geom::neighbours4;

/// What [`climb`] reads per pixel of the working crop.
pub struct Climb<'a> {
    /// The photo (the crop).
    pub photo: &'a RgbaImage,
    /// The person mask (0–1).
    pub person: &'a [f32],
    /// In the head zone: above the chin line, near the face.
    pub head: &'a [bool],
    /// Within the neck's outline (below the chin, less than one half-width across).
    pub neck: &'a [bool],
    /// Inside the face oval.
    pub oval: &'a [bool],
    /// Skin likeness (0–1).
    pub skin_p: &'a [f32],
    /// The new garment's alpha after layering.
    pub alpha: &'a [f32],
    /// The person's skin colour (RGB).
    pub skin: [f32; 3],
}

/// Chromaticity distance under which a pixel has the skin's hue (a neck in the jaw's shadow
/// is not skin-like by lightness, but keeps the hue).
const SKIN_HUE: f32 = 0.05;

/// How much a pixel's colour may differ from the one below it (sum of absolute channel
/// differences) and still be the same old collar.
const COLLAR_STEP: i32 = 45;

/// An old collar rising above the chin line beside the jaw (a uniform's, a shirt's, a
/// spacesuit's neck ring) is old clothing too, though the head zone above that line is
/// otherwise kept (hair falls there). From the pixels just above the uncovered band or the
/// new garment, a region grows (4-connected) while the photo is well inside the person
/// mask (0.8: its soft edge is often background), not skin,
/// outside the face oval and the neck, not of the skin's hue (the shadow under a jaw is not
/// skin-like by lightness but is neck), of a colour continuous with its neighbour, at most 0.4 shoulder widths above the
/// chin; it and its 2-pixel rim get the background continued (`fill` 2, `bare` 1). `chin`
/// is in the crop's pixels.
pub fn climb(
    c: &Climb<'_>,
    chin: Option<Vec2>,
    down: Vec2,
    sw: f32,
    fill: &mut [u8],
    bare: &mut [f32],
) {
    let Some(chin) = chin else { return };
    let (w, h) = c.photo.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let raw = c.photo.as_raw();
    let step = |i: usize, j: usize| {
        (0..3)
            .map(|k| (i32::from(raw[4 * i + k]) - i32::from(raw[4 * j + k])).abs())
            .sum::<i32>()
    };
    let skin_hued = |i: usize| {
        let px = [0, 1, 2].map(|k| f32::from(raw[4 * i + k]));
        hue_dist(px, c.skin) < SKIN_HUE
    };
    let eligible = |i: usize| {
        let p = Vec2::new((i % wu) as f32, (i / wu) as f32);
        c.head[i]
            && !c.neck[i]
            && !c.oval[i]
            && fill[i] == 0
            && c.alpha[i] < 0.5
            && c.person[i] >= 0.8
            && c.skin_p[i] <= 0.5
            && !skin_hued(i)
            && (chin - p).dot(down) <= 0.4 * sw
    };
    // Seeds: the head zone's pixels just above the uncovered band or the new garment.
    let mut queue: std::collections::VecDeque<usize> = (0..wu * hu.saturating_sub(1))
        .filter(|&i| {
            let j = i + wu;
            let below = !c.head[j] && (fill[j] != 0 || c.alpha[j] >= 0.5);
            below && eligible(i) && step(i, j) <= COLLAR_STEP
        })
        .collect();
    let mut climbed = vec![false; wu * hu];
    for &i in &queue {
        climbed[i] = true;
    }
    // Grown through continuous colour, sideways as well as up (a collar's top is not level).
    while let Some(i) = queue.pop_front() {
        for n in neighbours4(i, wu, hu) {
            if !climbed[n] && eligible(n) && step(i, n) <= COLLAR_STEP {
                climbed[n] = true;
                queue.push_back(n);
            }
        }
    }
    // Its anti-aliased outer rim (half person, half background) goes with it; not its rim
    // against the jaw, which is skin.
    for _ in 0..2 {
        let rim: Vec<usize> = (0..wu * hu)
            .filter(|&i| {
                !climbed[i]
                    && c.head[i]
                    && !c.neck[i]
                    && !c.oval[i]
                    && fill[i] == 0
                    && c.alpha[i] < 0.5
                    && c.skin_p[i] <= 0.5
                    && c.person[i] < 0.8
                    && !skin_hued(i)
                    && neighbours4(i, wu, hu).any(|n| climbed[n])
            })
            .collect();
        for i in rim {
            climbed[i] = true;
        }
    }
    for (i, &up) in climbed.iter().enumerate() {
        if up {
            fill[i] = 2;
            bare[i] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20×20 crop, chin line at row 12: below it the uncovered band (`fill` 2); above it,
    /// face skin, a dark collar (columns 3–6, rows 5–11) continuous with the dark old garment
    /// under the band, and blond hair (columns 13–16) beside the jaw.
    #[test]
    fn the_collar_above_the_chin_line_goes_and_the_hair_stays() {
        let (w, h) = (20usize, 20usize);
        let dark = [30u8, 30, 60];
        let photo = RgbaImage::from_fn(w as u32, h as u32, |x, y| {
            let c = match (x, y) {
                (_, 12..) => dark,
                (3..=6, 5..) => dark,
                (13..=16, 5..) => [200, 180, 90],
                _ => [220, 170, 150],
            };
            image::Rgba([c[0], c[1], c[2], 255])
        });
        let at = |i: usize| ((i % w) as u32, (i / w) as u32);
        let head: Vec<bool> = (0..w * h).map(|i| at(i).1 < 12).collect();
        let skin_p: Vec<f32> = (0..w * h)
            .map(|i| {
                let px = photo.get_pixel(at(i).0, at(i).1).0;
                if px[0] == 220 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let mut fill: Vec<u8> = (0..w * h).map(|i| u8::from(at(i).1 >= 12) * 2).collect();
        let mut bare = vec![0.0; w * h];
        let none = vec![false; w * h];
        climb(
            &Climb {
                photo: &photo,
                person: &vec![1.0; w * h],
                head: &head,
                neck: &none,
                oval: &none,
                skin_p: &skin_p,
                alpha: &vec![0.0; w * h],
                skin: [220.0, 170.0, 150.0],
            },
            Some(Vec2::new(10.0, 12.0)),
            Vec2::Y,
            40.0,
            &mut fill,
            &mut bare,
        );
        for y in 5..12 {
            for x in 3..=6 {
                assert_eq!(fill[y * w + x], 2, "collar pixel ({x}, {y}) uncovered");
                assert_eq!(bare[y * w + x], 1.0);
            }
            for x in 13..=16 {
                assert_eq!(fill[y * w + x], 0, "hair pixel ({x}, {y}) kept");
            }
            assert_eq!(fill[y * w + 10], 0, "skin kept");
        }
    }
}
