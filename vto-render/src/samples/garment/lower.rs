//! Sample product photos of lower-body garments and outfits, drawn like
//! [`super::upper`]'s tops (the same flat-lay renderer): khaki chinos, navy shorts, a teal
//! yellow polka-dot knee dress, a burgundy maxi dress, and a two-piece outfit photo (a top and
//! trousers lying side by side).
//!
//! Proportions follow real garments at about 8 px/cm: trousers' waistband 38 cm flat, rise
//! 26 cm, inseam 78 cm (shorts 18 cm); dresses 40 cm seam to seam, 100 cm (knee) and 140 cm
//! (maxi) from the shoulder.

use glam::Vec2;
use image::RgbaImage;
use vto_core::Category;

use super::upper::{inside, noise, render_flat, seg_dist, SampleGarment};

/// The sample lower-body garments and outfits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleLower {
    /// Khaki chinos, full length.
    Trousers,
    /// Navy shorts.
    Shorts,
    /// A teal knee-length dress with yellow polka dots and short sleeves.
    KneeDress,
    /// A burgundy maxi dress with short sleeves.
    MaxiDress,
    /// A two-piece outfit photo: a red t-shirt and khaki chinos side by side.
    TwoPiece,
    /// An olive jumpsuit (a one-piece outfit): a t-shirt bodice and trouser legs.
    Jumpsuit,
}

impl SampleLower {
    /// Every sample.
    pub const ALL: [SampleLower; 6] = [
        SampleLower::Trousers,
        SampleLower::Shorts,
        SampleLower::KneeDress,
        SampleLower::MaxiDress,
        SampleLower::TwoPiece,
        SampleLower::Jumpsuit,
    ];

    /// A short file-friendly name.
    pub fn name(self) -> &'static str {
        match self {
            SampleLower::Trousers => "khaki-chinos",
            SampleLower::Shorts => "navy-shorts",
            SampleLower::KneeDress => "teal-knee-dress",
            SampleLower::MaxiDress => "burgundy-maxi-dress",
            SampleLower::TwoPiece => "tee-and-chinos",
            SampleLower::Jumpsuit => "olive-jumpsuit",
        }
    }

    /// The category a shop would list it under.
    pub fn category(self) -> Category {
        match self {
            SampleLower::Trousers | SampleLower::Shorts => Category::Pants,
            SampleLower::KneeDress | SampleLower::MaxiDress => Category::Dress,
            SampleLower::TwoPiece | SampleLower::Jumpsuit => Category::FullOutfit,
        }
    }

    /// The main fabric colour (sRGB).
    pub fn base_colour(self) -> [u8; 3] {
        match self {
            SampleLower::Trousers | SampleLower::TwoPiece => [184, 156, 106],
            SampleLower::Shorts => [40, 54, 92],
            SampleLower::KneeDress => [28, 124, 124],
            SampleLower::MaxiDress => [126, 30, 54],
            SampleLower::Jumpsuit => [96, 110, 70],
        }
    }

    /// The product photo.
    pub fn render(self) -> RgbaImage {
        match self {
            SampleLower::Trousers | SampleLower::Shorts => {
                let inseam = if self == SampleLower::Trousers {
                    616.0
                } else {
                    150.0
                };
                let c = self.base_colour().map(f32::from);
                render_flat(
                    (700, 1000),
                    |p| pants_shape(p, inseam),
                    |p, _| pants_fabric(p, c, inseam),
                    self as u32 + 11,
                    false,
                    &[292.0 + inseam - 14.0, 112.0],
                )
            }
            SampleLower::KneeDress | SampleLower::MaxiDress => {
                let hem = if self == SampleLower::KneeDress {
                    1070.0
                } else {
                    1440.0
                };
                let c = self.base_colour().map(f32::from);
                let dots = self == SampleLower::KneeDress;
                render_flat(
                    (800, hem as u32 + 90),
                    |p| dress_shape(p, hem),
                    |p, part| dress_fabric(p, part, c, dots),
                    self as u32 + 11,
                    false,
                    &[hem - 16.0],
                )
            }
            SampleLower::Jumpsuit => {
                let c = self.base_colour().map(f32::from);
                render_flat(
                    (800, 1440),
                    jumpsuit_shape,
                    |p, _| dress_fabric(p, 1, c, false),
                    self as u32 + 11,
                    false,
                    &[1334.0],
                )
            }
            SampleLower::TwoPiece => {
                let top = SampleGarment::PlainTee.render();
                let bottom = SampleLower::Trousers.render();
                let mut out = RgbaImage::from_pixel(1500, 1000, *bottom.get_pixel(0, 0));
                image::imageops::overlay(&mut out, &top, 0, 50);
                image::imageops::overlay(&mut out, &bottom, 800, 0);
                out
            }
        }
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

/// Trousers with a `inseam` px leg in a 700-wide photo: waistband at y 80, crotch at 292.
fn pants_shape(p: Vec2, inseam: f32) -> u8 {
    let cx = 350.0;
    let hem = 292.0 + inseam;
    // Legs widen a little towards short hems (shorts flare).
    let flare = if inseam < 300.0 { 10.0 } else { -12.0 };
    let outline = [
        Vec2::new(cx - 150.0, 80.0),
        Vec2::new(cx + 150.0, 80.0),
        Vec2::new(cx + 170.0, 292.0),
        Vec2::new(cx + 158.0 + flare, hem),
        Vec2::new(cx + 30.0, hem),
        Vec2::new(cx, 292.0),
        Vec2::new(cx - 30.0, hem),
        Vec2::new(cx - 158.0 - flare, hem),
        Vec2::new(cx - 170.0, 292.0),
    ];
    u8::from(inside(&outline, p))
}

fn pants_fabric(p: Vec2, base: [f32; 3], inseam: f32) -> [f32; 3] {
    let cx = 350.0;
    let mut c = base;
    // Twill: a faint diagonal weave.
    if ((p.x + p.y) / 3.0).floor() as i32 % 2 == 0 {
        c = c.map(|v| v * 0.97);
    }
    // The waistband with belt loops.
    if p.y < 112.0 {
        c = base.map(|v| v * 0.9);
        for lx in [-120.0, -50.0, 50.0, 120.0] {
            if (p.x - cx - lx).abs() < 6.0 {
                c = base.map(|v| v * 0.8);
            }
        }
    }
    // The fly's stitching and button.
    if seg_dist(p, Vec2::new(cx + 22.0, 112.0), Vec2::new(cx + 22.0, 240.0)) < 1.2
        || seg_dist(p, Vec2::new(cx + 22.0, 240.0), Vec2::new(cx, 262.0)) < 1.2
    {
        c = base.map(|v| v * 0.7);
    }
    if p.distance(Vec2::new(cx, 96.0)) < 7.0 {
        c = [70.0, 60.0, 50.0];
    }
    // Slanted pockets.
    for s in [-1.0f32, 1.0] {
        if seg_dist(
            p,
            Vec2::new(cx + s * 110.0, 112.0),
            Vec2::new(cx + s * 150.0, 200.0),
        ) < 1.4
        {
            c = base.map(|v| v * 0.72);
        }
    }
    // Creases down each leg, a lighter ridge.
    for s in [-1.0f32, 1.0] {
        let top = Vec2::new(cx + s * 85.0, 300.0);
        let bottom = Vec2::new(cx + s * 88.0, 292.0 + inseam);
        let d = seg_dist(p, top, bottom);
        if d < 3.0 && p.y > 300.0 {
            c = c.map(|v| v * (1.06 - 0.02 * d));
        }
    }
    c
}

/// A dress: a t-shirt's bodice, the waist at y 500, flaring to the hem at `hem`.
fn dress_shape(p: Vec2, hem: f32) -> u8 {
    let cx = 400.0;
    let flare = if hem > 1200.0 { 330.0 } else { 290.0 };
    let body = [
        Vec2::new(cx - 72.0, 118.0),
        Vec2::new(cx - 190.0, 160.0),
        Vec2::new(cx - 182.0, 330.0),
        Vec2::new(cx - 150.0, 500.0),
        Vec2::new(cx - flare, hem),
        Vec2::new(cx + flare, hem),
        Vec2::new(cx + 150.0, 500.0),
        Vec2::new(cx + 182.0, 330.0),
        Vec2::new(cx + 190.0, 160.0),
        Vec2::new(cx + 72.0, 118.0),
    ];
    let neck = ((p - Vec2::new(cx, 112.0)) / Vec2::new(72.0, 56.0)).length_squared() < 1.0;
    if inside(&body, p) && !neck {
        return 1;
    }
    for s in [-1.0f32, 1.0] {
        let sleeve = [
            Vec2::new(cx + s * 190.0, 160.0),
            Vec2::new(cx + s * 310.0, 262.0),
            Vec2::new(cx + s * 272.0, 338.0),
            Vec2::new(cx + s * 182.0, 330.0),
        ];
        if inside(&sleeve, p) {
            return 2;
        }
    }
    0
}

/// A jumpsuit: the dresses' bodice to the waist at y 500, then trouser legs (crotch at
/// 700, hems at 1350).
fn jumpsuit_shape(p: Vec2) -> u8 {
    let cx = 400.0;
    if p.y <= 500.0 {
        return dress_shape(p, 1350.0);
    }
    let outline = [
        Vec2::new(cx - 150.0, 500.0),
        Vec2::new(cx + 150.0, 500.0),
        Vec2::new(cx + 172.0, 700.0),
        Vec2::new(cx + 160.0, 1350.0),
        Vec2::new(cx + 32.0, 1350.0),
        Vec2::new(cx, 700.0),
        Vec2::new(cx - 32.0, 1350.0),
        Vec2::new(cx - 160.0, 1350.0),
        Vec2::new(cx - 172.0, 700.0),
    ];
    u8::from(inside(&outline, p))
}

fn dress_fabric(p: Vec2, part: u8, base: [f32; 3], dots: bool) -> [f32; 3] {
    let mut c = base;
    if dots {
        // Polka dots on a staggered grid.
        let row = (p.y / 46.0).floor();
        let off = if row as i32 % 2 == 0 { 0.0 } else { 23.0 };
        let q = Vec2::new(
            (p.x + off).rem_euclid(46.0) - 23.0,
            p.y.rem_euclid(46.0) - 23.0,
        );
        if q.length() < 7.0 {
            c = [238.0, 204.0, 92.0];
        }
    } else {
        // Soft vertical pleats below the waist and a waist seam.
        if p.y > 500.0 {
            let k = 1.0 + 0.06 * ((p.x - 400.0) / 26.0 * std::f32::consts::PI).sin();
            c = c.map(|v| v * k);
        }
        if (p.y - 500.0).abs() < 1.5 {
            c = base.map(|v| v * 0.7);
        }
    }
    if part == 2 && noise(p.x as u32, p.y as u32, 5) > 0.98 {
        c = c.map(|v| v * 0.95);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::garment::cutout::cutout;
    use crate::garment::cutout::lower::{measure_pants, split_dress};

    /// The samples measure as drawn: trousers full length, shorts short, a knee and a maxi
    /// dress.
    #[test]
    fn samples_measure_as_drawn() {
        for (s, class) in [
            (SampleLower::Trousers, "full"),
            (SampleLower::Shorts, "shorts"),
        ] {
            let cut = cutout(&s.render()).unwrap();
            let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
            let (lm, _) = measure_pants(&cut.fg, w, h).expect("trousers measure");
            assert_eq!(
                lm.length_class(),
                class,
                "{}: {}",
                s.name(),
                lm.length_fraction()
            );
        }
        for (s, class) in [
            (SampleLower::KneeDress, "knee"),
            (SampleLower::MaxiDress, "maxi"),
        ] {
            let cut = cutout(&s.render()).unwrap();
            let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
            let (lm, _) = split_dress(&cut.fg, w, h).unwrap();
            assert_eq!(
                lm.length_class(),
                class,
                "{}: {}",
                s.name(),
                lm.length_ratio()
            );
            assert!(lm.bodice.sleeve.iter().all(Option::is_some), "{}", s.name());
        }
    }
}
