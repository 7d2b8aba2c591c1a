//! The garment categories: a product photo worn by the person, over the [`crate::garment`]
//! pipeline.
//!
//! - [`upper`]: tops — `shirt`, `tshirt`, `jacket` ([`UpperGarment`]).
//! - [`lower`]: lower garments and outfits — `pants`, `dress`, `full_outfit` ([`Pants`],
//!   [`Dress`], [`FullOutfit`]); a skirt sent as a `dress` is [`skirt`]'s.
//!
//! Both report the garment stage's errors ([`GarmentError`]) as the category's
//! ([`TryOnError`]).

pub mod lower;
pub mod skirt;
pub mod upper;

pub use lower::{Dress, FullOutfit, Pants};
pub use upper::UpperGarment;

use crate::garment::error::{Cause, GarmentError};
use crate::tryon::TryOnError;

impl From<GarmentError> for TryOnError {
    /// A photo without a garment or without the body it needs is the client's to fix (not
    /// found), a garment that cannot be fitted is a bad product, and a GPU failure stays the
    /// garment stage's own error (an internal one).
    fn from(e: GarmentError) -> Self {
        match e.cause() {
            Cause::ProductPhoto | Cause::PersonPhoto => TryOnError::NotFound(e.to_string()),
            Cause::Fit => TryOnError::BadProduct(e.to_string()),
            Cause::Gpu => TryOnError::Garment(e),
        }
    }
}
