//! Composing the warped garment onto the photo: shading transfer, layering, uncovering.
//!
//! - **Shading**: the photo's luminance over the clothing the person wears now (person mask,
//!   minus face, hair and skin), low-passed by normalised convolution and divided by its mean
//!   under the new garment, multiplies the garment: the person's light and big folds carry
//!   over, the old garment's colour does not. A skirt keeps its own folds (it hangs free of
//!   the legs under it).
//! - **Layering**: the face and the hair above the chin stay in front; the hair found in the
//!   photo ([`find_hair`]: long hair over the shoulders) is a layer over everything, with
//!   its strands' soft edges, and nothing is uncovered under it; hands stay in front of
//!   everything and bare forearms in front of the torso (skin-coloured pixels in the arm's
//!   capsules, the colour sampled from the face).
//! - **Uncovering**: where the old garment showed and the new one does not, the neck's
//!   capsule gets skin (the face's colour, the photo's shading and a rounded falloff across
//!   it); an uncovered arm is bare or layered ([`crate::garment::shade::arm`]: painted with
//!   its outline from the person mask, the hand's own tone and the old sleeve's folds, or the
//!   old sleeve kept under the new one), and so does the chest in a neckline lower than the old collar
//!   (not a jacket's: its opening shows the top under it); the rest near the garment gets
//!   the background continued from outside the person (push–pull fill); below the hem
//!   nothing is invented (it is the person's lower garment).
//! - **Holes**: small gaps ringed by the warped garment (a flat-lay's armpit notch swung
//!   down with the sleeve) are filled with the garment around them ([`crate::garment::warp::holes`]).

use glam::Vec2;
use image::RgbaImage;
use rayon::prelude::*;

use crate::garment::body::frame::{BodyFrame, ARM_VISIBLE};
use crate::garment::body::hair::{find_hair, Hair};
use crate::garment::colour::{skin_likeness, FALLBACK_SKIN};
use crate::garment::geom::{inside, outline_dist, seg_dist, smoothstep};
use crate::garment::label;
use crate::garment::shade::arm::{self, ArmPlan, ArmView, ArmsMode};
use crate::garment::shade::fill::{push_pull, textured};
use crate::garment::shade::skin::{self, FaceLight};
use crate::garment::shade::transfer::shading;
use crate::garment::upper::old_collar;
use crate::garment::warp::holes;
use crate::garment::warp::WarpOutput;
use crate::image_ops::box_blur;

/// How far past a forearm's capsule (a multiple of its radius) old sleeve is still taken
/// away (continued background): a loose old sleeve is wider than the arm.
const ARM_RIM: f32 = 1.4;

/// The part of a hand's capsule, from the wrist (a fraction of wrist → fingertips), where old
/// clothing is an old cuff to take away rather than something the hand holds.
const CUFF_REACH: f32 = 0.3;

/// How near the face's oval (a fraction of the face's width, at least [`FACE_EDGE_MIN_PX`])
/// a pixel is still the face's own edge, never the neck under the jaw: the face mesh's
/// outline lies a few per cent of the face's width from the face's true outline (its
/// landmarks move by that much between detector regions), and the jaw's anti-aliased edge
/// pixels, half skin and half background, lie just outside it.
const FACE_EDGE: f32 = 0.04;

/// The least width (pixels) of the face's edge ([`FACE_EDGE`]).
const FACE_EDGE_MIN_PX: f32 = 1.5;

/// Over a changed pixel, hair of matte up to `.0` takes the strands' own colour, from `.1`
/// on the photo's, and a blend of the two in between.
const HAIR_EDGE: (f32, f32) = (0.25, 0.75);

/// A hair matte from this value up hides what lies behind it.
const HAIR_OPAQUE: f32 = 0.8;

/// A hand or forearm pixel stays in front of the new garment only where at least this
/// share of the pixels around it (within [`SKIN_AREA_RADIUS`] shoulder widths) are skin:
/// a bare forearm is 85–100 % skin over such a window, a leopard print's skin-coloured
/// spots a third to a half.
const SKIN_AREA_SHARE: f32 = 0.6;

/// The window's radius for [`SKIN_AREA_SHARE`], in shoulder widths (about a finger's
/// width on a portrait).
const SKIN_AREA_RADIUS: f32 = 0.025;

/// What [`compose`] did, for the metadata and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ComposeStats {
    /// Photo pixels the garment covers (alpha > 0.5).
    pub covered: usize,
    /// Pixels filled with skin.
    pub skin_filled: usize,
    /// Pixels filled with background.
    pub background_filled: usize,
    /// Pixels kept in front of the garment (face, hair, hands, forearms).
    pub kept_in_front: usize,
    /// Pixels of small enclosed holes in the warped garment filled with it ([`holes`]).
    pub holes_closed: usize,
    /// Pixels of hair ([`find_hair`], alpha > 0.5) kept over what the garment changed.
    pub hair_kept: usize,
    /// How many colour samples taught the hair model (0: no hair found).
    pub hair_samples: usize,
    /// Per arm (image left first): what its uncovered part became, `"bare"` or why it is
    /// layered ([`ArmPlan::reason`]); `None` where the new sleeve uncovered nothing.
    pub arms: [Option<&'static str>; 2],
}

/// The inputs of [`compose`].
#[derive(Debug)]
pub struct Layers<'a> {
    /// The person photo.
    pub photo: &'a RgbaImage,
    /// The person mask at the photo's size (0–1).
    pub person: &'a [f32],
    /// The body frame.
    pub frame: &'a BodyFrame,
    /// The warped garment.
    pub warped: &'a WarpOutput,
    /// How far along the hem lies below the shoulders' midpoint (pixels, along the torso axis).
    pub hem_depth: f32,
    /// The torso's outline on the photo ([`crate::garment::upper::fit::UpperFit::torso_outline`]).
    pub torso_outline: &'a [Vec2],
    /// How far each sleeve reaches along its arm ([`crate::garment::upper::fit::UpperFit::sleeve_reach`]).
    pub sleeve_reach: [f32; 2],
    /// Whether the neckline's opening shows skin (a top or dress worn alone: the old top's
    /// higher collar is taken away) or the top worn under the garment (a jacket).
    pub neckline_skin: bool,
    /// What an arm the new sleeve uncovers becomes ([`ArmsMode`]).
    pub arms: ArmsMode,
}

/// Zones per pixel: arm capsules (with the falloff across the limb), hands, neck.
#[derive(Clone, Copy, Default)]
struct Zone {
    /// In an arm's capsule above the wrist: the distance from its axis over its radius.
    arm: Option<f32>,
    /// The same signed along the body's across axis (for the cylinder's light).
    arm_s: f32,
    /// In a forearm's capsule (elbow to wrist).
    forearm: bool,
    /// In a hand's capsule (wrist onwards).
    hand: bool,
    /// In a hand's capsule but within its first [`CUFF_REACH`] from the wrist, where an old
    /// long sleeve's cuff lies when the pose's wrist point sits a little up the arm.
    cuff: bool,
    /// Just outside a forearm's capsule (up to [`ARM_RIM`] of its radius): an old sleeve wider
    /// than the arm shows here.
    arm_rim: bool,
    /// In the neck's zone ([`skin::neck_zone`]): signed distance across over the neck's
    /// half-width, and how far down from the chin (0 at the chin, 1 at the shoulder line).
    neck: Option<(f32, f32)>,
    /// Inside the torso's outline: the neck's coordinates at any distance across (the
    /// neckline's opening, where the chest beside the neck shows).
    neck_open: Option<(f32, f32)>,
    /// Above the chin line, near the face (hair).
    head: bool,
    /// Below the hem.
    below_hem: bool,
    /// Inside the garment torso's outline.
    torso: bool,
    /// In an arm's capsule past the end of its new sleeve: the arm is in front of the torso.
    bare_arm: bool,
    /// Which arm (0 or 1) the arm, rim and hand fields are about.
    side: u8,
}

fn zone(
    f: &BodyFrame,
    p: Vec2,
    chin: Option<Vec2>,
    hem_depth: f32,
    torso: &[Vec2],
    reach: [f32; 2],
    neck_hw: f32,
) -> Zone {
    let sw = f.shoulder_width;
    let mut z = Zone::default();
    for (k, arm) in f.arms.iter().enumerate() {
        if arm.visibility < ARM_VISIBLE {
            continue;
        }
        let [s, e, w, h] = arm.chain;
        let (du, tu) = seg_dist(p, s, e);
        let (df, tf) = seg_dist(p, e, w);
        // The forearm tapers from the elbow to the wrist.
        let (ru, rf) = (0.15 * sw, (0.12 - 0.035 * tf) * sw);
        let a = (du / ru).min(df / rf);
        if a < 1.0 && z.arm.is_none_or(|b| a < b) {
            z.arm = Some(a);
            z.side = k as u8;
            let (axis_p, r) = if du / ru <= df / rf {
                (s + (e - s) * tu, ru)
            } else {
                (e + (w - e) * tf, rf)
            };
            z.arm_s = ((p - axis_p).dot(f.across) / r).clamp(-1.0, 1.0);
            let upper = s.distance(e);
            let along = if du / ru <= df / rf {
                tu * upper
            } else {
                upper + tf * e.distance(w)
            };
            if along > reach[k] + 0.04 * sw {
                z.bare_arm = true;
            }
        }
        if df < rf {
            z.forearm = true;
        } else if df < ARM_RIM * rf && tf > 0.0 {
            z.arm_rim = true;
            if z.arm.is_none() {
                z.side = k as u8;
            }
        }
        let tip = h + (h - w) * 0.6;
        let (dh, th) = seg_dist(p, w, tip);
        if dh < 0.14 * sw {
            z.hand = true;
            z.cuff |= th < CUFF_REACH;
            if z.arm.is_none() {
                z.side = k as u8;
            }
        }
    }
    let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5;
    z.torso = inside(torso, p);
    if let Some(c) = chin {
        z.neck = skin::neck_zone(f, c, p, neck_hw);
        if z.torso {
            z.neck_open = skin::neck_coords(f, c, p, neck_hw);
        }
        if (p - c).dot(f.down) < 0.0 && (p - c).dot(f.across).abs() < 0.5 * sw {
            z.head = true;
        }
    }
    z.below_hem = (p - mid).dot(f.down) > hem_depth;
    z
}

/// The rectangle [`compose`] works in: the warped garment's coverage, the visible arms and
/// the neck, grown by `margin` (for the shading's low pass and the background fill), clipped
/// to the photo. `[x0, y0, x1, y1)` pixels.
fn working_rect(l: &Layers<'_>, margin: f32) -> [u32; 4] {
    let (w, h) = l.photo.dimensions();
    let mut r = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    let mut add = |p: Vec2, pad: f32| {
        r = [
            r[0].min(p.x - pad),
            r[1].min(p.y - pad),
            r[2].max(p.x + pad),
            r[3].max(p.y + pad),
        ];
    };
    let wu = w as usize;
    for (i, px) in l.warped.rgba.iter().enumerate() {
        if px[3] > 0 {
            add(Vec2::new((i % wu) as f32, (i / wu) as f32), 0.0);
        }
    }
    let sw = l.frame.shoulder_width;
    for arm in &l.frame.arms {
        if arm.visibility < ARM_VISIBLE {
            continue;
        }
        let [_, _, wr, hand] = arm.chain;
        for p in arm.chain {
            add(p, 0.2 * sw);
        }
        add(hand + (hand - wr) * 0.6, 0.2 * sw);
    }
    if let Some(c) = l.frame.chin() {
        add(c, 0.2 * sw);
    }
    for p in &l.frame.face_oval {
        add(*p, 0.0);
    }
    if r[0] > r[2] {
        return [0, 0, 0, 0];
    }
    let clip = |v: f32, hi: u32| (v.max(0.0) as u32).min(hi);
    [
        clip((r[0] - margin).floor(), w),
        clip((r[1] - margin).floor(), h),
        clip((r[2] + margin).ceil() + 1.0, w),
        clip((r[3] + margin).ceil() + 1.0, h),
    ]
}

/// Composes the warped garment over the photo (see the module docs). Only the rectangle
/// around the garment, the arms and the neck is worked on; the rest of the photo is kept.
pub fn compose(l: &Layers<'_>) -> (RgbaImage, ComposeStats) {
    let (w, h) = l.photo.dimensions();
    let sw = l.frame.shoulder_width;
    let [x0, y0, x1, y1] = working_rect(l, 0.35 * sw + 8.0);
    if x1 <= x0 || y1 <= y0 {
        return (l.photo.clone(), ComposeStats::default());
    }
    if (x1 - x0) * (y1 - y0) >= w * h * 9 / 10 {
        let mut warped = l.warped.clone();
        let closed = close_holes(&mut warped, l.frame, Vec2::ZERO);
        let (out, stats) = compose_in(
            &Layers {
                warped: &warped,
                ..*l
            },
            Vec2::ZERO,
        );
        return (
            out,
            ComposeStats {
                holes_closed: closed,
                ..stats
            },
        );
    }
    let (cw, ch) = (x1 - x0, y1 - y0);
    let crop = image::imageops::crop_imm(l.photo, x0, y0, cw, ch).to_image();
    let idx = |x: u32, y: u32| ((y0 + y) * w + x0 + x) as usize;
    let person: Vec<f32> = (0..ch)
        .flat_map(|y| (0..cw).map(move |x| (x, y)))
        .map(|(x, y)| l.person[idx(x, y)])
        .collect();
    let mut warped = WarpOutput {
        width: cw,
        height: ch,
        rgba: (0..ch)
            .flat_map(|y| (0..cw).map(move |x| (x, y)))
            .map(|(x, y)| l.warped.rgba[idx(x, y)])
            .collect(),
        top: (0..ch)
            .flat_map(|y| (0..cw).map(move |x| (x, y)))
            .map(|(x, y)| l.warped.top[idx(x, y)])
            .collect(),
    };
    let closed = close_holes(&mut warped, l.frame, Vec2::new(x0 as f32, y0 as f32));
    let local = Layers {
        photo: &crop,
        person: &person,
        warped: &warped,
        ..*l
    };
    let (part, stats) = compose_in(&local, Vec2::new(x0 as f32, y0 as f32));
    let mut out = l.photo.clone();
    image::imageops::replace(&mut out, &part, i64::from(x0), i64::from(y0));
    (
        out,
        ComposeStats {
            holes_closed: closed,
            ..stats
        },
    )
}

/// Closes the garment's small enclosed holes ([`holes`]) on `warped`, a crop whose top-left
/// pixel is `offset` on the photo, except where a hole reaches into the neck (a neckline's
/// opening ringed by a ghost mannequin's back collar is real) or the face. Returns the
/// pixels filled.
fn close_holes(warped: &mut WarpOutput, f: &BodyFrame, offset: Vec2) -> usize {
    let sw = f.shoulder_width;
    let wu = warped.width as usize;
    let max_area = (0.15 * sw * 0.15 * sw).max(16.0) as usize;
    let chin = f.chin();
    let neck_hw = skin::neck_base(f);
    let at = |i: usize| Vec2::new((i % wu) as f32, (i / wu) as f32) + offset;
    let holes: Vec<Vec<usize>> = holes::enclosed(warped, max_area)
        .into_iter()
        .filter(|hole| {
            hole.iter().all(|&i| {
                let p = at(i);
                let neck = chin
                    .and_then(|c| skin::neck_zone(f, c, p, neck_hw))
                    .is_some_and(|(s, t)| t < 1.2 && s.abs() < 1.0);
                !neck && !inside(&f.face_oval, p)
            })
        })
        .collect();
    holes::fill(warped, &holes)
}

/// [`compose`] over `l.photo`, a crop of the photo whose top-left pixel is `offset` on it
/// (the body frame and the outlines are in the photo's coordinates), in four steps: where
/// each pixel lies on the body ([`Maps::measure`]), the garment's alpha after layering
/// ([`layered_alpha`]), what the new garment uncovers ([`uncovered`]), and the paint
/// ([`paint`]).
fn compose_in(l: &Layers<'_>, offset: Vec2) -> (RgbaImage, ComposeStats) {
    let maps = Maps::measure(l, offset);
    let mut stats = ComposeStats::default();
    let alpha = layered_alpha(l, &maps, &mut stats);
    stats.covered = alpha.iter().filter(|&&a| a > 0.5).count();
    let not_clothing: Vec<bool> = (0..maps.face.len())
        .map(|i| maps.face[i] || maps.hair.at(i) > 0.5)
        .collect();
    let ratio = shading(
        l.photo,
        l.person,
        &not_clothing,
        &maps.skin_p,
        &alpha,
        l.frame.shoulder_width,
    );
    let bared = uncovered(l, &maps, &alpha, &mut stats);
    let out = paint(l, &maps, &alpha, &ratio, &bared, &mut stats);
    stats.hair_samples = maps.hair.samples;
    (out, stats)
}

/// Where each pixel of the crop lies on the body, and what the photo shows there.
struct Maps {
    /// The crop's top-left pixel on the photo.
    offset: Vec2,
    /// The skin colour (the face's, else [`FALLBACK_SKIN`]).
    skin: [f32; 3],
    /// The neck's half-width at its base ([`skin::neck_base`]).
    neck_hw: f32,
    /// Per pixel: its zone on the body.
    zones: Vec<Zone>,
    /// Per pixel: how skin-like the photo is there.
    skin_p: Vec<f32>,
    /// Per pixel: inside the face's oval.
    oval: Vec<bool>,
    /// How far outside the face's oval (pixels) its edge reaches ([`FACE_EDGE`]).
    face_edge: f32,
    /// Per pixel: the face or the head zone (kept in front, never shaded from).
    face: Vec<bool>,
    /// The hair found in the photo (a layer over everything).
    hair: Hair,
    /// Per arm: bare or layered, and how a bare one is painted.
    arms: [ArmPlan; 2],
}

impl Maps {
    fn measure(l: &Layers<'_>, offset: Vec2) -> Maps {
        let (w, h) = l.photo.dimensions();
        let (wu, hu) = (w as usize, h as usize);
        let f = l.frame;
        let chin = f.chin();
        let skin = f.skin.unwrap_or(FALLBACK_SKIN);
        let neck_hw = skin::neck_base(f);
        let zones: Vec<Zone> = (0..wu * hu)
            .into_par_iter()
            .map(|i| {
                let p = Vec2::new((i % wu) as f32, (i / wu) as f32) + offset;
                zone(
                    f,
                    p,
                    chin,
                    l.hem_depth,
                    l.torso_outline,
                    l.sleeve_reach,
                    neck_hw,
                )
            })
            .collect();
        let skin_p: Vec<f32> = (0..wu * hu)
            .into_par_iter()
            .map(|i| skin_likeness(px(l.photo, i), skin))
            .collect();
        let oval: Vec<bool> = (0..wu * hu)
            .into_par_iter()
            .map(|i| {
                let p = Vec2::new((i % wu) as f32, (i / wu) as f32) + offset;
                inside(&f.face_oval, p)
            })
            .collect();
        let face: Vec<bool> = (0..wu * hu).map(|i| zones[i].head || oval[i]).collect();
        let across = f.face_oval.iter().map(|p| p.dot(f.across));
        let (lo, hi) = across.fold((f32::MAX, f32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let face_edge = (FACE_EDGE * (hi - lo).max(0.0)).max(FACE_EDGE_MIN_PX);
        let hair = find_hair(l.photo, l.person, f, offset);
        let view = ArmView {
            photo: l.photo,
            person: l.person,
            skin_p: &skin_p,
            offset,
            shoulder_width: f.shoulder_width,
            torso: l.torso_outline,
            frame: f,
        };
        let sw = f.shoulder_width;
        let arms = [0, 1].map(|k| {
            ArmPlan::plan(l.arms, &f.arms[k], &view, |t| {
                // The capsules' radii ([`zone`]): the upper arm's, then the tapering forearm's.
                let upper = f.arms[k].chain[0].distance(f.arms[k].chain[1]);
                let total = upper + f.arms[k].chain[1].distance(f.arms[k].chain[2]);
                let split = upper / total.max(1.0);
                if t <= split {
                    0.15 * sw
                } else {
                    (0.12 - 0.035 * (t - split) / (1.0 - split).max(1e-3)) * sw
                }
            })
        });
        Maps {
            offset,
            skin,
            neck_hw,
            zones,
            skin_p,
            oval,
            face_edge,
            face,
            hair,
            arms,
        }
    }
}

/// The photo's colour at pixel index `i` (sRGB 0–255).
fn px(photo: &RgbaImage, i: usize) -> [f32; 3] {
    let p = photo.as_raw();
    [
        f32::from(p[4 * i]),
        f32::from(p[4 * i + 1]),
        f32::from(p[4 * i + 2]),
    ]
}

/// The garment's alpha after layering: zero where the face, a hand, or a bare forearm over
/// the torso stays in front (counted in `stats`; skin all over, [`SKIN_AREA_SHARE`]),
/// softened by a pixel so kept regions have no jagged rim.
fn layered_alpha(l: &Layers<'_>, m: &Maps, stats: &mut ComposeStats) -> Vec<f32> {
    let (wu, hu) = (l.photo.width() as usize, l.photo.height() as usize);
    // A hand or forearm in front is skin all over: skin-coloured spots of a print (a
    // leopard coat's) are not, and kept one by one they showed through the new garment.
    let skin_area: Vec<f32> = m
        .skin_p
        .iter()
        .map(|&p| if p > 0.5 { 1.0 } else { 0.0 })
        .collect();
    let radius = ((SKIN_AREA_RADIUS * l.frame.shoulder_width) as usize).max(2);
    let dense = box_blur(&skin_area, wu, hu, radius);
    let skin = |i: usize| m.skin_p[i] > 0.5 && dense[i] >= SKIN_AREA_SHARE;
    let alpha: Vec<f32> = (0..wu * hu)
        .map(|i| {
            let a = f32::from(l.warped.rgba[i][3]) / 255.0;
            if a <= 0.0 {
                return 0.0;
            }
            let z = m.zones[i];
            let front = m.face[i]
                || (z.hand && skin(i))
                || (z.forearm && label::is_body(l.warped.top[i]) && skin(i))
                || (z.bare_arm && label::is_body(l.warped.top[i]));
            if front {
                stats.kept_in_front += 1;
                0.0
            } else {
                a
            }
        })
        .collect();
    let soft = box_blur(&alpha, wu, hu, 1);
    alpha
        .iter()
        .zip(&soft)
        .map(|(&a, &s)| a.min(s * 1.5).min(1.0))
        .collect::<Vec<f32>>()
}

/// What the new garment uncovers: per pixel, what goes there and how much of it.
struct Bared {
    /// 0 nothing, [`SKIN`] skin, [`BACKGROUND`] the background continued.
    fill: Vec<u8>,
    /// How bare the pixel is (0–1): the old clothing's share that the fill replaces.
    bare: Vec<f32>,
}

/// [`Bared::fill`]: skin.
const SKIN: u8 = 1;
/// [`Bared::fill`]: the background continued.
const BACKGROUND: u8 = 2;

/// Old clothing the new garment leaves bare: skin in the arms' and the neck's capsules (and
/// the neckline's opening), the background near the garment elsewhere; then an old collar
/// above the chin line ([`old_collar::climb`]).
fn uncovered(l: &Layers<'_>, m: &Maps, alpha: &[f32], stats: &mut ComposeStats) -> Bared {
    let (wu, hu) = (l.photo.width() as usize, l.photo.height() as usize);
    let f = l.frame;
    let sw = f.shoulder_width;
    let near_garment = {
        let cov: Vec<f32> = alpha
            .iter()
            .map(|&a| if a > 0.3 { 1.0 } else { 0.0 })
            .collect();
        box_blur(&cov, wu, hu, ((0.3 * sw) as usize).max(2))
    };
    let mut fill = vec![0u8; wu * hu];
    let mut bare = vec![0.0f32; wu * hu];
    for i in 0..wu * hu {
        let z = m.zones[i];
        // Nothing is uncovered under hair: it stays as it is.
        if m.hair.at(i) > 0.5 {
            continue;
        }
        let old = l.person[i] * (1.0 - m.skin_p[i]) * (1.0 - alpha[i]);
        // The neck continues up under the jaw beside the chin (outside the face and its
        // edge, where the photo shows no skin already).
        let under_jaw = z.neck.is_some_and(|(s, t)| t < 0.0 && s.abs() < 1.0)
            && !m.oval[i]
            && m.skin_p[i] < 0.5
            && outline_dist(
                &f.face_oval,
                Vec2::new((i % wu) as f32, (i / wu) as f32) + m.offset,
            ) > m.face_edge;
        // Inside the torso's outline only the neckline's opening is uncovered: the chest
        // below a collar lower than the old one (never a jacket's, which shows the top
        // under it).
        let opening = l.neckline_skin && z.neck_open.is_some() && old > 0.3;
        if (m.face[i] && !under_jaw) || (z.hand && !z.cuff) || (z.torso && !z.bare_arm && !opening)
        {
            continue;
        }
        // The neck between the chin and the new collar is skin whatever showed there (an old
        // collar is often as light as pale skin), feathered along the neck's outline.
        if (z.neck.is_some() || opening) && z.arm.is_none() && alpha[i] < 0.5 && l.person[i] > 0.3 {
            fill[i] = SKIN;
            bare[i] = 1.0;
            continue;
        }
        if old < 0.3 {
            continue;
        }
        // A layered arm keeps its old sleeve (and what the sleeve's rim covers).
        let on_arm = z.arm.is_some() || z.cuff || z.arm_rim;
        if on_arm && m.arms[z.side as usize].layered {
            stats.arms[z.side as usize] = Some(m.arms[z.side as usize].reason);
            continue;
        }
        if z.arm.is_some() || z.cuff {
            fill[i] = SKIN;
        } else if z.arm_rim || (!z.below_hem && near_garment[i] > 0.001) {
            fill[i] = BACKGROUND;
        } else {
            continue;
        }
        bare[i] = old;
    }
    let head: Vec<bool> = m.zones.iter().map(|z| z.head).collect();
    let in_neck: Vec<bool> = m
        .zones
        .iter()
        .map(|z| z.neck.is_some_and(|(s, _)| s.abs() < 1.0))
        .collect();
    old_collar::climb(
        &old_collar::Climb {
            photo: l.photo,
            person: l.person,
            head: &head,
            neck: &in_neck,
            oval: &m.oval,
            skin_p: &m.skin_p,
            alpha,
            skin: m.skin,
        },
        f.chin().map(|c| c - m.offset),
        f.down,
        sw,
        &mut fill,
        &mut bare,
    );
    for (i, (f, b)) in fill.iter_mut().zip(bare.iter_mut()).enumerate() {
        let hair = m.hair.at(i);
        if hair > 0.5 {
            *f = 0;
        }
        *b *= 1.0 - hair;
    }
    Bared { fill, bare }
}

/// How the face lights the skin the garment uncovers.
struct SkinLight {
    /// The face's light, when it could be measured.
    face: Option<FaceLight>,
    /// The direction the light comes from.
    dir: Vec2,
    /// The neck's own colour where it shows, else a shade of the face's.
    neck: [f32; 3],
}

/// The result: the uncovered pixels filled (skin or background), then the garment over them,
/// shaded by `ratio` (a skirt keeps its own folds) and blended with the layered `alpha`.
fn paint(
    l: &Layers<'_>,
    m: &Maps,
    alpha: &[f32],
    ratio: &[f32],
    b: &Bared,
    stats: &mut ComposeStats,
) -> RgbaImage {
    let (wu, hu) = (l.photo.width() as usize, l.photo.height() as usize);
    let f = l.frame;
    let face_light = FaceLight::measure(l.photo, m.offset, f, m.skin);
    let light = SkinLight {
        face: face_light,
        dir: face_light.map_or(Vec2::Y, |fl| fl.direction()),
        neck: skin::neck_colour(l.photo, m.offset, f, m.skin).unwrap_or(m.skin.map(|v| v * 0.95)),
    };
    // A bare arm's pixels: where across its silhouette they lie, and the old sleeve's folds.
    let on_bare_arm = |i: usize| {
        let z = m.zones[i];
        b.fill[i] == SKIN && z.neck.is_none() && (z.arm.is_some() || z.cuff)
    };
    let arm_across: Vec<f32> = (0..wu * hu)
        .map(|i| {
            if !on_bare_arm(i) {
                return 0.0;
            }
            let p = Vec2::new((i % wu) as f32, (i / wu) as f32) + m.offset;
            m.arms[m.zones[i].side as usize]
                .shape
                .across(p)
                .unwrap_or(0.0)
        })
        .collect();
    let sleeve: Vec<bool> = (0..wu * hu)
        .map(|i| on_bare_arm(i) && b.bare[i] > 0.5)
        .collect();
    let sides: Vec<u8> = m.zones.iter().map(|z| z.side).collect();
    let folds = arm::folds(l.photo, &sleeve, &sides, f.shoulder_width);
    for (k, st) in stats.arms.iter_mut().enumerate() {
        if st.is_none() && (0..wu * hu).any(|i| sleeve[i] && sides[i] as usize == k) {
            *st = Some("bare");
        }
    }
    // Skin edges blend into the background where the old garment reached beyond the body.
    let behind_skin = |i: usize| {
        let z = m.zones[i];
        let arm_edge = if on_bare_arm(i) {
            arm_across[i].abs()
        } else {
            z.arm.unwrap_or(0.0)
        };
        let edge = z.neck.map_or(arm_edge, |n| n.0.abs());
        b.fill[i] == SKIN && !z.torso && edge > 0.5 && l.person[i] * (1.0 - m.skin_p[i]) > 0.3
    };
    let background = if b.fill.contains(&BACKGROUND) || (0..wu * hu).any(behind_skin) {
        Some(push_pull(l.photo, l.person))
    } else {
        None
    };
    // Where the background shows, the wall's or the floor's own texture.
    let ground = background.as_ref().map(|bg| {
        textured(
            l.photo,
            bg,
            |i| b.fill[i] == BACKGROUND && b.bare[i] > 0.0 && alpha[i] < 0.99,
            |i| l.person[i] < 0.2,
        )
    });
    let strands = m.hair.strand_colour(l.photo, f.shoulder_width);
    let mut out = l.photo.clone();
    let raw = out.as_mut();
    for i in 0..wu * hu {
        let mut c = px(l.photo, i);
        match b.fill[i] {
            SKIN => {
                if let (true, Some(bg)) = (behind_skin(i), &background) {
                    c = bg[i];
                }
                let arm = ArmPaint {
                    across: arm_across[i],
                    fold: folds[i],
                    bare: b.bare[i],
                };
                c = skin_pixel(l, m, &light, ratio[i], arm, i, c);
                stats.skin_filled += 1;
            }
            BACKGROUND => {
                if let Some(bg) = &ground {
                    let k = smoothstep(0.0, 0.6, b.bare[i]);
                    for ch in 0..3 {
                        c[ch] = c[ch] * (1.0 - k) + bg[i][ch] * k;
                    }
                    stats.background_filled += 1;
                }
            }
            _ => {}
        }
        let a = alpha[i];
        if a > 0.0 {
            let g = l.warped.rgba[i];
            let ga = f32::from(g[3]).max(1.0);
            for ch in 0..3 {
                // Unpremultiply, shade, blend with the layered alpha.
                // A skirt hangs free of the legs: it keeps its own folds, not theirs.
                let shade = if l.warped.top[i] == label::SKIRT {
                    1.0
                } else {
                    ratio[i]
                };
                let col = f32::from(g[ch]) / ga * 255.0 * shade;
                c[ch] = c[ch] * (1.0 - a) + col * a;
            }
        }
        let photo_c = px(l.photo, i);
        // Dense hair hides what is behind it: a matte from HAIR_OPAQUE up is all hair (the
        // guided filter's matte falls short inside strands that let little through).
        let hair = (m.hair.at(i) / HAIR_OPAQUE).min(1.0);
        if hair > 0.0 && c != photo_c {
            // The hair over what changed: the photo where it is mostly hair, the strands'
            // own colour (not the old garment's behind them) at its soft edge, between the
            // two in between (a strand's local mean is lighter than the strand itself where
            // the hair is lit unevenly: taken for every pixel under 0.95, it lightened hair
            // that a garment's changed outline now lies under).
            if hair > 0.5 {
                stats.hair_kept += 1;
            }
            let t = smoothstep(HAIR_EDGE.0, HAIR_EDGE.1, hair);
            let front = strands.as_ref().map_or(photo_c, |s| {
                [0, 1, 2].map(|ch| s[i][ch] * (1.0 - t) + photo_c[ch] * t)
            });
            for ch in 0..3 {
                c[ch] = c[ch] * (1.0 - hair) + front[ch] * hair;
            }
        }
        for ch in 0..3 {
            raw[4 * i + ch] = c[ch].round().clamp(0.0, 255.0) as u8;
        }
    }
    out
}

/// A bare arm's pixel as [`skin_pixel`] paints it.
#[derive(Clone, Copy)]
struct ArmPaint {
    /// Across the arm's silhouette: 0 on its centre line, ±1 on its outline.
    across: f32,
    /// The old sleeve's light and folds there ([`arm::folds`]).
    fold: f32,
    /// How bare the pixel is (the old clothing's share the skin replaces).
    bare: f32,
}

/// Skin over the colour `c` of pixel `i`: the neck as the face's light
/// continued down a soft cylinder with the jaw's shadow; an arm in the tone of its own hand,
/// shaded by the old sleeve's folds and a soft cylinder, inside its outline from the person
/// mask; each with the skin's grain.
fn skin_pixel(
    l: &Layers<'_>,
    m: &Maps,
    light: &SkinLight,
    ratio: f32,
    arm_paint: ArmPaint,
    i: usize,
    mut c: [f32; 3],
) -> [f32; 3] {
    let wu = l.photo.width() as usize;
    let f = l.frame;
    let sw = f.shoulder_width;
    let offset = m.offset;
    let z = m.zones[i];
    let (x, y) = ((i % wu) as u32, (i / wu) as u32);
    let p = Vec2::new(x as f32, y as f32) + offset;
    let grain = 1.0 + 0.012 * skin::grain(x + offset.x as u32, y + offset.y as u32);
    let (base, shade, k) = if let (Some((s, t)), None) = (z.neck.or(z.neck_open), z.arm) {
        // The neck: the face's light continued, a soft cylinder under the chin
        // fading into the chest, the jaw's shadow, a soft outline.
        let round = s.clamp(-1.0, 1.0) * 0.85 * (1.0 - smoothstep(0.4, 1.0, t));
        let cyl = skin::cylinder(round, light.dir) / skin::cylinder(0.0, light.dir);
        let jaw = 0.7 + 0.3 * smoothstep(0.0, 0.4, t);
        let lit = light.face.map_or(1.0, |fl| fl.at(p, f.across));
        let hw = skin::neck_half_width(t, sw, m.neck_hw);
        let fe = (0.05 * sw / hw).max(0.08);
        // Inside the torso's outline the opening is all body: no outline.
        let outline = if z.torso {
            1.0
        } else {
            1.0 - smoothstep(1.0 - fe, 1.0 + fe, s.abs())
        };
        let k = outline
            * smoothstep(-0.45, -0.3, t)
            // The person's own neck, where it shows, stays.
            * (1.0 - 0.85 * m.skin_p[i] * (1.0 - smoothstep(0.2, 0.5, t)));
        (light.neck, ratio.clamp(0.9, 1.08) * cyl * jaw * lit, k)
    } else {
        // An arm: its own hand's tone, the old sleeve's folds and a soft cylinder lit
        // from the face's side, inside its outline and the person's.
        let plan = &m.arms[z.side as usize];
        let across = arm_paint.across;
        let cyl =
            skin::cylinder(across.clamp(-1.0, 1.0), light.dir) / skin::cylinder(0.0, light.dir);
        let k = smoothstep(0.0, 0.6, arm_paint.bare)
            * arm::inside_outline(across)
            * smoothstep(0.15, 0.6, l.person[i]);
        let grain = 1.0 + 0.025 * skin::grain(x + offset.x as u32, y + offset.y as u32);
        (
            plan.tone.unwrap_or(m.skin),
            arm_paint.fold * cyl.sqrt() * grain,
            k,
        )
    };
    for ch in 0..3 {
        c[ch] = c[ch] * (1.0 - k) + base[ch] * shade * grain * k;
    }
    c
}
