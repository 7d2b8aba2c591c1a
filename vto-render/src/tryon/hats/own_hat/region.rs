//! The face's frame ([`HeadFrame`]) the own-hat detector measures in, and the regions of
//! the photo it traces ([`Region`], [`close_holes`], [`polygon_area`]).

use std::collections::VecDeque;

use image::GrayImage;

pub use crate::tryon::own_eyewear::detect::P2;

/// Faces less tall than this (pixels, landmarks 10–152) are not judged.
pub const MIN_FACE_PX: f32 = 30.0;

/// The face's frame: `a` up the face, `b` across it, in face heights (see [`super::detect`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadFrame {
    /// Landmark 10, the origin.
    pub top: P2,
    /// Unit vector up the face.
    pub up: P2,
    /// Unit vector across the face, image-right.
    pub right: P2,
    /// The face height (pixels).
    pub height: f32,
}

impl HeadFrame {
    /// The frame of 468 landmarks; `None` with fewer, or a face under [`MIN_FACE_PX`].
    pub fn new(lm: &[[f32; 3]]) -> Option<HeadFrame> {
        if lm.len() < 468 {
            return None;
        }
        let (t, c) = ([lm[10][0], lm[10][1]], [lm[152][0], lm[152][1]]);
        let d = [t[0] - c[0], t[1] - c[1]];
        let height = (d[0] * d[0] + d[1] * d[1]).sqrt();
        if !height.is_finite() || height < MIN_FACE_PX {
            return None;
        }
        let up = [d[0] / height, d[1] / height];
        Some(HeadFrame {
            top: t,
            up,
            right: [-up[1], up[0]],
            height,
        })
    }

    /// Image pixels → (a, b).
    pub fn to_frame(&self, p: P2) -> P2 {
        let d = [p[0] - self.top[0], p[1] - self.top[1]];
        [
            (d[0] * self.up[0] + d[1] * self.up[1]) / self.height,
            (d[0] * self.right[0] + d[1] * self.right[1]) / self.height,
        ]
    }

    /// (a, b) → image pixels.
    pub fn to_image(&self, a: f32, b: f32) -> P2 {
        [
            self.top[0] + (a * self.up[0] + b * self.right[0]) * self.height,
            self.top[1] + (a * self.up[1] + b * self.right[1]) * self.height,
        ]
    }
}

/// A region of the photo: a box and a per-pixel flag.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// The box's left and top (pixels).
    pub x0: u32,
    /// The box's top.
    pub y0: u32,
    /// The box's width.
    pub w: u32,
    /// The box's height.
    pub h: u32,
    /// `w × h` flags, row by row.
    pub on: Vec<bool>,
}

impl Region {
    pub(super) fn new(x0: u32, y0: u32, w: u32, h: u32) -> Region {
        Region {
            x0,
            y0,
            w,
            h,
            on: vec![false; (w * h) as usize],
        }
    }

    /// Whether photo pixel (x, y) is in the region.
    pub fn get(&self, x: u32, y: u32) -> bool {
        x >= self.x0
            && y >= self.y0
            && x < self.x0 + self.w
            && y < self.y0 + self.h
            && self.on[((y - self.y0) * self.w + (x - self.x0)) as usize]
    }

    /// The number of pixels in the region.
    pub fn count(&self) -> usize {
        self.on.iter().filter(|&&v| v).count()
    }

    /// The region as a photo-sized mask (255: in).
    pub fn to_mask(&self, width: u32, height: u32) -> GrayImage {
        let mut m = GrayImage::new(width, height);
        for y in 0..self.h {
            for x in 0..self.w {
                if self.on[(y * self.w + x) as usize] {
                    m.put_pixel(self.x0 + x, self.y0 + y, image::Luma([255]));
                }
            }
        }
        m
    }
}

/// Closes the region's holes: every pixel off the region that cannot reach the box's border
/// through pixels off the region joins it (a hat band, a badge, a logo).
pub fn close_holes(r: &mut Region) {
    let (w, h) = (r.w as usize, r.h as usize);
    let mut outside = vec![false; w * h];
    let mut queue = VecDeque::new();
    for y in 0..h {
        for x in 0..w {
            if (x == 0 || y == 0 || x == w - 1 || y == h - 1) && !r.on[y * w + x] {
                outside[y * w + x] = true;
                queue.push_back((x, y));
            }
        }
    }
    while let Some((x, y)) = queue.pop_front() {
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                continue;
            }
            let i = ny as usize * w + nx as usize;
            if !r.on[i] && !outside[i] {
                outside[i] = true;
                queue.push_back((nx as usize, ny as usize));
            }
        }
    }
    for (on, out) in r.on.iter_mut().zip(outside) {
        if !out {
            *on = true;
        }
    }
}

/// The area of a simple polygon (pixels²).
pub fn polygon_area(p: &[P2]) -> f32 {
    let n = p.len();
    let mut s = 0.0;
    for i in 0..n {
        let (a, b) = (p[i], p[(i + 1) % n]);
        s += a[0] * b[1] - b[0] * a[1];
    }
    (s / 2.0).abs()
}
