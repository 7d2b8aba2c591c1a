//! Lower-body garments (trousers, shorts, skirts, dresses, jumpsuits): fitted along the legs,
//! then composed onto the photo.
//!
//! - [`fit`]: trousers' halves along the legs ([`fit::fit_pants`]), a dress's skirt from the
//!   waist ([`fit::fit_skirt`]); a dress's bodice is fitted as a top ([`crate::garment::upper`]).
//! - [`hang`]: a skirt on its own, hung from the body's waist ([`hang::hang_skirt`]).
//! - [`compose`]: trousers over the legs, with the hands, the feet and the worn top in front
//!   ([`compose::compose_pants`]).
//! - [`uncover`]: the legs and floor a shorter garment uncovers ([`uncover::uncover_legs`]).

pub mod compose;
pub mod fit;
pub mod hang;
pub mod uncover;
