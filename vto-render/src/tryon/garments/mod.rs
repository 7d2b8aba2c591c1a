//! The garment categories: a product photo worn by the person, over the [`crate::garment`]
//! pipeline.
//!
//! - [`upper`]: tops — `shirt`, `tshirt`, `jacket` ([`UpperGarment`]).
//! - [`lower`]: lower garments and outfits — `pants`, `dress`, `full_outfit` ([`Pants`],
//!   [`Dress`], [`FullOutfit`]).
//!
//! Both report the garment stage's errors ([`GarmentError`]) as the category's
//! ([`TryOnError`]).

pub mod lower;
pub mod upper;

pub use lower::{Dress, FullOutfit, Pants};
pub use upper::UpperGarment;

use crate::garment::GarmentError;
use crate::raster::RasterError;
use crate::tryon::TryOnError;

impl From<GarmentError> for TryOnError {
    fn from(e: GarmentError) -> Self {
        match e {
            GarmentError::NoGarment(_) | GarmentError::NoBody(_) => {
                TryOnError::NotFound(e.to_string())
            }
            GarmentError::Degenerate(_) => TryOnError::BadProduct(e.to_string()),
            GarmentError::Gpu(m) => TryOnError::Raster(RasterError::Readback(m)),
        }
    }
}
