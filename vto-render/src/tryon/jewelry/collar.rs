//! The garment round the neck, in front of a necklace: a chain on a person wearing a collared
//! top goes under the collar (or the neckline) at the sides and comes out on the chest.
//!
//! # The collar band
//! The skin's colour is sampled on the face (cheeks, forehead, chin: [`SKIN_LANDMARKS`]) as
//! the mean and spread of its chroma (YCbCr) and its luma. Under the chin, the neck is the
//! skin-coloured region connected to the pixels just below the chin. The collar band is the
//! cloth touching that neck region (person pixels of the selfie mask, when there is one,
//! that are not skin), grown while its colour stays that of the cloth at the neck
//! ([`COLLAR_STEP`], [`COLLAR_RANGE`]) and at most [`COLLAR_CM`] from the neck: the collar or
//! the neckline's hem up to its edge, where the chain comes out onto the top. The
//! band becomes a depth-only occluder in front of the chain (one quad per run of pixels on a
//! row), so the chain disappears under it and shows on the skin and, further down, over
//! the garment.
//!
//! Nothing is hidden when the photo cannot tell skin from cloth: a grey-scale photo (no
//! chroma on the face), too few skin samples, or no neck skin under the chin (a turtleneck:
//! the chain is worn over it).

use image::RgbaImage;

use crate::math::{Vec2, Vec3};
use crate::scene::camera::HeadCamera;
use crate::scene::CameraMesh;
use crate::vision::{Face, Mask};

/// Face-mesh landmarks whose surroundings sample the skin: cheeks, forehead, chin.
pub const SKIN_LANDMARKS: [usize; 7] = [50, 280, 101, 330, 151, 199, 205];
/// How far (cm) from the neck's skin the garment can hide a chain.
pub const COLLAR_CM: f32 = 7.0;
/// Most RGB distance (of 255) between neighbouring pixels of one collar.
pub const COLLAR_STEP: f32 = 28.0;
/// Most RGB distance (of 255) of a collar pixel from the collar's colour at the neck.
pub const COLLAR_RANGE: f32 = 90.0;
/// A pixel is skin when its chroma lies within this many spreads of the face's.
pub const SKIN_SIGMAS: f32 = 3.0;
/// Least chroma spread (of 255) assumed for the skin, so an evenly lit face still matches
/// its own neck.
pub const MIN_CHROMA_SPREAD: f32 = 4.0;
/// Least width of a row of neck skin, in face widths (landmarks 234–454), for it to measure
/// the neck's midline ([`neck_skin`]).
pub const NECK_ROW_OF_FACE: f32 = 0.3;
/// The face's mean chroma must lie this far (of 255) from grey for skin to be told from cloth.
pub const MIN_SKIN_CHROMA: f32 = 6.0;

/// The skin's colour, from the face.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkinModel {
    /// Mean (Cb, Cr).
    pub chroma: Vec2,
    /// Spread of (Cb, Cr) (standard deviations, floored at [`MIN_CHROMA_SPREAD`]).
    pub spread: Vec2,
    /// Mean luma.
    pub luma: f32,
}

fn ycbcr(p: &image::Rgba<u8>) -> (f32, Vec2) {
    let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    (
        0.299 * r + 0.587 * g + 0.114 * b,
        Vec2::new(
            128.0 - 0.168_736 * r - 0.331_264 * g + 0.5 * b,
            128.0 + 0.5 * r - 0.418_688 * g - 0.081_312 * b,
        ),
    )
}

impl SkinModel {
    /// Samples the skin round [`SKIN_LANDMARKS`]; `None` on a grey-scale photo or too few
    /// samples.
    pub fn from_face(photo: &RgbaImage, face: &Face) -> Option<SkinModel> {
        let lm = &face.landmarks;
        let (top, chin) = (lm.get(10)?, lm.get(152)?);
        let r = ((chin[1] - top[1]).abs() * 0.03).clamp(1.0, 12.0) as i64;
        let (w, h) = (photo.width() as i64, photo.height() as i64);
        let mut samples = Vec::new();
        for &i in &SKIN_LANDMARKS {
            let Some(p) = lm.get(i) else { continue };
            let (cx, cy) = (p[0].round() as i64, p[1].round() as i64);
            for y in cy - r..=cy + r {
                for x in cx - r..=cx + r {
                    if x >= 0 && y >= 0 && x < w && y < h {
                        samples.push(ycbcr(photo.get_pixel(x as u32, y as u32)));
                    }
                }
            }
        }
        if samples.len() < 20 {
            return None;
        }
        let n = samples.len() as f32;
        let chroma = samples.iter().map(|s| s.1).sum::<Vec2>() / n;
        let luma = samples.iter().map(|s| s.0).sum::<f32>() / n;
        let var = samples
            .iter()
            .map(|s| (s.1 - chroma) * (s.1 - chroma))
            .sum::<Vec2>()
            / n;
        let spread = Vec2::new(var.x.sqrt(), var.y.sqrt()).max(Vec2::splat(MIN_CHROMA_SPREAD));
        ((chroma - Vec2::splat(128.0)).length() >= MIN_SKIN_CHROMA).then_some(SkinModel {
            chroma,
            spread,
            luma,
        })
    }

    /// Whether a pixel looks like this skin (in light or in shadow).
    pub fn is_skin(&self, p: &image::Rgba<u8>) -> bool {
        let (y, c) = ycbcr(p);
        let d = (c - self.chroma) / (self.spread * SKIN_SIGMAS);
        d.length_squared() <= 1.0 && y > 0.3 * self.luma && y < 1.6 * self.luma + 20.0
    }
}

/// The collar band over an image rectangle.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The rectangle: x0, y0, width, height (pixels).
    pub rect: (u32, u32, u32, u32),
    /// Whether each pixel of the rectangle (row-major) is in the band.
    pub mask: Vec<bool>,
}

/// The collar band (see the module docs) over the image rectangle `lo`–`hi` (the
/// necklace's footprint, widened by the reach), or `None` when the photo cannot tell skin
/// from cloth.
pub fn band(
    photo: &RgbaImage,
    face: &Face,
    mask: Option<&Mask>,
    px_per_cm: f32,
    lo: Vec2,
    hi: Vec2,
) -> Option<Band> {
    let skin = SkinModel::from_face(photo, face)?;
    let lm = &face.landmarks;
    let (top, chin) = (lm.get(10)?, lm.get(152)?);
    let face_h = (chin[1] - top[1]).abs().max(1.0);
    let reach = (COLLAR_CM * px_per_cm).max(2.0);
    let (pw, ph) = (photo.width() as f32, photo.height() as f32);
    let x0 = (lo.x - reach).clamp(0.0, pw) as u32;
    let x1 = (hi.x + reach).clamp(0.0, pw) as u32;
    let y0 = chin[1].clamp(0.0, ph) as u32;
    let y1 = (hi.y + reach).clamp(0.0, ph) as u32;
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let (w, h) = (x1 - x0, y1 - y0);
    let idx = |x: u32, y: u32| (y * w + x) as usize;
    let person = |x: u32, y: u32| {
        mask.filter(|m| m.width == photo.width() && m.height == photo.height())
            .is_none_or(|m| m.data[(y * m.width + x) as usize] > 0.5)
    };
    let is_skin = skin_map(photo, &skin, (x0, y0, w, h));
    let neck = neck_region(&is_skin, (x0, y0, w, h), [chin[0], chin[1]], face_h)?;
    let neighbours = |x: u32, y: u32| neighbours(x, y, w, h);
    let mut queue = std::collections::VecDeque::new();
    // The band: the cloth touching the neck, grown while its colour stays the collar's
    // (within COLLAR_STEP of the neighbour it grew from and COLLAR_RANGE of the pixel that
    // touched the neck), at most `reach` steps: it stops at the collar's or the neckline's
    // edge, where the chain comes out.
    let rgb = |x: u32, y: u32| {
        let p = photo.get_pixel(x0 + x, y0 + y);
        Vec3::new(f32::from(p[0]), f32::from(p[1]), f32::from(p[2]))
    };
    let mut dist = vec![u32::MAX; (w * h) as usize];
    let mut seed = vec![Vec3::ZERO; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            if neck[idx(x, y)] {
                dist[idx(x, y)] = 0;
                queue.push_back((x, y));
            }
        }
    }
    let limit = reach.ceil() as u32;
    let mut band = vec![false; (w * h) as usize];
    while let Some((x, y)) = queue.pop_front() {
        let k0 = idx(x, y);
        let d = dist[k0];
        if d >= limit {
            continue;
        }
        let c0 = rgb(x, y);
        for (nx, ny) in neighbours(x, y) {
            let k = idx(nx, ny);
            if dist[k] != u32::MAX || is_skin[k] || !person(x0 + nx, y0 + ny) {
                continue;
            }
            let c = rgb(nx, ny);
            let origin = if neck[k0] { c } else { seed[k0] };
            let joins = neck[k0]
                || ((c - c0).length() <= COLLAR_STEP && (c - origin).length() <= COLLAR_RANGE);
            if joins {
                dist[k] = d + 1;
                seed[k] = origin;
                band[k] = true;
                queue.push_back((nx, ny));
            }
        }
    }
    Some(Band {
        rect: (x0, y0, w, h),
        mask: band,
    })
}

/// Whether each pixel of the rectangle `(x0, y0, w, h)` (row-major) looks like `skin`.
fn skin_map(
    photo: &RgbaImage,
    skin: &SkinModel,
    (x0, y0, w, h): (u32, u32, u32, u32),
) -> Vec<bool> {
    (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| skin.is_skin(photo.get_pixel(x0 + x, y0 + y)))
        .collect()
}

/// The 4-neighbours of `(x, y)` inside a `w` × `h` rectangle.
fn neighbours(x: u32, y: u32, w: u32, h: u32) -> impl Iterator<Item = (u32, u32)> {
    [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)]
        .into_iter()
        .filter_map(move |(dx, dy)| {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            (nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64).then_some((nx as u32, ny as u32))
        })
}

/// The neck: the skin (`is_skin` over the rectangle `(x0, y0, w, h)`) connected to the
/// pixels just under the chin; `None` when too few of those are skin (a turtleneck, a
/// beard, a photo whose skin cannot be told).
fn neck_region(
    is_skin: &[bool],
    (x0, y0, w, h): (u32, u32, u32, u32),
    chin: [f32; 2],
    face_h: f32,
) -> Option<Vec<bool>> {
    let idx = |x: u32, y: u32| (y * w + x) as usize;
    let mut neck = vec![false; (w * h) as usize];
    let mut queue = std::collections::VecDeque::new();
    let (sx0, sx1) = (chin[0] - 0.15 * face_h, chin[0] + 0.15 * face_h);
    let (sy0, sy1) = (chin[1] + 0.05 * face_h, chin[1] + 0.3 * face_h);
    for y in 0..h {
        for x in 0..w {
            let (fx, fy) = ((x0 + x) as f32, (y0 + y) as f32);
            if fx >= sx0 && fx <= sx1 && fy >= sy0 && fy <= sy1 && is_skin[idx(x, y)] {
                neck[idx(x, y)] = true;
                queue.push_back((x, y));
            }
        }
    }
    if (queue.len() as f32) < 0.002 * face_h * face_h {
        return None;
    }
    while let Some((x, y)) = queue.pop_front() {
        for (nx, ny) in neighbours(x, y, w, h) {
            if !neck[idx(nx, ny)] && is_skin[idx(nx, ny)] {
                neck[idx(nx, ny)] = true;
                queue.push_back((nx, ny));
            }
        }
    }
    Some(neck)
}

/// The neck's bare skin as the photo shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NeckSkin {
    /// The neck's midline: the median centre of its rows (pixels).
    pub midline_x: f32,
    /// The neck's width: the median width of those rows (pixels).
    pub width_px: f32,
    /// How many rows measured it.
    pub rows: usize,
}

/// The neck's midline measured on its bare skin (see [`NECK_ROW_OF_FACE`]): under the chin,
/// the skin connected to the pixels just below it; each row where that skin is at least
/// [`NECK_ROW_OF_FACE`] face widths wide (the neck, not the narrow point of a V neckline)
/// gives its centre and width, and the midline and the width are their medians. `None` when the photo cannot tell skin
/// from cloth or no row measures (a turtleneck, a beard).
pub fn neck_skin(photo: &RgbaImage, face: &Face) -> Option<NeckSkin> {
    let skin = SkinModel::from_face(photo, face)?;
    let lm = &face.landmarks;
    let (top, chin, l, r) = (lm.get(10)?, lm.get(152)?, lm.get(234)?, lm.get(454)?);
    let face_h = (chin[1] - top[1]).abs().max(1.0);
    let face_w = ((l[0] - r[0]).powi(2) + (l[1] - r[1]).powi(2))
        .sqrt()
        .max(1.0);
    let (pw, ph) = (photo.width() as f32, photo.height() as f32);
    let x0 = (chin[0] - face_w).clamp(0.0, pw) as u32;
    let x1 = (chin[0] + face_w).clamp(0.0, pw) as u32;
    let y0 = chin[1].clamp(0.0, ph) as u32;
    let y1 = (chin[1] + 0.6 * face_h).clamp(0.0, ph) as u32;
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let rect = (x0, y0, x1 - x0, y1 - y0);
    let is_skin = skin_map(photo, &skin, rect);
    let neck = neck_region(&is_skin, rect, [chin[0], chin[1]], face_h)?;
    let (w, h) = (rect.2, rect.3);
    let first = (0.05 * face_h).ceil() as u32;
    let rows: Vec<(f32, f32)> = (first.min(h)..h)
        .filter_map(|y| {
            let row = &neck[(y * w) as usize..((y + 1) * w) as usize];
            let a = row.iter().position(|&b| b)?;
            let b = row.iter().rposition(|&b| b)?;
            let width = (b - a + 1) as f32;
            (width >= NECK_ROW_OF_FACE * face_w)
                .then_some((x0 as f32 + (a + b + 1) as f32 / 2.0, width))
        })
        .collect();
    if rows.len() < 3 {
        return None;
    }
    let median = |mut v: Vec<f32>| {
        v.sort_by(f32::total_cmp);
        v[v.len() / 2]
    };
    Some(NeckSkin {
        midline_x: median(rows.iter().map(|r| r.0).collect()),
        width_px: median(rows.iter().map(|r| r.1).collect()),
        rows: rows.len(),
    })
}

/// The band as a depth-only occluder at camera depth `depth` (cm): one quad per run of
/// band pixels on a row. Returns the mesh and how many pixels it covers.
pub fn occluder(cam: &HeadCamera, band: &Band, depth: f32) -> (CameraMesh, usize) {
    let (x0, y0, w, h) = band.rect;
    let band = &band.mask;
    let mut mesh = CameraMesh::default();
    let mut covered = 0;
    for y in 0..h {
        let row = &band[(y * w) as usize..((y + 1) * w) as usize];
        let mut x = 0;
        while x < w {
            if !row[x as usize] {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && row[x as usize] {
                x += 1;
            }
            covered += (x - start) as usize;
            let base = mesh.positions.len() as u32;
            let (ax, bx) = ((x0 + start) as f32, (x0 + x) as f32);
            let (ay, by) = ((y0 + y) as f32, (y0 + y + 1) as f32);
            for (px, py) in [(ax, ay), (bx, ay), (bx, by), (ax, by)] {
                let p = cam.camera().unproject(Vec2::new(px, py), depth);
                mesh.push_vertex(p, Vec3::NEG_Z, [0.0; 2], 0.0);
            }
            mesh.triangles.push([base, base + 1, base + 2, 0]);
            mesh.triangles.push([base, base + 2, base + 3, 0]);
        }
    }
    (mesh, covered)
}
