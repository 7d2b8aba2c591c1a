//! Reading up and front off the shape, per category (see [`super`] for the order of
//! evidence). Every measure here is taken on the triangles (centroid, area, face normal) in
//! the file's axes and is unchanged by an axis rotation, a scale or a translation of the
//! model, so the same product exported in another convention is read the same way.
//!
//! - **Eyewear**: the widest axis runs across. The temples are the axis along which the
//!   frame's middle (the bridge, within 20 % of the width of the centre) fills less than
//!   half of the extent: the front is the end that holds the middle, and up is where the
//!   temples run above the front's mid-height. A frame without temples: the shallower of
//!   the other two axes is the depth, its front the way the middle bows forward, up the
//!   way the bridge sits above the middle of the front.
//! - **Shoes**: the longest axis runs heel → toe; up is the direction whose bottom holds the
//!   most flat area facing it (the sole); the toe is the end whose top is lower (the collar
//!   is at the heel).
//! - **Hats**: up is the axis along which a column through the centre of mass meets the
//!   shell at one end only (the crown's top; the other end is the opening). A visor (the
//!   rim-level part reaching far out on one side only) points front; otherwise the front
//!   is along the crown's longer horizontal axis (heads are longer than broad), its sign
//!   the file's (else the rule), and the metadata says the shape cannot tell.
//! - **Earrings**: up is the long axis when there is one (1.15 × the next), the attachment
//!   the end with less area (a hook, a loop, a post over a heavier drop); the front is the
//!   thinnest other axis.
//! - **Bands** (rings, bangles, watches): the finger or wrist runs along the thinnest axis
//!   (the hole's); the front is the side reaching farthest from the hole's centre (the
//!   stone, the dial).
//! - **Necklaces**: the file's pose is kept (how a chain hangs is not read from its shape).

use super::{AxisChoice, Dir, Pose, PoseCategory, PoseSource};
use crate::math::Vec3;
use crate::product::Product;

/// Triangles sampled from a product: centroids, areas and unit face normals, with the
/// vertex bounds.
#[derive(Debug, Clone)]
pub struct Cloud {
    /// Triangle centroids.
    pub c: Vec<Vec3>,
    /// Triangle areas.
    pub a: Vec<f32>,
    /// Unit face normals (zero for degenerate triangles).
    pub n: Vec<Vec3>,
    /// Vertex bounds.
    pub lo: Vec3,
    /// Vertex bounds.
    pub hi: Vec3,
    /// How many of the product's triangles each sampled one stands for (the stride).
    pub weight: f32,
    /// Whether each triangle is see-through (a blended material: a watch's crystal, a
    /// gem, a lens).
    pub clear: Vec<bool>,
}

/// The most triangles read (an even stride over the rest).
pub const MAX_TRIANGLES: usize = 60_000;

impl Cloud {
    /// The triangles of `product` (`None` when it has no extent).
    pub fn of(product: &Product) -> Option<Cloud> {
        let (lo, hi) = product.bounds();
        let (lo, hi) = (Vec3::from(lo), Vec3::from(hi));
        let size = hi - lo;
        if !size.is_finite() || size.max_element() <= 0.0 {
            return None;
        }
        let total = product.triangle_count().max(1);
        let stride = total.div_ceil(MAX_TRIANGLES).max(1);
        let mut cloud = Cloud {
            c: Vec::new(),
            a: Vec::new(),
            n: Vec::new(),
            lo,
            hi,
            weight: stride as f32,
            clear: Vec::new(),
        };
        let mut i = 0usize;
        for p in &product.primitives {
            let clear = product
                .materials
                .get(p.material)
                .is_some_and(|m| m.alpha_mode == crate::product::AlphaMode::Blend);
            for t in p.indices.chunks_exact(3) {
                i += 1;
                if i % stride != 0 {
                    continue;
                }
                let v = |k: u32| p.positions.get(k as usize).map(|q| Vec3::from(*q));
                let (Some(a), Some(b), Some(c)) = (v(t[0]), v(t[1]), v(t[2])) else {
                    continue;
                };
                let cr = (b - a).cross(c - a);
                let area = cr.length() / 2.0;
                if !area.is_finite() {
                    continue;
                }
                cloud.c.push((a + b + c) / 3.0);
                cloud.a.push(area);
                cloud.n.push(cr.normalize_or_zero());
                cloud.clear.push(clear);
            }
        }
        (!cloud.c.is_empty()).then_some(cloud)
    }

    /// A cloud of unit-area points with no normals (tests of the pose readers).
    #[cfg(test)]
    pub(crate) fn of_points(points: Vec<Vec3>) -> Cloud {
        let lo = points.iter().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
        let hi = points.iter().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p));
        Cloud {
            a: vec![1.0; points.len()],
            n: vec![Vec3::ZERO; points.len()],
            clear: vec![false; points.len()],
            c: points,
            lo,
            hi,
            weight: 1.0,
        }
    }

    fn ext(&self, axis: usize) -> f32 {
        (self.hi[axis] - self.lo[axis]).max(1e-12)
    }

    fn mid(&self, axis: usize) -> f32 {
        (self.hi[axis] + self.lo[axis]) / 2.0
    }

    /// Where `p` lies along `d`, 0 at the box's end opposite `d`, 1 at its end toward `d`.
    fn t(&self, p: Vec3, d: Dir) -> f32 {
        let a = d.axis();
        let u = (p[a] - self.lo[a]) / self.ext(a);
        if d.sign() > 0.0 {
            u
        } else {
            1.0 - u
        }
    }

    fn area_where(&self, f: impl Fn(usize) -> bool) -> f32 {
        (0..self.c.len()).filter(|&i| f(i)).map(|i| self.a[i]).sum()
    }

    /// The area-weighted mean of `g` over the triangles where `f` holds.
    fn mean_where(&self, f: impl Fn(usize) -> bool, g: impl Fn(Vec3) -> f32) -> Option<f32> {
        let (mut s, mut w) = (0.0f64, 0.0f64);
        for i in (0..self.c.len()).filter(|&i| f(i)) {
            s += f64::from(self.a[i]) * f64::from(g(self.c[i]));
            w += f64::from(self.a[i]);
        }
        (w > 0.0).then(|| (s / w) as f32)
    }

    /// Min and max of coordinate `axis` over the triangles where `f` holds.
    fn range_where(&self, f: impl Fn(usize) -> bool, axis: usize) -> Option<(f32, f32)> {
        let r = (0..self.c.len())
            .filter(|&i| f(i))
            .fold((f32::MAX, f32::MIN), |(lo, hi), i| {
                (lo.min(self.c[i][axis]), hi.max(self.c[i][axis]))
            });
        (r.0 <= r.1).then_some(r)
    }

    /// The axes sorted by extent, smallest first.
    fn by_extent(&self) -> [usize; 3] {
        let mut axes = [0, 1, 2];
        axes.sort_by(|&a, &b| self.ext(a).total_cmp(&self.ext(b)));
        axes
    }
}

/// The file's direction for a role when the shape cannot tell the sign of `axis`: the
/// file's own (`file`) when it lies on that axis, else + along it.
fn tie(axis: usize, file: Dir, why: String) -> AxisChoice {
    if file.axis() == axis {
        AxisChoice {
            dir: file,
            source: PoseSource::File,
            why,
        }
    } else {
        AxisChoice {
            dir: Dir::along(axis, 1.0),
            source: PoseSource::Rule,
            why,
        }
    }
}

/// The sign of `axis` from evidence `e` (positive: +), the shape's when `|e| > threshold`.
fn signed(axis: usize, e: Option<f32>, threshold: f32, file: Dir, what: &str) -> AxisChoice {
    match e {
        Some(e) if e.abs() > threshold => AxisChoice {
            dir: Dir::along(axis, e),
            source: PoseSource::Shape,
            why: format!("{what} ({e:+.2})"),
        },
        _ => tie(
            axis,
            file,
            format!(
                "{what}: the shape cannot tell the sign ({:+.2})",
                e.unwrap_or(0.0)
            ),
        ),
    }
}

/// The pose of `cloud` read as `category` (`up_pin`: an up the extras pinned, which the
/// front must then be read against).
pub fn infer(cloud: &Cloud, category: PoseCategory, up_pin: Option<Dir>) -> Pose {
    match category {
        PoseCategory::Eyewear => eyewear(cloud),
        PoseCategory::Shoe => shoe(cloud, up_pin),
        PoseCategory::Hat => hat(cloud, up_pin),
        PoseCategory::Earring => earring(cloud),
        PoseCategory::Band => band(cloud),
        PoseCategory::Necklace => Pose::identity(
            category,
            "a necklace keeps the file's pose (how a chain hangs is not read from its shape)",
        ),
    }
}

fn pose(category: PoseCategory, up: AxisChoice, front: AxisChoice, yaw_free: bool) -> Pose {
    Pose {
        category,
        up,
        front,
        yaw_free,
        squared: None,
        levelled: None,
    }
}

fn eyewear(c: &Cloud) -> Pose {
    let [small, mid, large] = c.by_extent();
    // The middle of the frame across `a` (within 20 % of its width of the centre).
    let central = |a: usize| move |i: usize| (c.c[i][a] - c.mid(a)).abs() < 0.2 * c.ext(a);
    // How much of the extent along `d` the middle across `a` fills: little when `d` is the
    // depth of a frame with temples (only the bridge, at the front).
    let fill = |a: usize, d: usize| {
        c.range_where(central(a), d)
            .map_or(1.0, |(lo, hi)| (hi - lo) / c.ext(d))
    };
    // Temples: across and depth are the two larger extents, the one whose middle fills
    // the other least is across.
    let (f_large, f_mid) = (fill(large, mid), fill(mid, large));
    let temples = f_large.min(f_mid) < 0.5 && c.ext(mid) > 0.25 * c.ext(large);
    let (w, depth) = if temples {
        if f_large <= f_mid {
            (large, mid)
        } else {
            (mid, large)
        }
    } else {
        if c.ext(large) < 1.08 * c.ext(mid) || c.ext(small) > 0.7 * c.ext(mid) {
            return Pose::identity(
                PoseCategory::Eyewear,
                "no temples and no clearly widest axis: the frame may be turned between the \
                 file's axes; the file's pose kept",
            );
        }
        (large, small)
    };
    let has_temples = temples;
    let central = central(w);
    let others: Vec<usize> = (0..3).filter(|&a| a != w).collect();
    let up_axis = others.iter().copied().find(|&a| a != depth).unwrap_or(1);
    let (front, up) = if has_temples {
        let e = c
            .mean_where(central, |p| p[depth])
            .map(|m| (m - c.mid(depth)) / c.ext(depth));
        let front = signed(
            depth,
            e,
            0.1,
            Dir::FRONT,
            &format!(
                "the temples run back along {}; the front holds the bridge",
                ["x", "y", "z"][depth]
            ),
        );
        let fd = front.dir;
        let zone = |i: usize, lo: f32, hi: f32| {
            let t = c.t(c.c[i], fd);
            t >= lo && t <= hi
        };
        let front_mid = c.range_where(|i| zone(i, 0.8, 1.0), up_axis);
        let e = match (
            front_mid,
            c.mean_where(|i| zone(i, 0.3, 0.7), |p| p[up_axis]),
        ) {
            (Some((lo, hi)), Some(m)) => Some((m - (lo + hi) / 2.0) / (hi - lo).max(1e-12)),
            _ => None,
        };
        let up = signed(
            up_axis,
            e,
            0.08,
            Dir::UP,
            "the temples run above the front's mid-height",
        );
        (front, up)
    } else {
        let side = |i: usize| (c.c[i][w] - c.mid(w)).abs() > 0.35 * c.ext(w);
        let e = match (
            c.mean_where(central, |p| p[depth]),
            c.mean_where(side, |p| p[depth]),
        ) {
            (Some(m), Some(s)) => Some((m - s) / c.ext(depth)),
            _ => None,
        };
        let front = signed(
            depth,
            e,
            0.1,
            Dir::FRONT,
            "no temples; the front bows forward at the bridge",
        );
        let e = c
            .mean_where(central, |p| p[up_axis])
            .map(|m| (m - c.mid(up_axis)) / c.ext(up_axis));
        let up = signed(
            up_axis,
            e,
            0.1,
            Dir::UP,
            "no temples; the bridge sits above the front's middle",
        );
        (front, up)
    };
    pose(PoseCategory::Eyewear, up, front, false)
}

/// The flat area facing `d` at the bottom of the box along `d` (the sole when `d` is up),
/// over the box's face across `d`.
fn flat_bottom(c: &Cloud, d: Dir) -> f32 {
    let v = d.vec();
    let a = d.axis();
    let face: f32 = (0..3).filter(|&k| k != a).map(|k| c.ext(k)).product();
    c.area_where(|i| c.n[i].dot(v).abs() > 0.85 && c.t(c.c[i], d) < 0.08) / face.max(1e-12)
}

fn shoe(c: &Cloud, up_pin: Option<Dir>) -> Pose {
    let long = c.by_extent()[2];
    let up = match up_pin {
        Some(u) => AxisChoice {
            dir: u,
            source: PoseSource::Extras,
            why: String::new(),
        },
        None => {
            let mut scored: Vec<(Dir, f32)> = Dir::ALL
                .into_iter()
                .filter(|d| d.axis() != long)
                .map(|d| (d, flat_bottom(c, d)))
                .collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            let (best, second) = (scored[0], scored[1]);
            if best.1 > 1.4 * second.1 {
                AxisChoice {
                    dir: best.0,
                    source: PoseSource::Shape,
                    why: format!(
                        "the sole: the flat bottom faces {} ({:.2} of the box's face, next {:.2})",
                        best.0.flip().as_str(),
                        best.1,
                        second.1
                    ),
                }
            } else if long != 1 {
                AxisChoice {
                    dir: Dir::UP,
                    source: PoseSource::File,
                    why: format!(
                        "no clearly flat sole ({:.2} vs {:.2}): the file's up kept",
                        best.1, second.1
                    ),
                }
            } else {
                AxisChoice {
                    dir: best.0,
                    source: PoseSource::Shape,
                    why: format!(
                        "the flattest bottom, weakly ({:.2} vs {:.2})",
                        best.1, second.1
                    ),
                }
            }
        }
    };
    let ua = up.dir.axis();
    let long = if long == ua {
        (0..3)
            .filter(|&a| a != ua)
            .max_by(|&a, &b| c.ext(a).total_cmp(&c.ext(b)))
            .unwrap_or(2)
    } else {
        long
    };
    // The mean height of each end's fifth: the toe box is low, the heel counter and the
    // collar rise.
    let d = Dir::along(long, 1.0);
    let mean_up = |lo: f32, hi: f32| {
        c.mean_where(
            |i| {
                let t = c.t(c.c[i], d);
                t >= lo && t <= hi
            },
            |p| c.t(p, up.dir),
        )
    };
    let top_up = |lo: f32, hi: f32| {
        (0..c.c.len())
            .filter(|&i| {
                let t = c.t(c.c[i], d);
                t >= lo && t <= hi
            })
            .map(|i| c.t(c.c[i], up.dir))
            .fold(None, |m: Option<f32>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    // The mean heights, and half the difference of the highest points of each quarter.
    let e = match (
        mean_up(0.0, 0.2),
        mean_up(0.8, 1.0),
        top_up(0.0, 0.25),
        top_up(0.75, 1.0),
    ) {
        (Some(a), Some(b), Some(ta), Some(tb)) => Some(a - b + 0.5 * (ta - tb)),
        _ => None,
    };
    let front = signed(
        long,
        e,
        0.04,
        Dir::FRONT,
        "the toe is the lower end (the heel counter and the collar rise at the back)",
    );
    pose(PoseCategory::Shoe, up, front, false)
}

fn hat(c: &Cloud, up_pin: Option<Dir>) -> Pose {
    let centre = Vec3::new(
        c.mean_where(|_| true, |p| p.x).unwrap_or(0.0),
        c.mean_where(|_| true, |p| p.y).unwrap_or(0.0),
        c.mean_where(|_| true, |p| p.z).unwrap_or(0.0),
    );
    let up = match up_pin {
        Some(u) => AxisChoice {
            dir: u,
            source: PoseSource::Extras,
            why: String::new(),
        },
        None => {
            let mut scored: Vec<(usize, f32)> = (0..3)
                .map(|a| {
                    let (b, d) = ((a + 1) % 3, (a + 2) % 3);
                    let r = 0.15 * c.ext(b).min(c.ext(d));
                    let col = |i: usize| {
                        let p = c.c[i];
                        (p[b] - centre[b]).hypot(p[d] - centre[d]) < r
                    };
                    let hi = c.area_where(|i| col(i) && c.c[i][a] > c.mid(a));
                    let lo = c.area_where(|i| col(i) && c.c[i][a] <= c.mid(a));
                    (a, (hi - lo) / (hi + lo).max(1e-30))
                })
                .collect();
            scored.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()));
            let (best, second) = (scored[0], scored[1]);
            if best.1.abs() > 0.5 && best.1.abs() > second.1.abs() + 0.25 {
                let dir = Dir::along(best.0, best.1);
                AxisChoice {
                    dir,
                    source: PoseSource::Shape,
                    why: format!(
                        "a column through the middle meets the crown's top toward {} only \
                         ({:+.2}; the opening is the other end)",
                        dir.as_str(),
                        best.1
                    ),
                }
            } else {
                AxisChoice {
                    dir: Dir::UP,
                    source: PoseSource::File,
                    why: format!(
                        "no closed top along one axis only ({:+.2} vs {:+.2}): the file's up kept",
                        best.1, second.1
                    ),
                }
            }
        }
    };
    let ua = up.dir.axis();
    let horiz: Vec<usize> = (0..3).filter(|&a| a != ua).collect();
    let Some((crown_of, reach)) = rim_reach(c, up.dir, [horiz[0], horiz[1]]) else {
        let front = tie(2, Dir::FRONT, "no crown to read the front from".into());
        return pose(PoseCategory::Hat, up, front, true);
    };
    let rim = |i: usize| c.t(c.c[i], up.dir) < 0.3;
    let half = |a: usize, f: &dyn Fn(usize) -> bool| {
        c.range_where(f, a)
            .map(|(lo, hi)| ((lo + hi) / 2.0, ((hi - lo) / 2.0).max(1e-12)))
    };
    let reach = |k: usize, sign: f32| reach[2 * k + usize::from(sign < 0.0)];
    let r = [
        (reach(0, 1.0), 0, 1.0),
        (reach(0, -1.0), 0, -1.0),
        (reach(1, 1.0), 1, 1.0),
        (reach(1, -1.0), 1, -1.0),
    ];
    let best = r
        .iter()
        .copied()
        .fold(r[0], |m, x| if x.0 > m.0 { x } else { m });
    let others_max = r
        .iter()
        .filter(|x| !(x.1 == best.1 && x.2 == best.2))
        .map(|x| x.0)
        .fold(0.0f32, f32::max);
    if best.0 > 1.45 && others_max < 1.25 {
        let dir = Dir::along(horiz[best.1], best.2);
        let front = AxisChoice {
            dir,
            source: PoseSource::Shape,
            why: format!(
                "a visor reaches {:.2} × the crown's half-width toward {} (the other sides {:.2})",
                best.0,
                dir.as_str(),
                others_max
            ),
        };
        return pose(PoseCategory::Hat, up, front, false);
    }
    // No visor: the front is along the longer horizontal axis (the crown's, else the rim's).
    let rim_of = [half(horiz[0], &rim), half(horiz[1], &rim)];
    let elong = |x: [Option<(f32, f32)>; 2]| match x {
        [Some(a), Some(b)] => a.1 / b.1,
        _ => 1.0,
    };
    let ec = crown_of[0].1 / crown_of[1].1;
    let er = elong(rim_of);
    let (e, whose) = if (ec - 1.0).abs() > 0.06 {
        (ec, "crown")
    } else {
        (er, "rim")
    };
    if (e - 1.0).abs() > 0.06 {
        let axis = if e > 1.0 { horiz[0] } else { horiz[1] };
        let front = tie(
            axis,
            Dir::FRONT,
            format!(
                "no visor; the {whose} is longer along {} ({:.2} : 1), so the front is along it; \
                 its sign cannot be read from the shape",
                ["x", "y", "z"][axis],
                e.max(1.0 / e)
            ),
        );
        return pose(PoseCategory::Hat, up, front, true);
    }
    let axis = if horiz.contains(&2) { 2 } else { horiz[0] };
    let front = tie(
        axis,
        Dir::FRONT,
        "a round hat without a visor: the front cannot be read from the shape".into(),
    );
    pose(PoseCategory::Hat, up, front, true)
}

/// [`rim_reach`]'s answer: the crown's (centre, half-extent) along each horizontal axis, and
/// the reach toward +h0, −h0, +h1, −h1.
pub type RimReach = ([(f32, f32); 2], [f32; 4]);

/// A hat's crown (the part above 60 % of its height along `up`: its centre and half-extent
/// along each of the `horiz` axes) and how far its rim-level parts (below 30 %) reach from
/// that centre, in crown half-extents, toward +h0, −h0, +h1, −h1.
pub fn rim_reach(c: &Cloud, up: Dir, horiz: [usize; 2]) -> Option<RimReach> {
    let crown = |i: usize| c.t(c.c[i], up) > 0.6;
    let rim = |i: usize| c.t(c.c[i], up) < 0.3;
    let half = |a: usize| {
        c.range_where(crown, a)
            .map(|(lo, hi)| ((lo + hi) / 2.0, ((hi - lo) / 2.0).max(1e-12)))
    };
    let crown_of = [half(horiz[0])?, half(horiz[1])?];
    let reach = |k: usize, sign: f32| {
        let (cc, ch) = crown_of[k];
        let a = horiz[k];
        (0..c.c.len())
            .filter(|&i| rim(i))
            .map(|i| sign * (c.c[i][a] - cc) / ch)
            .fold(0.0f32, f32::max)
    };
    Some((
        crown_of,
        [reach(0, 1.0), reach(0, -1.0), reach(1, 1.0), reach(1, -1.0)],
    ))
}

fn earring(c: &Cloud) -> Pose {
    let [_, mid, long] = c.by_extent();
    let up = if c.ext(long) > 1.15 * c.ext(mid) {
        let d = Dir::along(long, 1.0);
        let lo = c.area_where(|i| c.t(c.c[i], d) < 0.15);
        let hi = c.area_where(|i| c.t(c.c[i], d) > 0.85);
        signed(
            long,
            Some((lo - hi) / (lo + hi).max(1e-30)),
            0.2,
            Dir::UP,
            "hangs along its long axis; the attachment is the end with less area",
        )
    } else {
        // Compact (a stud, a round hoop): up in the plane of its two larger extents.
        let axis = if mid == 1 || long == 1 { 1 } else { mid };
        tie(
            axis,
            Dir::UP,
            "no long axis: the file's up (in the plane of the face) kept".into(),
        )
    };
    let ua = up.dir.axis();
    let rest: Vec<usize> = (0..3).filter(|&a| a != ua).collect();
    let (fa, other) = if c.ext(rest[0]) <= c.ext(rest[1]) {
        (rest[0], rest[1])
    } else {
        (rest[1], rest[0])
    };
    let distinct = c.ext(other) > 1.15 * c.ext(fa);
    // The file's +Z when it is horizontal (which flat side shows cannot be told, and a post
    // or a hook can make the face's axis the thicker one), else the thinnest.
    let fa = if rest.contains(&2) { 2 } else { fa };
    let front = tie(
        fa,
        Dir::FRONT,
        if distinct {
            "the front: the file's z when it is horizontal, else the thinnest axis (the flat \
             face); which side shows cannot be told"
                .into()
        } else {
            "no flat face: the file's z when it is horizontal, else the thinner axis; which \
             side shows cannot be told"
                .into()
        },
    );
    pose(PoseCategory::Earring, up, front, true)
}

/// The centre of a band's hole, in the plane of `a` and `b`, and the outer reach per side.
fn hole_centre(c: &Cloud, a: usize, b: usize) -> Vec3 {
    let mut centre = Vec3::new(c.mid(0), c.mid(1), c.mid(2));
    for _ in 0..3 {
        for (u, v) in [(a, b), (b, a)] {
            let strip = |i: usize| (c.c[i][v] - centre[v]).abs() < 0.15 * c.ext(v);
            let below = (0..c.c.len())
                .filter(|&i| strip(i) && c.c[i][u] < centre[u])
                .map(|i| c.c[i][u])
                .fold(f32::MIN, f32::max);
            let above = (0..c.c.len())
                .filter(|&i| strip(i) && c.c[i][u] >= centre[u])
                .map(|i| c.c[i][u])
                .fold(f32::MAX, f32::min);
            if below > f32::MIN && above < f32::MAX {
                centre[u] = (below + above) / 2.0;
            }
        }
    }
    centre
}

fn band(c: &Cloud) -> Pose {
    let [thin, a, b] = c.by_extent();
    // The finger's direction: toward the side of the band's mass along it (a setting or a
    // case is rarely centred on the band's width); a symmetric band keeps the file's.
    let e = c
        .mean_where(|_| true, |p| p[thin])
        .map(|m| (m - c.mid(thin)) / c.ext(thin));
    let up = signed(
        thin,
        e,
        0.01,
        Dir::UP,
        &format!(
            "the finger / wrist runs through the hole, along {}; its direction toward the \
             band's mass",
            ["x", "y", "z"][thin]
        ),
    );
    let centre = hole_centre(c, a, b);
    let reach = |axis: usize, sign: f32| {
        c.c.iter()
            .map(|p| sign * (p[axis] - centre[axis]))
            .fold(0.0f32, f32::max)
    };
    if let Some(front) = crystal(c, centre, a, b) {
        return pose(PoseCategory::Band, up, front, false);
    }
    let mut r = [
        (reach(a, 1.0), a, 1.0f32),
        (reach(a, -1.0), a, -1.0),
        (reach(b, 1.0), b, 1.0),
        (reach(b, -1.0), b, -1.0),
    ];
    r.sort_by(|x, y| y.0.total_cmp(&x.0));
    let best = r[0];
    let opposite = r
        .iter()
        .find(|x| x.1 == best.1 && x.2 != best.2)
        .map_or(best.0, |x| x.0);
    if best.0 > 1.08 * opposite {
        let dir = Dir::along(best.1, best.2);
        let front = AxisChoice {
            dir,
            source: PoseSource::Shape,
            why: format!(
                "the setting / the case reaches {:.2} × farther from the hole toward {}",
                best.0 / opposite.max(1e-12),
                dir.as_str()
            ),
        };
        pose(PoseCategory::Band, up, front, false)
    } else {
        let axis = if a == 2 || b == 2 { 2 } else { b };
        let front = tie(
            axis,
            Dir::FRONT,
            "a plain band: no setting shows which side is the front".into(),
        );
        pose(PoseCategory::Band, up, front, true)
    }
}

/// The front of a band that carries a see-through part off its hole's centre — a watch's
/// crystal, a ring's stone: the side of the hole (±`a` or ±`b`) the clear parts' area lies
/// toward, when their centroid is at least a third of the hole's reach off the centre and
/// clearly nearer one side than the other. A strap's buckle or tail can reach farther than
/// the case ([`band`]'s fallback); the crystal is where the dial is.
fn crystal(c: &Cloud, centre: Vec3, a: usize, b: usize) -> Option<AxisChoice> {
    let (mut sum, mut area) = (Vec3::ZERO, 0.0f32);
    for ((p, &w), &clear) in c.c.iter().zip(&c.a).zip(&c.clear) {
        if clear {
            sum += *p * w;
            area += w;
        }
    }
    let total: f32 = c.a.iter().sum();
    if area <= 0.002 * total {
        return None;
    }
    let off = sum / area - centre;
    let (da, db) = (off[a], off[b]);
    let radius = 0.5 * c.ext(a).min(c.ext(b));
    if da.hypot(db) < radius / 3.0 {
        return None;
    }
    // Clearly toward one of the four sides (within 30° of it).
    let (axis, along, across) = if da.abs() >= db.abs() {
        (a, da, db)
    } else {
        (b, db, da)
    };
    if across.abs() > 0.58 * along.abs() {
        return None;
    }
    let dir = Dir::along(axis, along);
    Some(AxisChoice {
        dir,
        source: PoseSource::Shape,
        why: format!(
            "the see-through part (a crystal or a stone) lies toward {} of the hole",
            dir.as_str()
        ),
    })
}

/// A ring-like shape measured round its hole (in the file's units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hole {
    /// The hole's diameter: twice the least distance from its centre, in its plane, of
    /// the shape's triangles.
    pub inner: f32,
    /// The largest extent (the outer diameter, with any setting).
    pub outer: f32,
    /// The extent along the hole's axis (the band's width) over [`Hole::outer`].
    pub width_ratio: f32,
    /// The smaller in-plane extent over the larger (1 for a plain circle; a setting or a
    /// case makes it less).
    pub roundness: f32,
    /// The shape's surface area over the side of the cylinder it spans (π · outer · width):
    /// about 2 for a strap or a band (both its faces), far less for thin wires crossing.
    pub fill: f32,
    /// The hole's centre (on the box's middle along its axis).
    pub centre: Vec3,
}

/// The hole of `c` in the plane of its two larger extents, when its centre is empty
/// (no triangle within a quarter of the smaller of them).
pub fn hole(c: &Cloud) -> Option<Hole> {
    let [thin, a, b] = c.by_extent();
    let centre = hole_centre(c, a, b);
    let inner =
        c.c.iter()
            .map(|p| (p[a] - centre[a]).hypot(p[b] - centre[b]))
            .fold(f32::MAX, f32::min);
    if inner < 0.25 * c.ext(a) {
        return None;
    }
    Some(Hole {
        inner: 2.0 * inner,
        outer: c.ext(b),
        width_ratio: c.ext(thin) / c.ext(b),
        roundness: c.ext(a) / c.ext(b),
        fill: c.a.iter().sum::<f32>() * c.weight / (std::f32::consts::PI * c.ext(b) * c.ext(thin)),
        centre,
    })
}
