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
//! → [`warp`], [`shade`] → [`body`], [`cutout`] → the shared floor: [`label`], [`error`],
//! [`colour`] and the geometry helpers (`geom`).
//! No stage imports from one above it. The categories that drive these stages are in
//! `tryon::garments` (the layer above).

pub mod body;
pub mod colour;
pub mod cutout;
pub mod error;
pub(crate) mod geom;
pub mod label;
pub mod lower;
pub mod shade;
pub mod upper;
pub mod warp;

pub use body::BodyFrame;
pub use cutout::{GarmentImage, GarmentLandmarks};
pub use error::GarmentError;
pub use warp::{Part, PartWarp, WarpOutput, Warper};
