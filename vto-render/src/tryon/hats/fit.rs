//! Reading a hat model (its kind, its head opening) and fitting the head (the skull under
//! the hair and the band where a hat's opening rests), both in pure geometry so they can be
//! tested without a GPU or a photo.

use crate::math::{Mat3, Vec3};
use crate::product::pose::shape::{rim_reach, Cloud};
use crate::product::pose::Dir;
use crate::product::Product;

/// Head breadth as a multiple of the face width (landmarks 234–454 in 3D): the skull is
/// wider above the ears than the face at the tragus (anthropometric averages, about
/// 152 mm / 136 mm).
pub const HEAD_BREADTH_PER_FACE_WIDTH: f32 = 1.12;
/// Head length (glabella to the back of the skull) as a multiple of the face width.
pub const HEAD_LENGTH_PER_FACE_WIDTH: f32 = 1.48;
/// Hair between the skull and a hat, centimetres on every side, when the photo's person mask
/// does not say (see [`super::hair_thickness`]).
pub const HAIR_CM: f32 = 0.7;
/// The least and the most hair a hat rests on (cm).
pub const HAIR_RANGE_CM: (f32, f32) = (0.4, 1.2);

/// The three hat kinds: where the opening sits on the head differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HatKind {
    /// A cap with a visor at the front.
    Cap,
    /// A hat with a brim all around (fedora, trilby, panama, sun hat).
    Brimmed,
    /// A beanie: no brim, worn lower (down to the brows' top and the nape).
    Beanie,
}

impl HatKind {
    /// `cap`, `brimmed` or `beanie`.
    pub fn as_str(self) -> &'static str {
        match self {
            HatKind::Cap => "cap",
            HatKind::Brimmed => "brimmed",
            HatKind::Beanie => "beanie",
        }
    }

    /// The hat kind a request's `product_kind` names (`None` for a kind of another
    /// category).
    pub fn from_request(kind: vto_core::ProductKind) -> Option<HatKind> {
        use vto_core::ProductKind as K;
        match kind {
            K::Cap => Some(HatKind::Cap),
            K::Brimmed => Some(HatKind::Brimmed),
            K::Beanie => Some(HatKind::Beanie),
            _ => None,
        }
    }

    /// A kind from a word: the extras' `kind` or a node / mesh name.
    pub fn from_word(word: &str) -> Option<HatKind> {
        let w = word.to_ascii_lowercase();
        let has = |keys: &[&str]| keys.iter().any(|k| w.contains(k));
        if has(&[
            "beanie",
            "toque",
            "knit",
            "bonnet",
            "watch_cap",
            "watch cap",
        ]) {
            Some(HatKind::Beanie)
        } else if has(&["cap", "visor", "snapback", "trucker"]) {
            Some(HatKind::Cap)
        } else if has(&[
            "brim", "fedora", "trilby", "panama", "bowler", "derby", "cowboy", "sun_hat", "sunhat",
            "boater",
        ]) {
            Some(HatKind::Brimmed)
        } else {
            None
        }
    }
}

/// Where a product's kind came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindSource {
    /// glTF extras `{"vto": {"kind": ...}}`.
    Extras,
    /// A node or mesh name.
    Name,
    /// The shape (a visor, a brim, neither).
    Shape,
    /// The shape allowed two kinds and the photo decided (jewelry: ears but no hand, so
    /// earrings rather than a ring).
    Photo,
    /// The request's `product_kind`.
    Request,
}

impl KindSource {
    /// `extras`, `name`, `shape`, `photo` or `request`.
    pub fn as_str(self) -> &'static str {
        match self {
            KindSource::Extras => "extras",
            KindSource::Name => "name",
            KindSource::Shape => "shape",
            KindSource::Photo => "photo",
            KindSource::Request => "request",
        }
    }
}

/// What was read off a hat model, in its own units and frame.
#[derive(Debug, Clone, PartialEq)]
pub struct HatModel {
    /// The kind and where it came from.
    pub kind: (HatKind, KindSource),
    /// The centre of the head opening.
    pub origin: Vec3,
    /// The outer breadth of the hat just above its opening (along x).
    pub breadth: f32,
    /// Its outer length there (along z).
    pub length: f32,
    /// How high its top reaches above the opening (along y).
    pub crown: f32,
    /// `None` when the model follows the conventions (origin at the opening's centre, the
    /// opening at y = 0, 0.12–0.30 m wide), else why it was auto-fitted.
    pub auto_fit: Option<String>,
    /// How far the opening rises from back to front in the file (radians; 0 when level or
    /// conventional): the placement levels it before tilting it onto the band.
    pub opening_tilt: f32,
}

/// Where the triangles of `product` cross the horizontal plane at height `y`: a point on
/// each edge that crosses it.
fn crossing(product: &Product, y: f32) -> Vec<Vec3> {
    let mut out = Vec::new();
    for prim in &product.primitives {
        let v = |i: u32| prim.positions.get(i as usize).map(|p| Vec3::from(*p));
        for t in prim.indices.chunks_exact(3) {
            let (Some(a), Some(b), Some(c)) = (v(t[0]), v(t[1]), v(t[2])) else {
                continue;
            };
            for (p, q) in [(a, b), (b, c), (c, a)] {
                if (p.y - y) * (q.y - y) < 0.0 {
                    out.push(p + (q - p) * ((y - p.y) / (q.y - p.y)));
                }
            }
        }
    }
    out
}

/// How a horizontal slice of a hat's surface is sampled.
enum Slicer<'a> {
    /// The vertices within the slice (dense meshes; the measure the samples were made to).
    Vertices(&'a [Vec3]),
    /// The triangles' edges crossing the slice's middle: a low-poly hat (a cap of 1,400
    /// triangles) has no vertex in most of its wall's slices.
    Crossings(&'a Product),
}

impl Slicer<'_> {
    /// The surface points of the slice `[y0, y1)`.
    fn points(&self, y0: f32, y1: f32) -> Vec<Vec3> {
        match self {
            Slicer::Vertices(points) => points
                .iter()
                .filter(|p| p.y >= y0 && p.y < y1)
                .copied()
                .collect(),
            Slicer::Crossings(product) => crossing(product, (y0 + y1) / 2.0),
        }
    }
}

/// The wall's slices: five, from 6 % to 21 % of the crown's `height` above `base_y`, each
/// 3 % thick (brims and visors reach out below that band, not in it).
fn wall_slices(base_y: f32, height: f32) -> impl Iterator<Item = (f32, f32)> {
    (0..5).map(move |s| {
        let y0 = base_y + height * (0.06 + 0.03 * s as f32);
        (y0, y0 + height * 0.03)
    })
}

/// The breadth (x) of the hat's wall: per slice ([`wall_slices`]), twice the largest
/// |x − cx| of the surface near the middle of the depth; the smallest over the slices.
/// `None` when no slice holds surface there.
fn wall_breadth(
    slicer: &Slicer,
    base_y: f32,
    height: f32,
    cx: f32,
    cz: f32,
    half_depth: f32,
) -> Option<f32> {
    let mut best: Option<f32> = None;
    for (y0, y1) in wall_slices(base_y, height) {
        let m = slicer
            .points(y0, y1)
            .iter()
            .filter(|p| (p.z - cz).abs() < 0.35 * half_depth)
            .map(|p| (p.x - cx).abs())
            .fold(None, |a: Option<f32>, v| Some(a.map_or(v, |a| a.max(v))));
        if let Some(m) = m {
            best = Some(best.map_or(2.0 * m, |b| b.min(2.0 * m)));
        }
    }
    best
}

/// The length (z) of the hat's wall: as [`wall_breadth`], across the front and back of the
/// surface near the middle of its breadth, the smallest over the slices. A side reaching
/// 1.3 × farther from the crown's centre `cz` than the other is a visor at that height: the
/// wall is then twice the other side's reach. Slices with surface on one side of `cz` only
/// are skipped.
fn wall_length(
    slicer: &Slicer,
    base_y: f32,
    height: f32,
    cx: f32,
    cz: f32,
    half_width: f32,
) -> Option<f32> {
    let mut best: Option<f32> = None;
    for (y0, y1) in wall_slices(base_y, height) {
        let (lo, hi) = slicer
            .points(y0, y1)
            .iter()
            .filter(|p| (p.x - cx).abs() < 0.35 * half_width)
            .fold((f32::MAX, f32::MIN), |(lo, hi), p| {
                (lo.min(p.z), hi.max(p.z))
            });
        // A slice with surface on one side of the centre only (a cap's back opening over
        // its strap) does not measure the wall.
        let (back, front) = (cz - lo, hi - cz);
        if back <= 0.0 || front <= 0.0 {
            continue;
        }
        let l = if front > 1.3 * back {
            2.0 * back
        } else if back > 1.3 * front {
            2.0 * front
        } else {
            hi - lo
        };
        best = Some(best.map_or(l, |b| b.min(l)));
    }
    best
}

/// Reads the kind and the opening off `product` (see the module docs of [`super`]).
pub fn read_model(product: &Product) -> Option<HatModel> {
    read_model_levelled(product, true)
}

/// [`read_model`]; an auto-fitted model whose rim rises or falls to the front
/// ([`opening_slope`]) is, when `levelling`, measured turned level about x and its
/// [`HatModel::opening_tilt`] says by how much.
fn read_model_levelled(product: &Product, levelling: bool) -> Option<HatModel> {
    let points: Vec<Vec3> = product
        .primitives
        .iter()
        .flat_map(|p| &p.positions)
        .map(|p| Vec3::from(*p))
        .collect();
    let (lo, hi) = product.bounds();
    let (lo, hi) = (Vec3::from(lo), Vec3::from(hi));
    let size = hi - lo;
    if points.is_empty() || size.min_element() <= 0.0 || !size.is_finite() {
        return None;
    }
    let height = size.y;
    // Conventions: the opening at y = 0 with the hat above it, centred in x.
    let conventional_units = (0.12..=0.30).contains(&size.x);
    let centred = (lo.x + hi.x).abs() < 0.04 * size.x;
    // At or below y = 0 (within 1 % of the height: a scan's lowest point 0.2 mm up is there).
    let origin_low = lo.y <= 0.01 * height && lo.y > -0.5 * height && hi.y > 0.5 * height;
    let half_depth = size.z / 2.0;
    let slicers = [Slicer::Vertices(&points), Slicer::Crossings(product)];
    // The crown's centre (the box of the upper half: a visor or a long brim stays below).
    let (clo, chi) =
        points
            .iter()
            .filter(|p| p.y > lo.y + 0.5 * height)
            .fold((lo, hi), |(a, b), p| {
                if a == lo && b == hi {
                    (*p, *p)
                } else {
                    (a.min(*p), b.max(*p))
                }
            });
    let (cx, cz) = ((clo.x + chi.x) / 2.0, (clo.z + chi.z) / 2.0);
    let (origin, auto_fit, opening_tilt) = if conventional_units && centred && origin_low {
        (Vec3::ZERO, None, 0.0)
    } else {
        // The opening: the lowest point of the wall, i.e. of the vertices inside the crown's
        // outline (its breadth first measured well above any brim), at the box's centre.
        let rough = slicers
            .iter()
            .find_map(|s| wall_breadth(s, lo.y + 0.15 * height, height, cx, cz, half_depth))
            .unwrap_or(size.x);
        let (a, b) = (rough / 2.0, rough / 2.0 * 1.32);
        let wall: Vec<Vec3> = points
            .iter()
            .filter(|p| ((p.x - cx) / a).powi(2) + ((p.z - cz) / b).powi(2) <= 1.1 * 1.1)
            .copied()
            .collect();
        let wall_y = wall.iter().map(|p| p.y).fold(f32::MAX, f32::min);
        if let Some(tilt) = opening_slope(&wall, cz, b).filter(|_| levelling) {
            let level = Mat3::from_rotation_x(tilt);
            let mut flat = product.clone();
            for prim in &mut flat.primitives {
                for v in &mut prim.positions {
                    *v = (level * Vec3::from(*v)).to_array();
                }
            }
            let mut m = read_model_levelled(&flat, false)?;
            m.origin = level.transpose() * m.origin;
            m.opening_tilt = tilt;
            m.auto_fit = Some(format!(
                "the model is {:.3} units wide and its rim rises {:.0}° from back to front in \
                 the file (a slouchy beanie modelled as worn): it was scaled to the head, its \
                 opening taken on the rim's line and levelled",
                size.x,
                tilt.to_degrees()
            ));
            return Some(m);
        }
        let y = if wall_y < f32::MAX { wall_y } else { lo.y };
        let why = if conventional_units {
            "the origin is not at the centre of the head opening (y = 0, centred); the opening \
             was taken at the bottom of the crown's wall"
                .to_string()
        } else {
            format!(
                "the model is {:.3} units wide, not a 0.12–0.30 m hat; it was scaled to the head \
                 and its opening taken at the bottom of the crown's wall",
                size.x
            )
        };
        (Vec3::new(cx, y, cz), Some(why), 0.0)
    };
    let crown = hi.y - origin.y;
    // The vertices first; where they do not sample the wall (a low-poly hat), the triangles.
    let breadth = slicers
        .iter()
        .find_map(|s| {
            wall_breadth(s, origin.y, crown, origin.x, origin.z, half_depth)
                .filter(|b| *b > 0.2 * size.x)
        })
        .unwrap_or(size.x);
    let length = slicers
        .iter()
        .find_map(|s| {
            wall_length(s, origin.y, crown, origin.x, origin.z, size.x / 2.0)
                .filter(|l| *l > 0.5 * breadth)
        })
        .unwrap_or(breadth * HEAD_LENGTH_PER_FACE_WIDTH / HEAD_BREADTH_PER_FACE_WIDTH);
    let kind = kind_of(product);
    Some(HatModel {
        kind,
        origin,
        breadth,
        length,
        crown,
        auto_fit,
        opening_tilt,
    })
}

/// The least tilt (radians) of a rim that [`read_model`] takes for the model's own: the
/// corpus's caps, top hat and western hat measure under 10°; its slouchy beanie, modelled
/// as worn, 15°.
pub const MIN_OPENING_TILT: f32 = 0.17;

/// The rim's line under the wall's points `wall` (the crown's outline, centred at `cz`,
/// `half_length` long each way): the lowest point in each of ten bins along z, fitted by a
/// line; its tilt (front up, radians), when it tilts at least [`MIN_OPENING_TILT`] either
/// way. A rim lower at the back than at the front by more than
/// that is the model's own slope (a slouchy beanie hangs over the nape), which a level
/// opening at its lowest point would carry onto the forehead as the front hanging high.
fn opening_slope(wall: &[Vec3], cz: f32, half_length: f32) -> Option<f32> {
    const BINS: usize = 10;
    let mut low = [f32::MAX; BINS];
    for p in wall {
        let t = (p.z - (cz - half_length)) / (2.0 * half_length);
        let i = (t * BINS as f32).floor();
        if (0.0..BINS as f32).contains(&i) {
            low[i as usize] = low[i as usize].min(p.y);
        }
    }
    let pts: Vec<(f32, f32)> = low
        .iter()
        .enumerate()
        .filter(|(_, y)| **y < f32::MAX)
        .map(|(i, y)| {
            let z = cz - half_length + (i as f32 + 0.5) / BINS as f32 * 2.0 * half_length;
            (z - cz, *y)
        })
        .collect();
    if pts.len() < BINS / 2 {
        return None;
    }
    let n = pts.len() as f32;
    let (mz, my) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), (z, y)| (a + z / n, b + y / n));
    let (szz, szy) = pts.iter().fold((0.0, 0.0), |(a, b), (z, y)| {
        (a + (z - mz) * (z - mz), b + (z - mz) * (y - my))
    });
    if szz <= 0.0 {
        return None;
    }
    let m = szy / szz;
    let tilt = m.atan();
    (tilt.abs() >= MIN_OPENING_TILT).then_some(tilt)
}

/// The kind: the extras, else a name, else the shape (the model in its canonical pose,
/// +Y up, see [`crate::product::pose`]): measured against the crown (the part above 60 % of
/// the height), the rim-level parts (below 30 %) reaching 1.45 × the crown's half-width or
/// more on one side only (the others under 1.3 ×) are a visor: a cap; reaching 1.4 × on
/// every side, or a hat in metres wider than 30 cm, a brim: a brimmed hat; neither a
/// beanie (its rim flares about 1.2 × under its dome).
fn kind_of(product: &Product) -> (HatKind, KindSource) {
    if let Some(k) = product.meta.kind.as_deref().and_then(HatKind::from_word) {
        return (k, KindSource::Extras);
    }
    if let Some(k) = product
        .meta
        .names
        .iter()
        .find_map(|n| HatKind::from_word(n))
    {
        return (k, KindSource::Name);
    }
    let (lo, hi) = product.bounds();
    let span = (hi[0] - lo[0]).max(hi[2] - lo[2]);
    let reach = Cloud::of(product).and_then(|c| rim_reach(&c, Dir::UP, [0, 2]));
    let kind = match reach {
        Some((_, r)) => {
            let mut sorted = r;
            sorted.sort_by(f32::total_cmp);
            if sorted[3] > 1.45 && sorted[2] < 1.3 {
                HatKind::Cap
            } else if sorted[0] >= 1.4 || (0.30..=0.60).contains(&span) {
                HatKind::Brimmed
            } else {
                HatKind::Beanie
            }
        }
        None => HatKind::Beanie,
    };
    (kind, KindSource::Shape)
}

/// The head under the hair in the head frame (cm): an ellipsoid sized from the face.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Skull {
    /// Centre.
    pub centre: Vec3,
    /// Semi-axes.
    pub radii: Vec3,
}

impl Skull {
    /// The skull of a face `face_width` cm wide (234–454) and `face_height` cm tall (10–152),
    /// whose forehead top (landmark 10) is at `forehead` in the head frame: as broad and long
    /// as [`HEAD_BREADTH_PER_FACE_WIDTH`] and [`HEAD_LENGTH_PER_FACE_WIDTH`] say, its top
    /// 0.5 × the face height above landmark 10, its front through landmark 10.
    pub fn new(face_width: f32, face_height: f32, forehead: Vec3, centre_x: f32) -> Skull {
        let a = HEAD_BREADTH_PER_FACE_WIDTH * face_width / 2.0;
        let c = HEAD_LENGTH_PER_FACE_WIDTH * face_width / 2.0;
        let b = 0.66 * face_height;
        let cy = forehead.y + 0.5 * face_height - b;
        let dy = (forehead.y - cy) / b;
        let cz = forehead.z - c * (1.0 - dy * dy).max(0.0).sqrt();
        Skull {
            centre: Vec3::new(centre_x, cy, cz),
            radii: Vec3::new(a, b, c),
        }
    }

    /// The same ellipsoid grown by `d` cm on every axis.
    pub fn grown(&self, d: f32) -> Skull {
        Skull {
            centre: self.centre,
            radii: self.radii + Vec3::splat(d),
        }
    }

    /// The surface point at height `y` on the front (`dir` = 1) or back (−1) of the midline.
    pub fn midline(&self, y: f32, dir: f32) -> Vec3 {
        let dy = ((y - self.centre.y) / self.radii.y).clamp(-1.0, 1.0);
        let z = self.radii.z * (1.0 - dy * dy).sqrt();
        Vec3::new(self.centre.x, y, self.centre.z + dir * z)
    }

    /// The breadth of the horizontal section at height `y`.
    pub fn breadth_at(&self, y: f32) -> f32 {
        let dy = ((y - self.centre.y) / self.radii.y).clamp(-1.0, 1.0);
        2.0 * self.radii.x * (1.0 - dy * dy).sqrt()
    }
}

/// Where a hat's opening rests (head frame, cm).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The centre of the opening.
    pub centre: Vec3,
    /// How far the opening's plane is tilted, front up (radians).
    pub tilt: f32,
    /// The opening's breadth on the hair.
    pub breadth: f32,
    /// The opening's length on the hair (front to back).
    pub length: f32,
    /// The opening's front point (on the forehead, over the hair).
    pub front: Vec3,
}

/// The band of a `kind` on `skull` grown by `hair` cm, of a face whose forehead top
/// (landmark 10) is at `forehead`: caps and brimmed hats rest 1.5 cm below landmark 10 at
/// the front (about 2 cm above the brows) and 1.5 cm below the skull's mid height at the
/// back; beanies 1.9 cm below landmark 10 at the front and 3.5 cm below mid height at the
/// back (over the nape).
pub fn band(kind: HatKind, skull: &Skull, forehead: Vec3, hair: f32) -> Band {
    let hair = skull.grown(hair);
    let (front_y, back_y) = match kind {
        HatKind::Cap | HatKind::Brimmed => (forehead.y - 1.5, skull.centre.y - 1.5),
        HatKind::Beanie => (forehead.y - 1.9, skull.centre.y - 3.5),
    };
    let front = hair.midline(front_y, 1.0);
    let back = hair.midline(back_y, -1.0);
    let centre = (front + back) / 2.0;
    let d = front - back;
    Band {
        centre,
        tilt: d.y.atan2(d.z),
        breadth: hair.breadth_at(centre.y),
        length: d.length(),
        front,
    }
}

/// The most a crown is stretched in height beyond the breadth's scale ([`crown_scale`]): a
/// cap exported flat (its crown at 55 % of its height) on the astronaut's head then shows 0.9
/// of the crown the sample cap shows over her hair (1.6: 0.78).
pub const MAX_CROWN_STRETCH: f32 = 1.8;

/// How far (cm) a crown's top may lie inside the skull model before [`crown_scale`]
/// stretches it: the skull is an estimate from the face, and a hat's top presses the hair
/// (the sample cap, made to the conventions, lies 0.2–0.3 cm inside it).
pub const CROWN_SINK_CM: f32 = 0.5;

/// The scale along the hat's height: the breadth's `k`, or more when the top of a crown
/// `crown` units high above the opening, rising along `up` (the band's tilted up axis) from
/// the band's `centre`, would lie deeper than [`CROWN_SINK_CM`] inside the `skull`. A crown
/// lower than the head it sits on is hidden inside the head occluder (the skull), leaving
/// the visor or brim floating at the brows (a cap made for a larger head, a model scaled
/// wrongly along its height, a soft cap that takes the head's shape): its height is
/// stretched to clear it, by at most [`MAX_CROWN_STRETCH`].
pub fn crown_scale(k: f32, crown: f32, centre: Vec3, up: Vec3, skull: &Skull) -> f32 {
    let grown = skull.grown(-CROWN_SINK_CM);
    let outside = |ky: f32| {
        let d = (centre + up * (crown * ky) - grown.centre) / grown.radii;
        d.length_squared() >= 1.0
    };
    let (mut lo, mut hi) = (k, MAX_CROWN_STRETCH * k);
    if outside(lo) {
        return lo;
    }
    if !outside(hi) {
        return hi;
    }
    for _ in 0..32 {
        let mid = (lo + hi) / 2.0;
        if outside(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::product::hats::{SampleHat, OPENING};

    #[test]
    fn samples_follow_the_conventions_and_their_kinds_are_read_three_ways() {
        for hat in SampleHat::ALL {
            let mut p = hat.product();
            let m = read_model(&p).expect("a hat");
            assert!(m.auto_fit.is_none(), "{}: {:?}", hat.name(), m.auto_fit);
            assert_eq!(m.origin, Vec3::ZERO);
            assert!(
                (m.breadth / OPENING[0] - 1.03).abs() < 0.06,
                "{}: breadth {}",
                hat.name(),
                m.breadth
            );
            let want = HatKind::from_word(hat.kind()).unwrap();
            assert_eq!(m.kind, (want, KindSource::Extras));
            p.meta.kind = None;
            assert_eq!(read_model(&p).unwrap().kind, (want, KindSource::Name));
            p.meta.names.clear();
            assert_eq!(read_model(&p).unwrap().kind, (want, KindSource::Shape));
        }
    }

    #[test]
    fn a_model_in_centimetres_off_centre_is_auto_fitted_with_the_same_opening() {
        let mut p = SampleHat::FedoraFelt.product();
        for prim in &mut p.primitives {
            for v in &mut prim.positions {
                *v = [v[0] * 100.0 + 5.0, v[1] * 100.0 + 20.0, v[2] * 100.0];
            }
        }
        let m = read_model(&p).unwrap();
        assert!(m.auto_fit.is_some());
        let conv = read_model(&SampleHat::FedoraFelt.product()).unwrap();
        assert!(
            (m.breadth / 100.0 - conv.breadth).abs() < 0.04 * conv.breadth,
            "{} vs {} at {:?}",
            m.breadth / 100.0,
            conv.breadth,
            m.origin
        );
        assert!((m.origin.x - 5.0).abs() < 0.5, "{:?}", m.origin);
    }

    /// The sample beanie in centimetres, its rim tilted `deg` front up (about x).
    fn beanie_tilted(deg: f32) -> Product {
        let mut p = SampleHat::BeanieKnit.product();
        let (s, c) = deg.to_radians().sin_cos();
        for prim in &mut p.primitives {
            for v in &mut prim.positions {
                let (y, z) = (v[1] * 100.0, v[2] * 100.0);
                *v = [v[0] * 100.0, c * y + s * z, -s * y + c * z];
            }
        }
        p
    }

    #[test]
    fn a_rim_rising_to_the_front_is_read_as_the_model_s_own_tilt_and_a_level_one_is_not() {
        for (deg, want) in [(0.0, 0.0), (5.0, 0.0), (17.0, 17.0), (-15.0, -15.0)] {
            let m = read_model(&beanie_tilted(deg)).unwrap();
            assert!(m.auto_fit.is_some());
            assert!(
                (m.opening_tilt.to_degrees() - want).abs() < 2.5,
                "tilted {deg}°: read {:.1}°",
                m.opening_tilt.to_degrees()
            );
        }
        // Levelled, the tilted beanie's opening is measured as the level one's.
        let (level, tilted) = (
            read_model(&beanie_tilted(0.0)).unwrap(),
            read_model(&beanie_tilted(17.0)).unwrap(),
        );
        assert!(
            (tilted.breadth / level.breadth - 1.0).abs() < 0.05,
            "breadth {} vs {}",
            tilted.breadth,
            level.breadth
        );
    }

    #[test]
    fn a_low_crown_is_stretched_to_clear_the_skull_and_a_tall_one_is_not() {
        let forehead = Vec3::new(0.0, 7.5, 0.2);
        let skull = Skull::new(13.2, 15.0, forehead, 0.0);
        let b = band(HatKind::Cap, &skull, forehead, HAIR_CM);
        let up = Vec3::new(0.0, b.tilt.cos(), -b.tilt.sin());
        let grown = skull.grown(-CROWN_SINK_CM);
        let inside = |h: f32| ((b.centre + up * h - grown.centre) / grown.radii).length() < 1.0;
        // A crown 12 cm high at k = 1 (model in cm) reaches over the hair: unchanged.
        assert!(!inside(12.0));
        assert_eq!(crown_scale(1.0, 12.0, b.centre, up, &skull), 1.0);
        // One 8 cm high is inside, and lifted just over it.
        assert!(inside(8.0));
        let ky = crown_scale(1.0, 8.0, b.centre, up, &skull);
        assert!(
            ky > 1.0 && !inside(8.0 * ky) && inside(8.0 * ky - 0.01),
            "{ky}"
        );
        // A flat one by at most the limit.
        let flat = crown_scale(2.0, 1.0, b.centre, up, &skull);
        assert_eq!(flat, 2.0 * MAX_CROWN_STRETCH);
    }

    #[test]
    fn the_band_sits_above_the_brows_and_tilts_back() {
        let forehead = Vec3::new(0.0, 7.5, 0.2);
        let skull = Skull::new(13.2, 15.0, forehead, 0.0);
        // The skull passes through the forehead and is about 19.5 cm long, 15 cm broad.
        let f = skull.midline(forehead.y, 1.0);
        assert!((f.z - forehead.z).abs() < 1e-3);
        assert!((skull.radii.z * 2.0 - 19.5).abs() < 0.5);
        for kind in [HatKind::Cap, HatKind::Brimmed, HatKind::Beanie] {
            let b = band(kind, &skull, forehead, HAIR_CM);
            assert!(b.front.y > 5.5, "{kind:?}: above the brows (y ≈ 5)");
            assert!(
                b.front.z > forehead.z,
                "{kind:?}: over the hair, in front of the skin"
            );
            let deg = b.tilt.to_degrees();
            assert!((3.0..25.0).contains(&deg), "{kind:?}: tilt {deg}");
            assert!((14.5..17.5).contains(&b.breadth), "{kind:?}: {}", b.breadth);
        }
        let low = band(HatKind::Beanie, &skull, forehead, HAIR_CM);
        assert!(low.centre.y < band(HatKind::Cap, &skull, forehead, HAIR_CM).centre.y);
        // More hair, a wider band.
        assert!(
            band(HatKind::Cap, &skull, forehead, 2.0).breadth
                > band(HatKind::Cap, &skull, forehead, HAIR_CM).breadth + 2.0
        );
    }
}
