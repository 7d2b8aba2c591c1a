//! What kind of jewel a model is: from its glTF extras, its node / mesh names, or its shape.

use crate::product::pose::shape::{hole, Cloud, Hole};
use crate::product::pose::PoseCategory;
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

/// The kind a request's `product_kind` names, for `product` (`earrings`: the earring its
/// shape shows, [`earring_of_shape`]; `watch`: a bracelet, worn alike); `None` for a kind of
/// another category.
pub fn requested_kind(product: &Product, kind: vto_core::ProductKind) -> Option<JewelryKind> {
    use vto_core::ProductKind as K;
    Some(match kind {
        K::Ring => JewelryKind::Ring,
        K::Earrings => earring_of_shape(product),
        K::Stud => JewelryKind::Stud,
        K::Hoop => JewelryKind::Hoop,
        K::Drop => JewelryKind::Drop,
        K::Necklace => JewelryKind::Necklace,
        K::Bracelet | K::Watch => JewelryKind::Bracelet,
        K::Cap | K::Brimmed | K::Beanie | K::Dress | K::Skirt => return None,
    })
}

/// The kind of `product` when the request may name it: the request's
/// ([`requested_kind`], `KindSource::Request`), else [`kind_of`].
pub fn kind_for(
    product: &Product,
    requested: Option<vto_core::ProductKind>,
) -> (JewelryKind, KindSource) {
    requested
        .and_then(|k| requested_kind(product, k))
        .map(|k| (k, KindSource::Request))
        .unwrap_or_else(|| kind_of(product))
}

/// The earring a product known to be one is, by its shape: the extras' or names' earring
/// kind when they give one, else the shape's when it is an earring, else a loop (a shape
/// with a hole) is a hoop, a long shape (1.6 × longer than wide) a drop, anything else a
/// stud.
pub fn earring_of_shape(product: &Product) -> JewelryKind {
    let (k, _) = kind_of(product);
    if k.is_earring() {
        return k;
    }
    let Some(cloud) = Cloud::of(product) else {
        return JewelryKind::Stud;
    };
    if hole(&cloud).is_some() {
        return JewelryKind::Hoop;
    }
    let (lo, hi) = product.bounds();
    let mut s = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    s.sort_by(f32::total_cmp);
    if s[2] > 1.6 * s[1] {
        JewelryKind::Drop
    } else {
        JewelryKind::Stud
    }
}

/// The most a jewel in metres measures across: anything larger is in other units.
pub const METRES_MAX: f32 = 0.6;

/// How much longer than wide a hole-less shape over 9 cm "in metres" must be to be read as
/// a drop earring in other units rather than a necklace (a 17.5-unit Jaipuri drop is 1.92 ×
/// longer than wide; a keycard pendant, card-shaped, 1.62 ×).
pub const LONG_UNHOLED: f32 = 1.8;

/// The kind of `product` (see the module docs): extras, else names, else the shape
/// ([`shape_kind`]).
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
    (shape_kind(product), KindSource::Shape)
}

/// The kind from the shape alone, the same in any axis convention (extents sorted, the
/// hole in the plane of the two larger ones). In metres (the largest extent at most
/// [`METRES_MAX`]), with a hole: a band 15–23 mm inside that is a band (≥ 15 % as wide as
/// it is across) or carries a setting (in-plane extents differ by 5 %) is a ring; a hole up
/// to 5.5 cm is a hoop (below 12 mm across, a stud); 5.5–8 cm a bracelet (a thin hoop to
/// 6 cm stays a hoop); larger a necklace. Without a hole: wider than 9 cm a necklace, 1.6 ×
/// longer than wide a drop (up to 9 cm), else wider than 4.5 cm a necklace (a pendant
/// alone), else a stud. Whatever the units, a band as wide along its axis
/// as 45 % of its diameter is a bracelet (a watch, worn like one; [`is_watch_band`]). In other units a band
/// (≥ 15 %) is a ring, a thinner loop a hoop, a long shape a drop, anything else a
/// necklace.
pub fn shape_kind(product: &Product) -> JewelryKind {
    let Some(cloud) = Cloud::of(product) else {
        return JewelryKind::Stud;
    };
    let (lo, hi) = product.bounds();
    let mut s = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    s.sort_by(f32::total_cmp);
    let metres = s[2] <= METRES_MAX;
    match hole(&cloud) {
        Some(h) if is_watch_band(&h) => JewelryKind::Bracelet,
        Some(h) if metres && h.inner > 0.08 => JewelryKind::Necklace,
        Some(h) if metres => {
            let setting = h.roundness < 0.95;
            if (0.015..=0.023).contains(&h.inner) && (h.width_ratio >= 0.15 || setting) {
                JewelryKind::Ring
            } else if h.inner <= 0.055 {
                if s[2] > 0.012 {
                    JewelryKind::Hoop
                } else {
                    JewelryKind::Stud
                }
            } else if h.inner <= 0.08 {
                if h.inner <= 0.06 && h.width_ratio < 0.06 {
                    JewelryKind::Hoop
                } else {
                    JewelryKind::Bracelet
                }
            } else {
                JewelryKind::Necklace
            }
        }
        Some(h) => {
            if h.width_ratio >= 0.15 {
                JewelryKind::Ring
            } else {
                JewelryKind::Hoop
            }
        }
        // A long shape over 9 cm with no hole is no necklace (a necklace's chain makes a
        // loop; a pendant alone is shorter): a drop earring in other units.
        None if metres && s[2] > 0.09 && s[2] > LONG_UNHOLED * s[1] => JewelryKind::Drop,
        None if metres => {
            if s[2] > 0.09 || (s[2] > 0.045 && s[2] <= 1.6 * s[1]) {
                JewelryKind::Necklace
            } else if s[2] > 1.6 * s[1] {
                JewelryKind::Drop
            } else {
                JewelryKind::Stud
            }
        }
        None => {
            if s[2] > 1.6 * s[1] {
                JewelryKind::Drop
            } else {
                JewelryKind::Necklace
            }
        }
    }
}

/// A loop as wide along its axis as 45 % of its diameter, and a band (its surface at least
/// 0.85 of the cylinder it spans: a strap, not thin hoops crossing): a watch or a cuff.
pub fn is_watch_band(h: &Hole) -> bool {
    h.width_ratio >= 0.45 && h.fill >= 0.85
}

/// What a shape-guessed hand-worn kind is worn as when the photo shows ears but no hand:
/// a loop is a hoop, a long shape a drop, anything else a stud. `None` when the kind did
/// not come from the shape, is not hand-worn, or was read from a real size (the model in
/// metres: a ring, or a watch's shape): those keep their "no hand" answer. A bangle-sized
/// loop in metres (5.5–8 cm inside) may be a large hoop earring: the photo decides.
pub fn ear_alternative(product: &Product, kind: (JewelryKind, KindSource)) -> Option<JewelryKind> {
    if kind.1 != KindSource::Shape || !kind.0.is_hand_worn() {
        return None;
    }
    let cloud = Cloud::of(product)?;
    let (lo, hi) = product.bounds();
    let mut s = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    s.sort_by(f32::total_cmp);
    // A watch is a watch. In metres the real size decided, except between a large hoop and
    // a bangle (a hole of 5.5–8 cm: both are made); a guess in unknown units is left to the
    // photo.
    let loop_ = hole(&cloud);
    if loop_.as_ref().is_some_and(is_watch_band) {
        return None;
    }
    if s[2] <= METRES_MAX {
        return loop_
            .filter(|h| h.inner > 0.055 && h.inner <= 0.08)
            .map(|_| JewelryKind::Hoop);
    }
    if hole(&cloud).is_some() {
        return Some(JewelryKind::Hoop);
    }
    Some(if s[2] > 1.6 * s[1] {
        JewelryKind::Drop
    } else {
        JewelryKind::Stud
    })
}

/// The canonical pose family of a jewel of `kind`.
pub fn pose_category(kind: JewelryKind) -> PoseCategory {
    match kind {
        JewelryKind::Ring | JewelryKind::Bracelet => PoseCategory::Band,
        JewelryKind::Necklace => PoseCategory::Necklace,
        _ => PoseCategory::Earring,
    }
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
            assert_eq!(kind_of(&p), (want, KindSource::Shape), "{}", j.name());
        }
    }

    fn scaled(mut p: Product, k: f32) -> Product {
        for prim in &mut p.primitives {
            for v in &mut prim.positions {
                *v = v.map(|c| c * k);
            }
        }
        p.meta.kind = None;
        p.meta.names.clear();
        p
    }

    #[test]
    fn real_sizes_decide_between_hoops_bracelets_and_rings_in_any_axis_order() {
        // The sample hoop (2.36 cm across) made 4.6 cm across: a hoop, not a bracelet.
        let hoop = SampleJewel::HoopGold.product();
        let (lo, hi) = hoop.bounds();
        let big = scaled(hoop.clone(), 0.046 / (hi[0] - lo[0]));
        assert_eq!(kind_of(&big), (JewelryKind::Hoop, KindSource::Shape));
        // Lying in another plane (x, y, z → y, z, x): the same.
        let mut turned = big.clone();
        for prim in &mut turned.primitives {
            for v in &mut prim.positions {
                *v = [v[1], v[2], v[0]];
            }
        }
        assert_eq!(shape_kind(&turned), JewelryKind::Hoop);
        // Made 7 cm across it is a bangle; but large hoops are made that size too, so on a
        // portrait without a hand it is worn as a hoop.
        let bangle = scaled(hoop, 0.07 / (hi[0] - lo[0]));
        let kind = kind_of(&bangle);
        assert_eq!(kind, (JewelryKind::Bracelet, KindSource::Shape));
        assert_eq!(ear_alternative(&bangle, kind), Some(JewelryKind::Hoop));
        // A ring with its finger along z (the file's y and z swapped) is still a ring, and
        // a ring guessed from the shape may be an earring on a photo without a hand.
        let mut ring = scaled(SampleJewel::RingSolitaire.product(), 1.0);
        for prim in &mut ring.primitives {
            for v in &mut prim.positions {
                *v = [v[0], -v[2], v[1]];
            }
        }
        let kind = kind_of(&ring);
        assert_eq!(kind, (JewelryKind::Ring, KindSource::Shape));
        // Its real size says ring: no earring on a photo without a hand.
        assert_eq!(ear_alternative(&ring, kind), None);
        // In unknown units (× 100) the band is still a ring, and the photo may make it a
        // hoop.
        let unknown = scaled(ring.clone(), 100.0);
        let kind = kind_of(&unknown);
        assert_eq!(kind, (JewelryKind::Ring, KindSource::Shape));
        assert_eq!(ear_alternative(&unknown, kind), Some(JewelryKind::Hoop));
        assert_eq!(
            ear_alternative(&ring, (JewelryKind::Ring, KindSource::Extras)),
            None
        );
    }
}
