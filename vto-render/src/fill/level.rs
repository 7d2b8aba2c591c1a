//! One level of the fill's image pyramid: the pixels (padded, packed RGBx8), the hole and
//! the region sources may be copied from, and the 2× reduction to the next coarser level.

/// One pyramid level of the crop being filled.
///
/// Pixels are stored packed as `[r, g, b, 1]` (the 1 sums the weights of a vote) with a replicated border of `pad` pixels on
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
    /// A level from its padded RGBA image, hole and allowed region, its padding refreshed.
    fn assemble(
        w: usize,
        h: usize,
        pad: usize,
        img: Vec<u8>,
        hole: Vec<bool>,
        allowed: Vec<bool>,
    ) -> Self {
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

    /// A level from RGB pixels (`w × h × 3`), the hole and the allowed region.
    #[cfg(test)]
    pub fn new(
        w: usize,
        h: usize,
        pad: usize,
        rgb: &[u8],
        hole: Vec<bool>,
        allowed: Vec<bool>,
    ) -> Self {
        let pw = w + 2 * pad;
        let mut img = [0, 0, 0, 1].repeat(pw * (h + 2 * pad));
        for y in 0..h {
            for x in 0..w {
                let s = 3 * (y * w + x);
                let d = 4 * ((y + pad) * pw + x + pad);
                img[d..d + 3].copy_from_slice(&rgb[s..s + 3]);
            }
        }
        Self::assemble(w, h, pad, img, hole, allowed)
    }

    /// The level of the `(x, y, w, h)` crop of `photo`: the hole where `mask` (the photo's
    /// size) is at least `threshold`, allowed where `guide` is (everywhere without one). The
    /// hole's own pixels are never read: they start black.
    pub fn from_photo(
        photo: &image::RgbImage,
        (cx, cy, w, h): (usize, usize, usize, usize),
        pad: usize,
        mask: &[u8],
        guide: Option<&[u8]>,
        threshold: u8,
    ) -> Self {
        use rayon::prelude::*;
        let (pw, stride) = (photo.width() as usize, w + 2 * pad);
        let raw = photo.as_raw();
        let mut img = [0, 0, 0, 1].repeat(stride * (h + 2 * pad));
        let mut hole = vec![false; w * h];
        let mut allowed = vec![true; w * h];
        img.par_chunks_mut(4 * stride)
            .skip(pad)
            .zip(hole.par_chunks_mut(w))
            .zip(allowed.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, ((row, hole), allowed))| {
                let at = (cy + y) * pw + cx;
                let m = &mask[at..at + w];
                let src = &raw[3 * at..3 * (at + w)];
                let dst = &mut row[4 * pad..4 * (pad + w)];
                for (((d, s), &m), hole) in dst
                    .chunks_exact_mut(4)
                    .zip(src.chunks_exact(3))
                    .zip(m)
                    .zip(hole.iter_mut())
                {
                    *hole = m >= threshold;
                    if !*hole {
                        d[..3].copy_from_slice(s);
                    }
                }
                if let Some(g) = guide {
                    for (a, &g) in allowed.iter_mut().zip(&g[at..at + w]) {
                        *a = g >= threshold;
                    }
                }
            });
        Self::assemble(w, h, pad, img, hole, allowed)
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
        use rayon::prelude::*;
        let (w, h) = (self.w.div_ceil(2), self.h.div_ceil(2));
        let (pad, stride) = (self.pad, w + 2 * self.pad);
        let mut img = [0, 0, 0, 1].repeat(stride * (h + 2 * pad));
        let mut hole = vec![false; w * h];
        let mut allowed = vec![true; w * h];
        img.par_chunks_mut(4 * stride)
            .skip(pad)
            .zip(hole.par_chunks_mut(w))
            .zip(allowed.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, ((row, hole), allowed))| {
                // The two rows of children (one at the bottom of an odd height); a missing
                // right child (odd width) is skipped.
                let (y0, y1) = (2 * y, (2 * y + 1).min(self.h - 1));
                let rows = if y1 > y0 { 2 } else { 1 };
                let (a, b) = (self.offset(0, y0), self.offset(0, y1));
                let (ha, hb) = (
                    &self.hole[y0 * self.w..(y0 + 1) * self.w],
                    &self.hole[y1 * self.w..(y1 + 1) * self.w],
                );
                let (aa, ab) = (
                    &self.allowed[y0 * self.w..(y0 + 1) * self.w],
                    &self.allowed[y1 * self.w..(y1 + 1) * self.w],
                );
                for x in 0..w {
                    let (x0, x1) = (2 * x, (2 * x + 1).min(self.w - 1));
                    let cols = if x1 > x0 { 2 } else { 1 };
                    let n = (rows * cols) as u32;
                    let px = |o: usize, k: usize| u32::from(self.img[o + k]);
                    for k in 0..3 {
                        let mut acc = px(a + 4 * x0, k);
                        if cols == 2 {
                            acc += px(a + 4 * x1, k);
                        }
                        if rows == 2 {
                            acc += px(b + 4 * x0, k);
                            if cols == 2 {
                                acc += px(b + 4 * x1, k);
                            }
                        }
                        row[4 * (x + pad) + k] = ((acc + n / 2) / n) as u8;
                    }
                    hole[x] = ha[x0] || ha[x1] || hb[x0] || hb[x1];
                    allowed[x] = aa[x0] && aa[x1] && ab[x0] && ab[x1];
                }
            });
        let mut level = Level {
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

/// The runs `[start, end)` of consecutive indices below `n` where `set` holds, in order.
pub(crate) fn runs_where(n: usize, set: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut x = 0;
    while x < n {
        if set(x) {
            let start = x;
            while x < n && set(x) {
                x += 1;
            }
            out.push((start, x));
        } else {
            x += 1;
        }
    }
    out
}

/// The largest chessboard distance from a hole pixel to the nearest pixel that is not a hole
/// (half the hole's thickness).
#[cfg(test)]
pub(crate) fn thickness(hole: &[bool], w: usize, h: usize) -> u32 {
    depth(hole, w, h).into_iter().max().unwrap_or(0)
}

/// Per pixel, the chessboard distance from it to the nearest pixel that is not a hole (0
/// outside the hole, 1 on its edge), by two chamfer passes over the hole's runs.
pub(crate) fn depth(hole: &[bool], w: usize, h: usize) -> Vec<u32> {
    use rayon::prelude::*;
    // The runs of hole pixels of each row: only they need a distance (0 elsewhere).
    let runs: Vec<Vec<(usize, usize)>> = hole
        .par_chunks(w)
        .map(|row| runs_where(w, |x| row[x]))
        .collect();
    let big = u32::MAX / 2;
    let mut d = vec![0u32; w * h];
    for (y, r) in runs.iter().enumerate() {
        for &(a, b) in r {
            d[y * w + a..y * w + b].fill(big);
        }
    }
    for (y, r) in runs.iter().enumerate() {
        for &(a, b) in r {
            for x in a..b {
                let i = y * w + x;
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
    }
    for (y, r) in runs.iter().enumerate().rev() {
        for &(a, b) in r.iter().rev() {
            for x in (a..b).rev() {
                let i = y * w + x;
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
            }
        }
    }
    d
}
