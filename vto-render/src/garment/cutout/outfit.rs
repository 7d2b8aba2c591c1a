//! What a garment photo holds: the pieces of an outfit photo and what each one is.
//!
//! [`split_outfit`] finds every garment lying apart in the photo (side by side or stacked
//! with a gap: separate components of the garment mask, [`crate::garment::cutout::mask::garment_pieces`]),
//! cuts each out as its own photo with an alpha channel, and names it by its silhouette
//! ([`classify`]): trousers have a crotch (two legs from the bottom up); a one-piece with
//! legs and a bodice is a jumpsuit; a top measured with sleeves or a neckline that runs
//! longer than 1.9 shoulder widths is a dress, shorter a top. A photo whose pieces run off
//! the frame's top, or with a person's head on top, is a garment worn by a person and is
//! refused ([`crate::garment::cutout::on_model`]).

use image::{Rgba, RgbaImage};

use crate::garment::cutout::lower::{measure_pants, waist_row};
use crate::garment::cutout::mask::garment_pieces;
use crate::garment::cutout::on_model::{head_on_top, worn_by_a_person};
use crate::garment::cutout::{measure, within, MAX_SIDE};
use crate::garment::error::GarmentError;

/// What a garment piece is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// A top (shirt, t-shirt, jacket).
    Top,
    /// Trousers or shorts.
    Pants,
    /// A dress.
    Dress,
    /// A jumpsuit: a bodice and trouser legs in one piece.
    Jumpsuit,
}

impl PieceKind {
    /// `top`, `pants`, `dress` or `jumpsuit`.
    pub fn as_str(self) -> &'static str {
        match self {
            PieceKind::Top => "top",
            PieceKind::Pants => "pants",
            PieceKind::Dress => "dress",
            PieceKind::Jumpsuit => "jumpsuit",
        }
    }
}

/// One piece of an outfit photo.
#[derive(Debug, Clone)]
pub struct Piece {
    /// What it is.
    pub kind: PieceKind,
    /// The piece cut out: its bounding box (with a margin) of the photo, transparent
    /// outside the piece.
    pub photo: RgbaImage,
    /// Where it lay in the (scaled) photo: `[x0, y0, x1, y1]`.
    pub bbox: [u32; 4],
    /// A top open at the front (a jacket).
    pub open_front: bool,
}

/// Names a binary garment mask by its silhouette (see the module docs).
pub fn classify(fg: &[bool], w: usize, h: usize) -> PieceKind {
    if measure_pants(fg, w, h).is_some() {
        // A bodice above the legs: the waist well below the top and a top's landmarks
        // with sleeves over it.
        let bodice = waist_row(fg, w, h)
            .and_then(|y| measure(&fg[..(y + 1) * w], w, y + 1).ok().map(|b| (y, b.0)));
        if let Some((_, b)) = bodice {
            let legs_long = {
                let rows: Vec<usize> = (0..h)
                    .filter(|&y| fg[y * w..(y + 1) * w].contains(&true))
                    .collect();
                rows.len() as f32 > 2.2 * b.shoulder_width()
            };
            if b.sleeve.iter().all(Option::is_some) && legs_long {
                return PieceKind::Jumpsuit;
            }
        }
        if bodice.is_some() && has_bodice_above_crotch(fg, w, h) {
            return PieceKind::Jumpsuit;
        }
        return PieceKind::Pants;
    }
    match measure(fg, w, h) {
        Ok((lm, _)) if lm.length() > 1.9 * lm.fit_width() => PieceKind::Dress,
        _ => PieceKind::Top,
    }
}

/// A crotch lying further below the piece's top than [`JUMPSUIT_RISE`] of the piece's width
/// at its waist row: trousers rise some 0.7 waistband widths from the waistband to the
/// crotch, a sleeveless jumpsuit or a romper (straps, no sleeves) carries a whole bodice
/// above it.
fn has_bodice_above_crotch(fg: &[bool], w: usize, h: usize) -> bool {
    let Some((plm, _)) = measure_pants(fg, w, h) else {
        return false;
    };
    let Some(top) = (0..h).find(|&y| fg[y * w..(y + 1) * w].contains(&true)) else {
        return false;
    };
    let Some(waist) = waist_row(fg, w, h) else {
        return false;
    };
    let row = &fg[waist * w..(waist + 1) * w];
    let xc = plm.crotch.x as usize;
    // The run through the crotch's column at the waist: the body, not a belt's ties.
    let (mut a, mut b) = (xc.min(w - 1), xc.min(w - 1));
    while a > 0 && row[a - 1] {
        a -= 1;
    }
    while b + 1 < w && row[b + 1] {
        b += 1;
    }
    let waist_w = (b - a + 1) as f32;
    plm.crotch.y - top as f32 > JUMPSUIT_RISE * waist_w
}

/// Top-to-crotch over the waist's width above which a piece with legs is a jumpsuit.
pub const JUMPSUIT_RISE: f32 = 1.4;

/// Splits an outfit photo into its pieces, largest first (see the module docs).
pub fn split_outfit(photo: &RgbaImage) -> Result<Vec<Piece>, GarmentError> {
    split_outfit_with(photo, &[])
}

/// [`split_outfit`] of a photo whose `faces` (boxes `[x0, y0, x1, y1]`, photo pixels) the
/// face detector found: a piece with a head on top is a person wearing the outfit
/// ([`crate::garment::cutout::on_model::head_on_top`]), refused.
pub fn split_outfit_with(
    photo: &RgbaImage,
    faces: &[[f32; 4]],
) -> Result<Vec<Piece>, GarmentError> {
    let (w0, h0) = photo.dimensions();
    if w0 < 16 || h0 < 16 {
        return Err(GarmentError::PhotoTooSmall {
            width: w0,
            height: h0,
        });
    }
    let img = within(photo, MAX_SIDE * 2);
    let (w, h) = (img.width() as usize, img.height() as usize);
    let pieces = garment_pieces(&img, 0.02);
    if pieces.is_empty() {
        return Err(GarmentError::NothingStandsOut);
    }
    let opaque = img.pixels().filter(|p| p.0[3] < 128).count() * 10 <= w * h;
    let k = w as f32 / w0 as f32;
    let scaled: Vec<[f32; 4]> = faces.iter().map(|b| b.map(|v| v * k)).collect();
    if opaque
        && pieces
            .iter()
            .any(|fg| worn_by_a_person(fg, w) || head_on_top(fg, w, &scaled))
    {
        return Err(GarmentError::OnModel);
    }
    let mut out = Vec::new();
    for fg in pieces {
        let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
        for (i, _) in fg.iter().enumerate().filter(|(_, &v)| v) {
            let (x, y) = (i % w, i / w);
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        let m = ((x1 - x0).max(y1 - y0) / 20).max(4);
        let (cx0, cy0) = (x0.saturating_sub(m), y0.saturating_sub(m));
        let (cx1, cy1) = ((x1 + m).min(w - 1), (y1 + m).min(h - 1));
        let (cw, ch) = (cx1 - cx0 + 1, cy1 - cy0 + 1);
        let mut crop = RgbaImage::new(cw as u32, ch as u32);
        let mut local = vec![false; cw * ch];
        for y in 0..ch {
            for x in 0..cw {
                let i = (cy0 + y) * w + cx0 + x;
                let p = img.get_pixel((cx0 + x) as u32, (cy0 + y) as u32).0;
                local[y * cw + x] = fg[i];
                let a = if fg[i] { p[3] } else { 0 };
                crop.put_pixel(x as u32, y as u32, Rgba([p[0], p[1], p[2], a]));
            }
        }
        let kind = classify(&local, cw, ch);
        let open_front =
            kind == PieceKind::Top && measure(&local, cw, ch).is_ok_and(|(lm, _)| lm.open_front);
        out.push(Piece {
            kind,
            open_front,
            photo: crop,
            bbox: [cx0 as u32, cy0 as u32, cx1 as u32, cy1 as u32],
        });
    }
    Ok(out)
}
