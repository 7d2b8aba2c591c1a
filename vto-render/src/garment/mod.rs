//! The garment pipeline: a flat-lay product photo worn by the person in a photo.
//!
//! The classical try-on pipeline (CP-VTON's geometric stage, without learned weights). One
//! folder per stage, in the order the data passes them; tops and lower garments share all but
//! their fit and compose:
//! 1. [`cutout`]: the garment from its product photo — a clean mask ([`cutout::mask`]: the
//!    PNG's alpha, else a flood fill from the border that stops at edges, so soft shadows go
//!    and white-on-white garments stay), its landmarks from the silhouette (neckline,
//!    shoulders, armpits, sleeve ends, hem corners; trousers' and a dress's in
//!    [`cutout::lower`]), long or short sleeves, an open or closed front, and a part label per
//!    pixel (torso, each sleeve, skirt, each trouser leg); an outfit photo split into its
//!    pieces ([`cutout::outfit`]).
//! 2. [`body`]: the body in the photo — the frame from the pose keypoints and the person mask
//!    (shoulder seams, torso axis, each arm's chain, the face and hair to protect, the skin
//!    colour sampled from the face), the legs and feet, and the top worn now.
//! 3. The fit, per kind: [`upper`] (torso and sleeves along the arms) or [`lower`] (trousers'
//!    halves along the legs, a skirt from the waist) turn garment and body into [`Part`]s —
//!    a garment region and the body chain it follows.
//! 4. [`warp`]: every [`Part`] gets a thin-plate spline from body pixels to garment pixels,
//!    solved on the CPU and evaluated per pixel by the WGSL kernel `garment/warp`, which also
//!    layers the parts (sleeves over the torso) with anti-aliased edges; small holes it leaves
//!    are closed ([`warp::holes`]).
//! 5. The compose, per kind ([`upper::compose`], [`lower::compose`], [`lower::uncover`]),
//!    with [`shade`]: the person's light and folds carried onto the garment, face, hair, hands
//!    and bare forearms (and feet over hems) kept in front, and what the new garment uncovers
//!    filled (skin on arms, neck and legs, the background continued outside the body).
//!
//! The floors, top down: [`lower`] (which reuses a top's fit for a dress's bodice) → [`upper`]
//! → [`warp`], [`shade`] → [`body`], [`cutout`] → the small geometry and pixel helpers here.
//! No stage imports from one above it. The categories that drive these stages are in
//! `tryon::garments` (the layer above).

pub mod body;
pub mod cutout;
pub mod lower;
pub mod shade;
pub mod upper;
pub mod warp;

use glam::Vec2;

pub use body::BodyFrame;
pub use cutout::{GarmentImage, GarmentLandmarks};
pub use warp::{Part, PartWarp, WarpOutput, Warper};

/// Part labels in the garment's label map (0 is background).
pub mod label {
    /// The torso (body, collar, hem).
    pub const TORSO: u8 = 1;
    /// The sleeve on the image's left.
    pub const SLEEVE_LEFT: u8 = 2;
    /// The sleeve on the image's right.
    pub const SLEEVE_RIGHT: u8 = 3;
    /// A dress's skirt (waist to hem).
    pub const SKIRT: u8 = 4;
    /// Trousers' half on the image's left (waistband to hem).
    pub const LEG_LEFT: u8 = 5;
    /// Trousers' half on the image's right.
    pub const LEG_RIGHT: u8 = 6;

    /// Whether `l` is a part worn over the body's trunk (torso or skirt), which bare
    /// forearms and hands lie in front of.
    pub fn is_body(l: u8) -> bool {
        l == TORSO || l == SKIRT
    }
}

/// Why the garment pipeline could not dress the person.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    /// No garment could be separated from the product photo's background.
    #[error("no garment was found in the product photo: {0}")]
    NoGarment(String),
    /// The photo lacks what a garment needs (a body, shoulders).
    #[error("{0}")]
    NoBody(String),
    /// A spline could not be solved (degenerate control points).
    #[error("the garment warp could not be solved: {0}")]
    Degenerate(String),
    /// The GPU kernel failed.
    #[error("the garment warp failed on the GPU: {0}")]
    Gpu(String),
}

/// `v` turned a quarter to the right in image coordinates (y down): `(x, y) → (-y, x)`.
pub(crate) fn perp(v: Vec2) -> Vec2 {
    Vec2::new(-v.y, v.x)
}

/// A person mask's value (`w` × `h`, row-major) at the pixel nearest `p`; 0 outside the image.
pub(crate) fn mask_at(mask: &[f32], (w, h): (u32, u32), p: Vec2) -> f32 {
    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
    if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
        return 0.0;
    }
    mask.get(y as usize * w as usize + x as usize)
        .copied()
        .unwrap_or(0.0)
}

/// The 4-connected neighbours of pixel index `i` in a `w` × `h` row-major grid.
pub(crate) fn neighbours4(i: usize, w: usize, h: usize) -> impl Iterator<Item = usize> {
    let (x, y) = (i % w, i / w);
    [
        (x > 0).then(|| i - 1),
        (x + 1 < w).then(|| i + 1),
        (y > 0).then(|| i - w),
        (y + 1 < h).then(|| i + w),
    ]
    .into_iter()
    .flatten()
}

/// The distance between two sRGB colours' `(r, g)` chromaticities: hue and saturation
/// without lightness (skin in shadow keeps the skin's).
pub(crate) fn hue_dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    let q = |c: [f32; 3]| {
        let s = c[0] + c[1] + c[2] + 1.0;
        [c[0] / s, c[1] / s]
    };
    let (a, b) = (q(a), q(b));
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// Distance from `p` to the segment `a`–`b`, and where along it (0 at `a`, 1 at `b`) the
/// nearest point lies.
pub(crate) fn seg_dist(p: Vec2, a: Vec2, b: Vec2) -> (f32, f32) {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
    (p.distance(a + ab * t), t)
}

/// Inside a polygon (even–odd rule).
pub(crate) fn inside(poly: &[Vec2], p: Vec2) -> bool {
    if poly.len() < 3 {
        return false;
    }
    let mut c = false;
    let mut j = poly.len() - 1;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[j]);
        if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x {
            c = !c;
        }
        j = i;
    }
    c
}

/// Hermite smoothstep: 0 below `e0`, 1 above `e1`, smooth between.
pub(crate) fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}
