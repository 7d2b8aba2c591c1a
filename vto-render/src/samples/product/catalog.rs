//! The catalogue of every sample product the project's generators make, in one list: what the
//! server's playground offers, and what galleries and demos can iterate over. Each category's
//! generator adds its products here.

use vto_core::Category;

use crate::samples::garment::SampleGarment;
use crate::samples::garment::SampleLower;

use super::eyewear::SampleFrame;
use super::hats::SampleHat;
use super::jewelry::SampleJewel;
use super::shoes::SampleShoe;

/// One generated sample product.
#[derive(Debug, Clone)]
pub struct CatalogItem {
    /// URL-safe id (`[a-z0-9-]`), e.g. `glasses-round-black`.
    pub id: String,
    /// A human label, e.g. "Round black acetate (clear lenses)".
    pub label: String,
    /// The categories that take it.
    pub categories: Vec<Category>,
    /// Its media type (`model/gltf-binary`, `image/png`).
    pub content_type: &'static str,
    /// The file.
    pub bytes: Vec<u8>,
}

/// Every sample product, generated now (deterministic: the same bytes on every call).
pub fn all() -> Vec<CatalogItem> {
    let mut items = Vec::new();
    for frame in SampleFrame::ALL {
        let (category, label) = match frame {
            SampleFrame::RoundBlack => (Category::Glasses, "Round black acetate glasses"),
            SampleFrame::RectTortoise => (Category::Glasses, "Rectangular tortoiseshell glasses"),
            SampleFrame::AviatorGoldTinted => {
                (Category::Sunglasses, "Gold aviator sunglasses (tinted)")
            }
            SampleFrame::CatEyeRed => (Category::Glasses, "Red cat-eye glasses"),
        };
        items.push(CatalogItem {
            id: format!("{}-{}", category.as_str(), frame.name().replace('_', "-")),
            label: label.to_string(),
            categories: vec![category],
            content_type: "model/gltf-binary",
            bytes: frame.glb(),
        });
    }
    for (hat, label) in [
        (SampleHat::CapNavy, "Navy twill baseball cap"),
        (SampleHat::FedoraFelt, "Brown felt fedora"),
        (SampleHat::BeanieKnit, "Rust ribbed-knit beanie"),
    ] {
        items.push(CatalogItem {
            id: format!("hats-{}", hat.name().replace('_', "-")),
            label: label.to_string(),
            categories: vec![Category::Hats],
            content_type: "model/gltf-binary",
            bytes: hat.glb(),
        });
    }
    // Rings and bracelets need a person photo where a hand shows.
    for (jewel, label) in [
        (SampleJewel::StudRuby, "Gold stud earrings with a ruby"),
        (SampleJewel::HoopGold, "Gold hoop earrings"),
        (
            SampleJewel::DropSapphire,
            "Silver drop earrings with a sapphire",
        ),
        (
            SampleJewel::NecklacePendant,
            "Gold chain with an emerald pendant",
        ),
        (SampleJewel::RingSolitaire, "Gold solitaire ring"),
        (SampleJewel::BangleSilver, "Polished silver bangle"),
    ] {
        items.push(CatalogItem {
            id: format!("jewelry-{}", jewel.name().replace('_', "-")),
            label: label.to_string(),
            categories: vec![Category::Jewelry],
            content_type: "model/gltf-binary",
            bytes: jewel.glb(),
        });
    }
    for (shoe, label) in [
        (
            SampleShoe::Sneaker,
            "Navy canvas sneaker (right shoe; both feet wear it)",
        ),
        (
            SampleShoe::Boot,
            "Brown leather ankle boot (right shoe; both feet wear it)",
        ),
    ] {
        items.push(CatalogItem {
            id: format!("shoes-{}", shoe.name().replace('_', "-")),
            label: label.to_string(),
            categories: vec![Category::Shoes],
            content_type: "model/gltf-binary",
            bytes: shoe.glb(),
        });
    }
    for (garment, label) in [
        (
            SampleGarment::PlainTee,
            "Plain red t-shirt (flat-lay photo)",
        ),
        (SampleGarment::StripedTee, "Navy and white striped t-shirt"),
        (SampleGarment::LogoTee, "White t-shirt with a printed logo"),
        (SampleGarment::AlphaTee, "Mustard t-shirt (PNG with alpha)"),
        (SampleGarment::LongShirt, "Light blue long-sleeved shirt"),
        (SampleGarment::Jacket, "Olive jacket, open front"),
    ] {
        // A shirt or t-shirt photo suits both top categories; a jacket is a jacket.
        let categories = match garment.category() {
            Category::Jacket => vec![Category::Jacket],
            c => vec![
                c,
                if c == Category::Shirt {
                    Category::Tshirt
                } else {
                    Category::Shirt
                },
            ],
        };
        items.push(CatalogItem {
            id: format!("{}-{}", categories[0].as_str(), garment.name()),
            label: label.to_string(),
            categories,
            content_type: "image/png",
            bytes: garment.png(),
        });
    }
    for (garment, label) in [
        (SampleLower::Trousers, "Khaki chinos (flat-lay photo)"),
        (SampleLower::Shorts, "Navy shorts"),
        (
            SampleLower::KneeDress,
            "Teal knee-length dress with polka dots",
        ),
        (SampleLower::MaxiDress, "Burgundy maxi dress"),
        (
            SampleLower::TwoPiece,
            "Red t-shirt and khaki chinos (two-piece outfit photo)",
        ),
        (SampleLower::Jumpsuit, "Olive jumpsuit (one-piece outfit)"),
    ] {
        let category = garment.category();
        items.push(CatalogItem {
            id: format!("{}-{}", category.as_str().replace('_', "-"), garment.name()),
            label: label.to_string(),
            categories: vec![category],
            content_type: "image/png",
            bytes: garment.png(),
        });
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_url_safe_and_unique_and_every_model_loads() {
        let items = all();
        let mut ids = std::collections::HashSet::new();
        for item in &items {
            assert!(
                item.id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                item.id
            );
            assert!(ids.insert(item.id.clone()), "repeated id {}", item.id);
            assert!(!item.categories.is_empty());
            if item.content_type.starts_with("model/") {
                let p = crate::product::load(&item.bytes)
                    .unwrap_or_else(|e| panic!("{}: {e}", item.id));
                assert!(!p.primitives.is_empty(), "{}", item.id);
            }
        }
        assert!(items
            .iter()
            .any(|i| i.categories.contains(&Category::Sunglasses)));
    }
}
