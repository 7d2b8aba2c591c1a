//! Finding the hat the wearer already has on: what is part of the person above the brows but
//! is neither skin nor hair.
//!
//! Everything is measured in the face's frame: `a` up the face (from the chin, landmark 152,
//! toward the forehead top, landmark 10; 0 at landmark 10), `b` across it (image-right
//! positive), both in units of the face height (landmarks 10–152), so small and large faces
//! are judged alike.
//!
//! # Colours
//! - **Skin**: the median colours of small patches between the brows and down the nose (landmarks 9, 8, 168,
//!   197) and on the cheeks; a pixel close to either ([`skin_like`]: in colour, or in hue at
//!   another brightness) is skin-like.
//! - **Hair**: a histogram (8 levels per channel) of the person's pixels beside the face,
//!   from 0.1 to 0.45 face heights below the brows, beyond the face's sides —
//!   hair where there is some (a hat rarely reaches there; a beanie over the ears does, and
//!   is then missed). A pixel whose bin holds at least [`HAIR_BIN_SHARE`] of those samples
//!   is hair-like.
//! - **Background**: the same histogram outside the person mask around the head; the mask's
//!   soft edge of background colour is not hat.
//!
//! # The hat
//! Candidates: inside the person mask, above the brows, not skin-like, not hair-like (and not
//! background-like where the mask is unsure). The hat is the candidates connected to the
//! **crown zone** — above the forehead's middle, where every hat sits — with the holes in it
//! closed (a band, a badge, a logo).
//!
//! # Confidence
//! [`Found::confidence`]: how much of the crown zone the hat covers (weighted 0.7, ramped
//! from [`CROWN_SHARE`]`.0` to `.1`) and how far the hat reaches beyond the head's outline (a
//! brim or a tall crown; weighted 0.3, ramped from [`BEYOND_SHARE`]`.0` to `.1` of the head's
//! area). Hair of the colour found beside the face is never a candidate, so curls and long
//! hair score 0; hair darker on top than at the sides does not (see `docs/own-hat.md`).

use std::collections::VecDeque;

use image::RgbaImage;

use super::colour::{for_patch, median_colour, rgb};
pub use super::colour::{skin_like, Palette, SKIN_CHROMA, SKIN_DIST, SKIN_LUMA_RATIO};
use super::outline::{convex_hull, grown};
pub use super::region::{close_holes, polygon_area, HeadFrame, Region, MIN_FACE_PX};
pub use crate::tryon::own_eyewear::detect::{inside, P2};
use crate::vision::Mask;

/// A colour bin holding at least this share of the hair (or background) samples is hair-like
/// (background-like).
pub const HAIR_BIN_SHARE: f32 = 0.02;
/// Fewer hair samples than this: no hair is known (a bald head, short hair under a hat).
pub const MIN_HAIR_SAMPLES: usize = 40;
/// The share of the crown zone the hat covers, ramped to 0–1 between these.
pub const CROWN_SHARE: (f32, f32) = (0.35, 0.75);
/// The hat's area beyond the head's outline over the head's area, ramped between these.
pub const BEYOND_SHARE: (f32, f32) = (0.03, 0.2);
/// A brim's overhang (face heights; see [`overhang`]) on the side where it is smaller (a
/// brim overhangs on both sides; a raised arm or a head in profile on one), ramped to 0–1
/// between these; from the lower end on, the silhouette beyond a brimmed head counts as hat
/// whatever its colour. Without hats the real portraits measured at most 0.139 on both
/// sides (`docs/own-hat.md`).
pub const OVERHANG: (f32, f32) = (0.15, 0.25);
/// How far (face heights) below the brows a brim beyond the head's outline may droop.
pub const BRIM_DROOP: f32 = 0.35;
/// How far (face heights) beyond the head's outline a pixel lies "far" from it: beyond the
/// ears and the hair that hugs the head, where only a brim reaches at the brows' height
/// and below.
pub const FAR_BEYOND: f32 = 0.1;
/// How far (face heights) below the brows a brim far beyond the head's outline may droop (a
/// cowboy hat's brim ends curve down beside the cheeks).
pub const FAR_BRIM_DROOP: f32 = 0.6;
/// An ear beside a face side landmark (234, 454), in face heights: an ellipse whose centre
/// lies `.0` below the landmark and `.2` outward, with half-axes `.1` (along the face) and
/// `.3` (across).
pub const EAR: (f32, f32, f32, f32) = (0.05, 0.25, 0.07, 0.13);
/// The share of the brim's colour samples a bin needs to count as the brim's.
pub const BRIM_BIN_SHARE: f32 = 0.003;

/// Landmarks between and just above the brows where the skin is sampled (the forehead's
/// upper landmarks, 10, 151, 108, 337, are under a hat worn low).
const FOREHEAD: [usize; 4] = [9, 8, 168, 197];
/// Cheek landmarks where the skin is sampled.
const CHEEKS: [usize; 4] = [205, 425, 187, 411];
/// The brows' upper edges.
const BROW_TOPS: [usize; 6] = [105, 334, 66, 296, 107, 336];

/// What the detector found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// 0–1: how sure the detector is that the person wears a hat.
    pub confidence: f32,
    /// The share of the crown zone the hat covers.
    pub crown_share: f32,
    /// The hat's area beyond the head's outline, over the head's area.
    pub beyond_share: f32,
    /// How far (face heights) the silhouette reaches beyond the head's outline at a brim's
    /// height more than beside the face below it, image-left side first.
    pub overhang: [f32; 2],
    /// The hat's pixels (holes closed; not yet grown for the fill).
    pub hat: Region,
    /// The face's frame.
    pub frame: HeadFrame,
    /// The hair's colours (from beside the face).
    pub hair: Palette,
    /// The skin's median colours (forehead, cheeks).
    pub skin: [[f32; 3]; 2],
}

fn ramp(x: f32, lo: f32, hi: f32) -> f32 {
    ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
}

/// Detects a worn hat on the face with landmarks `lm` in `photo`, whose person mask is
/// `mask` (the photo's size) and whose head's outline (skull and hair, projected) is
/// `outline`. `None` when the face is too small, the mask is missing or not the photo's size,
/// or the zone above the face leaves the photo entirely.
pub fn detect(
    photo: &RgbaImage,
    lm: &[[f32; 3]],
    mask: Option<&Mask>,
    outline: &[P2],
) -> Option<Found> {
    let frame = HeadFrame::new(lm)?;
    let mask = mask?;
    let (pw, ph) = photo.dimensions();
    if (mask.width, mask.height) != (pw, ph) || mask.data.len() != (pw * ph) as usize {
        return None;
    }
    let person = |x: u32, y: u32| mask.data[(y * pw + x) as usize];
    let lmf = |i: usize| frame.to_frame([lm[i][0], lm[i][1]]);
    let a_brow = BROW_TOPS
        .iter()
        .map(|&i| lmf(i)[0])
        .fold(f32::MIN, f32::max);
    // The face's sides (|b| of landmarks 234 and 454), image-left first.
    let (s0, s1) = (lmf(234)[1], lmf(454)[1]);
    let (side_l, side_r) = (s0.min(s1), s0.max(s1));
    // The zone a hat can cover: above the brows, up to 1.6 face heights above the forehead
    // top, 1.6 to either side.
    let corners = [
        frame.to_image(a_brow, -1.6),
        frame.to_image(a_brow, 1.6),
        frame.to_image(1.6, -1.6),
        frame.to_image(1.6, 1.6),
        frame.to_image(a_brow - FAR_BRIM_DROOP - 0.05, -1.6),
        frame.to_image(a_brow - FAR_BRIM_DROOP - 0.05, 1.6),
    ];
    let lo = corners
        .iter()
        .fold([f32::MAX; 2], |m, p| [m[0].min(p[0]), m[1].min(p[1])]);
    let hi = corners
        .iter()
        .fold([f32::MIN; 2], |m, p| [m[0].max(p[0]), m[1].max(p[1])]);
    let x0 = lo[0].floor().max(0.0) as u32;
    let y0 = lo[1].floor().max(0.0) as u32;
    let x1 = (hi[0].ceil().max(0.0) as u32).min(pw);
    let y1 = (hi[1].ceil().max(0.0) as u32).min(ph);
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let r = (0.02 * frame.height).max(2.0) as i64;
    let skin = [
        median_colour(photo, lm, &FOREHEAD, r)?,
        median_colour(photo, lm, &CHEEKS, r)?,
    ];
    // The skin's own colours, bin by bin (the brim's ends beside the cheeks are told from the
    // ears by them).
    let mut skin_colours = Palette::new();
    for &i in FOREHEAD.iter().chain(&CHEEKS) {
        for_patch(photo, lm[i], 2 * r, |c| skin_colours.add(c));
    }
    // The hair (beside the face, from the brows down a third of a face height) and the
    // background (outside the person, in the zone).
    let mut hair = Palette::new();
    let mut background = Palette::new();
    for y in y0..y1 {
        for x in x0..x1 {
            let q = frame.to_frame([x as f32 + 0.5, y as f32 + 0.5]);
            let c = rgb(photo, x, y);
            let m = person(x, y);
            if m < 0.3 {
                if q[0] >= a_brow {
                    background.add(c);
                }
                continue;
            }
            let beside = (q[1] < side_l - 0.02 && q[1] > side_l - 0.3)
                || (q[1] > side_r + 0.02 && q[1] < side_r + 0.3);
            if m >= 0.5
                && q[0] < a_brow - 0.1
                && q[0] > a_brow - 0.45
                && beside
                && !skin_like(&skin, c)
            {
                hair.add(c);
            }
        }
    }
    // A brim: the silhouette reaches much farther beyond the head's outline at the brim's
    // height than beside the face below it (hair falls on; a brim overhangs).
    let overhang = overhang(&frame, &person, (pw, ph), outline, a_brow);
    let brimmed = overhang[0].min(overhang[1]) >= OVERHANG.0;
    // The candidates.
    let (w, h) = (x1 - x0, y1 - y0);
    let far_outline = grown(outline, FAR_BEYOND * frame.height);
    // Where the ears are: beside the face's sides (landmarks 234, 454), from a little above
    // them to the nose's bottom. A shaded straw brim has an ear's colours, and the hair round
    // an ear is not skin: below the brows nothing there is brim (a sliver of brim behind an
    // ear may stay; an ear taken off would not convince anyone).
    let ears = [lmf(234), lmf(454)];
    // The face itself (the hull of its landmarks) is never brim below the brows: in a turned
    // head's view the jaw lies outside the skull's outline, and a black brim's colours are
    // dark skin's.
    let face_hull = convex_hull(lm.iter().map(|p| [p[0], p[1]]).collect());
    let in_ear = |q: P2| {
        ears.iter().any(|e| {
            let out = if e[1] < 0.5 * (side_l + side_r) {
                -1.0
            } else {
                1.0
            };
            let da = (q[0] - (e[0] - EAR.0)) / EAR.1;
            let db = (q[1] - (e[1] + out * EAR.2)) / EAR.3;
            da * da + db * db <= 1.0
        })
    };
    let zone = |x: u32, y: u32| {
        let c = [x as f32 + 0.5, y as f32 + 0.5];
        let beyond = brimmed && !inside(outline, c);
        let far = beyond && !inside(&far_outline, c);
        (frame.to_frame(c), beyond, far)
    };
    // A brimmed head's brim colours: its pixels beyond the outline at the brows' height and
    // above (below the brows, skin-like colours are not taken there: a straw brim beside
    // the cheeks has the skin's hue, and the JPEG's blocks flip single tests).
    let mut brim_colours = Palette::new();
    let mut cand = Region::new(x0, y0, w, h);
    for pass in 0..2 {
        for y in y0..y1 {
            for x in x0..x1 {
                let q = frame.to_frame([x as f32 + 0.5, y as f32 + 0.5]);
                // The second pass changes only what lies below the brows (the drooping brim):
                // above them it would decide every pixel as the first did.
                if pass == 1 && q[0] >= a_brow {
                    continue;
                }
                let (_, brim, far) = zone(x, y);
                // Beyond the outline of a brimmed head, hair-like colours are the brim's, and
                // the brim may droop below the brows (far beyond it, farther).
                let floor = match (brim, far) {
                    (_, true) if pass == 1 => a_brow - FAR_BRIM_DROOP,
                    (true, _) => a_brow - BRIM_DROOP,
                    _ => a_brow,
                };
                if q[0] < floor || q[0] > 1.6 || q[1].abs() > 1.6 {
                    continue;
                }
                let m = person(x, y);
                if m < 0.5 {
                    continue;
                }
                let c = rgb(photo, x, y);
                // Above a brimmed head's forehead top the crown sits; beyond its outline
                // above the brows, the brim, whose shaded underside may have the skin's hue;
                // far beyond it below the brows, the brim's own colours.
                let crown = brimmed && q[0] >= 0.0;
                if q[0] < a_brow && inside(&face_hull, [x as f32 + 0.5, y as f32 + 0.5]) {
                    continue;
                }
                // Below the brows, beyond the outline: the brim's colours; near the outline
                // only where they are not the skin's own; round an ear, neither the skin's
                // nor the hair's, and nothing else (not even what is not skin-like: the hair
                // round an ear).
                let ear = brim && q[0] < a_brow && in_ear(q);
                let low_brim = pass == 1
                    && brim
                    && q[0] < a_brow
                    && brim_colours.holds(c, BRIM_BIN_SHARE, MIN_HAIR_SAMPLES)
                    && ((far && !ear) || !skin_colours.holds(c, BRIM_BIN_SHARE, MIN_HAIR_SAMPLES))
                    && !(ear && hair.holds(c, HAIR_BIN_SHARE, MIN_HAIR_SAMPLES));
                if ear && !low_brim {
                    continue;
                }
                let is = (!skin_like(&skin, c) || (brim && q[0] >= a_brow) || low_brim)
                    && (brim || crown || !hair.holds(c, HAIR_BIN_SHARE, MIN_HAIR_SAMPLES))
                    && (m >= 0.8 || !background.holds(c, HAIR_BIN_SHARE, MIN_HAIR_SAMPLES));
                cand.on[((y - y0) * w + (x - x0)) as usize] = is;
                if pass == 0 && is && brim && q[0] >= a_brow {
                    brim_colours.add(c);
                }
            }
        }
        if !brimmed {
            break;
        }
    }
    // The crown zone: above the forehead's middle.
    let a_lo = (a_brow + 0.08).max(-0.1);
    let in_crown = |q: P2| q[0] >= a_lo && q[0] <= 0.4 && q[1].abs() <= 0.3;
    let mut hat = Region::new(x0, y0, w, h);
    let mut queue = VecDeque::new();
    let (mut crown_n, mut crown_person) = (0usize, 0usize);
    for y in y0..y1 {
        for x in x0..x1 {
            let q = frame.to_frame([x as f32 + 0.5, y as f32 + 0.5]);
            if !in_crown(q) || person(x, y) < 0.5 {
                continue;
            }
            crown_person += 1;
            let i = ((y - y0) * w + (x - x0)) as usize;
            if cand.on[i] {
                crown_n += 1;
                hat.on[i] = true;
                queue.push_back((x - x0, y - y0));
            }
        }
    }
    if brimmed {
        // The brim seeds the hat too (a black felt hat over black hair: the crown zone is
        // hair-like, the brim beyond the head is not hair).
        for y in y0..y1 {
            for x in x0..x1 {
                let i = ((y - y0) * w + (x - x0)) as usize;
                if cand.on[i] && !hat.on[i] && !inside(outline, [x as f32 + 0.5, y as f32 + 0.5]) {
                    hat.on[i] = true;
                    queue.push_back((x - x0, y - y0));
                }
            }
        }
    }
    while let Some((x, y)) = queue.pop_front() {
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                continue;
            }
            let i = (ny as u32 * w + nx as u32) as usize;
            if cand.on[i] && !hat.on[i] {
                hat.on[i] = true;
                queue.push_back((nx as u32, ny as u32));
            }
        }
    }
    // Holes closed above the brows only (a band, a badge; not an ear framed by a brim).
    let traced = hat.on.clone();
    close_holes(&mut hat);
    for (i, on) in hat.on.iter_mut().enumerate() {
        let (x, y) = (x0 + i as u32 % w, y0 + i as u32 / w);
        if *on && !traced[i] && frame.to_frame([x as f32 + 0.5, y as f32 + 0.5])[0] < a_brow {
            *on = false;
        }
    }
    // Never below the brows (a brim beyond the head: never below its droop).
    for y in 0..h {
        for x in 0..w {
            let (q, brim, far) = zone(x0 + x, y0 + y);
            let floor = match (brim, far) {
                (_, true) => a_brow - FAR_BRIM_DROOP,
                (true, _) => a_brow - BRIM_DROOP,
                _ => a_brow,
            };
            if q[0] < floor {
                hat.on[(y * w + x) as usize] = false;
            }
        }
    }
    let crown_share = if crown_person == 0 {
        0.0
    } else {
        crown_n as f32 / crown_person as f32
    };
    let head_area = polygon_area(outline).max(1.0);
    let mut beyond = 0usize;
    for y in 0..h {
        for x in 0..w {
            if hat.on[(y * w + x) as usize]
                && !inside(outline, [(x0 + x) as f32 + 0.5, (y0 + y) as f32 + 0.5])
            {
                beyond += 1;
            }
        }
    }
    let beyond_share = beyond as f32 / head_area;
    let by_colour = 0.7 * ramp(crown_share, CROWN_SHARE.0, CROWN_SHARE.1)
        + 0.3 * ramp(beyond_share, BEYOND_SHARE.0, BEYOND_SHARE.1);
    let by_brim = ramp(overhang[0].min(overhang[1]), OVERHANG.0, OVERHANG.1);
    let confidence = if hat.count() == 0 {
        0.0
    } else {
        by_colour.max(by_brim)
    };
    Some(Found {
        confidence,
        crown_share,
        beyond_share,
        overhang,
        hat,
        frame,
        hair,
        skin,
    })
}

/// How far the person's silhouette reaches beyond the head's `outline` (face heights, along
/// the face's across axis) at a brim's height (the most, over three neighbouring rows, from
/// the brows to 0.45 face heights above the forehead top) more than beside the face below
/// the brows (the median from 0.15 to 0.5 face heights below them): image-left side first.
/// Hair falls on below a brim's height, a brim overhangs.
pub fn overhang(
    frame: &HeadFrame,
    person: &dyn Fn(u32, u32) -> f32,
    size: (u32, u32),
    outline: &[P2],
    a_brow: f32,
) -> [f32; 2] {
    let step = 1.0 / frame.height;
    let on = |a: f32, b: f32| {
        let p = frame.to_image(a, b);
        if p[0] < 0.0 || p[1] < 0.0 || p[0] >= size.0 as f32 || p[1] >= size.1 as f32 {
            return None;
        }
        Some(person(p[0] as u32, p[1] as u32) >= 0.5)
    };
    // How far beyond the outline the silhouette goes along the row at `a`, on side `s`.
    let extent = |a: f32, s: f32| -> f32 {
        let mut b = 0.0;
        while b < 2.0 && inside(outline, frame.to_image(a, s * b)) {
            b += step;
        }
        let edge = b;
        let (mut last, mut gap) = (edge, 0);
        while b < edge + 1.6 {
            match on(a, s * b) {
                Some(true) => {
                    last = b;
                    gap = 0;
                }
                Some(false) => {
                    gap += 1;
                    if gap > 3 {
                        break;
                    }
                }
                None => break,
            }
            b += step;
        }
        last - edge
    };
    let rows = |lo: f32, hi: f32| {
        let n = ((hi - lo) / (2.0 * step)).ceil().max(1.0) as usize;
        (0..=n).map(move |i| lo + (hi - lo) * i as f32 / n as f32)
    };
    [-1.0f32, 1.0].map(|s| {
        let top: Vec<f32> = rows(a_brow, 0.45).map(|a| extent(a, s)).collect();
        let brim = top
            .windows(3)
            .map(|w| w[0].min(w[1]).min(w[2]))
            .fold(0.0f32, f32::max);
        let mut low: Vec<f32> = rows(a_brow - 0.5, a_brow - 0.15)
            .map(|a| extent(a, s))
            .collect();
        low.sort_by(f32::total_cmp);
        let below = low.get(low.len() / 2).copied().unwrap_or(0.0);
        brim - below
    })
}
