//! Shading and fill, shared by the upper and lower composers: what the photo's light does to
//! the new garment, and what goes where the old garment showed and the new one does not.
//!
//! - [`transfer`]: the person's light and big folds carried onto the garment (the shading
//!   ratio).
//! - [`skin`]: skin the garment uncovers — how skin-like a colour is, the face's light, the
//!   neck's outline and colour, lit cylinders for arms and legs.
//! - [`arm`]: the arm a shorter sleeve uncovers, bare (its outline, tone and folds from the
//!   photo) or layered (the old sleeve kept), per [`arm::ArmsMode`].
//! - [`fill`]: the background continued under the person (push–pull).

pub mod arm;
pub mod fill;
pub mod skin;
pub mod transfer;
