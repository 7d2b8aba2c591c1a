//! Sample garment product photos: flat-lays on a plain background with a soft drop shadow
//! (and one PNG with alpha), drawn procedurally for tests, the gallery and the docs.
//!
//! Each garment is a silhouette (torso with a neckline, sleeves at their lying angle, an open
//! front for the jacket) filled with a fabric: a base colour with weave noise, soft folds,
//! stitched seams at the hem and cuffs, and its pattern (stripes, a printed logo, a button
//! placket and collar, lapels and buttons).

use glam::Vec2;
use image::{Rgba, RgbaImage};
use vto_core::Category;

pub(crate) use crate::garment::geom::inside;
use crate::image_ops::box_blur;

/// Width of a sample photo.
pub const WIDTH: u32 = 800;
/// Height of a sample photo.
pub const HEIGHT: u32 = 900;

/// The sample garments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleGarment {
    /// A plain heather-red t-shirt, short sleeves.
    PlainTee,
    /// A navy and white striped t-shirt, short sleeves.
    StripedTee,
    /// A white t-shirt with a printed logo on the chest.
    LogoTee,
    /// A mustard t-shirt delivered as a PNG with an alpha channel (no background).
    AlphaTee,
    /// A light blue long-sleeved shirt with a collar and a button placket.
    LongShirt,
    /// An olive jacket with long sleeves, lapels and an open front.
    Jacket,
    /// A cream t-shirt with navy polka dots (round dots show whether a warp keeps a print's
    /// aspect).
    DottedTee,
}

impl SampleGarment {
    /// Every sample.
    pub const ALL: [SampleGarment; 7] = [
        SampleGarment::PlainTee,
        SampleGarment::StripedTee,
        SampleGarment::LogoTee,
        SampleGarment::AlphaTee,
        SampleGarment::LongShirt,
        SampleGarment::Jacket,
        SampleGarment::DottedTee,
    ];

    /// A short file-friendly name.
    pub fn name(self) -> &'static str {
        match self {
            SampleGarment::PlainTee => "plain-tee",
            SampleGarment::StripedTee => "striped-tee",
            SampleGarment::LogoTee => "logo-tee",
            SampleGarment::AlphaTee => "alpha-tee",
            SampleGarment::LongShirt => "long-shirt",
            SampleGarment::Jacket => "jacket",
            SampleGarment::DottedTee => "dotted-tee",
        }
    }

    /// The category a shop would list it under.
    pub fn category(self) -> Category {
        match self {
            SampleGarment::LongShirt => Category::Shirt,
            SampleGarment::Jacket => Category::Jacket,
            _ => Category::Tshirt,
        }
    }

    /// Whether its sleeves reach the wrist.
    pub fn long_sleeves(self) -> bool {
        matches!(self, SampleGarment::LongShirt | SampleGarment::Jacket)
    }

    /// The fabric's base colour (sRGB).
    pub fn base_colour(self) -> [u8; 3] {
        match self {
            SampleGarment::PlainTee => [176, 42, 48],
            SampleGarment::StripedTee => [28, 40, 84],
            SampleGarment::LogoTee => [236, 236, 232],
            SampleGarment::AlphaTee => [214, 160, 40],
            SampleGarment::LongShirt => [150, 186, 222],
            SampleGarment::Jacket => [92, 98, 58],
            SampleGarment::DottedTee => [232, 222, 200],
        }
    }

    /// The product photo.
    pub fn render(self) -> RgbaImage {
        render(self)
    }

    /// The product photo as PNG bytes.
    pub fn png(self) -> Vec<u8> {
        let mut out = Vec::new();
        self.render()
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .map(|_| out)
            .unwrap_or_default()
    }
}

const CX: f32 = WIDTH as f32 / 2.0;

fn mirror(pts: &[[f32; 2]]) -> [Vec<Vec2>; 2] {
    let left = pts.iter().map(|p| Vec2::new(CX - p[0], p[1])).collect();
    let right = pts.iter().map(|p| Vec2::new(CX + p[0], p[1])).collect();
    [left, right]
}

/// Distance from `p` to the segment `a`–`b`.
pub(crate) fn seg_dist(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    crate::garment::geom::seg_dist(p, a, b).0
}

/// Which part of the garment `p` is in: 0 none, 1 torso, 2 sleeve.
fn shape(g: SampleGarment, p: Vec2) -> u8 {
    let torso = [
        Vec2::new(CX - 72.0, 118.0),
        Vec2::new(CX - 190.0, 160.0),
        Vec2::new(CX - 182.0, 330.0),
        Vec2::new(CX - 186.0, 740.0),
        Vec2::new(CX + 186.0, 740.0),
        Vec2::new(CX + 182.0, 330.0),
        Vec2::new(CX + 190.0, 160.0),
        Vec2::new(CX + 72.0, 118.0),
    ];
    let neck_r = if g == SampleGarment::LongShirt {
        Vec2::new(60.0, 40.0)
    } else {
        Vec2::new(72.0, 56.0)
    };
    let in_neck = ((p - Vec2::new(CX, 112.0)) / neck_r).length_squared() < 1.0;
    let open = g == SampleGarment::Jacket
        && inside(
            &[
                Vec2::new(CX, 150.0),
                Vec2::new(CX - 46.0, 741.0),
                Vec2::new(CX + 46.0, 741.0),
            ],
            p,
        );
    if inside(&torso, p) && !in_neck && !open {
        return 1;
    }
    // Above the armpit each sleeve's root edge runs a little inside the torso's side (the
    // torso wins there):
    // sewn pieces overlap at the seam; a sleeve meeting the side edge to edge left a hairline
    // of background between them, which the mask rightly keeps (enclosed) and the try-on
    // showed as a light dashed line down the garment's side.
    let sleeves = if g.long_sleeves() {
        mirror(&[
            [190.0, 160.0],
            [318.0, 680.0],
            [262.0, 700.0],
            [184.0, 332.0],
            [176.0, 300.0],
        ])
    } else {
        mirror(&[
            [190.0, 160.0],
            [318.0, 258.0],
            [276.0, 336.0],
            [182.0, 328.0],
            [174.0, 300.0],
        ])
    };
    if sleeves.iter().any(|s| inside(s, p)) {
        return 2;
    }
    0
}

/// A cheap hash noise in [-1, 1].
pub(crate) fn noise(x: u32, y: u32, seed: u32) -> f32 {
    let mut h = x.wrapping_mul(374_761_393)
        ^ y.wrapping_mul(668_265_263)
        ^ seed.wrapping_mul(2_246_822_519);
    h = (h ^ (h >> 13)).wrapping_mul(1_274_126_177);
    h ^= h >> 16;
    (h & 0xffff) as f32 / 32_767.5 - 1.0
}

/// The fabric colour of `g` at `p` (sRGB 0–255), before shading.
fn fabric(g: SampleGarment, p: Vec2, part: u8) -> [f32; 3] {
    let base = g.base_colour().map(f32::from);
    let mut c = base;
    match g {
        SampleGarment::StripedTee if (p.y / 22.0).floor() as i32 % 2 == 0 => {
            c = [238.0, 236.0, 228.0];
        }
        SampleGarment::DottedTee => {
            // Dots of radius 9 on a staggered 48-pixel grid.
            let row = (p.y / 48.0).floor();
            let shift = if row as i32 % 2 == 0 { 0.0 } else { 24.0 };
            let centre = Vec2::new(
                ((p.x - shift) / 48.0).floor() * 48.0 + 24.0 + shift,
                row * 48.0 + 24.0,
            );
            if p.distance(centre) < 9.0 {
                c = [26.0, 38.0, 92.0];
            }
        }
        SampleGarment::LogoTee if part == 1 => {
            // A printed roundel with "VTO" in it on the chest.
            let centre = Vec2::new(CX, 300.0);
            let d = p.distance(centre);
            if (70.0..84.0).contains(&d) {
                c = [30.0, 110.0, 170.0];
            } else if d < 70.0 {
                c = [244.0, 190.0, 40.0];
                let q = p - centre;
                let strokes = [
                    (Vec2::new(-52.0, -22.0), Vec2::new(-38.0, 22.0)),
                    (Vec2::new(-38.0, 22.0), Vec2::new(-24.0, -22.0)),
                    (Vec2::new(-16.0, -22.0), Vec2::new(16.0, -22.0)),
                    (Vec2::new(0.0, -22.0), Vec2::new(0.0, 22.0)),
                ];
                let letter = strokes.iter().any(|(a, b)| seg_dist(q, *a, *b) < 5.0)
                    || ((q - Vec2::new(38.0, 0.0)).length() - 18.0).abs() < 5.0;
                if letter {
                    c = [20.0, 30.0, 60.0];
                }
            }
        }
        SampleGarment::LongShirt => {
            // A fine check, a placket with buttons and a collar.
            let check = ((p.x / 9.0).floor() as i32 + (p.y / 9.0).floor() as i32) % 2 == 0;
            if check {
                c = c.map(|v| v * 0.94);
            }
            if part == 1 && (p.x - CX).abs() < 14.0 && p.y > 150.0 {
                c = base.map(|v| v * 1.04);
                if (p.x - CX).abs() > 12.0 {
                    c = c.map(|v| v * 0.8);
                }
                let by = (p.y - 190.0).rem_euclid(90.0);
                if p.distance(Vec2::new(CX, p.y - by + 20.0)) < 6.0 {
                    c = [240.0, 240.0, 235.0];
                }
            }
            let collar = mirror(&[[58.0, 116.0], [80.0, 124.0], [40.0, 210.0], [4.0, 160.0]]);
            if collar.iter().any(|poly| inside(poly, p)) {
                c = base.map(|v| (v * 1.08).min(255.0));
                if collar
                    .iter()
                    .any(|poly| poly.windows(2).any(|e| seg_dist(p, e[0], e[1]) < 1.5))
                {
                    c = c.map(|v| v * 0.75);
                }
            }
        }
        SampleGarment::Jacket => {
            let lapels = mirror(&[[0.0, 150.0], [70.0, 116.0], [110.0, 250.0], [22.0, 420.0]]);
            if part == 1 && lapels.iter().any(|poly| inside(poly, p)) {
                c = base.map(|v| v * 0.82);
                if lapels
                    .iter()
                    .any(|poly| poly.windows(2).any(|e| seg_dist(p, e[0], e[1]) < 2.0))
                {
                    c = base.map(|v| v * 0.6);
                }
            }
            for k in 0..3 {
                let b = Vec2::new(CX - 70.0, 450.0 + 100.0 * k as f32);
                if p.distance(b) < 11.0 {
                    c = [40.0, 34.0, 28.0];
                }
            }
            // Pockets.
            for s in [-1.0f32, 1.0] {
                let a = Vec2::new(CX + s * 160.0, 580.0);
                let b = Vec2::new(CX + s * 80.0, 580.0);
                if seg_dist(p, a, b) < 2.0 {
                    c = base.map(|v| v * 0.6);
                }
            }
        }
        _ => {}
    }
    c
}

fn render(g: SampleGarment) -> RgbaImage {
    render_flat(
        (WIDTH, HEIGHT),
        |p| shape(g, p),
        |p, part| fabric(g, p, part),
        g as u32 + 1,
        g == SampleGarment::AlphaTee,
        &[724.0],
    )
}

/// A flat-lay photo of the silhouette `shape` (a part id per point, 0 outside) in `fabric`
/// on the plain background with a soft drop shadow (or on transparency when `alpha_png`):
/// weave noise from `seed`, soft folds, a darker rim near the outline and stitched seams
/// across the rows `seams`.
pub(crate) fn render_flat(
    (w, h): (u32, u32),
    shape: impl Fn(Vec2) -> u8,
    fabric: impl Fn(Vec2, u8) -> [f32; 3],
    seed: u32,
    alpha_png: bool,
    seams: &[f32],
) -> RgbaImage {
    // Coverage by 2×2 supersampling, part by the centre sample.
    let mut cover = vec![0.0f32; (w * h) as usize];
    let mut part = vec![0u8; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let mut n = 0.0;
            for (dx, dy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
                if shape(Vec2::new(x as f32 + dx, y as f32 + dy)) != 0 {
                    n += 0.25;
                }
            }
            let i = (y * w + x) as usize;
            cover[i] = n;
            part[i] = shape(Vec2::new(x as f32 + 0.5, y as f32 + 0.5));
        }
    }
    // Distance to the outline (up to 24 px), for edge shading: a chamfer pass each way.
    let mut dist = cover
        .iter()
        .map(|&c| if c > 0.5 { 24.0f32 } else { 0.0 })
        .collect::<Vec<_>>();
    let (wu, hu) = (w as usize, h as usize);
    for y in 0..hu {
        for x in 0..wu {
            let i = y * wu + x;
            if x > 0 {
                dist[i] = dist[i].min(dist[i - 1] + 1.0);
            }
            if y > 0 {
                dist[i] = dist[i].min(dist[i - wu] + 1.0);
            }
        }
    }
    for y in (0..hu).rev() {
        for x in (0..wu).rev() {
            let i = y * wu + x;
            if x + 1 < wu {
                dist[i] = dist[i].min(dist[i + 1] + 1.0);
            }
            if y + 1 < hu {
                dist[i] = dist[i].min(dist[i + wu] + 1.0);
            }
        }
    }
    // The drop shadow: the coverage shifted and blurred.
    let shadow = {
        let mut s = vec![0.0f32; wu * hu];
        for y in 0..hu {
            for x in 0..wu {
                if x >= 10 && y >= 14 {
                    s[y * wu + x] = cover[(y - 14) * wu + x - 10];
                }
            }
        }
        box_blur(&box_blur(&s, wu, hu, 12), wu, hu, 12)
    };
    let mut img = RgbaImage::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let bg = {
                let s = 1.0 - 0.22 * shadow[i];
                let n = noise(x, y, 99) * 1.5;
                [244.0 * s + n, 243.0 * s + n, 240.0 * s + n]
            };
            let c = cover[i];
            if c <= 0.0 {
                let px = if alpha_png {
                    Rgba([0, 0, 0, 0])
                } else {
                    Rgba(bg.map(|v| v.clamp(0.0, 255.0) as u8).into_rgba())
                };
                img.put_pixel(x, y, px);
                continue;
            }
            let mut f = fabric(p, part[i].max(1));
            // Weave noise, soft folds, a darker rim near the outline, stitched seams.
            let weave = 1.0 + 0.035 * noise(x, y, seed) + 0.02 * noise(x / 2, y / 3, seed + 7);
            let folds = 1.0
                + 0.05 * ((p.x * 0.031 + p.y * 0.007).sin() * (p.y * 0.013).cos())
                + 0.03 * (p.y * 0.021 + p.x * 0.004).sin();
            let rim = 0.88 + 0.12 * (dist[i] / 24.0).min(1.0);
            let hem_seam =
                seams.iter().any(|s| (p.y - s).abs() < 1.2) && ((p.x as i32 / 6) % 2 == 0);
            let seam = if hem_seam { 0.72 } else { 1.0 };
            for v in &mut f {
                *v *= weave * folds * rim * seam;
            }
            if alpha_png {
                img.put_pixel(
                    x,
                    y,
                    Rgba([
                        f[0].clamp(0.0, 255.0) as u8,
                        f[1].clamp(0.0, 255.0) as u8,
                        f[2].clamp(0.0, 255.0) as u8,
                        (c * 255.0) as u8,
                    ]),
                );
            } else {
                let m: [f32; 3] = [0, 1, 2].map(|k| f[k] * c + bg[k] * (1.0 - c));
                img.put_pixel(x, y, Rgba(m.map(|v| v.clamp(0.0, 255.0) as u8).into_rgba()));
            }
        }
    }
    img
}

trait IntoRgba {
    fn into_rgba(self) -> [u8; 4];
}

impl IntoRgba for [u8; 3] {
    fn into_rgba(self) -> [u8; 4] {
        [self[0], self[1], self[2], 255]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::garment::cutout::prepare;
    use crate::garment::GarmentError;

    /// Every sample is found and measured as drawn: sleeve length class, open front, a
    /// dominant torso colour near the fabric's, and shoulders wider apart than the neck.
    #[test]
    fn samples_measure_as_drawn() {
        for g in SampleGarment::ALL {
            let img = g.render();
            let garment = prepare(&img).unwrap_or_else(|e| panic!("{}: {e}", g.name()));
            let lm = garment.landmarks;
            assert_eq!(
                garment.from_alpha,
                g == SampleGarment::AlphaTee,
                "{}",
                g.name()
            );
            assert_eq!(lm.long_sleeves, g.long_sleeves(), "{}: {lm:?}", g.name());
            assert_eq!(
                lm.open_front,
                g == SampleGarment::Jacket,
                "{}: {lm:?}",
                g.name()
            );
            assert!(
                lm.sleeve.iter().all(Option::is_some),
                "{}: {lm:?}",
                g.name()
            );
            // Drawn shoulders at ±190, hem ±186 at y 740, armpits at y 330.
            for s in 0..2 {
                let sign = if s == 0 { -1.0 } else { 1.0 };
                assert!(
                    (lm.shoulder[s].x - (CX + sign * 190.0)).abs() < 24.0,
                    "{}: {lm:?}",
                    g.name()
                );
                // A long sleeve lies close to the torso below the armpit: the narrow wedge between
                // them closes a little lower.
                assert!(
                    (lm.armpit[s].y - 330.0).abs() < 45.0,
                    "{}: {lm:?}",
                    g.name()
                );
                assert!((lm.hem[s].y - 738.0).abs() < 10.0, "{}: {lm:?}", g.name());
            }
            assert!(
                lm.neck[1].x - lm.neck[0].x < lm.shoulder_width() * 0.6,
                "{lm:?}"
            );
            // A patterned fabric's mean colour is not its base colour.
            let patterned = [
                SampleGarment::StripedTee,
                SampleGarment::LogoTee,
                SampleGarment::DottedTee,
            ];
            if !patterned.contains(&g) {
                let want = g.base_colour();
                let got = garment.torso_colour;
                let d: i32 = (0..3)
                    .map(|c| (i32::from(want[c]) - i32::from(got[c])).abs())
                    .sum();
                assert!(
                    d < 60,
                    "{}: torso colour {got:?}, fabric {want:?}",
                    g.name()
                );
            }
        }
    }

    /// Inside the garment's outline no pixel shows the background: between the shoulder and
    /// the armpit, where the sleeve meets the torso's side, the photo was background-light
    /// along a hairline (the seam drawn edge to edge), and worn it read as a dashed white line.
    #[test]
    fn no_background_shows_between_sleeve_and_torso() {
        for g in SampleGarment::ALL {
            let img = g.render();
            let fabric = g.base_colour().map(f32::from);
            let base = 0.299 * fabric[0] + 0.587 * fabric[1] + 0.114 * fabric[2];
            // Only a fabric clearly darker than the background can show a light line.
            if base > 170.0 {
                continue;
            }
            let light = |x: u32, y: u32| {
                let p = img.get_pixel(x, y).0;
                p[3] > 128
                    && 0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2])
                        > base * 1.25 + 25.0
            };
            for s in [-1.0f32, 1.0] {
                for y in 170..325 {
                    // Across the seam, from 12 px inside the torso to 12 px into the sleeve: no
                    // light pixel with fabric either side of it.
                    let side = 190.0 - 8.0 * (y as f32 - 160.0) / 170.0;
                    let xs: Vec<u32> = (-12..=12)
                        .map(|dx| (CX + s * (side + dx as f32)) as u32)
                        .collect();
                    let lit: Vec<bool> = xs.iter().map(|&x| light(x, y)).collect();
                    let (first, last) = (lit.iter().position(|l| !l), lit.iter().rposition(|l| !l));
                    if let (Some(a), Some(b)) = (first, last) {
                        assert!(
                            !lit[a..=b].iter().any(|&l| l),
                            "{}: a background-light hairline at row {y} between x {} and {}",
                            g.name(),
                            xs[a],
                            xs[b]
                        );
                    }
                }
            }
        }
    }

    /// A photo of a plain background alone is `NoGarment`.
    #[test]
    fn a_blank_photo_has_no_garment() {
        let img = RgbaImage::from_pixel(300, 300, Rgba([240, 240, 240, 255]));
        assert!(matches!(prepare(&img), Err(GarmentError::NothingStandsOut)));
    }
}
