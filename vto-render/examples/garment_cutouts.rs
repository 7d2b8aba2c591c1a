//! Debugging aid: the garment cut-out of every product photo in a folder (and of the sample
//! garments), written as PNGs with the background dimmed and tinted red, and what each photo
//! measures as (by its file name's prefix, as the shop-photo tests read them) printed.
//!
//! `cargo run -p vto-render --release --example garment_cutouts -- PHOTO_DIR [OUT_DIR]`

use std::path::PathBuf;

use image::{Rgba, RgbaImage};
use vto_render::garment::cutout::lower::{measure_pants_closed, split_dress};
use vto_render::garment::cutout::{cutout, measure_photo};
use vto_render::garment::label;
use vto_render::samples::garment::SampleGarment;

/// The photo with the pixels outside `fg` dimmed and tinted red.
fn overlay(img: &RgbaImage, fg: &[bool]) -> RgbaImage {
    let mut out = img.clone();
    for (i, p) in out.pixels_mut().enumerate() {
        if !fg[i] {
            let [r, g, b, _] = p.0;
            *p = Rgba([
                (f32::from(r) * 0.35 + 150.0) as u8,
                (f32::from(g) * 0.35) as u8,
                (f32::from(b) * 0.35) as u8,
                255,
            ]);
        }
    }
    out
}

/// The mask as a binary PGM (255 garment), for comparing cut-outs.
fn mask_pgm(fg: &[bool], w: usize, h: usize) -> Vec<u8> {
    let mut out = format!("P5\n{w} {h}\n255\n").into_bytes();
    out.extend(fg.iter().map(|&v| if v { 255u8 } else { 0 }));
    out
}

/// What the cut-out of `img` measures as, read as the garment `name` says.
fn report(name: &str, img: &RgbaImage) -> (String, Option<RgbaImage>, Option<Vec<u8>>) {
    let t = std::time::Instant::now();
    let cut = match cutout(img) {
        Ok(c) => c,
        Err(e) => return (format!("cut-out refused: {e}"), None, None),
    };
    let ms = t.elapsed().as_millis();
    let (w, h) = (cut.img.width() as usize, cut.img.height() as usize);
    let share = cut.fg.iter().filter(|&&v| v).count() as f32 / (w * h) as f32;
    let measured = if ["trousers_", "jeans_", "shorts_"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        measure_pants_closed(&cut.fg, w, h)
            .map(|_| "legs measured".to_string())
            .unwrap_or_else(|| "no legs".to_string())
    } else if ["dress_", "skirt_", "jumpsuit_"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        match split_dress(&cut.fg, w, h) {
            Ok(_) => "dress measured".to_string(),
            Err(e) => e.to_string(),
        }
    } else {
        let t = std::time::Instant::now();
        let result = measure_photo(&cut.fg, &cut.img, w, h);
        let measure_ms = t.elapsed().as_secs_f64() * 1e3;
        match result {
            Ok((lm, labels)) if std::env::var_os("VERBOSE").is_some() => {
                // The sleeves tinted (left green, right blue) on the overlay.
                let mut png = overlay(&cut.img, &cut.fg);
                for (p, &l) in png.pixels_mut().zip(&labels) {
                    let tint = match l {
                        label::SLEEVE_LEFT => [0.0, 160.0, 0.0],
                        label::SLEEVE_RIGHT => [0.0, 0.0, 200.0],
                        _ => continue,
                    };
                    for (v, t) in p.0.iter_mut().zip(tint) {
                        *v = (f32::from(*v) * 0.5 + t * 0.5) as u8;
                    }
                }
                return (format!("{lm:?}"), Some(png), Some(mask_pgm(&cut.fg, w, h)));
            }
            Ok((lm, _)) => format!(
                "top measured in {measure_ms:.1} ms (shoulders {:.0}, length {:.0}, sleeves {:.2})",
                lm.shoulder_width(),
                lm.length(),
                lm.sleeve_ratio()
            ),
            Err(e) => e.to_string(),
        }
    };
    (
        format!("{:5.1} % garment, {ms} ms; {measured}", share * 100.0),
        Some(overlay(&cut.img, &cut.fg)),
        Some(mask_pgm(&cut.fg, w, h)),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: garment_cutouts PHOTO_DIR [OUT_DIR]")?,
    );
    let out = PathBuf::from(args.next().unwrap_or_else(|| "garment-cutouts".into()));
    std::fs::create_dir_all(&out)?;
    let mut photos: Vec<(String, RgbaImage)> = SampleGarment::ALL
        .iter()
        .map(|g| (format!("sample-{}", g.name()), g.render()))
        .collect();
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jpg") || n.ends_with(".png"))
        .collect();
    names.sort();
    for name in names {
        photos.push((name.clone(), image::open(dir.join(&name))?.to_rgba8()));
    }
    for (name, img) in &photos {
        let (line, png, pgm) = report(name, img);
        println!("{name}: {line}");
        if let Some(png) = png {
            let stem = name.rsplit_once('.').map_or(name.as_str(), |s| s.0);
            png.save(out.join(format!("{stem}.png")))?;
            if let Some(pgm) = pgm {
                std::fs::write(out.join(format!("{stem}.pgm")), pgm)?;
            }
        }
    }
    Ok(())
}
