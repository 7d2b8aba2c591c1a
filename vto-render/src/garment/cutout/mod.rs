//! The garment from its product photo: mask, part labels and landmarks.
//!
//! The mask is the PNG's alpha when the photo has one (a transparent border); otherwise the
//! background is learned from the photo's border (colour and texture clusters, so wood,
//! fur, carpet and a sheet's folds count as background) and filled from the border, stopped
//! at edges stronger than the background's own texture (so a white garment on a white
//! background stops at its outline); the largest remaining component without thin parts (a
//! hanger's hook) is the garment, holes filled ([`segment`]).
//!
//! Landmarks come from the silhouette, row by row: the torso is the run of garment pixels
//! through the centre column (or the two panels either side of an open front); scanning up
//! from the hem, the armpit is where a sleeve's run joins the torso's (when both armpits so
//! found meet near the centre — a strap or tab in the neckline, an open front's parted hem —
//! or one lies in the lower 40 % — a hem's rounded corners, a cuff beside the hem — the scan
//! is repeated over torso-wide rows only, in the upper 60 %, off the centre, and a garment
//! without one has its armpits at its sides 30 % of the way down); the shoulder is the top
//! of the silhouette above the armpit; the neck corners are the highest points between the
//! shoulders and the centre; a sleeve's axis runs from its root (shoulder–armpit midpoint) to
//! its cuff (the far end of its pixels along the axis); a sleeve measured several times
//! longer than the other took in a strip beside the torso and becomes the other's mirror
//! image ([`symmetry`]). Where the scan finds a sleeve missing and the photo is at hand
//! ([`measure_photo`]), sleeves hanging straight down beside the torso (a jacket on a
//! hanger, a hoodie on a ghost mannequin: the outline never widens) are told apart from it
//! by the seam, shading or gap between them ([`hanging`]): each sleeve is what lies outside
//! its inner edge from the armpit down to the cuff, the armpit at the fallback's height.
//!
//! Here: the cut-out ([`cutout`], [`Cutout`]) and a top's landmarks ([`prepare`],
//! [`measure`] → [`GarmentImage`]). The mask itself is [`mask`]'s (the segmentation
//! [`segment`]'s); lower garments' landmarks
//! (trousers, a dress's bodice and skirt) are [`lower`]'s; an outfit photo is split into its
//! pieces by [`outfit`]. A coloured backdrop's cast on a near-neutral garment (a black tee
//! on a red sheet, photographed brown) is taken off the cut-out's colours by [`cast`].

pub mod cast;
pub mod hanging;
pub mod hood;
pub mod lower;
pub mod mask;
pub mod on_model;
pub mod outfit;
pub mod segment;
pub mod skirt;
pub mod symmetry;

use glam::Vec2;
use image::RgbaImage;

use crate::garment::cutout::mask::{decontaminate, garment_mask};
use crate::garment::error::{GarmentError, Unmeasurable};
use crate::garment::geom::perp;
use crate::garment::label;

/// A sleeve's seam whose extent across the sleeve's axis is under this share of its length
/// (more than about 55° from square) is oblique: the root is measured from the sleeve's
/// cross-sections instead (see `measure_sleeve`).
const OBLIQUE_SEAM: f32 = 0.6;

/// Shoulder seams closer than this share of 0.9 of the chest are a strap's edges, not
/// seams ([`GarmentLandmarks::fit_width`]).
pub const STRAP_SEAMS: f32 = 0.7;

/// Product photos are processed at most this many pixels on their longer side.
pub const MAX_SIDE: u32 = 1024;

/// One sleeve in the product photo (garment pixels).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sleeve {
    /// The root's centre: where the sleeve's centre line, through its cross-sections square
    /// to its axis, meets the seam's end (midway between the shoulder point and the armpit
    /// for a sleeve set square to its seam).
    pub root: Vec2,
    /// The cuff's centre.
    pub cuff: Vec2,
    /// Half the sleeve's width at the root, square to its axis.
    pub root_half_width: f32,
    /// Half the sleeve's width at the cuff.
    pub cuff_half_width: f32,
}

impl Sleeve {
    /// Root to cuff, in garment pixels.
    pub fn length(&self) -> f32 {
        self.root.distance(self.cuff)
    }
}

/// The garment's landmarks (garment pixels; index 0 is the image's left, 1 its right).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GarmentLandmarks {
    /// The neckline's corners, where the collar meets the shoulders.
    pub neck: [Vec2; 2],
    /// The neckline's lowest point at the centre (the front neck).
    pub neck_centre: Vec2,
    /// The shoulder seams: the top of the silhouette above each armpit.
    pub shoulder: [Vec2; 2],
    /// The armpits.
    pub armpit: [Vec2; 2],
    /// The hem's corners.
    pub hem: [Vec2; 2],
    /// The sleeves, when the garment has them.
    pub sleeve: [Option<Sleeve>; 2],
    /// Whether the sleeves reach past the elbow (root-to-cuff longer than 55 % of the
    /// shoulder-to-hem length).
    pub long_sleeves: bool,
    /// Whether the front is open (background through the centre from the hem up, as an open
    /// jacket lies).
    pub open_front: bool,
}

impl GarmentLandmarks {
    /// Shoulder seam to shoulder seam.
    pub fn shoulder_width(&self) -> f32 {
        self.shoulder[0].distance(self.shoulder[1])
    }

    /// The width the garment is scaled and measured by: the shoulder seams' distance, or,
    /// where the seams lie closer together than [`STRAP_SEAMS`] of 0.9 of the chest — a
    /// tank top's or a sleeveless dress's straps or high neck, whose "seams" are the
    /// straps' edges near the neck — 0.9 of the chest, as a tee's seams lie. The chest is
    /// the armpits' distance, or 0.85 of the hem's where that is wider (a sleeveless
    /// outline whose armpits the scan found beside the straps; a bodice's hem is its
    /// waist). Scaled by its high neck, a sleeveless A-line dress came out twice the
    /// person's width and read as a maxi dress.
    pub fn fit_width(&self) -> f32 {
        let seams = self.shoulder_width();
        let chest = 0.9
            * self.armpit[0]
                .distance(self.armpit[1])
                .max(0.85 * self.hem[0].distance(self.hem[1]));
        if seams < STRAP_SEAMS * chest {
            chest
        } else {
            seams
        }
    }

    /// From the shoulders' midpoint to the hem's midpoint.
    pub fn length(&self) -> f32 {
        ((self.shoulder[0] + self.shoulder[1]) * 0.5).distance((self.hem[0] + self.hem[1]) * 0.5)
    }

    /// Sleeve length over shoulder-to-hem length (0 without sleeves).
    pub fn sleeve_ratio(&self) -> f32 {
        let len = self.length().max(1.0);
        self.sleeve
            .iter()
            .flatten()
            .map(|s| s.length() / len)
            .fold(0.0, f32::max)
    }
}

/// A garment ready to warp: premultiplied colour, soft mask, part labels and landmarks.
#[derive(Debug, Clone)]
pub struct GarmentImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGBA8 per pixel, colour premultiplied by the mask (alpha = the mask).
    pub rgba: Vec<[u8; 4]>,
    /// Part label per pixel ([`label`]; 0 = background).
    pub labels: Vec<u8>,
    /// The landmarks.
    pub landmarks: GarmentLandmarks,
    /// The torso's mean colour (sRGB, unpremultiplied).
    pub torso_colour: [u8; 3],
    /// Whether the mask came from the photo's alpha channel.
    pub from_alpha: bool,
}

/// Row runs `[start, end]` (inclusive) of a binary row.
fn runs(row: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (x, &v) in row.iter().enumerate() {
        match (v, start) {
            (true, None) => start = Some(x),
            (false, Some(s)) => {
                out.push((s, x - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, row.len() - 1));
    }
    out
}

/// The torso's span in one row: the run through `xc`, or the two panels either side of a
/// central gap narrower than `max_gap` (then `gap` is true).
fn torso_span(runs: &[(usize, usize)], xc: usize, max_gap: usize) -> Option<(usize, usize, bool)> {
    if let Some(&(a, b)) = runs.iter().find(|&&(a, b)| a <= xc && xc <= b) {
        return Some((a, b, false));
    }
    let left = runs.iter().rev().find(|r| r.1 < xc)?;
    let right = runs.iter().find(|r| r.0 > xc)?;
    (right.0 - left.1 <= max_gap).then_some((left.0, right.1, true))
}

/// A product photo's garment before it is measured: the photo (scaled to at most
/// [`MAX_SIDE`]) and the garment's mask.
#[derive(Debug, Clone)]
pub struct Cutout {
    /// The photo, scaled.
    pub img: RgbaImage,
    /// The soft garment mask (0–1 per pixel).
    pub mask: Vec<f32>,
    /// The mask thresholded at one half.
    pub fg: Vec<bool>,
    /// Whether the mask came from the photo's alpha channel.
    pub from_alpha: bool,
    /// The coloured backdrop's cast taken off a near-neutral garment ([`cast`]), already
    /// removed from `img`; `None` when there was none.
    pub cast: Option<cast::Cast>,
}

/// `img` scaled down (triangle filter) so that its longer side is at most `max_side`, or a
/// copy of it when it already is.
pub fn within(img: &RgbaImage, max_side: u32) -> RgbaImage {
    let (w, h) = img.dimensions();
    if w.max(h) <= max_side {
        return img.clone();
    }
    let s = max_side as f32 / w.max(h) as f32;
    image::imageops::resize(
        img,
        ((w as f32 * s).round() as u32).max(1),
        ((h as f32 * s).round() as u32).max(1),
        image::imageops::FilterType::Triangle,
    )
}

/// Finds the garment in a product photo (see the module docs), or says why there is none.
pub fn cutout(photo: &RgbaImage) -> Result<Cutout, GarmentError> {
    cutout_with(photo, &[])
}

/// [`cutout`] of a photo whose `faces` (boxes `[x0, y0, x1, y1]`, photo pixels) the face
/// detector found: one that is the head of the person the cut-out shows makes the photo an
/// on-model one ([`on_model::head_on_top`]).
pub fn cutout_with(photo: &RgbaImage, faces: &[[f32; 4]]) -> Result<Cutout, GarmentError> {
    let (w0, h0) = photo.dimensions();
    if w0 < 16 || h0 < 16 {
        return Err(GarmentError::PhotoTooSmall {
            width: w0,
            height: h0,
        });
    }
    let img = within(photo, MAX_SIDE);
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (mask, from_alpha) = garment_mask(&img);
    let fg: Vec<bool> = mask.iter().map(|&m| m > 0.5).collect();
    let area = fg.iter().filter(|&&v| v).count();
    if area < (w * h) / 50 {
        return Err(GarmentError::NothingStandsOut);
    }
    if area > (w * h) * 95 / 100 {
        return Err(GarmentError::NoBackground);
    }
    let k = w as f32 / w0 as f32;
    let scaled: Vec<[f32; 4]> = faces.iter().map(|b| b.map(|v| v * k)).collect();
    if !from_alpha && (on_model::worn_by_a_person(&fg, w) || on_model::head_on_top(&fg, w, &scaled))
    {
        return Err(GarmentError::OnModel);
    }
    let mut img = img;
    let cast = if from_alpha {
        None
    } else {
        cast::backdrop_cast(&img, &fg)
    };
    if let Some(c) = cast {
        c.remove(&mut img, &mask);
    }
    Ok(Cutout {
        img,
        mask,
        fg,
        from_alpha,
        cast,
    })
}

impl Cutout {
    /// The premultiplied texture under `labels` (unlabelled pixels transparent) and the
    /// mean colour of the fully covered pixels whose label passes `colour_of`.
    pub fn texture(
        &self,
        labels: &[u8],
        colour_of: impl Fn(u8) -> bool,
    ) -> (Vec<[u8; 4]>, [u8; 3]) {
        let img = decontaminate(&self.img, &self.mask);
        let mut rgba = Vec::with_capacity(labels.len());
        let mut sum = [0.0f64; 4];
        for (i, p) in img.pixels().enumerate() {
            let l = labels.get(i).copied().unwrap_or(0);
            let a = if l == 0 { 0.0 } else { self.mask[i] };
            let px = p.0;
            if colour_of(l) && a > 0.9 {
                for c in 0..3 {
                    sum[c] += f64::from(px[c]);
                }
                sum[3] += 1.0;
            }
            rgba.push([
                (f32::from(px[0]) * a).round() as u8,
                (f32::from(px[1]) * a).round() as u8,
                (f32::from(px[2]) * a).round() as u8,
                (a * 255.0).round() as u8,
            ]);
        }
        let n = sum[3].max(1.0);
        (
            rgba,
            [(sum[0] / n) as u8, (sum[1] / n) as u8, (sum[2] / n) as u8],
        )
    }
}

/// Finds the garment in a product photo and measures it.
pub fn prepare(photo: &RgbaImage) -> Result<GarmentImage, GarmentError> {
    prepare_with(photo, &[])
}

/// [`prepare`] of a photo whose `faces` the face detector found ([`cutout_with`]).
pub fn prepare_with(photo: &RgbaImage, faces: &[[f32; 4]]) -> Result<GarmentImage, GarmentError> {
    let cut = cutout_with(photo, faces)?;
    let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
    let (landmarks, labels) = measure_photo(&cut.fg, &cut.img, w, h)?;
    let (rgba, torso_colour) = cut.texture(&labels, |l| l == label::TORSO);
    Ok(GarmentImage {
        width: w as u32,
        height: h as u32,
        rgba,
        labels,
        landmarks,
        torso_colour,
        from_alpha: cut.from_alpha,
    })
}

/// Landmarks and part labels of a binary garment mask (see the module docs), from its
/// outline alone.
pub fn measure(
    fg: &[bool],
    w: usize,
    h: usize,
) -> Result<(GarmentLandmarks, Vec<u8>), GarmentError> {
    measure_in(fg, None, w, h)
}

/// [`measure`] with the product photo the mask `fg` was cut from (`photo`, `w` × `h`):
/// where the outline shows no sleeves, sleeves hanging down beside the torso are looked for
/// in the photo ([`hanging`]).
pub fn measure_photo(
    fg: &[bool],
    photo: &RgbaImage,
    w: usize,
    h: usize,
) -> Result<(GarmentLandmarks, Vec<u8>), GarmentError> {
    let photo = (photo.dimensions() == (w as u32, h as u32)).then_some(photo);
    measure_in(fg, photo, w, h)
}

/// [`measure_outline`] (without a hood lobe, [`hood::strip`]), and where that finds a sleeve missing (no armpit, or a sleeve of a
/// few pixels between a hem corner and its armpit) and the photo shows two sleeves hanging
/// down beside the torso ([`hanging`]), measured again with those.
fn measure_in(
    fg: &[bool],
    photo: Option<&RgbaImage>,
    w: usize,
    h: usize,
) -> Result<(GarmentLandmarks, Vec<u8>), GarmentError> {
    // A hoodie's hood laid flat above its shoulders is neither measured nor drawn.
    let hoodless = hood::strip(fg, w, h);
    let fg = hoodless.as_deref().unwrap_or(fg);
    let outline = measure_outline(fg, w, h, None);
    let missing = outline
        .as_ref()
        .is_ok_and(|(lm, _)| lm.sleeve.iter().any(Option::is_none));
    if missing {
        if let Some(hs) = photo.and_then(|img| hanging::find(fg, img)) {
            return measure_outline(fg, w, h, Some(&hs));
        }
    }
    outline
}

/// Landmarks and labels from the outline; with `hanging`, the sleeves are those hanging
/// sleeves instead of the armpit scan's.
fn measure_outline(
    fg: &[bool],
    w: usize,
    h: usize,
    hanging: Option<&hanging::HangingSleeves>,
) -> Result<(GarmentLandmarks, Vec<u8>), GarmentError> {
    let none = || GarmentError::Unmeasurable(Unmeasurable::Outline);
    let rows: Vec<Vec<(usize, usize)>> = (0..h).map(|y| runs(&fg[y * w..(y + 1) * w])).collect();
    let y_top = rows.iter().position(|r| !r.is_empty()).ok_or_else(none)?;
    let y_bot = rows.iter().rposition(|r| !r.is_empty()).ok_or_else(none)?;
    let x0 = rows
        .iter()
        .filter_map(|r| r.first())
        .map(|r| r.0)
        .min()
        .ok_or_else(none)?;
    let x1 = rows
        .iter()
        .filter_map(|r| r.last())
        .map(|r| r.1)
        .max()
        .ok_or_else(none)?;
    let xc = (x0 + x1) / 2;
    let max_gap = (x1 - x0) / 2;
    let spans: Vec<Option<(usize, usize, bool)>> =
        rows.iter().map(|r| torso_span(r, xc, max_gap)).collect();
    let y_hem = (y_top..=y_bot)
        .rev()
        .find(|&y| spans[y].is_some())
        .ok_or_else(none)?;
    let height = (y_hem - y_top).max(8);
    if height < 16 || x1 - x0 < 16 {
        return Err(GarmentError::Unmeasurable(Unmeasurable::TooSmall));
    }
    let y_corner = y_hem.saturating_sub(height / 100 + 1).max(y_top);
    let (hl, hr, _) = spans[y_corner].or(spans[y_hem]).ok_or_else(none)?;
    let mut hem = [
        Vec2::new(hl as f32, y_corner as f32),
        Vec2::new(hr as f32, y_corner as f32),
    ];
    // Armpits: scanning up from the hem, the first sudden widening of the torso's span.
    let jump = ((x1 - x0) / 25).max(3);
    let upper_limit = y_top + height / 12;
    let scan = ArmpitScan {
        spans: &spans,
        from: y_corner,
        to: upper_limit,
        jump,
    };
    let mut armpit_y = scan.run(None);
    let inset = (jump / 2).max(1);
    let lowest = y_top + height * 6 / 10;
    let collapsed = |a: &[Option<(usize, usize)>; 2]| {
        let l = a[0].map_or(usize::MAX, |(_, x)| x + inset);
        let r = a[1].map_or(usize::MAX, |(_, x)| x.saturating_sub(inset));
        l != usize::MAX && r != usize::MAX && r < l + 8
    };
    let low = armpit_y.iter().flatten().any(|&(y, _)| y > lowest);
    if collapsed(&armpit_y) || low {
        // Both "armpits" met near the centre, or one lies in the garment's lower 40 %: the
        // widening came from a narrow piece through the centre (a neckline's strap, the
        // parted corners of an open front's hem) or from the hem's own rounded or tapering
        // corners, a cuff hanging beside the hem, not from a sleeve joining the torso (a
        // long sleeve laid beside the torso meets it above the middle). Scan again over
        // torso-wide rows only, in the upper 60 % and off the centre.
        let mut widths: Vec<usize> = (y_top + height * 3 / 10..=y_top + height * 9 / 10)
            .filter_map(|y| spans[y].map(|s| s.1 - s.0))
            .collect();
        widths.sort_unstable();
        let median = widths.get(widths.len() / 2).copied().unwrap_or(0);
        let first = armpit_y;
        armpit_y = scan.run(Some(Robust {
            min_width: median / 2,
            lowest,
            centre: xc,
            min_offset: (x1 - x0) * 3 / 20,
        }));
        // One side's first armpit was sound (not collapsed, in the upper 60 %, off the
        // centre): it stands,
        // and the other side is its mirror image about the centre column (a flat-lay is
        // symmetric; the rescan on a sleeve whose underside widens gradually stops out on
        // the sleeve, measuring a tee's shoulders far too wide and its length as cropped).
        if !collapsed(&first) {
            let min_offset = (x1 - x0) * 3 / 20;
            let sound = |a: Option<(usize, usize)>| {
                a.filter(|&(y, x)| y <= lowest && x.abs_diff(xc) >= min_offset)
            };
            match (sound(first[0]), sound(first[1])) {
                (Some((y, x)), None) => {
                    armpit_y = [
                        Some((y, x)),
                        Some((y, (2 * xc).saturating_sub(x).min(w - 1))),
                    ];
                }
                (None, Some((y, x))) => {
                    armpit_y = [Some((y, (2 * xc).saturating_sub(x))), Some((y, x))];
                }
                _ => {}
            }
        }
    }
    let fallback_y = y_top + height * 3 / 10;
    let side_at = |y: usize, right: bool| {
        spans[y]
            .map(|s| if right { s.1 } else { s.0 })
            .unwrap_or(if right { hr } else { hl })
    };
    // Sleeves hanging down beside the torso, told apart from it in the photo: their inner
    // edges are the sleeves' boundaries from the armpits (at the fallback's height) down,
    // and the hem's corners lie inside them.
    let has_sleeves = hanging.is_some() || armpit_y.iter().all(Option::is_some);
    let armpit = [0, 1].map(|s| match (hanging, armpit_y[s]) {
        (Some(hs), _) => {
            let x = hs
                .at(s, fallback_y)
                .unwrap_or_else(|| side_at(fallback_y, s == 1));
            Vec2::new(x as f32, fallback_y as f32)
        }
        (None, Some((y, x))) => Vec2::new(x as f32, y as f32),
        (None, None) => Vec2::new(side_at(fallback_y, s == 1) as f32, fallback_y as f32),
    });
    if let Some(hs) = hanging {
        if let (Some(l), Some(r)) = (hs.at(0, y_corner), hs.at(1, y_corner)) {
            if l < r {
                hem[0].x = hem[0].x.max(l as f32);
                hem[1].x = hem[1].x.min(r as f32);
            }
        }
    }
    let top_of = |x: usize| (y_top..=y_bot).find(|&y| fg[y * w + x]);
    let shoulder_x = [
        (armpit[0].x as usize + inset).min(xc),
        (armpit[1].x as usize).saturating_sub(inset).max(xc),
    ];
    let shoulder = [0, 1].map(|s| {
        let x = shoulder_x[s];
        Vec2::new(x as f32, top_of(x).unwrap_or(y_top) as f32)
    });
    // Neck corners: the highest silhouette points between each shoulder and the centre.
    let highest = |a: usize, b: usize| {
        (a.min(b)..=a.max(b))
            .filter_map(|x| top_of(x).map(|y| (y, x)))
            .min_by_key(|&(y, x)| (y, x.abs_diff(xc)))
    };
    let (nly, nlx) = highest(shoulder_x[0], xc.saturating_sub(1)).ok_or_else(none)?;
    let (nry, nrx) = highest(xc + 1, shoulder_x[1]).ok_or_else(none)?;
    let neck = [
        Vec2::new(nlx as f32, nly as f32),
        Vec2::new(nrx as f32, nry as f32),
    ];
    let neck_centre = Vec2::new(xc as f32, top_of(xc).unwrap_or(nly.max(nry)) as f32);
    // Open front: a central gap from the hem up through at least 40 % of the length.
    let gap_rows = (y_top..=y_hem)
        .rev()
        .take_while(|&y| spans[y].is_some_and(|s| s.2) || !fg[y * w + xc])
        .count();
    let open_front = gap_rows * 10 >= height * 4;
    // Part labels.
    let mut labels = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            if !fg[y * w + x] {
                continue;
            }
            let p = Vec2::new(x as f32, y as f32);
            let mut l = label::TORSO;
            if has_sleeves {
                for s in 0..2 {
                    let beyond = if (y as f32) < armpit[s].y {
                        // Outside the line shoulder → armpit.
                        let d = armpit[s] - shoulder[s];
                        let t = (p.y - shoulder[s].y) / d.y.max(1.0);
                        let lx = shoulder[s].x + d.x * t;
                        if s == 0 {
                            p.x < lx
                        } else {
                            p.x > lx
                        }
                    } else if let Some(hs) = hanging {
                        // Outside the hanging sleeve's inner edge.
                        hs.at(s, y)
                            .is_some_and(|e| if s == 0 { x < e } else { x > e })
                    } else {
                        // Outside the torso's run and outside the line armpit → hem corner
                        // (stray runs along the hem are torso).
                        let d = hem[s] - armpit[s];
                        let t = ((p.y - armpit[s].y) / d.y.max(1.0)).min(1.0);
                        let lx = armpit[s].x + d.x * t;
                        match spans[y] {
                            Some((a, b, _)) if y < y_corner => {
                                (s == 0 && x < a && p.x < lx - 1.0)
                                    || (s == 1 && x > b && p.x > lx + 1.0)
                            }
                            _ => false,
                        }
                    };
                    if beyond {
                        l = if s == 0 {
                            label::SLEEVE_LEFT
                        } else {
                            label::SLEEVE_RIGHT
                        };
                    }
                }
            }
            labels[y * w + x] = l;
        }
    }
    let mut sleeve = if has_sleeves {
        [0, 1].map(|s| {
            let id = if s == 0 {
                label::SLEEVE_LEFT
            } else {
                label::SLEEVE_RIGHT
            };
            measure_sleeve(&labels, w, id, shoulder[s], armpit[s])
        })
    } else {
        [None, None]
    };
    // A flat-lay's sleeves are mirror images: one several times the other's length took in
    // a strip beside the torso ([`symmetry`]).
    symmetry::mirror_lopsided(&mut sleeve, &mut labels, w, shoulder, armpit);
    let mut lm = GarmentLandmarks {
        neck,
        neck_centre,
        shoulder,
        armpit,
        hem,
        sleeve,
        long_sleeves: false,
        open_front,
    };
    if lm.shoulder_width() < 8.0 || lm.length() < 8.0 {
        return Err(GarmentError::Unmeasurable(Unmeasurable::ShouldersAndHem));
    }
    lm.long_sleeves = lm.sleeve_ratio() > 0.55;
    Ok((lm, labels))
}

/// The stricter rules of a second armpit scan ([`ArmpitScan::run`]).
#[derive(Debug, Clone, Copy)]
struct Robust {
    /// Rows whose torso span is narrower than this are passed over.
    min_width: usize,
    /// No armpit below this row.
    lowest: usize,
    /// The garment's centre column.
    centre: usize,
    /// An armpit at least this far from the centre column.
    min_offset: usize,
}

/// The armpit scan of [`measure`]: from the hem's corner row `from` up to `to`, the first
/// sudden widening (by more than `jump`, holding for a few rows) of the torso's span on
/// each side, as (row, the torso's side column below it).
struct ArmpitScan<'a> {
    spans: &'a [Option<(usize, usize, bool)>],
    from: usize,
    to: usize,
    jump: usize,
}

impl ArmpitScan<'_> {
    fn run(&self, robust: Option<Robust>) -> [Option<(usize, usize)>; 2] {
        let spans = self.spans;
        let jump = self.jump;
        let span = |y: usize| spans[y].filter(|s| robust.is_none_or(|r| s.1 - s.0 >= r.min_width));
        let mut armpit_y = [None, None];
        let mut prev = span(self.from).map(|s| (s.0, s.1));
        for y in (self.to..self.from).rev() {
            let Some((l, r, _)) = span(y) else { continue };
            if let Some((pl, pr)) = prev {
                // The widening must hold for a few rows up (a notch in the outline does not).
                let holds = |right: bool| {
                    (0..6).all(|k| {
                        y >= k
                            && span(y - k).is_some_and(|s| {
                                if right {
                                    s.1 > pr + jump
                                } else {
                                    s.0 + jump < pl
                                }
                            })
                    })
                };
                let allowed = |x: usize| {
                    robust.is_none_or(|r| y <= r.lowest && x.abs_diff(r.centre) >= r.min_offset)
                };
                if armpit_y[0].is_none() && l + jump < pl && allowed(pl) && holds(false) {
                    armpit_y[0] = Some((y, pl));
                }
                if armpit_y[1].is_none() && r > pr + jump && allowed(pr) && holds(true) {
                    armpit_y[1] = Some((y, pr));
                }
            }
            prev = Some((l, r));
            if armpit_y.iter().all(Option::is_some) {
                break;
            }
        }
        armpit_y
    }
}

/// A sleeve's root, axis and cuff from its labelled pixels.
fn measure_sleeve(labels: &[u8], w: usize, id: u8, shoulder: Vec2, armpit: Vec2) -> Option<Sleeve> {
    let root = (shoulder + armpit) * 0.5;
    let pts: Vec<Vec2> = labels
        .iter()
        .enumerate()
        .filter(|(_, &l)| l == id)
        .map(|(i, _)| Vec2::new((i % w) as f32, (i / w) as f32))
        .collect();
    if pts.len() < 20 {
        return None;
    }
    let centroid = pts.iter().copied().sum::<Vec2>() / pts.len() as f32;
    let mut axis = (centroid - root).try_normalize()?;
    let mut cuff = root;
    let mut cuff_half = 0.0;
    // Two rounds: the centroid's direction, then the cuff's.
    for _ in 0..2 {
        let n = perp(axis);
        let len = pts
            .iter()
            .map(|p| (*p - root).dot(axis))
            .fold(0.0, f32::max);
        let far: Vec<&Vec2> = pts
            .iter()
            .filter(|p| (**p - root).dot(axis) > 0.88 * len)
            .collect();
        if far.is_empty() {
            return None;
        }
        let (mut lo, mut hi, mut mid) = (f32::MAX, f32::MIN, 0.0);
        for p in &far {
            let o = (**p - root).dot(n);
            lo = lo.min(o);
            hi = hi.max(o);
            mid += o;
        }
        mid /= far.len() as f32;
        cuff = root + axis * len + n * mid;
        cuff_half = ((hi - lo) * 0.5).max(1.0);
        axis = (cuff - root).try_normalize()?;
    }
    // The root's width square to the axis. A sleeve set about square to its seam (a tee's,
    // held out) has the seam (shoulder → armpit) as its root: its centre and half its
    // length. A sleeve laid down along the body (a long sleeve hanging beside the torso) has
    // its seam cut obliquely, running almost along the axis: half its length overstates the
    // sleeve's width several times over, the fit's cross-sections fell off the sleeve's
    // texels and the worn sleeve began only mid-arm. There the sleeve's real cross-section a
    // quarter of the way down (its extent and centre across the axis), extrapolated back to
    // the root through the cuff's, gives the root's width and centre.
    let n = perp(axis);
    let seam_half = shoulder.distance(armpit) * 0.5;
    let seam_across = (shoulder - armpit).dot(n).abs() * 0.5;
    let len = (cuff - root).length();
    let (mut lo, mut hi, mut count) = (f32::MAX, f32::MIN, 0usize);
    for p in &pts {
        let d = *p - root;
        if (0.2 * len..0.3 * len).contains(&d.dot(axis)) {
            let o = d.dot(n);
            lo = lo.min(o);
            hi = hi.max(o);
            count += 1;
        }
    }
    let oblique = seam_across < OBLIQUE_SEAM * seam_half;
    let (root, root_half_width) = if oblique && count >= 4 {
        let (t, half, mid) = (0.25, (hi - lo) * 0.5, (hi + lo) * 0.5);
        let cuff_mid = (cuff - root).dot(n);
        let root_mid = (mid - t * cuff_mid) / (1.0 - t);
        // Never narrower than the seam's own extent across the axis.
        let root_half = ((half - t * cuff_half) / (1.0 - t)).max(seam_across);
        (root + n * root_mid, root_half)
    } else {
        (root, seam_half)
    };
    Some(Sleeve {
        root,
        cuff,
        root_half_width,
        cuff_half_width: cuff_half,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sleeveless bodice with a V neckline and a small tab inside the V (a zip pull, the
    /// back's neckline showing through): the tab's short run through the centre column
    /// once read as the torso, and the rows above it, two straps apart, as the torso
    /// widening on both sides — two "armpits" at the tab's ends, shoulders a few pixels
    /// apart and the photo refused ("shoulders and hem could not be told apart", as for
    /// the two jumpsuits of the shop photos). The second scan over torso-wide rows finds
    /// no armpit: the shoulders are at the bodice's sides.
    #[test]
    fn a_narrow_piece_in_the_neckline_is_no_armpit() {
        let (w, h) = (400usize, 320usize);
        let v = [
            Vec2::new(130.0, 59.0),
            Vec2::new(270.0, 59.0),
            Vec2::new(200.0, 140.0),
        ];
        let fg: Vec<bool> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32 + 0.5, (i / w) as f32 + 0.5);
                let body = (100.0..300.0).contains(&x) && (60.0..300.0).contains(&y);
                let tab = (195.0..205.0).contains(&x) && (110.0..126.0).contains(&y);
                (body && !crate::garment::geom::inside(&v, Vec2::new(x, y))) || tab
            })
            .collect();
        let (lm, _) = measure(&fg, w, h).expect("the bodice is measured");
        assert!(lm.shoulder_width() > 150.0, "{lm:?}");
        assert!(lm.sleeve.iter().all(Option::is_none), "{lm:?}");
        assert!((lm.hem[0].x - 100.0).abs() < 3.0 && (lm.hem[1].x - 299.0).abs() < 3.0);
    }
}
