//! Sample garment product photos (tops, trousers, dresses, outfits) and the drawn full-body
//! figures the lower-garment tests and benches use.
//!
//! - [`upper`]: flat-lay photos of tops ([`SampleGarment`]: plain, striped, printed logo,
//!   long and short sleeves, an open jacket), and the flat-lay renderer every sample shares.
//! - [`lower`]: trousers, shorts, dresses and a two-piece outfit photo ([`SampleLower`]).
//! - [`figure`]: drawn full-body people with hand-given keypoints, masks and face landmarks
//!   ([`Figure`]), handed to a category as the vision stage would hand a photo.

pub mod figure;
pub mod lower;
pub mod upper;

pub use figure::Figure;
pub use lower::SampleLower;
pub use upper::SampleGarment;
