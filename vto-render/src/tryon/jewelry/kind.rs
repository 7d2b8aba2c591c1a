//! What kind of jewel a model is: from its glTF extras, its node / mesh names, or its shape.

use crate::math::Vec3;
use crate::product::Product;

pub use crate::tryon::hats::fit::KindSource;

/// The jewelry kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JewelryKind {
    /// An earring sitting on the lobe, turned with the head.
    Stud,
    /// A hoop through the lobe, hanging with gravity.
    Hoop,
    /// A drop (dangle) earring, hanging with gravity.
    Drop,
    /// A necklace or a chain with a pendant.
    Necklace,
    /// A finger ring.
    Ring,
    /// A bracelet or bangle.
    Bracelet,
}

impl JewelryKind {
    /// The kind's name in extras and metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            JewelryKind::Stud => "stud",
            JewelryKind::Hoop => "hoop",
            JewelryKind::Drop => "drop",
            JewelryKind::Necklace => "necklace",
            JewelryKind::Ring => "ring",
            JewelryKind::Bracelet => "bracelet",
        }
    }

    /// Whether it is worn on a hand (a ring or a bracelet).
    pub fn is_hand_worn(self) -> bool {
        matches!(self, JewelryKind::Ring | JewelryKind::Bracelet)
    }

    /// Whether it is an earring.
    pub fn is_earring(self) -> bool {
        matches!(
            self,
            JewelryKind::Stud | JewelryKind::Hoop | JewelryKind::Drop
        )
    }

    /// A kind from a word (extras or a name). `earring` alone says "an earring" without
    /// saying which: `None` here, the shape decides.
    pub fn from_word(word: &str) -> Option<JewelryKind> {
        let w = word.to_ascii_lowercase();
        let has = |keys: &[&str]| keys.iter().any(|k| w.contains(k));
        if has(&["stud"]) {
            Some(JewelryKind::Stud)
        } else if has(&["hoop", "huggie"]) {
            Some(JewelryKind::Hoop)
        } else if has(&["drop", "dangle", "chandelier"]) {
            Some(JewelryKind::Drop)
        } else if has(&["necklace", "pendant", "chain", "choker", "locket"]) {
            Some(JewelryKind::Necklace)
        } else if has(&["bracelet", "bangle", "cuff"]) {
            Some(JewelryKind::Bracelet)
        } else if has(&["ring"]) && !has(&["earring"]) {
            Some(JewelryKind::Ring)
        } else {
            None
        }
    }
}

/// Whether the shape has a hole through its middle in the plane of its two largest extents:
/// no vertex within a quarter of the smaller of them from the box centre.
fn has_hole(points: &[Vec3], lo: Vec3, hi: Vec3) -> bool {
    let size = hi - lo;
    let c = (lo + hi) / 2.0;
    // Drop the thinnest axis.
    let thin = if size.x <= size.y && size.x <= size.z {
        0
    } else if size.y <= size.z {
        1
    } else {
        2
    };
    let axes: Vec<usize> = (0..3).filter(|&k| k != thin).collect();
    let r = 0.25 * size[axes[0]].min(size[axes[1]]);
    !points.iter().any(|p| {
        let d = *p - c;
        (d[axes[0]].powi(2) + d[axes[1]].powi(2)).sqrt() < r
    })
}

/// The kind of `product` (see the module docs): extras, else names, else the shape, read in
/// metres: wider than 9 cm is a necklace; 4.5–9 cm with a hole a bracelet, else a necklace
/// (a pendant alone); smaller, 1.6 × taller than wide a drop, with a hole a hoop, else a
/// stud. A ring must say so (its shape is a hoop's).
pub fn kind_of(product: &Product) -> (JewelryKind, KindSource) {
    if let Some(k) = product
        .meta
        .kind
        .as_deref()
        .and_then(JewelryKind::from_word)
    {
        return (k, KindSource::Extras);
    }
    if let Some(k) = product
        .meta
        .names
        .iter()
        .find_map(|n| JewelryKind::from_word(n))
    {
        return (k, KindSource::Name);
    }
    let points: Vec<Vec3> = product
        .primitives
        .iter()
        .flat_map(|p| &p.positions)
        .map(|p| Vec3::from(*p))
        .collect();
    let (lo, hi) = product.bounds();
    let (lo, hi) = (Vec3::from(lo), Vec3::from(hi));
    let size = hi - lo;
    let largest = size.max_element();
    let hole = has_hole(&points, lo, hi);
    let kind = if largest > 0.09 {
        JewelryKind::Necklace
    } else if largest > 0.045 {
        if hole {
            JewelryKind::Bracelet
        } else {
            JewelryKind::Necklace
        }
    } else if size.y > 1.6 * size.x {
        JewelryKind::Drop
    } else if hole && largest > 0.012 {
        JewelryKind::Hoop
    } else {
        JewelryKind::Stud
    };
    (kind, KindSource::Shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::product::jewelry::SampleJewel;

    #[test]
    fn kinds_come_from_extras_then_names_then_the_shape() {
        assert_eq!(JewelryKind::from_word("Gold Earring"), None);
        assert_eq!(JewelryKind::from_word("ring_band"), Some(JewelryKind::Ring));
        for j in SampleJewel::ALL {
            let mut p = j.product();
            let want = JewelryKind::from_word(j.kind()).unwrap();
            assert_eq!(kind_of(&p), (want, KindSource::Extras), "{}", j.name());
            p.meta.kind = None;
            assert_eq!(kind_of(&p), (want, KindSource::Name), "{}", j.name());
            p.meta.names.clear();
            // A ring's shape is a hoop's: it must say what it is.
            let by_shape = if want == JewelryKind::Ring {
                JewelryKind::Hoop
            } else {
                want
            };
            assert_eq!(kind_of(&p), (by_shape, KindSource::Shape), "{}", j.name());
        }
    }
}
