//! One level of the fill's image pyramid: the pixels (padded, packed RGBx8), the hole and
//! the region sources may be copied from, and the 2× reduction to the next coarser level.

/// One pyramid level of the crop being filled.
///
/// Pixels are stored packed as `[r, g, b, 0]` with a replicated border of `pad` pixels on
/// every side, so that a patch's window never needs bounds checks: a row of a 7×7 patch is
/// one contiguous slice of 28 bytes.
#[derive(Debug, Clone)]
pub(crate) struct Level {
    /// Width in pixels (without the padding).
    pub w: usize,
    /// Height in pixels (without the padding).
    pub h: usize,
    /// The replicated border on each side, in pixels (the patch radius).
    pub pad: usize,
    /// `(w + 2 pad) × (h + 2 pad)` pixels, 4 bytes each.
    pub img: Vec<u8>,
    /// `w × h`: true where the pixel is to be filled.
    pub hole: Vec<bool>,
    /// `w × h`: true where the pixel may be copied from (the guide; all true without one).
    pub allowed: Vec<bool>,
}

impl Level {
    /// A level from RGB pixels (`w × h × 3`), the hole and the allowed region.
    pub fn new(
        w: usize,
        h: usize,
        pad: usize,
        rgb: &[u8],
        hole: Vec<bool>,
        allowed: Vec<bool>,
    ) -> Self {
        let pw = w + 2 * pad;
        let mut img = vec![0u8; pw * (h + 2 * pad) * 4];
        for y in 0..h {
            for x in 0..w {
                let s = 3 * (y * w + x);
                let d = 4 * ((y + pad) * pw + x + pad);
                img[d..d + 3].copy_from_slice(&rgb[s..s + 3]);
            }
        }
        let mut level = Self {
            w,
            h,
            pad,
            img,
            hole,
            allowed,
        };
        level.refresh_padding();
        level
    }

    /// The padded row width in pixels.
    #[inline(always)]
    pub fn stride(&self) -> usize {
        self.w + 2 * self.pad
    }

    /// Byte offset of pixel `(x, y)` (unpadded coordinates) in [`Level::img`].
    #[inline(always)]
    pub fn offset(&self, x: usize, y: usize) -> usize {
        4 * ((y + self.pad) * self.stride() + x + self.pad)
    }

    /// The RGB of pixel `(x, y)`.
    #[inline(always)]
    pub fn rgb(&self, x: usize, y: usize) -> [u8; 3] {
        let o = self.offset(x, y);
        [self.img[o], self.img[o + 1], self.img[o + 2]]
    }

    /// Sets the RGB of pixel `(x, y)`.
    #[inline(always)]
    pub fn set_rgb(&mut self, x: usize, y: usize, v: [u8; 3]) {
        let o = self.offset(x, y);
        self.img[o..o + 3].copy_from_slice(&v);
    }

    /// Copies the outermost pixels into the padding (replicated border).
    pub fn refresh_padding(&mut self) {
        let (w, h, p, pw) = (self.w, self.h, self.pad, self.stride());
        if p == 0 {
            return;
        }
        for y in 0..h {
            let row = 4 * ((y + p) * pw);
            let (first, last) = (row + 4 * p, row + 4 * (p + w - 1));
            for k in 0..p {
                self.img.copy_within(first..first + 4, row + 4 * k);
                self.img.copy_within(last..last + 4, row + 4 * (p + w + k));
            }
        }
        let row_bytes = 4 * pw;
        for k in 0..p {
            let top = p * row_bytes;
            self.img.copy_within(top..top + row_bytes, k * row_bytes);
            let bottom = (p + h - 1) * row_bytes;
            self.img
                .copy_within(bottom..bottom + row_bytes, (p + h + k) * row_bytes);
        }
    }

    /// The level at half the size: a pixel is a hole if any of its (up to four) children is,
    /// allowed only if all of them are; its colour is the mean of its children.
    pub fn reduce(&self) -> Level {
        let (w, h) = (self.w.div_ceil(2), self.h.div_ceil(2));
        let mut rgb = vec![0u8; w * h * 3];
        let mut hole = vec![false; w * h];
        let mut allowed = vec![true; w * h];
        for y in 0..h {
            for x in 0..w {
                let mut acc = [0u32; 3];
                let mut n = 0u32;
                for (cx, cy) in [
                    (2 * x, 2 * y),
                    (2 * x + 1, 2 * y),
                    (2 * x, 2 * y + 1),
                    (2 * x + 1, 2 * y + 1),
                ] {
                    if cx >= self.w || cy >= self.h {
                        continue;
                    }
                    let i = cy * self.w + cx;
                    hole[y * w + x] |= self.hole[i];
                    allowed[y * w + x] &= self.allowed[i];
                    let c = self.rgb(cx, cy);
                    for k in 0..3 {
                        acc[k] += u32::from(c[k]);
                    }
                    n += 1;
                }
                for k in 0..3 {
                    rgb[3 * (y * w + x) + k] = ((acc[k] + n / 2) / n) as u8;
                }
            }
        }
        Level::new(w, h, self.pad, &rgb, hole, allowed)
    }
}

/// Rows per parallel task of [`dilate`].
const DILATE_BAND: usize = 32;

/// Where `map` (`w × h`) has a set pixel within the `(2 r + 1)²` window around each pixel
/// (the window clipped to the map): a square dilation, as two running counts (along the rows,
/// then down the columns).
pub(crate) fn dilate(map: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    use rayon::prelude::*;
    // Along the rows: how many set pixels in x - r ..= x + r.
    let mut across = vec![0u8; w * h];
    across
        .par_chunks_mut(w)
        .zip(map.par_chunks(w))
        .for_each(|(out, row)| {
            let mut n = 0u32;
            for &b in &row[..r.min(w)] {
                n += u32::from(b);
            }
            for x in 0..w {
                if x + r < w {
                    n += u32::from(row[x + r]);
                }
                out[x] = u8::from(n > 0);
                if x >= r {
                    n -= u32::from(row[x - r]);
                }
            }
        });
    // Down the columns.
    let mut out = vec![false; w * h];
    out.par_chunks_mut(DILATE_BAND * w)
        .enumerate()
        .for_each(|(band, out)| {
            let y0 = band * DILATE_BAND;
            let mut n = vec![0u16; w];
            for yy in y0.saturating_sub(r)..(y0 + r).min(h) {
                for (c, &a) in n.iter_mut().zip(&across[yy * w..(yy + 1) * w]) {
                    *c += u16::from(a);
                }
            }
            for (ly, row) in out.chunks_mut(w).enumerate() {
                let y = y0 + ly;
                if y + r < h {
                    for (c, &a) in n.iter_mut().zip(&across[(y + r) * w..(y + r + 1) * w]) {
                        *c += u16::from(a);
                    }
                }
                for (o, &c) in row.iter_mut().zip(&n) {
                    *o = c > 0;
                }
                if y >= r {
                    for (c, &a) in n.iter_mut().zip(&across[(y - r) * w..(y - r + 1) * w]) {
                        *c -= u16::from(a);
                    }
                }
            }
        });
    out
}

/// The largest chessboard distance from a hole pixel to the nearest pixel that is not a hole
/// (half the hole's thickness), by two chamfer passes.
pub(crate) fn thickness(hole: &[bool], w: usize, h: usize) -> u32 {
    let big = u32::MAX / 2;
    let mut d: Vec<u32> = hole.iter().map(|&b| if b { big } else { 0 }).collect();
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if d[i] == 0 {
                continue;
            }
            let mut m = d[i];
            if x > 0 {
                m = m.min(d[i - 1] + 1);
            }
            if y > 0 {
                m = m.min(d[i - w] + 1);
                if x > 0 {
                    m = m.min(d[i - w - 1] + 1);
                }
                if x + 1 < w {
                    m = m.min(d[i - w + 1] + 1);
                }
            }
            d[i] = m;
        }
    }
    let mut worst = 0;
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let i = y * w + x;
            if d[i] == 0 {
                continue;
            }
            let mut m = d[i];
            if x + 1 < w {
                m = m.min(d[i + 1] + 1);
            }
            if y + 1 < h {
                m = m.min(d[i + w] + 1);
                if x + 1 < w {
                    m = m.min(d[i + w + 1] + 1);
                }
                if x > 0 {
                    m = m.min(d[i + w - 1] + 1);
                }
            }
            d[i] = m;
            worst = worst.max(m);
        }
    }
    worst
}
