//! Per-request rendering options: what a client may ask of the renderer beyond the inputs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::category::Category;

/// What to do with something the person already wears before a try-on puts its like on:
/// their own glasses before `glasses` or `sunglasses` (`remove_own_eyewear` in the request),
/// their own hat before `hats` (`remove_own_hat`). Other categories ignore both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Removal {
    /// Remove it when the detector is confident enough that it is there (the default; the
    /// thresholds are documented in `docs/own-eyewear.md` and `docs/own-hat.md`).
    #[default]
    Auto,
    /// Never remove it: the new product is drawn over the photo as it is.
    Never,
    /// Remove whatever the detector traced, however unsure it is.
    Always,
}

/// `remove_own_eyewear`: what to do with glasses the person already wears.
pub type RemoveOwnEyewear = Removal;

/// `remove_own_hat`: what to do with a hat the person already wears.
pub type RemoveOwnHat = Removal;

impl Removal {
    /// Every value, in the order the documentation lists them.
    pub const ALL: [Removal; 3] = [Removal::Auto, Removal::Never, Removal::Always];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Removal::Auto => "auto",
            Removal::Never => "never",
            Removal::Always => "always",
        }
    }
}

impl fmt::Display for Removal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value that is not one of [`Removal::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {0:?}; expected one of: auto, never, always")]
pub struct UnknownRemoval(pub String);

impl FromStr for Removal {
    type Err = UnknownRemoval;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Removal::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownRemoval(s.to_string()))
    }
}

/// What the product is, when the shop knows it better than the model file or the photo says
/// (`product_kind` in the request): overrides the file's `extras.vto.kind`, its node names and
/// the shape inference. Each kind belongs to one category ([`ProductKind::category`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProductKind {
    /// `jewelry`: a finger ring.
    Ring,
    /// `jewelry`: an earring, of the type its shape shows (a loop is a hoop, a long shape a
    /// drop, anything else a stud).
    Earrings,
    /// `jewelry`: a stud earring, on the lobe.
    Stud,
    /// `jewelry`: a hoop earring.
    Hoop,
    /// `jewelry`: a drop (dangle) earring.
    Drop,
    /// `jewelry`: a necklace or a chain with a pendant.
    Necklace,
    /// `jewelry`: a bracelet or a bangle.
    Bracelet,
    /// `jewelry`: a watch, worn on the wrist like a bracelet.
    Watch,
    /// `hats`: a cap with a visor.
    Cap,
    /// `hats`: a hat with a brim all around.
    Brimmed,
    /// `hats`: a beanie (no brim, worn lower).
    Beanie,
    /// `dress`: a dress, worn from the shoulders (also one without a neckline, which would
    /// read as a skirt).
    Dress,
    /// `dress`: a skirt on its own, worn from the waist.
    Skirt,
}

impl ProductKind {
    /// Every value, in the order the documentation lists them.
    pub const ALL: [ProductKind; 13] = [
        ProductKind::Ring,
        ProductKind::Earrings,
        ProductKind::Stud,
        ProductKind::Hoop,
        ProductKind::Drop,
        ProductKind::Necklace,
        ProductKind::Bracelet,
        ProductKind::Watch,
        ProductKind::Cap,
        ProductKind::Brimmed,
        ProductKind::Beanie,
        ProductKind::Dress,
        ProductKind::Skirt,
    ];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ProductKind::Ring => "ring",
            ProductKind::Earrings => "earrings",
            ProductKind::Stud => "stud",
            ProductKind::Hoop => "hoop",
            ProductKind::Drop => "drop",
            ProductKind::Necklace => "necklace",
            ProductKind::Bracelet => "bracelet",
            ProductKind::Watch => "watch",
            ProductKind::Cap => "cap",
            ProductKind::Brimmed => "brimmed",
            ProductKind::Beanie => "beanie",
            ProductKind::Dress => "dress",
            ProductKind::Skirt => "skirt",
        }
    }

    /// The category the kind belongs to (`jewelry`, `hats` or `dress`; the other categories
    /// take no kind: eyewear, shoes, tops, trousers and outfits are told by their category).
    pub fn category(self) -> Category {
        match self {
            ProductKind::Cap | ProductKind::Brimmed | ProductKind::Beanie => Category::Hats,
            ProductKind::Dress | ProductKind::Skirt => Category::Dress,
            _ => Category::Jewelry,
        }
    }

    /// The kinds of `category`, in documentation order (empty for a category that takes
    /// none).
    pub fn of(category: Category) -> Vec<ProductKind> {
        ProductKind::ALL
            .into_iter()
            .filter(|k| k.category() == category)
            .collect()
    }
}

impl fmt::Display for ProductKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value that is not one of [`ProductKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown product_kind value {0:?}; expected one of: ring, earrings, stud, hoop, drop, \
     necklace, bracelet, watch (jewelry); cap, brimmed, beanie (hats); dress, skirt (dress)"
)]
pub struct UnknownProductKind(pub String);

impl FromStr for ProductKind {
    type Err = UnknownProductKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProductKind::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownProductKind(s.to_string()))
    }
}

/// The rendering options of one request (every field has a default, so a job stored before a
/// field existed reads back with it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderOptions {
    /// What to do with the person's own glasses (eyewear categories).
    #[serde(default)]
    pub remove_own_eyewear: RemoveOwnEyewear,
    /// What to do with the person's own hat (`hats`).
    #[serde(default)]
    pub remove_own_hat: RemoveOwnHat,
    /// What the product is, when the request says (jewelry and hats); `None`: read from the
    /// model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_kind: Option<ProductKind>,
}
