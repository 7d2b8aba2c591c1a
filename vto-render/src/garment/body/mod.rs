//! The body in the person photo, as a garment sees it: the stage between the vision stack's
//! [`crate::vision::Person`] and the garment's fit.
//!
//! - [`frame`]: the body frame ([`BodyFrame`]) from the pose keypoints and the person mask —
//!   shoulder seams, torso axis, each arm's chain, the face and hair to protect, the skin
//!   colour sampled from the face.
//! - [`hair`]: the hair in the photo, kept in front of every new garment ([`find_hair`]).
//! - [`legs`]: each leg's chain hip → knee → ankle, the feet, the hips' width ([`Legs`]), and
//!   the bare legs a shorter garment shows.
//! - [`feet_over_hems`]: the feet kept in front of a lower garment's hems, and the old lower
//!   garment's colour ([`Feet`]).
//! - [`outline`]: the person mask a garment works in, limited to the person who wears it
//!   when the photo holds several ([`person_outline`]).
//! - [`tone`]: the skin tone and light of a person whose face the photo does not show
//!   ([`Tone`]), and which source gave them.
//! - [`worn_top`]: the top the person wears now, as far as it hangs over the hips
//!   ([`WornTop`]).

pub mod feet_over_hems;
pub mod frame;
pub mod hair;
pub mod legs;
pub mod outline;
pub mod tone;
pub mod worn_top;

pub use feet_over_hems::Feet;
pub use frame::{Arm, BodyFrame};
pub use hair::{find_hair, Hair};
pub use legs::Legs;
pub use outline::person_outline;
pub use tone::{Tone, ToneSource};
pub use worn_top::WornTop;
