//! # The fill stage: what a try-on uncovers, filled from the photo's own content
//!
//! Given a photo and a mask (the hole: what an old shoe, collar, sleeve or pair of glasses
//! covered), [`fill`] invents the hole's pixels from the rest of the photo, and changes no
//! pixel outside the mask. An optional guide says where it may copy from (only background
//! for background, only skin for skin).
//!
//! ## How
//! Structure first, then texture, coherent across scales (Wexler, Shechtman and Irani 2007,
//! "Space-time completion of video"; Barnes et al. 2009, "PatchMatch"; the scheme behind
//! content-aware fill):
//! 1. Crop to the hole's bounding box plus a margin (sources nearby look most alike), and
//!    build a pyramid down to where the hole is a few pixels thick.
//! 2. At the coarsest level, a smooth fill (push–pull, then Laplace sweeps: colour diffuses
//!    in from the rim) continues the large shapes and gradients into the hole.
//! 3. At every level, a few EM iterations: PatchMatch finds, for every 7×7 patch that
//!    overlaps the hole, the most similar patch wholly outside it (and inside the guide);
//!    voting sets each hole pixel to the similarity-weighted mean of what those patches put
//!    there.
//! 4. Each finer level starts from the coarser one's matches, doubled (so the texture copied
//!    at the fine level continues what the coarse level decided), voted with the fine
//!    level's own pixels.
//!
//! 5. At full resolution, the vote's error on the rim is spread over the hole (a membrane) and
//!    the voted Laplacian is integrated (Poisson sweeps): no seams, gradients continue.
//! 6. The result mixes the patch synthesis with a smooth fill ([`FillOptions::detail`]).
//!
//! ## Design decisions
//! - **CPU, with rayon, no GPU kernel.** The work is a data-dependent search with early exits
//!   over a few ten thousand pixels; on lavapipe (the CPU Vulkan device this service often
//!   runs on) our vision stack's wgpu kernels ran 20–80× slower than its native ones (see
//!   `docs/performance.md`). The native path does not meet the speed goal yet (a 1024²
//!   photo with 5 % masked in ≤ 150 ms on two cores; `scripts/bench-inpaint.sh`).
//! - **Deterministic.** Rows are searched in bands of fixed height and every random draw is
//!   a hash of the seed and the pixel, so the result does not depend on the thread count.
//! - **Pixels outside the mask never change**: the result is the photo with only the masked
//!   pixels replaced.
//!
//! ## Main items
//! [`fill`], [`fill_rgba`], [`fill_with`], [`FillOptions`], [`FillError`].

mod level;
mod patchmatch;
mod smooth;
#[cfg(test)]
mod tests;

use image::{GrayImage, RgbImage, RgbaImage};

use level::Level;
use patchmatch::{Field, Nnf};

/// Why a fill could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    /// The mask is not the photo's size.
    #[error("the mask is {mask_w}×{mask_h} but the photo {photo_w}×{photo_h}: they must be the same size")]
    MaskSize {
        /// The photo's width.
        photo_w: u32,
        /// The photo's height.
        photo_h: u32,
        /// The mask's width.
        mask_w: u32,
        /// The mask's height.
        mask_h: u32,
    },
    /// The guide is not the photo's size.
    #[error("the guide is {guide_w}×{guide_h} but the photo {photo_w}×{photo_h}: they must be the same size")]
    GuideSize {
        /// The photo's width.
        photo_w: u32,
        /// The photo's height.
        photo_h: u32,
        /// The guide's width.
        guide_w: u32,
        /// The guide's height.
        guide_h: u32,
    },
    /// No pixel outside the mask (and inside the guide) to fill from.
    #[error("nothing to fill from: every pixel is masked or outside the guide")]
    NoSource,
}

/// How the fill runs. The defaults are what the benchmark measures.
#[derive(Debug, Clone, PartialEq)]
pub struct FillOptions {
    /// The patch radius: patches are `2 r + 1` pixels square (default 3: 7×7).
    pub patch_radius: u32,
    /// The seed of every random draw (the fill is a function of its inputs and this).
    pub seed: u64,
    /// How much of the copied texture the result keeps, against a smooth fill (a diffusion
    /// from the rim): 1 is the patch synthesis alone, 0 the smooth fill alone. Texture copied
    /// deep into a large hole is plausible but rarely the truth; the default, 0.5, keeps its
    /// structure and half its contrast (see `docs/fill.md` for the measurements).
    pub detail: f32,
}

impl Default for FillOptions {
    fn default() -> Self {
        Self {
            patch_radius: 3,
            seed: 0x5eed_f111,
            detail: 0.5,
        }
    }
}

/// Mask and guide values at or above this are set (white = fill, white = may copy from).
pub const THRESHOLD: u8 = 128;

/// Fills the pixels of `photo` where `mask` ≥ 128 from the rest of the photo (only from
/// where `guide` ≥ 128, when given), with the default [`FillOptions`]. Pixels outside the
/// mask are returned unchanged; an empty mask returns the photo.
pub fn fill(
    photo: &RgbImage,
    mask: &GrayImage,
    guide: Option<&GrayImage>,
) -> Result<RgbImage, FillError> {
    fill_with(photo, mask, guide, &FillOptions::default())
}

/// [`fill`] for an RGBA photo: the colour is filled, the alpha channel kept as it is.
pub fn fill_rgba(
    photo: &RgbaImage,
    mask: &GrayImage,
    guide: Option<&GrayImage>,
) -> Result<RgbaImage, FillError> {
    let rgb = RgbImage::from_fn(photo.width(), photo.height(), |x, y| {
        let p = photo.get_pixel(x, y).0;
        image::Rgb([p[0], p[1], p[2]])
    });
    let filled = fill(&rgb, mask, guide)?;
    let mut out = photo.clone();
    for (x, y, p) in out.enumerate_pixels_mut() {
        if mask.get_pixel(x, y).0[0] >= THRESHOLD {
            let c = filled.get_pixel(x, y).0;
            p.0[..3].copy_from_slice(&c);
        }
    }
    Ok(out)
}

/// [`fill`] with explicit options.
pub fn fill_with(
    photo: &RgbImage,
    mask: &GrayImage,
    guide: Option<&GrayImage>,
    options: &FillOptions,
) -> Result<RgbImage, FillError> {
    let (pw, ph) = photo.dimensions();
    if mask.dimensions() != (pw, ph) {
        return Err(FillError::MaskSize {
            photo_w: pw,
            photo_h: ph,
            mask_w: mask.width(),
            mask_h: mask.height(),
        });
    }
    if let Some(g) = guide {
        if g.dimensions() != (pw, ph) {
            return Err(FillError::GuideSize {
                photo_w: pw,
                photo_h: ph,
                guide_w: g.width(),
                guide_h: g.height(),
            });
        }
    }
    let (w, h) = (pw as usize, ph as usize);
    trace("start");
    let hole = |x: usize, y: usize| mask.as_raw()[y * w + x] >= THRESHOLD;
    let allowed = |x: usize, y: usize| guide.is_none_or(|g| g.as_raw()[y * w + x] >= THRESHOLD);
    // The hole's bounding box.
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    let mut sources = 0usize;
    for y in 0..h {
        for x in 0..w {
            if hole(x, y) {
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x + 1);
                y1 = y1.max(y + 1);
            } else if allowed(x, y) {
                sources += 1;
            }
        }
    }
    if x1 == 0 {
        return Ok(photo.clone());
    }
    if sources == 0 {
        return Err(FillError::NoSource);
    }
    let r = options.patch_radius.max(1) as usize;
    // A margin of half the hole's size (at least a few patches) around it: the sources.
    let margin = ((x1 - x0).max(y1 - y0) / 2).max(8 * (2 * r + 1));
    let mut crop = (
        x0.saturating_sub(margin),
        y0.saturating_sub(margin),
        (x1 + margin).min(w),
        (y1 + margin).min(h),
    );
    let in_crop = |c: (usize, usize, usize, usize)| {
        let mut n = 0usize;
        for y in c.1..c.3 {
            for x in c.0..c.2 {
                n += usize::from(!hole(x, y) && allowed(x, y));
            }
        }
        n
    };
    let holes: usize = mask.as_raw().iter().filter(|&&m| m >= THRESHOLD).count();
    if in_crop(crop) < holes.max(1) {
        crop = (0, 0, w, h);
    }
    let (cx, cy, cw, ch) = (crop.0, crop.1, crop.2 - crop.0, crop.3 - crop.1);
    let mut rgb = Vec::with_capacity(cw * ch * 3);
    let mut hole_map = Vec::with_capacity(cw * ch);
    let mut allowed_map = Vec::with_capacity(cw * ch);
    for y in cy..cy + ch {
        for x in cx..cx + cw {
            let is_hole = hole(x, y);
            // The hole's own pixels are never read: they start black.
            let p = if is_hole {
                [0, 0, 0]
            } else {
                photo.get_pixel(x as u32, y as u32).0
            };
            rgb.extend_from_slice(&p);
            hole_map.push(is_hole);
            allowed_map.push(allowed(x, y));
        }
    }
    let level = Level::new(cw, ch, r, &rgb, hole_map, allowed_map);
    trace(&format!("prepare crop {cw}x{ch}"));
    let done = complete(level, r, options.seed, options.detail.clamp(0.0, 1.0));
    trace("complete");
    let mut out = photo.clone();
    for y in 0..ch {
        for x in 0..cw {
            if done.hole[y * cw + x] {
                out.put_pixel((cx + x) as u32, (cy + y) as u32, image::Rgb(done.rgb(x, y)));
            }
        }
    }
    Ok(out)
}

/// EM iterations and PatchMatch passes per EM iteration at a level: many at the coarsest
/// (cheap, and it decides the layout), fewer going up, one at the finest.
fn schedule(k: usize, top: usize, pixels: usize) -> (usize, usize) {
    if k == top && pixels <= 128 * 128 {
        (6, 2)
    } else if k == top {
        (3, 1)
    } else if k == 0 {
        (1, 1)
    } else {
        (2, 1)
    }
}

thread_local! { static T0: std::cell::Cell<Option<(std::time::Instant, u64)>> = const { std::cell::Cell::new(None) }; }
fn cpu_ns() -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        if let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) {
            total += s.split_whitespace().next().unwrap().parse::<u64>().unwrap();
        }
    }
    total
}
pub(crate) fn trace(what: &str) {
    if std::env::var_os("VTO_FILL_TRACE").is_none() { return; }
    T0.with(|t| {
        let now = (std::time::Instant::now(), cpu_ns());
        if let Some(p) = t.get() { eprintln!("  {:>7.2} ms wall {:>7.2} ms cpu {what}", (now.0 - p.0).as_secs_f64() * 1e3, (now.1 - p.1) as f64 / 1e6); }
        t.set(Some((std::time::Instant::now(), cpu_ns())));
    });
}

/// Fills the hole of `finest` (a crop) and returns it.
fn complete(finest: Level, r: usize, seed: u64, detail: f32) -> Level {
    let thick = level::thickness(&finest.hole, finest.w, finest.h) as usize;
    let mut levels = vec![finest];
    // Down to where the hole is about two pixels thick, while a level keeps enough room.
    while (thick >> (levels.len() - 1)) > 2 {
        let last = &levels[levels.len() - 1];
        if last.w.min(last.h) / 2 < 4 * (2 * r + 1) {
            break;
        }
        let coarse = last.reduce();
        let holes = coarse.hole.iter().filter(|&&b| b).count();
        if Field::new(&coarse, r).sources.len() < holes.max(64) {
            break;
        }
        levels.push(coarse);
    }
    let top = levels.len() - 1;
    trace(&format!("pyramid {} levels thick {thick}", levels.len()));
    // Structure: the coarsest level's hole diffuses in from its rim.
    smooth::smooth_fill(&mut levels[top], 64);
    trace("top smooth");
    let mut prev: Option<(Nnf, usize, usize)> = None;
    for k in (0..=top).rev() {
        if k < top {
            // Start from the coarser level's result, upsampled.
            let (lo, hi) = levels.split_at_mut(k + 1);
            fill_from_coarser(&mut lo[k], &hi[0]);
        }
        trace(&format!("L{k} upfill"));
        let field = Field::new(&levels[k], r);
        trace(&format!("L{k} field {}x{} targets {}", levels[k].w, levels[k].h, field.target.iter().filter(|&&b| b).count()));
        if field.sources.is_empty() {
            // No patch to copy: the smooth fill (coarsest) or the coarser level stays.
            prev = None;
            continue;
        }
        let lseed = patchmatch::mix(seed ^ ((k as u64) << 40));
        let level = &mut levels[k];
        let mut nnf = match prev.take() {
            Some((c, cw, ch)) => {
                let nnf = patchmatch::upsample(&c, cw, ch, &field, lseed);
                patchmatch::vote(level, &field, &nnf, true);
                nnf
            }
            None => patchmatch::random_init(&field, lseed),
        };
        patchmatch::measure(level, &field, &mut nnf);
        trace(&format!("L{k} init"));
        let (em, passes) = schedule(k, top, level.w * level.h);
        // The coarsest level searches widely (it decides the layout), the finer ones near
        // the upsampled match.
        let radius = if k == top {
            level.w.max(level.h).min(96)
        } else if k == 0 {
            8
        } else {
            16
        };
        for e in 0..em {
            for p in 0..passes {
                let s = patchmatch::mix(lseed ^ ((e * 16 + p) as u64 + 1));
                let reverse = (e * passes + p) % 2 == 1;
                patchmatch::search(level, &field, &mut nnf, radius, s, reverse);
                trace(&format!("L{k} search"));
            }
            if k == 0 && e + 1 == em {
                break;
            }
            patchmatch::vote(level, &field, &nnf, false);
            trace(&format!("L{k} vote"));
            if k > 0 || e + 1 < em {
                patchmatch::measure(level, &field, &mut nnf);
                trace(&format!("L{k} measure"));
            }
        }
        if k == 0 {
            // Structure at full resolution: the copied texture meets the rim without a
            // seam and slow colour changes continue through the hole.
            let holes = smooth::Holes::new(level);
            trace("holes");
            let finish = patchmatch::vote_finish(level, &field, &nnf, &holes);
            trace("vote finish");
            let smooth = smooth::membranes(level, &holes, Some(&finish.mismatch), 16)
                .expect("the finest level has sources");
            trace("membranes");
            smooth::correct(level, &holes, &smooth);
            smooth::poisson(level, &holes, &finish.laplacian, 24);
            trace("poisson");
            if detail < 1.0 {
                blend(level, &holes, &smooth, detail);
                trace("blend");
            }
        }
        prev = Some((nnf, level.w, level.h));
    }
    levels.swap_remove(0)
}

/// Mixes the hole pixels of `level` with the smooth fill (lanes 0–2 of `smooth`, per pixel
/// of `holes`, rounded): `detail` of the first.
fn blend(level: &mut Level, holes: &smooth::Holes, smooth: &[[f32; 8]], detail: f32) {
    let w = level.w;
    for (&i, s) in holes.pixels.iter().zip(smooth) {
        let (x, y) = (i as usize % w, i as usize / w);
        let (a, b) = (level.rgb(x, y), s.map(|v| v.round().clamp(0.0, 255.0)));
        let v = [0, 1, 2].map(|k| (detail * f32::from(a[k]) + (1.0 - detail) * b[k]).round() as u8);
        level.set_rgb(x, y, v);
    }
    level.refresh_padding();
}

/// Sets the hole pixels of `fine` bilinearly from the level above it.
fn fill_from_coarser(fine: &mut Level, coarse: &Level) {
    for y in 0..fine.h {
        for x in 0..fine.w {
            if !fine.hole[y * fine.w + x] {
                continue;
            }
            let fx = ((x as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (coarse.w - 1) as f32);
            let fy = ((y as f32 + 0.5) / 2.0 - 0.5).clamp(0.0, (coarse.h - 1) as f32);
            let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
            let (x1, y1) = ((x0 + 1).min(coarse.w - 1), (y0 + 1).min(coarse.h - 1));
            let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
            let mut acc = [0.0f32; 3];
            for (xx, yy, wgt) in [
                (x0, y0, (1.0 - tx) * (1.0 - ty)),
                (x1, y0, tx * (1.0 - ty)),
                (x0, y1, (1.0 - tx) * ty),
                (x1, y1, tx * ty),
            ] {
                let c = coarse.rgb(xx, yy);
                for k in 0..3 {
                    acc[k] += wgt * f32::from(c[k]);
                }
            }
            fine.set_rgb(x, y, acc.map(|v| v.round().clamp(0.0, 255.0) as u8));
        }
    }
    fine.refresh_padding();
}
