//! A part that follows a limb by segments: a sleeve down a bent arm, shoulder → elbow →
//! wrist, as a bent tube (two straight tubes mitred at the elbow) rather than one spline.
//!
//! A photo pixel's tube coordinates are its arc length `s` along the body chain and its
//! offset `x` across it. The chain's segments meet at mitre lines (the bisector of the two
//! segments' normals, through the joint), so `x` is continuous across a joint; within a
//! segment, `s` runs linearly from the mitre at its start to the one at its end at every
//! offset, so the inner side of a bend is compressed and the outer side stretched, as a
//! sleeve's fabric is. Across, `ξ = (x − offset(s)) / radius(s)` is −1 on the arm's inner
//! edge and 1 on its outer edge; the garment pixel is the sleeve's centre line at the same
//! share of its length plus its flat half-width at `ξ`, foreshortened towards the sides
//! as a cylinder is seen ([`Tube::eval`]).
//!
//! Each step is one-to-one with a positive Jacobian: `s` rises with the position along a
//! segment wherever the mitres do not cross (the offset used for the mitres is clamped to
//! where they do not: [`Tube::eval`]), `ξ` rises with `x`, and the garment's flat
//! position rises with `ξ` (its cubic foreshortening continues linearly past the edges).
//! So the sleeve cannot fold or fan: its pixels lie where `|ξ| ≤ 1`, a band around the
//! arm's segments.

use glam::Vec2;

use crate::garment::geom::perp;

/// One cross-section of a tube: where it lies on the body and which garment cross-section
/// it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Station {
    /// Arc length along the body chain from its first joint (photo pixels).
    pub s: f32,
    /// The tube's centre across the chain (photo pixels, towards the outer edge).
    pub offset: f32,
    /// The tube's half-width on the body (photo pixels).
    pub radius: f32,
    /// The garment cross-section's centre (garment pixels).
    pub garment_centre: Vec2,
    /// The garment cross-section's half-width laid flat (garment pixels).
    pub garment_half: f32,
    /// The print's scale at the tube's centre line relative to its edges (see
    /// [`Tube::eval`]): `radius / (scale · garment_half)`, clamped to 0.3–1.4.
    pub centre_scale: f32,
}

/// A part's map by segments along a body chain (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Tube {
    /// The chain's joints on the body (photo pixels; at least two, distinct).
    pub joints: Vec<Vec2>,
    /// Which side of the chain is the garment's outer edge: the body's outer normal is
    /// `perp(direction) · side` (`±1`). Chosen so that the map keeps orientation (the
    /// garment's outer normal is `perp(axis) · side` too): a limb turned in the photo's
    /// plane turns its sleeve with it, never mirrors it.
    pub side: f32,
    /// The garment's outer normal (unit, garment pixels).
    pub garment_normal: Vec2,
    /// The cross-sections, by increasing `s` (at least one).
    pub stations: Vec<Station>,
    /// How the sleeve's root turns onto the body's seam ([`RootShear`]), if at all.
    pub root_shear: Option<RootShear>,
}

/// The sleeve's root turned onto the body's seam: a flat-lay's seam is square to its sleeve,
/// a worn one runs from the shoulder down to the armpit beside a hanging arm. Near the root
/// the garment's arc length is the body's plus `δ(ξ)`, linear in `ξ` between `(xi[k],
/// delta[k])` and held past them, faded out over `fade` pixels along the arm (the fade is long
/// enough that the arc length still rises: `fade ≥ 2 max |δ|`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootShear {
    /// Where across the seam's two ends lie (ξ on the body).
    pub xi: [f32; 2],
    /// The arc-length shift at each (photo pixels).
    pub delta: [f32; 2],
    /// Over how many pixels along the arm, from the first joint, the shift fades out.
    pub fade: f32,
}

impl RootShear {
    /// The shift at arc length `s` and across position `xi`.
    fn at(&self, s: f32, xi: f32) -> f32 {
        let span = self.xi[1] - self.xi[0];
        let t = if span.abs() < 1e-3 {
            0.5
        } else {
            (xi.clamp(-1.0, 1.0) - self.xi[0]) / span
        };
        let d = self.delta[0] + (self.delta[1] - self.delta[0]) * t.clamp(0.0, 1.0);
        let f = (s / self.fade.max(1.0)).clamp(0.0, 1.0);
        d * (1.0 - f * f * (3.0 - 2.0 * f))
    }
}

/// The tube coordinates of a photo pixel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TubeCoords {
    /// Arc length along the chain (photo pixels; negative before the first joint, past the
    /// chain's length beyond the last).
    pub s: f32,
    /// Offset across the chain (photo pixels, towards the outer edge).
    pub x: f32,
}

impl Tube {
    /// The segments' directions, outer normals and lengths.
    fn segments(&self) -> impl Iterator<Item = (Vec2, Vec2, Vec2, f32)> + '_ {
        self.joints.windows(2).map(|w| {
            let d = (w[1] - w[0]).normalize_or(Vec2::Y);
            (w[0], d, perp(d) * self.side, w[0].distance(w[1]))
        })
    }

    /// The mitre's slope at inner joint `j` for the segment ending there: how far along
    /// that segment the mitre lies per pixel of offset (`x`). The segment starting at `j`
    /// has the opposite slope.
    fn mitre(&self, j: usize) -> f32 {
        let d1 = (self.joints[j] - self.joints[j - 1]).normalize_or(Vec2::Y);
        let d2 = (self.joints[j + 1] - self.joints[j]).normalize_or(Vec2::Y);
        let n1 = perp(d1) * self.side;
        let m = perp((d1 + d2).normalize_or(d1));
        let mn = m.dot(n1);
        if mn.abs() < 1e-3 {
            0.0
        } else {
            m.dot(d1) / mn
        }
    }

    /// The largest offset the mitres are taken at: where they would cross (a sharp bend or
    /// a short segment), `s` is measured at the clamped offset so it still rises along the
    /// segment.
    fn max_offset(&self) -> f32 {
        let r = self
            .stations
            .iter()
            .map(|s| s.offset.abs() + s.radius)
            .fold(0.0, f32::max);
        1.5 * r
    }

    /// The tube coordinates of photo pixel `p`.
    pub fn coords(&self, p: Vec2) -> TubeCoords {
        let n = self.joints.len() - 1;
        let mut start_s = 0.0;
        let x_max = self.max_offset();
        for (k, (a, d, nrm, len)) in self.segments().enumerate() {
            let last = k + 1 == n;
            // Past the mitre at the segment's end: the next segment's.
            if !last {
                let j = self.joints[k + 1];
                let d2 = (self.joints[k + 2] - j).normalize_or(d);
                if (p - j).dot((d + d2).normalize_or(d)) >= 0.0 {
                    start_s += len;
                    continue;
                }
            }
            let t0 = if k == 0 { 0.0 } else { -self.mitre(k) };
            let t1 = if last { 0.0 } else { self.mitre(k + 1) };
            let u = (p - a).dot(d);
            let x = (p - a).dot(nrm);
            // The mitres' lengths apart at the clamped offset stay above a third of the
            // segment.
            let spread = (t1 - t0).abs();
            let safe = if spread > 1e-6 {
                (0.66 * len / spread).min(x_max)
            } else {
                x_max
            };
            let xc = x.clamp(-safe, safe);
            let (a0, a1) = (xc * t0, len + xc * t1);
            let s = start_s + (u - a0) * len / (a1 - a0).max(1e-3);
            return TubeCoords { s, x };
        }
        TubeCoords { s: start_s, x: 0.0 }
    }

    /// The stations either side of `s` and the share between them (extrapolating the
    /// garment's centre line past the ends, holding the widths).
    fn station_at(&self, s: f32) -> (Station, Vec2) {
        let st = &self.stations;
        if st.len() == 1 {
            return (st[0], Vec2::ZERO);
        }
        let k = st.partition_point(|q| q.s <= s).clamp(1, st.len() - 1);
        let (a, b) = (st[k - 1], st[k]);
        let span = (b.s - a.s).max(1e-3);
        let t = (s - a.s) / span;
        let tc = t.clamp(0.0, 1.0);
        let lerp = |u: f32, v: f32| u + (v - u) * tc;
        let slope = (b.garment_centre - a.garment_centre) / span;
        (
            Station {
                s,
                offset: lerp(a.offset, b.offset),
                radius: lerp(a.radius, b.radius).max(1.0),
                garment_centre: a.garment_centre + slope * (s - a.s),
                garment_half: lerp(a.garment_half, b.garment_half),
                centre_scale: lerp(a.centre_scale, b.centre_scale),
            },
            slope,
        )
    }

    /// Photo pixel `p`'s arc length along the chain and its position across the tube (`ξ`:
    /// −1 on the inner edge, 1 on the outer).
    pub fn along_across(&self, p: Vec2) -> (f32, f32) {
        let c = self.coords(p);
        let (body, _) = self.station_at(c.s);
        (c.s, (c.x - body.offset) / body.radius)
    }

    /// The garment pixel photo pixel `p` takes: the sleeve's centre line at `s`, plus the
    /// flat position of `ξ` across it, `hw · (m ξ + (1 − m) ξ³)` for `|ξ| ≤ 1` (a dot on the
    /// centre line keeps its aspect at `m`, the print foreshortens towards the sides),
    /// continued linearly beyond.
    pub fn eval(&self, p: Vec2) -> Vec2 {
        let (s_body, xi) = self.along_across(p);
        let s = s_body + self.root_shear.map_or(0.0, |r| r.at(s_body, xi));
        let (g, _) = self.station_at(s);
        let (body, _) = self.station_at(s_body);
        g.garment_centre + self.garment_normal * g.garment_half * flat(xi, body.centre_scale)
    }
}

/// The flat position (in half-widths) of the worn position `xi` (in radii) for a centre
/// scale `m`: odd, rising, cubic within the edges and linear past them.
fn flat(xi: f32, m: f32) -> f32 {
    let m = m.clamp(0.3, 1.4);
    let inner = |v: f32| m * v + (1.0 - m) * v * v * v;
    if xi.abs() <= 1.0 {
        inner(xi)
    } else {
        let slope = 3.0 - 2.0 * m;
        xi.signum() * (1.0 + (xi.abs() - 1.0) * slope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arm bent 90° at the elbow: shoulder (0, 0) down to the elbow (0, 100), then right
    /// to the wrist (100, 100); a sleeve 40 wide mapped onto a straight garment sleeve
    /// along x.
    fn bent() -> Tube {
        let station = |s: f32| Station {
            s,
            offset: 0.0,
            radius: 20.0,
            garment_centre: Vec2::new(500.0 + s, 300.0),
            garment_half: 20.0,
            centre_scale: 1.0,
        };
        Tube {
            joints: vec![Vec2::ZERO, Vec2::new(0.0, 100.0), Vec2::new(100.0, 100.0)],
            side: 1.0,
            garment_normal: Vec2::new(0.0, 1.0),
            stations: vec![station(0.0), station(100.0), station(200.0)],
            root_shear: None,
        }
    }

    /// The Jacobian of `f` at `p` by central differences.
    fn det(f: impl Fn(Vec2) -> Vec2, p: Vec2) -> f32 {
        let h = 0.5;
        let dx = (f(p + Vec2::X * h) - f(p - Vec2::X * h)) / (2.0 * h);
        let dy = (f(p + Vec2::Y * h) - f(p - Vec2::Y * h)) / (2.0 * h);
        dx.x * dy.y - dx.y * dy.x
    }

    /// Along the bent arm the centre line maps onto the sleeve's centre line at the same
    /// arc length, the mitre is continuous, and the Jacobian is positive everywhere within
    /// the sleeve's band (its radius and a margin) around the chain — no fold at the elbow.
    #[test]
    fn a_bent_tube_is_continuous_and_keeps_orientation() {
        let t = bent();
        // Centre line: down the upper arm, then along the forearm.
        assert!(
            t.eval(Vec2::new(0.0, 50.0))
                .distance(Vec2::new(550.0, 300.0))
                < 1e-3
        );
        assert!(
            t.eval(Vec2::new(50.0, 100.0))
                .distance(Vec2::new(650.0, 300.0))
                < 1e-3
        );
        // Either side of the mitre at the elbow (the line y = 100 − x through (0, 100)).
        for x in [-20.0f32, -10.0, 10.0, 20.0] {
            let on = Vec2::new(x, 100.0 - x) * 0.999 + Vec2::new(0.0, 100.0) * 0.001;
            let n = Vec2::new(1.0, 1.0).normalize() * 0.05;
            assert!(
                t.eval(on - n).distance(t.eval(on + n)) < 0.2,
                "jump at {on}"
            );
        }
        let mut worst = f32::MAX;
        for y in -20..=140 {
            for x in -40..=140 {
                let p = Vec2::new(x as f32, y as f32);
                let near = crate::garment::geom::seg_dist(p, t.joints[0], t.joints[1])
                    .0
                    .min(crate::garment::geom::seg_dist(p, t.joints[1], t.joints[2]).0);
                if near < 28.0 {
                    worst = worst.min(det(|q| t.eval(q), p));
                }
            }
        }
        assert!(worst > 0.0, "the bent tube folds: det {worst}");
    }

    /// The sleeve's pixels (`|ξ| ≤ 1`) lie within its radius of the arm's segments: a point
    /// across the body from the elbow maps off the sleeve.
    #[test]
    fn far_from_the_arm_is_off_the_sleeve() {
        let t = bent();
        for p in [
            Vec2::new(60.0, 40.0),
            Vec2::new(-80.0, 60.0),
            Vec2::new(150.0, 20.0),
        ] {
            let g = t.eval(p);
            assert!(
                (g.y - 300.0).abs() > 20.0,
                "{p} maps onto the sleeve at {g}"
            );
        }
    }
}
