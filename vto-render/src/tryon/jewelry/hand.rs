//! Rings and bracelets, worn on a hand that [`crate::vision::hand`] found.
//!
//! # Which hand
//! The subject's **left** hand when both show (where a ring or a bangle is usually shown and
//! worn), else the hand that shows. The side comes from the body when its wrists are seen
//! (the hand's wrist clearly nearer pose keypoint 15, the left wrist, than 16, the right, or
//! within a knuckle span of the only one seen), else from the hand model's handedness.
//!
//! # The hand in 3D
//! Each landmark is put at the depth where the hand's scale holds: the knuckles' span (index
//! MCP 5 to pinky MCP 17, with the model's depth) is [`KNUCKLE_SPAN_CM`], which gives pixels
//! per centimetre and so the hand's distance from the photo camera; the landmarks' own depths
//! (same pixel scale) go on top. The back of the hand is the palm's normal (wrist 0, index
//! MCP, pinky MCP), signed by the side: it is where a ring's stone (+Z) looks.
//!
//! # Ring
//! On the ring finger, [`RING_ALONG`] of the way from its MCP (13) to its PIP (14), the band
//! round the finger's axis (MCP → PIP). The finger's width is [`FINGER_OF_SPACING`] × the mean
//! distance from the ring MCP to its neighbours (middle 9, pinky 17). The ring is sized to the
//! finger: the band's inside (the least distance of the model's vertices from its Y axis)
//! fits the finger's width plus 2 %. Occluders: the ring finger (an elliptic cylinder from
//! its MCP to past its PIP) hides the band's back; the middle and little fingers hide the
//! band's sides where they press against it.
//!
//! # Bracelet
//! At the wrist (landmark 0), moved [`BRACELET_UP_FOREARM`] wrist widths up the forearm. The
//! forearm's axis runs from the body's elbow (pose 13 / 14 of that side) to its wrist when
//! both are seen and that wrist is the hand's own (within [`WRIST_AGREES`] palm lengths of
//! landmark 0), else along the hand (middle MCP 9 → wrist 0). The wrist's width is measured
//! across the forearm on the body's person mask when the mask gives one within reason, else
//! [`WRIST_OF_KNUCKLES`] × the knuckles' span. The bangle's inside is [`BANGLE_EASE`] × the
//! wrist's half-width, and it hangs with gravity: its inner top edge rests on the wrist. The
//! wrist (an elliptic cylinder, [`WRIST_DEPTH`] as deep as wide) hides the back half.

use image::RgbaImage;
use serde_json::json;

use super::kind::{JewelryKind, KindSource};
use crate::math::{Vec2, Vec3};
use crate::product::pose::Pose;
use crate::product::Product;
use crate::raster::{RasterStats, Scene, Transparency};
use crate::scene::camera::PhotoCamera;
use crate::scene::{light, CameraMesh, SceneBuilder};
use crate::tryon::{Options, Placed, TryOnError};
use crate::vision::{Body, Hand, Handedness, Mask};

/// The knuckles' span (index MCP to pinky MCP), cm: sets the hand's scale.
pub const KNUCKLE_SPAN_CM: f32 = 6.0;
/// Where the ring sits between the ring finger's MCP (0) and PIP (1).
pub const RING_ALONG: f32 = 0.42;
/// The ring finger's width over the mean spacing of its MCP to its neighbours'.
pub const FINGER_OF_SPACING: f32 = 0.85;
/// The wrist's width over the knuckles' span, when the person mask does not measure it.
pub const WRIST_OF_KNUCKLES: f32 = 0.95;
/// The wrist's depth over its width.
pub const WRIST_DEPTH: f32 = 0.7;
/// The bangle's inner radius over the wrist's half-width.
pub const BANGLE_EASE: f32 = 1.12;
/// The bracelet's centre lies this many wrist widths up the forearm from landmark 0.
pub const BRACELET_UP_FOREARM: f32 = 0.22;
/// The body's wrist keypoint is taken as the hand's own when it lies within this many palm
/// lengths (hand landmarks 0 → 9) of the hand's wrist landmark.
pub const WRIST_AGREES: f32 = 0.75;
/// Least presence for a pose keypoint (elbow, wrist) to be used.
pub const POSE_PRESENCE: f32 = 0.5;

/// Where the side of the chosen hand came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideSource {
    /// The body's wrists (pose keypoints 15 / 16).
    Body,
    /// The hand model's handedness.
    HandModel,
}

/// Where a ring or bracelet landed.
#[derive(Debug, Clone, PartialEq)]
pub struct HandWorn {
    /// The subject's hand it is on.
    pub side: Handedness,
    /// Where that came from.
    pub side_source: SideSource,
    /// The anchor (the band's centre), pixels.
    pub anchor_px: Vec2,
    /// The finger's (ring) or wrist's (bracelet) width, pixels.
    pub width_px: f32,
    /// The wrist width came from the person mask (bracelets).
    pub width_from_mask: bool,
    /// The forearm's axis came from the body's elbow (bracelets).
    pub forearm_from_elbow: bool,
    /// Asset units → centimetres.
    pub k: f32,
    /// Pixels per centimetre at the hand.
    pub px_per_cm: f32,
}

/// What was decided for a ring or a bracelet.
#[derive(Debug, Clone, PartialEq)]
pub struct HandJewel {
    /// The kind and where it came from.
    pub kind: (JewelryKind, KindSource),
    /// How the model was turned into the band's canonical pose (finger along Y, the
    /// setting toward +Z) and recentred on its hole ([`super::canonical`]).
    pub pose: Pose,
    /// Where it landed.
    pub worn: HandWorn,
}

/// The hand that wears the jewel (see the module docs) and the source of its side.
pub fn choose_hand<'a>(
    hands: &'a [Hand],
    body: Option<&Body>,
) -> Option<(&'a Hand, Handedness, SideSource)> {
    let sided: Vec<(&Hand, Handedness, SideSource)> =
        hands.iter().map(|h| side_of(h, body)).collect();
    sided
        .iter()
        .find(|s| s.1 == Handedness::Left)
        .or(sided.first())
        .copied()
}

fn side_of<'a>(hand: &'a Hand, body: Option<&Body>) -> (&'a Hand, Handedness, SideSource) {
    let wrist = lm2(hand, 0);
    let span = (lm2(hand, 5) - lm2(hand, 17)).length().max(1.0);
    let near = |i: usize| -> Option<f32> {
        let k = body?.keypoints.get(i)?;
        (k.presence >= POSE_PRESENCE).then(|| (Vec2::new(k.x, k.y) - wrist).length())
    };
    let by_body = match (near(15), near(16)) {
        (Some(l), Some(r)) if l.min(r) < 1.5 * span && (l - r).abs() > 0.3 * span => {
            Some(if l < r {
                Handedness::Left
            } else {
                Handedness::Right
            })
        }
        (Some(l), None) if l < span => Some(Handedness::Left),
        (None, Some(r)) if r < span => Some(Handedness::Right),
        _ => None,
    };
    match by_body {
        Some(side) => (hand, side, SideSource::Body),
        None => (hand, hand.handedness, SideSource::HandModel),
    }
}

fn lm2(hand: &Hand, i: usize) -> Vec2 {
    hand.landmarks
        .get(i)
        .map_or(Vec2::ZERO, |p| Vec2::new(p[0], p[1]))
}

/// The hand's landmarks in camera space (see the module docs), and pixels per cm.
fn hand_points(hand: &Hand, camera: &PhotoCamera) -> Option<(Vec<Vec3>, f32)> {
    if hand.landmarks.len() < 21 {
        return None;
    }
    let p = |i: usize| Vec3::from(hand.landmarks[i]);
    let span = (p(5) - p(17)).length();
    if !(span.is_finite() && span > 2.0) {
        return None;
    }
    let ppc = span / KNUCKLE_SPAN_CM;
    let depth = camera.focal / ppc;
    let z0 = hand.landmarks[0][2];
    let pts = hand
        .landmarks
        .iter()
        .map(|l| camera.unproject(Vec2::new(l[0], l[1]), depth + (l[2] - z0) / ppc))
        .collect();
    Some((pts, ppc))
}

/// The back of the hand's unit normal in camera space.
fn dorsal(pts: &[Vec3], side: Handedness) -> Vec3 {
    let n = (pts[5] - pts[0]).cross(pts[17] - pts[0]);
    // For a right hand, (index − wrist) × (pinky − wrist) points out of the palm.
    let n = match side {
        Handedness::Right => -n,
        Handedness::Left => n,
    };
    n.normalize_or(Vec3::NEG_Z)
}

/// An orthonormal frame with `y` along `axis` and `z` as close to `front` as it can be.
fn frame(axis: Vec3, front: Vec3) -> [Vec3; 3] {
    let y = axis.normalize_or(Vec3::Y);
    let z = front - y * front.dot(y);
    let z = if z.length() < 1e-3 {
        y.any_orthonormal_vector()
    } else {
        z.normalize()
    };
    [y.cross(z), y, z]
}

/// The least distance of the model's vertices from its Y axis (the band's inside), asset
/// units; `None` for a model with no extent around Y.
pub fn inner_radius(product: &Product) -> Option<f32> {
    let mut r = f32::MAX;
    let mut outer = 0.0f32;
    for p in &product.primitives {
        for q in &p.positions {
            let d = (q[0] * q[0] + q[2] * q[2]).sqrt();
            r = r.min(d);
            outer = outer.max(d);
        }
    }
    (r.is_finite() && outer > 0.0 && r > 0.05 * outer).then_some(r)
}

/// A camera-space elliptic cylinder from `a` to `b` with radii `rx` along `x` and `rz` along
/// `z` (both perpendicular to `b − a`): a depth-only occluder.
fn cylinder(a: Vec3, b: Vec3, x: Vec3, z: Vec3, rx: f32, rz: f32) -> CameraMesh {
    const SIDES: u32 = 24;
    let mut m = CameraMesh::default();
    for end in [a, b] {
        for i in 0..SIDES {
            let t = i as f32 / SIDES as f32 * std::f32::consts::TAU;
            m.push_vertex(
                end + x * rx * t.cos() + z * rz * t.sin(),
                Vec3::NEG_Z,
                [0.0; 2],
                0.0,
            );
        }
    }
    for i in 0..SIDES {
        let k = (i + 1) % SIDES;
        m.triangles.push([i, SIDES + i, k, 0]);
        m.triangles.push([k, SIDES + i, SIDES + k, 0]);
    }
    m
}

/// The wrist's width across the forearm on the person mask, pixels: from `centre`, the
/// distance to where the mask drops under 0.5 both ways along `across`; `None` when either
/// edge is not found within `max`.
pub fn mask_width(mask: &Mask, centre: Vec2, across: Vec2, max: f32) -> Option<f32> {
    let inside = |p: Vec2| -> Option<bool> {
        let (x, y) = (p.x.round(), p.y.round());
        if x < 0.0 || y < 0.0 || x >= mask.width as f32 || y >= mask.height as f32 {
            return None;
        }
        Some(mask.data[(y as u32 * mask.width + x as u32) as usize] > 0.5)
    };
    if inside(centre) != Some(true) {
        return None;
    }
    let edge = |dir: Vec2| -> Option<f32> {
        let mut t = 0.0;
        while t < max {
            t += 1.0;
            if !inside(centre + dir * t)? {
                return Some(t);
            }
        }
        None
    };
    Some(edge(across)? + edge(-across)?)
}

/// Places a ring or bracelet (`kind`) on the chosen hand of `hands` and builds the scene.
pub fn prepare(
    photo: &RgbaImage,
    hands: &[Hand],
    body: Option<&Body>,
    product: &Product,
    kind: (JewelryKind, KindSource),
    options: &Options,
) -> Result<Placed<HandJewel>, TryOnError> {
    let what = kind.0.as_str();
    let (canonical, pose) = super::canonical(product, kind.0);
    let product = &canonical;
    let Some((hand, side, side_source)) = choose_hand(hands, body) else {
        return Err(TryOnError::NotFound(format!(
            "no hand was found in the person photo; a {what} is worn on a hand: send a photo \
             where a hand shows"
        )));
    };
    let (w, h) = (photo.width(), photo.height());
    let camera = PhotoCamera::new(w, h);
    let (pts, ppc) = hand_points(hand, &camera).ok_or_else(|| {
        TryOnError::NotFound(format!(
            "the hand in the person photo is too small to wear a {what}"
        ))
    })?;
    let r_in = inner_radius(product).ok_or_else(|| {
        TryOnError::BadProduct(format!(
            "a {what} needs a band round its Y axis (the finger / wrist along +Y)"
        ))
    })?;
    let back = dorsal(&pts, side);
    let mut occluders = Vec::new();
    let (centre, axes, width_px, k, from_mask, from_elbow) = if kind.0 == JewelryKind::Ring {
        let spacing = ((pts[13] - pts[9]).length() + (pts[13] - pts[17]).length()) / 2.0;
        let finger_cm = FINGER_OF_SPACING * spacing;
        let axes = frame(pts[14] - pts[13], back);
        let centre = pts[13].lerp(pts[14], RING_ALONG);
        let k = 0.5 * finger_cm * 1.02 / r_in;
        // The ring finger and its neighbours, each from its MCP to past its PIP.
        let (rx, rz) = (0.5 * finger_cm * 0.97, 0.5 * finger_cm * 0.88);
        for (mcp, pip, scale) in [(13, 14, 1.0), (9, 10, 0.95), (17, 18, 0.85)] {
            let [x, y, z] = frame(pts[pip] - pts[mcp], back);
            let len = (pts[pip] - pts[mcp]).length();
            occluders.push(cylinder(
                pts[mcp] - y * 0.3 * len,
                pts[pip] + y * 0.2 * len,
                x,
                z,
                rx * scale,
                rz * scale,
            ));
        }
        (centre, axes, finger_cm * ppc, k, false, false)
    } else {
        // The forearm's direction (from the wrist towards the elbow), from the body's elbow
        // when the body's wrist is this hand's: on a close-up of a hand the pose model still
        // answers, with keypoints far from the real arm.
        let palm_px = (lm2(hand, 0) - lm2(hand, 9)).length();
        let elbow = body.and_then(|b| {
            let (e, wr) = match side {
                Handedness::Left => (b.keypoints.get(13)?, b.keypoints.get(15)?),
                Handedness::Right => (b.keypoints.get(14)?, b.keypoints.get(16)?),
            };
            let d = Vec2::new(e.x - wr.x, e.y - wr.y);
            let same_wrist =
                (Vec2::new(wr.x, wr.y) - lm2(hand, 0)).length() <= WRIST_AGREES * palm_px;
            (e.presence >= POSE_PRESENCE
                && wr.presence >= POSE_PRESENCE
                && same_wrist
                && d.length() > 1.0)
                .then(|| Vec3::new(d.x, d.y, 0.0).normalize())
        });
        let up_arm = elbow.unwrap_or_else(|| (pts[0] - pts[9]).normalize_or(Vec3::Y));
        let [x, y, z] = frame(-up_arm, back);
        let knuckles_cm = (pts[5] - pts[17]).length();
        let mut wrist_cm = WRIST_OF_KNUCKLES * knuckles_cm;
        // Measured where the bangle sits (up the forearm from landmark 0, where the palm's
        // heel no longer widens the mask).
        let at = camera.project(pts[0] - y * BRACELET_UP_FOREARM * wrist_cm);
        let across = Vec2::new(x.x, x.y).normalize_or(Vec2::X);
        let measured = body
            .and_then(|b| b.mask.as_ref())
            .and_then(|m| mask_width(m, at, across, 1.6 * wrist_cm * ppc))
            .map(|px| px / ppc)
            .filter(|cm| (0.6 * wrist_cm..=1.4 * wrist_cm).contains(cm));
        if let Some(cm) = measured {
            wrist_cm = cm;
        }
        let (rw, rd) = (0.5 * wrist_cm, 0.5 * wrist_cm * WRIST_DEPTH);
        let r_bangle = BANGLE_EASE * rw;
        let k = r_bangle / r_in;
        let mut centre = pts[0] - y * BRACELET_UP_FOREARM * wrist_cm;
        // Gravity (image down, camera +y) pulls the bangle until its inside rests on the wrist.
        let g = Vec3::Y - y * y.y;
        if g.length() > 0.2 {
            let g = g.normalize();
            let (gx, gz) = (g.dot(x) / rw, g.dot(z) / rd);
            let r_wrist = 1.0 / (gx * gx + gz * gz).sqrt().max(1e-6);
            centre += g * (r_bangle - r_wrist).max(0.0);
        }
        occluders.push(cylinder(
            pts[0] + y * 0.5 * wrist_cm,
            pts[0] - y * 1.5 * wrist_cm,
            x,
            z,
            rw,
            rd,
        ));
        (
            centre,
            [x, y, z],
            wrist_cm * ppc,
            k,
            measured.is_some(),
            elbow.is_some(),
        )
    };
    let [x, y, z] = axes;
    let box_ = hand.landmark_box();
    let pad = 0.5 * (box_[2] - box_[0]).max(box_[3] - box_[1]);
    let region = [
        (box_[0] - pad).max(0.0) as u32,
        (box_[1] - pad).max(0.0) as u32,
        (box_[2] + pad).max(0.0) as u32,
        (box_[3] + pad).max(0.0) as u32,
    ];
    let lighting = light::from_region(photo, region, body.and_then(|b| b.mask.as_ref()));
    let mut builder = SceneBuilder::new(camera, w, h, product)
        .lighting(lighting)
        .transparency(Transparency::Material)
        // A ring's band is a few pixels thick: 3× supersampling; a bangle is larger and
        // smooth at the photo's own setting.
        .supersampling(if kind.0 == JewelryKind::Ring {
            options.supersampling.max(3)
        } else {
            options.supersampling
        })
        .contact_shadow(options.shadow_strength * 0.5, ppc);
    builder.product.push_product(product, |q, n| {
        (
            centre + (x * q.x + y * q.y + z * q.z) * k,
            x * n.x + y * n.y + z * n.z,
        )
    });
    builder.occluders = occluders;
    let mut scene = builder.build()?;
    super::mark_gems(&mut scene, product);
    Ok(Placed {
        scene: Some(scene),
        photo: None,
        placement: HandJewel {
            kind,
            pose,
            worn: HandWorn {
                side,
                side_source,
                anchor_px: camera.project(centre),
                width_px,
                width_from_mask: from_mask,
                forearm_from_elbow: from_elbow,
                k,
                px_per_cm: ppc,
            },
        },
    })
}

/// Result metadata (JSON) of a ring or bracelet drawn in `scene`.
pub fn metadata(
    prepared: &HandJewel,
    scene: Option<&Scene>,
    stats: &RasterStats,
) -> serde_json::Value {
    let worn = &prepared.worn;
    let s = scene;
    json!({
        "category": "jewelry",
        "kind": prepared.kind.0.as_str(),
        "kind_source": prepared.kind.1.as_str(),
        "fit": "hand",
        "pose": prepared.pose.to_json(),
        "scale_to_cm": worn.k,
        "worn": {
            "hand": worn.side.as_str(),
            "hand_source": match worn.side_source {
                SideSource::Body => "body",
                SideSource::HandModel => "hand_model",
            },
            "anchor_px": worn.anchor_px.to_array(),
            "width_px": worn.width_px,
            "width_source": if worn.width_from_mask { "person_mask" } else { "landmarks" },
            "forearm_source": (prepared.kind.0 == JewelryKind::Bracelet)
                .then_some(if worn.forearm_from_elbow { "elbow" } else { "hand" }),
            "px_per_cm": worn.px_per_cm,
        },
        "roi": s.map(|s| s.roi),
        "supersampling": s.map(|s| s.ss * s.ss),
        "lighting": s.map(|s| json!({
            "ambient": s.lighting.ambient,
            "key_dir": s.lighting.key_dir,
            "key_color": s.lighting.key_color,
        })),
        "occluded_fragments": stats.occluded_fragments,
        "drawn_fragments": stats.drawn_fragments,
    })
}
