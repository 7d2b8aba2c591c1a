//! Colour helpers every garment stage uses: a colour's luminance, how skin-like a colour is
//! against the face's skin, the fallback skin colour, and the distance between two colours'
//! chromaticities.

use crate::garment::geom::smoothstep;

/// The skin colour used when no face was found (sRGB).
pub const FALLBACK_SKIN: [f32; 3] = [200.0, 160.0, 140.0];

fn ycc(p: [f32; 3]) -> [f32; 3] {
    let y = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
    [y, 0.564 * (p[2] - y), 0.713 * (p[0] - y)]
}

/// Luminance (Rec. 601) of an sRGB colour (0–255).
pub(crate) fn luma(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// How skin-like a colour is (0–1) against the face's skin colour.
pub fn skin_likeness(px: [f32; 3], skin: [f32; 3]) -> f32 {
    let s = ycc(skin);
    let p = ycc(px);
    let ratio = p[0] / s[0].max(1.0);
    let chroma = (s[1] * s[1] + s[2] * s[2]).sqrt();
    if chroma < 6.0 {
        // A grey photo: lightness alone, in a narrow band.
        return smoothstep(0.6, 0.8, ratio) * (1.0 - smoothstep(1.25, 1.45, ratio));
    }
    let dc = ((p[1] - s[1]).powi(2) + (p[2] - s[2]).powi(2)).sqrt();
    (1.0 - smoothstep(10.0, 22.0, dc))
        * smoothstep(0.35, 0.55, ratio)
        * (1.0 - smoothstep(1.25, 1.45, ratio))
}

/// The distance between two sRGB colours' `(r, g)` chromaticities: hue and saturation
/// without lightness (skin in shadow keeps the skin's).
pub(crate) fn hue_dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    let q = |c: [f32; 3]| {
        let s = c[0] + c[1] + c[2] + 1.0;
        [c[0] / s, c[1] / s]
    };
    let (a, b) = (q(a), q(b));
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// The per-channel median of `cs` (the upper middle for an even count), `None` when empty.
pub(crate) fn median(mut cs: Vec<[f32; 3]>) -> Option<[f32; 3]> {
    if cs.is_empty() {
        return None;
    }
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        cs.sort_by(|a, b| a[c].total_cmp(&b[c]));
        *o = cs[cs.len() / 2][c];
    }
    Some(out)
}
