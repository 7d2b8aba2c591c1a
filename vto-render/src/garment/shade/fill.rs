//! Background continued under the person where a new garment uncovers what the old one
//! hid beyond the body: smooth (`push_pull`), and with the ground's own texture where it
//! shows (`textured`, the fill stage's [`crate::fill::ground`]).

use image::{GrayImage, Luma, RgbaImage};

use crate::fill::ground::fill_ground;

/// `background` (a smooth continuation, one colour per pixel of `photo`) with the pixels
/// where `shows` holds filled by the fill stage's ground ([`crate::fill::ground`]: the
/// texture and grain of the wall, floor or sand around), copied from the pixels where
/// `source` holds. A push–pull continuation alone leaves a flat block where a wide old
/// garment was (the dunes woman's skirt). Pixels the stage cannot fill keep `background`.
pub(crate) fn textured(
    photo: &RgbaImage,
    background: &[[f32; 3]],
    shows: impl Fn(usize) -> bool,
    source: impl Fn(usize) -> bool,
) -> Vec<[f32; 3]> {
    let (w, h) = photo.dimensions();
    let wu = w as usize;
    let hole = GrayImage::from_fn(w, h, |x, y| {
        Luma([if shows(y as usize * wu + x as usize) {
            255
        } else {
            0
        }])
    });
    let mut out = background.to_vec();
    let from = |x: u32, y: u32| source(y as usize * wu + x as usize);
    // Kept off the old clothing, no part of the hole has a rim: each keeps the vote.
    if let Some(filled) = fill_ground(photo, &hole, from, true) {
        for (x, y, p) in hole.enumerate_pixels() {
            if p.0[0] == 255 {
                if let Some(c) = filled.at(x, y) {
                    out[y as usize * wu + x as usize] = c.map(f32::from);
                }
            }
        }
    }
    out
}

/// The background continued under the person: a push–pull fill of the pixels outside the
/// person mask (a pyramid of weighted means, pulled back down into the holes).
pub(crate) fn push_pull(photo: &RgbaImage, person: &[f32]) -> Vec<[f32; 3]> {
    let (w, h) = (photo.width() as usize, photo.height() as usize);
    let raw = photo.as_raw();
    let mut levels: Vec<(usize, usize, Vec<[f32; 4]>)> = Vec::new();
    let base: Vec<[f32; 4]> = (0..w * h)
        .map(|i| {
            let k = if person[i] < 0.2 { 1.0 } else { 0.0 };
            [
                f32::from(raw[4 * i]) * k,
                f32::from(raw[4 * i + 1]) * k,
                f32::from(raw[4 * i + 2]) * k,
                k,
            ]
        })
        .collect();
    levels.push((w, h, base));
    while levels.last().is_some_and(|l| l.0 > 1 || l.1 > 1) {
        let next = match levels.last() {
            Some((pw, ph, prev)) => {
                let (pw, ph) = (*pw, *ph);
                let (nw, nh) = (pw.div_ceil(2), ph.div_ceil(2));
                let mut next = vec![[0.0f32; 4]; nw * nh];
                for y in 0..ph {
                    for x in 0..pw {
                        let s = prev[y * pw + x];
                        let d = &mut next[(y / 2) * nw + x / 2];
                        for c in 0..4 {
                            d[c] += s[c];
                        }
                    }
                }
                (nw, nh, next)
            }
            None => break,
        };
        levels.push(next);
    }
    // Pull: fill each level's empty pixels from the coarser level, top down.
    for k in (0..levels.len() - 1).rev() {
        let (cw, ch, coarse) = {
            let l = &levels[k + 1];
            (l.0, l.1, l.2.clone())
        };
        // The coarse level, normalised, sampled bilinearly (no blocks).
        let norm: Vec<[f32; 4]> = coarse
            .iter()
            .map(|c| {
                if c[3] > 0.0 {
                    [c[0] / c[3], c[1] / c[3], c[2] / c[3], 1.0]
                } else {
                    [0.0; 4]
                }
            })
            .collect();
        let sample = |x: usize, y: usize| {
            let fx = ((x as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (cw - 1) as f32);
            let fy = ((y as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (ch - 1) as f32);
            let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
            let (x1, y1) = ((x0 + 1).min(cw - 1), (y0 + 1).min(ch - 1));
            let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
            let mut out = [0.0f32; 4];
            for (xx, yy, wgt) in [
                (x0, y0, (1.0 - tx) * (1.0 - ty)),
                (x1, y0, tx * (1.0 - ty)),
                (x0, y1, (1.0 - tx) * ty),
                (x1, y1, tx * ty),
            ] {
                let v = norm[yy * cw + xx];
                for c in 0..4 {
                    out[c] += v[c] * wgt * v[3];
                }
            }
            out
        };
        let (fw, fh, fine) = &mut levels[k];
        for y in 0..*fh {
            for x in 0..*fw {
                let p = &mut fine[y * *fw + x];
                let c = sample(x, y);
                if c[3] > 0.0 {
                    let t = (1.0 - p[3]).max(0.0);
                    for ch in 0..3 {
                        p[ch] += c[ch] / c[3] * t;
                    }
                    p[3] += t;
                }
            }
        }
    }
    levels[0]
        .2
        .iter()
        .map(|p| {
            let a = p[3].max(1e-6);
            [p[0] / a, p[1] / a, p[2] / a]
        })
        .collect()
}
