//! The canonical pose of a product: which way is up and which way is the front, read off
//! its shape when the file does not say, so a model exported Z-up or facing +X is worn like
//! the same model in the glTF convention (+Y up, front +Z).
//!
//! [`infer`] returns a [`Pose`]: one of the 24 proper axis rotations (files are exported
//! with their axes swapped or flipped, not tilted) that takes the file's frame to the
//! category's canonical frame, and for each of up and front where it came from
//! ([`PoseSource`]) and why, for the result metadata ([`Pose::to_json`]). [`Pose::apply`]
//! turns a copy of the product; units and the anchor stay with each category's fit, which
//! runs on the turned product.
//!
//! # Order of evidence
//! 1. `extras.vto.up` / `extras.vto.front` (`"+y"`, `"-z"`, …, in the file's frame) pin
//!    an axis ([`PoseSource::Extras`]).
//! 2. Otherwise the shape decides, per category ([`shape`]), when its evidence is clear
//!    ([`PoseSource::Shape`]).
//! 3. When the shape cannot tell (a round hat's front, a plain band's top), the file's own
//!    axis is kept if it is one of the candidates, else the first candidate in the order
//!    +X, −X, +Y, −Y, +Z, −Z ([`PoseSource::File`] / [`PoseSource::Rule`]), and
//!    [`Pose::yaw_free`] says the turn about the vertical axis is not the shape's.
//!
//! So a file that follows the glTF convention keeps its pose whenever its shape agrees or
//! cannot tell.
//!
//! Eyewear exported turned between the axes (its front along a diagonal) is first turned
//! back onto them ([`square`]; [`Pose::squared`], said in the metadata as `squared`), and a
//! band (ring, bangle, watch) tilted on all axes is levelled onto them by its principal axes
//! ([`level`]; [`Pose::levelled`], `levelled` in the metadata), unless the extras pin an
//! axis: the 24 rotations then read it as any other frame.

pub mod level;
pub mod shape;
pub mod square;

use serde_json::json;

use super::Product;
use crate::math::{Mat3, Vec3};

/// The product families whose canonical frames differ (see `docs/products.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoseCategory {
    /// Glasses and sunglasses: across +X, up +Y, the lenses toward +Z, temples toward −Z.
    Eyewear,
    /// Hats: the crown up (+Y), the opening at the bottom, a visor toward +Z.
    Hat,
    /// Shoes: the sole flat at the bottom (+Y up), the toe toward +Z.
    Shoe,
    /// Earrings: hanging along +Y from the attachment at the top, their flat face (a
    /// hoop's hole) toward +Z.
    Earring,
    /// Necklaces and pendants: hanging in the X–Y plane, front +Z, the pendant at the bottom.
    Necklace,
    /// Rings, bangles and watches: the finger / wrist along Y, the stone or dial toward +Z.
    Band,
}

impl PoseCategory {
    /// The name used in the metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            PoseCategory::Eyewear => "eyewear",
            PoseCategory::Hat => "hat",
            PoseCategory::Shoe => "shoe",
            PoseCategory::Earring => "earring",
            PoseCategory::Necklace => "necklace",
            PoseCategory::Band => "band",
        }
    }
}

/// Where an axis of the pose came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoseSource {
    /// `extras.vto.up` / `extras.vto.front`.
    Extras,
    /// The shape (see [`shape`]).
    Shape,
    /// The shape could not tell; the file's own axis was kept.
    File,
    /// The shape could not tell and the file's axis was not a candidate: the documented
    /// rule (the first candidate, +X, −X, +Y, −Y, +Z, −Z).
    Rule,
}

impl PoseSource {
    /// `extras`, `shape`, `file` or `rule`.
    pub fn as_str(self) -> &'static str {
        match self {
            PoseSource::Extras => "extras",
            PoseSource::Shape => "shape",
            PoseSource::File => "file",
            PoseSource::Rule => "rule",
        }
    }
}

/// A signed coordinate axis of the file's frame: 0..6 for +X, −X, +Y, −Y, +Z, −Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dir(pub u8);

impl Dir {
    /// +X, −X, +Y, −Y, +Z, −Z.
    pub const ALL: [Dir; 6] = [Dir(0), Dir(1), Dir(2), Dir(3), Dir(4), Dir(5)];
    /// +Y.
    pub const UP: Dir = Dir(2);
    /// +Z.
    pub const FRONT: Dir = Dir(4);

    /// The direction along `axis` (0, 1, 2) with the sign of `sign`.
    pub fn along(axis: usize, sign: f32) -> Dir {
        Dir(2 * axis as u8 + u8::from(sign < 0.0))
    }

    /// The axis index (0, 1, 2).
    pub fn axis(self) -> usize {
        usize::from(self.0 / 2)
    }

    /// +1 or −1.
    pub fn sign(self) -> f32 {
        if self.0 % 2 == 0 {
            1.0
        } else {
            -1.0
        }
    }

    /// The opposite direction.
    pub fn flip(self) -> Dir {
        Dir(self.0 ^ 1)
    }

    /// The unit vector.
    pub fn vec(self) -> Vec3 {
        let mut v = Vec3::ZERO;
        v[self.axis()] = self.sign();
        v
    }

    /// `+x`, `-x`, …
    pub fn as_str(self) -> &'static str {
        ["+x", "-x", "+y", "-y", "+z", "-z"][usize::from(self.0.min(5))]
    }

    /// A direction from its name (`+y`, `-Z`, `y` meaning `+y`), as in `extras.vto.up`.
    pub fn parse(s: &str) -> Option<Dir> {
        let s = s.trim().to_ascii_lowercase();
        let (sign, axis) = match s.as_bytes() {
            [b'-', a] => (-1.0, *a),
            [b'+', a] | [a] => (1.0, *a),
            _ => return None,
        };
        let axis = match axis {
            b'x' => 0,
            b'y' => 1,
            b'z' => 2,
            _ => return None,
        };
        Some(Dir::along(axis, sign))
    }
}

/// One decided axis: the file's direction that becomes the canonical one, its source and why.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisChoice {
    /// The file's direction.
    pub dir: Dir,
    /// Where it came from.
    pub source: PoseSource,
    /// Why (what the shape showed, or why it could not tell).
    pub why: String,
}

/// The canonical pose of a product (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Pose {
    /// The family it was read for.
    pub category: PoseCategory,
    /// The file's direction that becomes up (+Y).
    pub up: AxisChoice,
    /// The file's direction that becomes the front (+Z).
    pub front: AxisChoice,
    /// Whether the turn about the vertical axis is not the shape's (a round hat, a
    /// symmetric band): the front is the file's or the rule's.
    pub yaw_free: bool,
    /// The turn that first takes a product lying between the file's axes back onto them
    /// ([`square`]); `up` and `front` are then axes of the squared frame.
    pub squared: Option<square::Squaring>,
    /// The turn that first takes a band tilted on all axes onto them ([`level`]); `up` and
    /// `front` are then axes of the levelled frame.
    pub levelled: Option<level::Levelling>,
}

impl Pose {
    /// The file's pose kept as it is, with `why`.
    pub fn identity(category: PoseCategory, why: &str) -> Pose {
        let keep = |dir| AxisChoice {
            dir,
            source: PoseSource::File,
            why: why.to_string(),
        };
        Pose {
            category,
            up: keep(Dir::UP),
            front: keep(Dir::FRONT),
            yaw_free: true,
            squared: None,
            levelled: None,
        }
    }

    /// The rotation taking the file's frame to the canonical one (a proper rotation): the
    /// levelling or squaring turn, if any, then the axes.
    pub fn rotation(&self) -> Mat3 {
        let up = self.up.dir.vec();
        let front = self.front.dir.vec();
        let x = up.cross(front);
        let mut r = Mat3::from_cols(x, up, front).transpose();
        if let Some(s) = &self.squared {
            r *= s.rotation();
        }
        if let Some(l) = &self.levelled {
            r *= l.rotation;
        }
        r
    }

    /// Whether the product is turned (squared, levelled, or the file's +Y is not up or its
    /// +Z not the front).
    pub fn turns(&self) -> bool {
        self.squared.is_some()
            || self.levelled.is_some()
            || self.up.dir != Dir::UP
            || self.front.dir != Dir::FRONT
    }

    /// `product` turned into the canonical frame (a clone when it is already there).
    pub fn apply(&self, product: &Product) -> Product {
        if self.turns() {
            turned(product, self.rotation())
        } else {
            product.clone()
        }
    }

    /// The metadata: for up and front, the file's axis, its source and why; whether the
    /// product was turned; whether its turn about the vertical axis is the shape's.
    pub fn to_json(&self) -> serde_json::Value {
        let axis = |a: &AxisChoice| {
            json!({
                "file_axis": a.dir.as_str(),
                "source": a.source.as_str(),
                "why": a.why,
            })
        };
        json!({
            "read_as": self.category.as_str(),
            "up": axis(&self.up),
            "front": axis(&self.front),
            "turned": self.turns(),
            "yaw_from_shape": !self.yaw_free,
            "squared": self.squared.as_ref().map(|s| json!({
                "about_file_axis": s.axis.as_str(),
                "turn_deg": s.angle_deg,
                "why": s.why(),
            })),
            "levelled": self.levelled.as_ref().map(|l| json!({
                "hole_axis_in_file": l.axis.to_array(),
                "onto_file_axis": l.onto.as_str(),
                "tilt_deg": l.tilt_deg,
                "why": l.why(),
            })),
        })
    }
}

/// A copy of `product` with its positions and normals turned by the rotation `r`.
pub(crate) fn turned(product: &Product, r: Mat3) -> Product {
    let mut out = product.clone();
    for p in &mut out.primitives {
        for v in &mut p.positions {
            *v = (r * Vec3::from(*v)).to_array();
        }
        for n in &mut p.normals {
            *n = (r * Vec3::from(*n)).to_array();
        }
    }
    out
}

/// Centimetres per file unit for a product whose `extent` (in file units) must measure
/// `cm` in reality: metres (100) when that fits, else centimetres (1), else millimetres
/// (0.1); `None` when none does.
pub fn unit_to_cm(extent: f32, cm: std::ops::RangeInclusive<f32>) -> Option<f32> {
    [100.0f32, 1.0, 0.1]
        .into_iter()
        .find(|k| cm.contains(&(extent * k)))
}

/// The canonical pose of `product` read as `category` (see the module docs).
pub fn infer(product: &Product, category: PoseCategory) -> Pose {
    let pinned = |key: &str| {
        product
            .meta
            .other
            .get(key)
            .and_then(|v| v.as_str())
            .and_then(Dir::parse)
    };
    let (up_pin, front_pin) = (pinned("up"), pinned("front"));
    let cloud = shape::Cloud::of(product);
    // Eyewear lying between the file's axes is squared first (not when the extras pin an
    // axis of the file's frame).
    let squared = match &cloud {
        Some(c) if category == PoseCategory::Eyewear && up_pin.is_none() && front_pin.is_none() => {
            square::squaring(c)
        }
        _ => None,
    };
    // A band tilted on all axes is levelled first (likewise).
    let levelled = match &cloud {
        Some(c) if category == PoseCategory::Band && up_pin.is_none() && front_pin.is_none() => {
            level::levelling(c)
        }
        _ => None,
    };
    let cloud = match (&squared, &levelled) {
        (Some(s), _) => shape::Cloud::of(&s.apply(product)),
        (None, Some(l)) => shape::Cloud::of(&l.apply(product)),
        (None, None) => cloud,
    };
    let mut pose = match cloud {
        Some(c) => shape::infer(&c, category, up_pin),
        None => Pose::identity(category, "the model has no extent"),
    };
    pose.squared = squared;
    pose.levelled = levelled;
    if let Some(up) = up_pin {
        pose.up = AxisChoice {
            dir: up,
            source: PoseSource::Extras,
            why: "extras.vto.up".into(),
        };
    }
    if let Some(front) = front_pin.filter(|f| f.axis() != pose.up.dir.axis()) {
        pose.front = AxisChoice {
            dir: front,
            source: PoseSource::Extras,
            why: "extras.vto.front".into(),
        };
        pose.yaw_free = false;
    }
    if pose.front.dir.axis() == pose.up.dir.axis() {
        // Only reachable when extras pin an up on the shape's front axis: the file's front,
        // else the rule.
        let dir = [Dir::FRONT, Dir(0), Dir(4), Dir(2)]
            .into_iter()
            .find(|d| d.axis() != pose.up.dir.axis())
            .unwrap_or(Dir(0));
        pose.front = AxisChoice {
            dir,
            source: if dir == Dir::FRONT {
                PoseSource::File
            } else {
                PoseSource::Rule
            },
            why: "the shape's front lay on the pinned up axis".into(),
        };
        pose.yaw_free = true;
    }
    pose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_take_the_chosen_axes_to_up_and_front_and_are_proper() {
        for up in Dir::ALL {
            for front in Dir::ALL.into_iter().filter(|f| f.axis() != up.axis()) {
                let mut pose = Pose::identity(PoseCategory::Hat, "");
                pose.up.dir = up;
                pose.front.dir = front;
                let r = pose.rotation();
                assert!((r * up.vec() - Vec3::Y).length() < 1e-6);
                assert!((r * front.vec() - Vec3::Z).length() < 1e-6);
                assert!((r.determinant() - 1.0).abs() < 1e-6);
            }
        }
        assert_eq!(Dir::parse("-Z"), Some(Dir(5)));
        assert_eq!(Dir::parse("y"), Some(Dir::UP));
        assert_eq!(Dir::parse("up"), None);
    }
}
