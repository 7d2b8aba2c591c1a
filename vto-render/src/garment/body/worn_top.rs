//! The top the person wears now, as far as it hangs over the hips: where its hem lies and
//! whether a pixel above the hem is the top's or the lower garment's beside it. New trousers
//! go under it ([`crate::garment::lower::compose`]).

use glam::Vec2;
use image::RgbaImage;

use crate::garment::body::frame::BodyFrame;
use crate::garment::body::legs::Legs;

/// The top the person wears, as far as it hangs over the hips.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WornTop {
    /// Its hem's depth below the hips' midpoint along the legs' `down`.
    pub hem: f32,
    /// Its colour (sRGB, the median on the chest).
    pub colour: [f32; 3],
    /// The lower garment's colour (sRGB, the median on the thighs).
    pub bottom: [f32; 3],
    /// Whether the two colours are far enough apart to tell a pixel's garment by its
    /// colour; when not, every pixel of the person above the hem is the top's.
    pub distinct: bool,
}

impl WornTop {
    /// Whether a pixel of colour `c` above the hem is the top's (rather than the lower
    /// garment's, showing beside it).
    pub fn is_top(&self, c: [f32; 3]) -> bool {
        !self.distinct || dist(c, self.colour) < dist(c, self.bottom)
    }
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Colours this far apart (sRGB distance) tell the top from the lower garment.
const DISTINCT: f32 = 30.0;

/// Where the top the person wears ends: walking down the body's centre line from the chest.
/// When the top's colour differs from the lower garment's (sampled on the thighs), the hem
/// is where the colour becomes the lower garment's for several steps; when the two are
/// alike (navy on blue), it is the sharpest colour step between the waist and the upper
/// thighs (a hem is an edge even between similar colours), if one stands out. `None` when
/// nothing marks a hem (a tucked or one-piece look).
pub fn worn_top_hem(photo: &RgbaImage, frame: &BodyFrame, legs: &Legs) -> Option<WornTop> {
    let (w, h) = photo.dimensions();
    let at = |p: Vec2| -> Option<[f32; 3]> {
        let (x, y) = (p.x.round() as i64, p.y.round() as i64);
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            return None;
        }
        let c = photo.get_pixel(x as u32, y as u32).0;
        Some([f32::from(c[0]), f32::from(c[1]), f32::from(c[2])])
    };
    let median = |pts: &[Vec2]| -> Option<[f32; 3]> {
        let mut cs: Vec<[f32; 3]> = pts.iter().filter_map(|p| at(*p)).collect();
        if cs.len() < 3 {
            return None;
        }
        let mut out = [0.0; 3];
        for (c, o) in out.iter_mut().enumerate() {
            cs.sort_by(|a, b| a[c].total_cmp(&b[c]));
            *o = cs[cs.len() / 2][c];
        }
        Some(out)
    };
    let strip = |centre: Vec2| -> Vec<Vec2> {
        (-3..=3)
            .map(|k| centre + legs.across * legs.hip_width * 0.09 * k as f32)
            .collect()
    };
    let mid = (frame.shoulder[0] + frame.shoulder[1]) * 0.5;
    let torso = (legs.hips_mid - mid).length();
    let top = median(&strip(mid + (legs.hips_mid - mid) * 0.45))?;
    let thighs: Vec<Vec2> = legs
        .legs
        .iter()
        .flat_map(|l| {
            let (c, _) = l.along(0.45 * l.chain[0].distance(l.chain[1]));
            [
                c - legs.across * 0.04 * legs.hip_width,
                c,
                c + legs.across * 0.04 * legs.hip_width,
            ]
        })
        .collect();
    let bottom = median(&thighs)?;
    let step = (torso / 60.0).max(1.0);
    let thigh = legs.legs[0].chain[0].distance(legs.legs[0].chain[1]);
    if dist(top, bottom) < DISTINCT {
        // The sharpest step between a third of the torso above the hips and a third of
        // the thigh below them, the top's colour above it.
        let ts: Vec<f32> = (0..)
            .map(|k| -0.35 * torso + k as f32 * step)
            .take_while(|t| *t < 0.35 * thigh)
            .collect();
        let cs: Vec<[f32; 3]> = ts
            .iter()
            .map(|t| median(&strip(legs.hips_mid + legs.down * *t)))
            .collect::<Option<_>>()?;
        let mean = |s: &[[f32; 3]]| {
            let n = s.len().max(1) as f32;
            [0, 1, 2].map(|c| s.iter().map(|v| v[c]).sum::<f32>() / n)
        };
        let best = (3..cs.len().saturating_sub(3))
            .map(|k| {
                let (above, below) = (mean(&cs[k - 3..k]), mean(&cs[k + 1..k + 4]));
                let toward_top = dist(above, top) < dist(below, top);
                (if toward_top { dist(above, below) } else { 0.0 }, k)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        return (best.0 >= 10.0).then_some(WornTop {
            hem: ts[best.1],
            colour: top,
            bottom,
            distinct: false,
        });
    }
    let mut t = -0.5 * torso;
    let mut run = 0;
    let limit = thigh * 0.8;
    while t < limit {
        let c = median(&strip(legs.hips_mid + legs.down * t))?;
        if dist(c, bottom) < dist(c, top) {
            run += 1;
            if run >= 3 {
                return Some(WornTop {
                    hem: t - 2.0 * step,
                    colour: top,
                    bottom,
                    distinct: true,
                });
            }
        } else {
            run = 0;
        }
        t += step;
    }
    Some(WornTop {
        hem: limit,
        colour: top,
        bottom,
        distinct: true,
    })
}
