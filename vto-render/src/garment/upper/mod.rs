//! Upper-body garments (shirts, t-shirts, jackets, a dress's bodice): fitted to the body
//! frame, then composed onto the photo.
//!
//! - [`fit`]: the torso and the two sleeves as warp [`crate::garment::Part`]s
//!   ([`fit::fit_upper_to`] → [`fit::UpperFit`]).
//! - [`compose`]: the warped garment onto the photo — layering, the uncovered arms and neck,
//!   the background continued ([`compose::compose`]).
//! - [`length`]: where the hem falls, from the product's length over its shoulder width
//!   (cropped, waist, hip, tunic).
//! - [`old_collar`]: an old collar above the chin line, taken away.

pub mod compose;
pub mod fit;
pub mod length;
pub mod old_collar;
pub mod outside;
