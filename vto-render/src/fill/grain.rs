//! The ground's grain put back into a fill (what compositors call grain matching).
//!
//! The fill stage's vote averages the patches that overlap each pixel, and that mean takes
//! the finest grain out of what it copies: with all the copied texture kept, the filled
//! ground beside the hiker's boots and around the hugging woman's boots on grass still had
//! 0.3–0.5 of the ground's grain (its pixels' distance from their neighbours' mean), a soft
//! patch in sharp ground. The grain is the ground's high-pass residual (each pixel less the
//! mean of its 5×5 neighbourhood). The fill's own residual is measured inside the hole and
//! the ground's inside the sources (away from their edges); the missing part (the two add in quadrature) is copied from
//! the ground's residual in [`TILE`]-pixel tiles, each from a tile of ground chosen by a
//! hash of the seed and the tile (deterministic). A residual is zero-mean and fine, so the
//! tiles' seams do not show, and the fill's colours and shapes stay as the stage made them.

use image::{GrayImage, RgbImage};

/// The side (pixels) of the tiles the grain is copied in.
pub const TILE: u32 = 12;
/// The residual copied is clipped to this many times the ground's mean (its edges are
/// structure, not grain: the skier's skis drew coloured streaks in the snow unclipped).
pub const CLIP: f32 = 2.5;
/// Tries per tile to find a tile of ground to copy from.
const TRIES: u64 = 48;

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Each pixel of `img` less the mean of its 5×5 neighbourhood (clipped at the border), per
/// channel, row-major.
fn residual(img: &RgbImage) -> Vec<[f32; 3]> {
    let (w, h) = img.dimensions();
    let mut out = vec![[0.0; 3]; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let (mut sum, mut n) = ([0.0f32; 3], 0.0f32);
            for yy in y.saturating_sub(2)..(y + 3).min(h) {
                for xx in x.saturating_sub(2)..(x + 3).min(w) {
                    let p = img.get_pixel(xx, yy).0;
                    for c in 0..3 {
                        sum[c] += f32::from(p[c]);
                    }
                    n += 1.0;
                }
            }
            let p = img.get_pixel(x, y).0;
            out[(y * w + x) as usize] = std::array::from_fn(|c| f32::from(p[c]) - sum[c] / n);
        }
    }
    out
}

fn luma(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// Adds the ground's missing grain to the `hole` (255) pixels of `img`, copied from the
/// `ground` (255) pixels (see the module docs). Returns how much of the ground's residual
/// was added (0 when the fill already has the ground's grain or there is too little ground).
pub fn restore(img: &mut RgbImage, hole: &GrayImage, ground: &GrayImage, seed: u64) -> f32 {
    let (w, h) = img.dimensions();
    if w < TILE + 4 || h < TILE + 4 {
        return 0.0;
    }
    let res = residual(img);
    let is = |g: &GrayImage, x: u32, y: u32| g.get_pixel(x, y).0[0] == 255;
    // Each measured over the pixels whose whole 5×5 neighbourhood is of it (a hole pixel
    // beside a dark ski or a boot's edge measures the edge, not the fill's grain).
    let mean_abs = |g: &GrayImage| {
        let (mut sum, mut n) = (0.0f32, 0usize);
        for y in 2..h - 2 {
            for x in 2..w - 2 {
                if (y - 2..y + 3).all(|yy| (x - 2..x + 3).all(|xx| is(g, xx, yy))) {
                    sum += luma(res[(y * w + x) as usize]).abs();
                    n += 1;
                }
            }
        }
        (n, sum / n.max(1) as f32)
    };
    let ((n_ground, g_ground), (_, g_fill)) = (mean_abs(ground), mean_abs(hole));
    if n_ground < (TILE * TILE * 4) as usize || g_fill >= g_ground {
        return 0.0;
    }
    let k = (1.0 - (g_fill / g_ground).powi(2)).sqrt();
    // A source tile: all its pixels and a 2-pixel ring (the residual's reach) are ground.
    let all_ground = |x0: u32, y0: u32| {
        (y0 - 2..y0 + TILE + 2).all(|y| (x0 - 2..x0 + TILE + 2).all(|x| is(ground, x, y)))
    };
    let base = img.clone();
    for ty in (0..h).step_by(TILE as usize) {
        for tx in (0..w).step_by(TILE as usize) {
            let (tw, th) = (TILE.min(w - tx), TILE.min(h - ty));
            let holes = (ty..ty + th).any(|y| (tx..tx + tw).any(|x| is(hole, x, y)));
            if !holes {
                continue;
            }
            let tile = u64::from(ty) << 32 | u64::from(tx);
            let src = (0..TRIES).find_map(|t| {
                let r = mix(seed ^ mix(tile) ^ t);
                let sx = 2 + (r % u64::from(w - TILE - 3)) as u32;
                let sy = 2 + ((r >> 32) % u64::from(h - TILE - 3)) as u32;
                all_ground(sx, sy).then_some((sx, sy))
            });
            let Some((sx, sy)) = src else { continue };
            for y in ty..ty + th {
                for x in tx..tx + tw {
                    if !is(hole, x, y) {
                        continue;
                    }
                    // Clipped: the grain, not an edge (a ski's, a stripe's) the tile holds.
                    let g = res[((sy + y - ty) * w + sx + x - tx) as usize]
                        .map(|v| v.clamp(-CLIP * g_ground, CLIP * g_ground));
                    let p = base.get_pixel(x, y).0;
                    let q = std::array::from_fn(|c| {
                        (f32::from(p[c]) + k * g[c]).round().clamp(0.0, 255.0) as u8
                    });
                    img.put_pixel(x, y, image::Rgb(q));
                }
            }
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;

    /// A noisy ground with a flat (filled) square: the grain comes back into the square,
    /// nothing else changes, and the same inputs give the same result.
    #[test]
    fn a_flat_fill_gets_the_grounds_grain_back() {
        let (w, h) = (96u32, 96u32);
        let noise = |x: u32, y: u32| (mix(u64::from(y * w + x)) % 41) as u8;
        let inside = |x: u32, y: u32| (36..60).contains(&x) && (36..60).contains(&y);
        let img = RgbImage::from_fn(w, h, |x, y| {
            let v = if inside(x, y) { 120 } else { 100 + noise(x, y) };
            image::Rgb([v, v, v])
        });
        let hole = GrayImage::from_fn(w, h, |x, y| Luma([if inside(x, y) { 255 } else { 0 }]));
        let ground = GrayImage::from_fn(w, h, |x, y| Luma([if inside(x, y) { 0 } else { 255 }]));
        let mut out = img.clone();
        let k = restore(&mut out, &hole, &ground, 7);
        assert!(k > 0.9, "{k}");
        let (mut spread, mut n) = (0.0f32, 0.0f32);
        for (x, y, p) in out.enumerate_pixels() {
            if !inside(x, y) {
                assert_eq!(p, img.get_pixel(x, y), "{x},{y} changed");
                continue;
            }
            spread += (f32::from(p.0[0]) - 120.0).abs();
            n += 1.0;
        }
        // The ground's noise is uniform over 0–40 (mean distance from its mean ~10).
        assert!(spread / n > 5.0, "{}", spread / n);
        let mut again = img.clone();
        restore(&mut again, &hole, &ground, 7);
        assert_eq!(again, out);
    }
}
