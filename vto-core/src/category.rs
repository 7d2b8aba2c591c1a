//! The spec's eleven categories, each with its mode, required product input and price unit.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A try-on category: the exact values of the API's `category` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Eyeglasses (3D model, synchronous).
    Glasses,
    /// Sunglasses (3D model, synchronous).
    Sunglasses,
    /// Hats (3D model, synchronous).
    Hats,
    /// Earrings, necklaces and the like (3D model, synchronous).
    Jewelry,
    /// Shoes (3D model, synchronous).
    Shoes,
    /// Shirts (product photo, asynchronous).
    Shirt,
    /// T-shirts (product photo, asynchronous).
    Tshirt,
    /// Dresses (product photo, asynchronous).
    Dress,
    /// Jackets (product photo, asynchronous).
    Jacket,
    /// Pants (product photo, asynchronous).
    Pants,
    /// A whole outfit (product photo, asynchronous).
    FullOutfit,
}

/// Whether a category is answered in the POST response or later as a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The POST response carries the finished result.
    Synchronous,
    /// The POST response carries a `request_id`; the result comes by polling or webhook.
    Asynchronous,
}

/// Which product field a category requires.
///
/// The spec shows only the glasses form (`product_model`) and the shirt form (`product_image`).
/// vto's choice, documented in the README and OpenAPI: every 3D-product category (glasses,
/// sunglasses, hats, jewelry, shoes) takes `product_model`; every garment category (shirt, tshirt,
/// dress, jacket, pants, full_outfit) takes `product_image`. Sending the other field is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProductInput {
    /// `product_model`: a 3D model file (glTF 2.0 / OBJ).
    Model,
    /// `product_image`: a photo of the product.
    Image,
}

impl ProductInput {
    /// The request field that carries this input.
    pub fn field(self) -> &'static str {
        match self {
            ProductInput::Model => "product_model",
            ProductInput::Image => "product_image",
        }
    }
    /// The other product field (the one that is not accepted).
    pub fn other(self) -> ProductInput {
        match self {
            ProductInput::Model => ProductInput::Image,
            ProductInput::Image => ProductInput::Model,
        }
    }
}

/// What one charge buys, as the spec's price table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceUnit {
    /// "per try-on" (the synchronous 3D categories).
    PerTryOn,
    /// "per result" (the asynchronous garment categories).
    PerResult,
}

impl Category {
    /// All eleven categories in the spec's order.
    pub const ALL: [Category; 11] = [
        Category::Glasses,
        Category::Sunglasses,
        Category::Hats,
        Category::Jewelry,
        Category::Shoes,
        Category::Shirt,
        Category::Tshirt,
        Category::Dress,
        Category::Jacket,
        Category::Pants,
        Category::FullOutfit,
    ];

    /// The wire value, e.g. `full_outfit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Glasses => "glasses",
            Category::Sunglasses => "sunglasses",
            Category::Hats => "hats",
            Category::Jewelry => "jewelry",
            Category::Shoes => "shoes",
            Category::Shirt => "shirt",
            Category::Tshirt => "tshirt",
            Category::Dress => "dress",
            Category::Jacket => "jacket",
            Category::Pants => "pants",
            Category::FullOutfit => "full_outfit",
        }
    }

    /// Synchronous or asynchronous, per the spec.
    pub fn mode(self) -> Mode {
        match self.product_input() {
            ProductInput::Model => Mode::Synchronous,
            ProductInput::Image => Mode::Asynchronous,
        }
    }

    /// Whether the POST response carries the result.
    pub fn is_sync(self) -> bool {
        self.mode() == Mode::Synchronous
    }

    /// The product field this category requires.
    pub fn product_input(self) -> ProductInput {
        match self {
            Category::Glasses
            | Category::Sunglasses
            | Category::Hats
            | Category::Jewelry
            | Category::Shoes => ProductInput::Model,
            Category::Shirt
            | Category::Tshirt
            | Category::Dress
            | Category::Jacket
            | Category::Pants
            | Category::FullOutfit => ProductInput::Image,
        }
    }

    /// The spec's price unit.
    pub fn price_unit(self) -> PriceUnit {
        match self.mode() {
            Mode::Synchronous => PriceUnit::PerTryOn,
            Mode::Asynchronous => PriceUnit::PerResult,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the eleven categories.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown category {0:?}")]
pub struct UnknownCategory(pub String);

impl FromStr for Category {
    type Err = UnknownCategory;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCategory(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleven_categories_with_the_spec_modes() {
        let sync: Vec<_> = Category::ALL.iter().filter(|c| c.is_sync()).collect();
        assert_eq!(sync.len(), 5);
        for c in ["glasses", "sunglasses", "hats", "jewelry", "shoes"] {
            assert_eq!(c.parse::<Category>().unwrap().mode(), Mode::Synchronous);
        }
        for c in ["shirt", "tshirt", "dress", "jacket", "pants", "full_outfit"] {
            let cat = c.parse::<Category>().unwrap();
            assert_eq!(cat.mode(), Mode::Asynchronous);
            assert_eq!(cat.product_input(), ProductInput::Image);
            assert_eq!(cat.price_unit(), PriceUnit::PerResult);
        }
    }

    #[test]
    fn wire_names_round_trip_through_serde_and_fromstr() {
        for c in Category::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<Category>(&json).unwrap(), c);
            assert_eq!(c.as_str().parse::<Category>().unwrap(), c);
        }
        assert!("Glasses".parse::<Category>().is_err());
        assert!("fulloutfit".parse::<Category>().is_err());
    }
}
