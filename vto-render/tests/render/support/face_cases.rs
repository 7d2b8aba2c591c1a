//! Test photos with small, turned and several faces, made deterministically from the two
//! public-domain portraits (astronaut.png from scikit-image, grace_hopper.jpg from matplotlib;
//! `scripts/fetch-models.sh --test-photos`), and small turned faces made from the project's
//! real people photos (`../shared/testdata/people`, [`small_real_faces`]). The same functions
//! make them for the Rust tests and for `examples/face_cases.rs`, which writes them for
//! `scripts/face_cases_reference.py` (MediaPipe 0.10.14's FaceMesh on the same pixels).

use image::imageops::FilterType;
use image::{Rgba, RgbaImage};

/// One case: a name and the photo.
pub struct FaceCase {
    /// File stem.
    pub name: &'static str,
    /// The photo.
    pub photo: RgbaImage,
}

/// `src` rotated by `deg` degrees (counter-clockwise on screen) about its centre, bilinear,
/// onto a canvas of the same size filled with `fill`.
pub fn rotate(src: &RgbaImage, deg: f32, fill: Rgba<u8>) -> RgbaImage {
    let (w, h) = src.dimensions();
    let (s, c) = deg.to_radians().sin_cos();
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    RgbaImage::from_fn(w, h, |x, y| {
        let (dx, dy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
        // Inverse map: rotate the output position back by -deg (y points down).
        let sx = c * dx - s * dy + cx - 0.5;
        let sy = s * dx + c * dy + cy - 0.5;
        if sx < 0.0 || sy < 0.0 || sx > (w - 1) as f32 || sy > (h - 1) as f32 {
            return fill;
        }
        let (x0, y0) = (sx.floor() as u32, sy.floor() as u32);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
        let px = |x, y| src.get_pixel(x, y).0.map(f32::from);
        let (a, b, cc, d) = (px(x0, y0), px(x1, y0), px(x0, y1), px(x1, y1));
        Rgba(std::array::from_fn(|k| {
            let top = a[k] + (b[k] - a[k]) * fx;
            let bottom = cc[k] + (d[k] - cc[k]) * fx;
            (top + (bottom - top) * fy).round().clamp(0.0, 255.0) as u8
        }))
    })
}

fn scaled(src: &RgbaImage, width: u32) -> RgbaImage {
    let height = (src.height() as f32 * width as f32 / src.width() as f32).round() as u32;
    image::imageops::resize(src, width, height, FilterType::Triangle)
}

fn canvas(w: u32, h: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        let v = 90 + ((x / 8 + y / 8) % 2) as u8 * 6;
        Rgba([v, v + 4, v + 10, 255])
    })
}

fn place(canvas: &mut RgbaImage, img: &RgbaImage, x: i64, y: i64) {
    image::imageops::overlay(canvas, img, x, y);
}

/// Every case, from the two portraits.
pub fn face_cases(astronaut: &RgbaImage, hopper: &RgbaImage) -> Vec<FaceCase> {
    let grey = Rgba([96, 100, 106, 255]);
    let mut out = Vec::new();
    out.push(FaceCase {
        name: "astronaut",
        photo: astronaut.clone(),
    });
    out.push(FaceCase {
        name: "hopper",
        photo: hopper.clone(),
    });
    for (name, src, width) in [
        ("astronaut_small_160", astronaut, 160u32),
        ("astronaut_small_120", astronaut, 120),
        ("hopper_small_140", hopper, 140),
        ("hopper_small_100", hopper, 100),
    ] {
        let mut c = canvas(480, 360);
        place(&mut c, &scaled(src, width), 250, 90);
        out.push(FaceCase { name, photo: c });
    }
    for (name, src, deg, width) in [
        ("astronaut_roll_25", astronaut, 25.0f32, 512u32),
        ("hopper_roll_-30", hopper, -30.0, 512),
        ("astronaut_roll_20_small_180", astronaut, 20.0, 180),
        ("hopper_roll_-20_small_150", hopper, -20.0, 150),
    ] {
        let turned = rotate(&scaled(src, width), deg, grey);
        if width >= 512 {
            out.push(FaceCase {
                name,
                photo: turned,
            });
        } else {
            let mut c = canvas(480, 360);
            place(&mut c, &turned, 60, 60);
            out.push(FaceCase { name, photo: c });
        }
    }
    // Two people: a large and a small face.
    let mut c = canvas(720, 480);
    place(&mut c, &scaled(astronaut, 300), 30, 90);
    place(&mut c, &scaled(hopper, 150), 480, 150);
    out.push(FaceCase {
        name: "two_people",
        photo: c,
    });
    out
}

/// The real people photos the small-face cases are made from: the case's name, the photo,
/// the width the whole photo is scaled to and where its face's centre is (fractions of the
/// photo). A profile (its face 52 and 63 px wide) and a three-quarter face wearing its own
/// sunglasses, tilted down (63 and 76 px).
pub const SMALL_REAL_FACES: [(&str, &str, u32, [f32; 2]); 4] = [
    ("profile_52", PROFILE, 266, [0.30, 0.44]),
    ("profile_63", PROFILE, 322, [0.30, 0.44]),
    ("sunglasses_63", SUNGLASSES, 253, [0.57, 0.41]),
    ("sunglasses_76", SUNGLASSES, 305, [0.57, 0.41]),
];

const PROFILE: &str = "portrait_man_profile_left_unsplash.jpg";
const SUNGLASSES: &str = "halfbody_woman_hands_on_head_cap_sunglasses_sweater_pexels.jpg";

/// Small turned faces as a street photo shows them: each photo of [`SMALL_REAL_FACES`]
/// scaled down whole and placed on a 960×640 canvas with its face's centre at (620, 260).
/// `open` reads a people photo by file name; the first error it returns is returned.
pub fn small_real_faces<E>(
    mut open: impl FnMut(&str) -> Result<RgbaImage, E>,
) -> Result<Vec<FaceCase>, E> {
    let mut out = Vec::new();
    for (name, file, width, [fx, fy]) in SMALL_REAL_FACES {
        let small = scaled(&open(file)?, width);
        let x = 620 - (fx * small.width() as f32).round() as i64;
        let y = 260 - (fy * small.height() as f32).round() as i64;
        let mut c = canvas(960, 640);
        place(&mut c, &small, x, y);
        out.push(FaceCase { name, photo: c });
    }
    Ok(out)
}
