//! Trousers, shorts, dresses and jumpsuits on the rendered subjects: lengths, waistbands,
//! bared shins, old cuffs and outlines, hands on the thigh.

use super::*;

/// Where each lower garment must and must not show its colour, as fractions of the leg
/// (hip → knee → ankle; the knee at about 0.5).
fn lower_expectation(sample: SampleLower) -> (f32, Option<f32>) {
    match sample {
        // Covered from the hip to 0.95 of the leg.
        SampleLower::Trousers => (0.95, None),
        // Shorts end above the knee: covered to 0.3, bare from 0.65 (mid-shin).
        SampleLower::Shorts => (0.3, Some(0.7)),
        // A knee dress: covered to 0.4, bare from 0.72.
        SampleLower::KneeDress => (0.4, Some(0.75)),
        SampleLower::MaxiDress => (0.9, None),
        _ => (0.0, None),
    }
}

#[test]
fn pants_and_dresses_cover_the_legs_to_their_length_and_leave_face_and_background() {
    let Some(w) = world() else { return };
    for sample in [
        SampleLower::Trousers,
        SampleLower::Shorts,
        SampleLower::KneeDress,
        SampleLower::MaxiDress,
    ] {
        let photo = image::load_from_memory(&sample.png())
            .expect("sample photo")
            .to_rgba8();
        let (covered_to, bare_from) = lower_expectation(sample);
        let want = sample.base_colour();
        for (s, person) in &w.subjects {
            if !frontal(s) {
                continue;
            }
            let name = format!("{} on {}", sample.name(), s.spec.pose.name());
            let out = try_on(
                w,
                s,
                person,
                sample.category(),
                LoadedProduct::Image(photo.clone()),
            );
            assert_eq!(
                out.dimensions(),
                s.image.dimensions(),
                "{name}: output size"
            );
            let old = [s.spec.look.bottom_colour, s.spec.look.skin];
            let legs: Vec<Vec2> = (0..2)
                .flat_map(|k| along_leg(s, k, 0.08, covered_to))
                .collect();
            let share = share_nearest(&out, &legs, want, &old);
            assert!(
                share > 0.8,
                "{name}: only {:.0}% of the legs (hip to {covered_to}) show the product's colour",
                share * 100.0
            );
            if let Some(bare) = bare_from {
                let shins: Vec<Vec2> = (0..2).flat_map(|k| along_leg(s, k, bare, 0.92)).collect();
                let share = share_nearest(&out, &shins, want, &old);
                assert!(
                    share < 0.2,
                    "{name}: {:.0}% of the legs below the hem ({bare}) show the product",
                    share * 100.0
                );
            }
            if let Some((x, y)) = face_or_background_changed(s, &out) {
                panic!("{name}: pixel ({x}, {y}) of the face or background changed");
            }
        }
    }
}

/// The first pixel of the face (down to the chin: 1.5 nose-to-eyes below the nose, ground
/// truth) or of the background well away from the body (columns further than 15% of the
/// height from its outline) that `out` changed from subject `s`'s photo. The neck may
/// change: necklines reach it.
fn face_or_background_changed(s: &Subject, out: &RgbaImage) -> Option<(u32, u32)> {
    let eyes = (gt(s, 2).y + gt(s, 5).y) / 2.0;
    let chin = gt(s, 0).y + 1.5 * (gt(s, 0).y - eyes);
    let (mut x0, mut x1) = (u32::MAX, 0);
    for y in 0..s.image.height() {
        for x in 0..s.image.width() {
            if s.is_body(x, y) {
                x0 = x0.min(x);
                x1 = x1.max(x);
            }
        }
    }
    let margin = (0.15 * s.height_px) as u32;
    (0..out.height())
        .flat_map(|y| (0..out.width()).map(move |x| (x, y)))
        .find(|&(x, y)| {
            let far = x + margin < x0 || x > x1 + margin;
            ((y as f32) < chin || far) && changed(&s.image, out, x, y)
        })
}

/// `person` with its face's landmarks moved by `shift` (pixels) and scaled by `scale` about their
/// centre.
fn moved_face(person: &Person, shift: Vec2, scale: f32) -> Person {
    let mut p = person.clone();
    let face = &mut p.face.as_mut().expect("a face").face;
    let n = face.landmarks.len().max(1) as f32;
    let c = face
        .landmarks
        .iter()
        .fold(Vec2::ZERO, |c, l| c + Vec2::new(l[0], l[1]))
        / n;
    for l in &mut face.landmarks {
        let q = c + (Vec2::new(l[0], l[1]) - c) * scale + shift;
        l[0] = q.x;
        l[1] = q.y;
    }
    p
}

/// Regression (#30): a dress leaves the face alone whatever landmarks the face mesh gives,
/// within the few per cent of the face's width they move by between detector regions. The
/// mesh on the short-range detector's region of the walking subject made its face 1.2 px
/// wider than on the full-range box; the neck's zone under the jaw widened with it and took
/// in the jaw's anti-aliased edge pixels (person mask 0.5, not skin-like) as an old collar
/// to fill, beside the face's oval. Each frontal subject's landmarks moved by 2% of the
/// face's width each way and scaled by ±2%: no pixel of the face or background changes.
#[test]
fn a_dress_leaves_the_face_alone_whatever_its_landmarks() {
    let Some(w) = world() else { return };
    let sample = SampleLower::KneeDress;
    let photo = image::load_from_memory(&sample.png())
        .expect("sample photo")
        .to_rgba8();
    for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s)) {
        let width = person.face.as_ref().expect("a face").face.width_px();
        let d = 0.02 * width;
        for (shift, scale) in [
            (Vec2::new(-d, 0.0), 1.0),
            (Vec2::new(d, 0.0), 1.0),
            (Vec2::new(0.0, -d), 1.0),
            (Vec2::new(0.0, d), 1.0),
            (Vec2::ZERO, 0.98),
            (Vec2::ZERO, 1.02),
        ] {
            let moved = moved_face(person, shift, scale);
            let out = try_on(
                w,
                s,
                &moved,
                sample.category(),
                LoadedProduct::Image(photo.clone()),
            );
            if let Some((x, y)) = face_or_background_changed(s, &out) {
                panic!(
                    "{} on {} (face moved {shift}, scaled {scale}): pixel ({x}, {y}) of the \
                     face or background changed",
                    sample.name(),
                    s.spec.pose.name()
                );
            }
        }
    }
}

#[test]
fn pants_fit_a_three_quarter_turn() {
    let Some(w) = world() else { return };
    let sample = SampleLower::Trousers;
    let photo = image::load_from_memory(&sample.png())
        .expect("sample photo")
        .to_rgba8();
    let (covered_to, _) = lower_expectation(sample);
    for (s, person) in w.subjects.iter().filter(|(s, _)| !frontal(s)) {
        let name = format!("{} on {}", sample.name(), s.spec.pose.name());
        // A 35° turn is not "sideways": the garment engines must accept it (they refused it
        // while the pose model's exaggerated depth was taken at face value).
        let out = try_on(
            w,
            s,
            person,
            sample.category(),
            LoadedProduct::Image(photo.clone()),
        );
        let old = [s.spec.look.bottom_colour, s.spec.look.skin];
        let legs: Vec<Vec2> = (0..2)
            .flat_map(|k| along_leg(s, k, 0.08, covered_to))
            .collect();
        let share = share_nearest(&out, &legs, sample.base_colour(), &old);
        assert!(
            share > 0.7,
            "{name}: only {:.0}% of the legs show the product's colour",
            share * 100.0
        );
    }
}

/// The body's pixels (ground truth) across the shin of leg `side` at fraction `f` of hip →
/// ankle: the run through the shin's axis, perpendicular to knee → ankle, as points, and
/// the background just outside it on either side (the input photo's colour there).
fn across_shin(s: &Subject, side: usize, f: f32) -> Option<(Vec<Vec2>, [[f32; 3]; 2])> {
    let c = *along_leg(s, side, f, f).first()?;
    let d = (gt(s, 27 + side) - gt(s, 25 + side)).normalize_or_zero();
    let n = Vec2::new(-d.y, d.x);
    let body = |p: Vec2| {
        let (x, y) = (p.x.round() as i64, p.y.round() as i64);
        x >= 0
            && y >= 0
            && (x as u32) < s.image.width()
            && (y as u32) < s.image.height()
            && s.is_body(x as u32, y as u32)
    };
    if !body(c) {
        return None;
    }
    let reach = |dir: f32| {
        let mut t = 0.0;
        while t < 200.0 && body(c + n * dir * (t + 1.0)) {
            t += 1.0;
        }
        t
    };
    let (a, b) = (reach(-1.0), reach(1.0));
    let pts: Vec<Vec2> = (-(a as i32)..=b as i32).map(|t| c + n * t as f32).collect();
    let outside = [
        rgb(&s.image, c - n * (a + 3.0))?,
        rgb(&s.image, c + n * (b + 3.0))?,
    ];
    Some((pts, outside))
}

/// Legs that shorts and a knee dress bare are round solids: across the shin the skin's
/// luminance varies as a lit cylinder's (one flank darker than the crest, not a flat
/// tube), and every pixel of the body across it is skin, not the background continued
/// into the leg (the light strip along one edge that bared legs showed before).
#[test]
fn bared_shins_are_lit_cylinders_with_no_background_strip() {
    let Some(w) = world() else { return };
    for sample in [SampleLower::Shorts, SampleLower::KneeDress] {
        let photo = image::load_from_memory(&sample.png())
            .expect("sample photo")
            .to_rgba8();
        for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s)) {
            let name = format!("{} on {}", sample.name(), s.spec.pose.name());
            let out = try_on(
                w,
                s,
                person,
                sample.category(),
                LoadedProduct::Image(photo.clone()),
            );
            let skin = s.spec.look.skin;
            for side in 0..2 {
                let Some((pts, outside)) = across_shin(s, side, 0.8) else {
                    continue;
                };
                assert!(pts.len() >= 8, "{name}: the shin is {} px wide", pts.len());
                let cols: Vec<[f32; 3]> = pts.iter().filter_map(|p| rgb(&out, *p)).collect();
                let n = cols.len();
                // Away from the outline's antialiased pixels.
                let inner = &cols[n / 10 + 1..n - n / 10 - 1];
                let lum: Vec<f32> = inner.iter().map(|c| luma(*c)).collect();
                let hi = lum.iter().copied().fold(f32::MIN, f32::max);
                let lo = lum.iter().copied().fold(f32::MAX, f32::min);
                assert!(
                    hi - lo > 0.12 * hi,
                    "{name}, leg {side}: the shin is flat ({lo:.0}–{hi:.0} across it)"
                );
                for (k, c) in inner.iter().enumerate() {
                    let to_skin = colour_distance(*c, skin);
                    let to_bg = outside
                        .iter()
                        .map(|b| colour_distance(*c, b.map(|v| v.round() as u8)))
                        .fold(f32::MAX, f32::min);
                    assert!(
                        to_skin < to_bg,
                        "{name}, leg {side}: pixel {k} of {} across the shin is background-like \
                         ({c:?}; skin {skin:?}, background {outside:?})",
                        inner.len()
                    );
                }
            }
        }
    }
}

/// The worn top's hem on the centre line (input photo): the first row below the chest from
/// which three rows in a row are nearer the bottom's colour than the top's.
fn top_hem_row(s: &Subject) -> Option<f32> {
    let mid = (gt(s, 11) + gt(s, 12)) * 0.5;
    let hips = (gt(s, 23) + gt(s, 24)) * 0.5;
    let (top, bottom) = (s.spec.look.top, s.spec.look.bottom_colour);
    let mut run = 0;
    let start = mid + (hips - mid) * 0.5;
    for k in 0..400 {
        let p = start + Vec2::new(0.0, k as f32);
        if p.y > hips.y + 0.5 * (gt(s, 25).y - hips.y) {
            return None;
        }
        let pts: Vec<Vec2> = (-3..=3)
            .map(|d| p + Vec2::new(d as f32 * 3.0, 0.0))
            .collect();
        if share_nearest(&s.image, &pts, bottom, &[top]) > 0.5 {
            run += 1;
            if run == 3 {
                return Some(p.y - 2.0);
            }
        } else {
            run = 0;
        }
    }
    None
}

/// The top the person wears stays in front of new trousers' and shorts' waistband, decided
/// by where its hem is (also for a navy top over blue trousers, whose colours are alike):
/// just above the hem the centre line is still the top as it was, and beside the top above
/// its hem no pixel outside the body changes (the waistband's corners poked out ~10 px).
#[test]
fn the_worn_top_stays_over_the_waistband_and_no_corner_pokes_out() {
    let Some(w) = world() else { return };
    for sample in [SampleLower::Trousers, SampleLower::Shorts] {
        let photo = image::load_from_memory(&sample.png())
            .expect("sample photo")
            .to_rgba8();
        for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s)) {
            let name = format!("{} on {}", sample.name(), s.spec.pose.name());
            let Some(hem) = top_hem_row(s) else {
                continue;
            };
            let out = try_on(
                w,
                s,
                person,
                sample.category(),
                LoadedProduct::Image(photo.clone()),
            );
            let hips = (gt(s, 23) + gt(s, 24)) * 0.5;
            let band: Vec<Vec2> = (0..6)
                .flat_map(|r| {
                    (-3..=3).map(move |d| {
                        Vec2::new(hips.x + d as f32 * 4.0, hem - 3.0 - r as f32 * 2.0)
                    })
                })
                .collect();
            let kept = band
                .iter()
                .filter(|p| !changed(&s.image, &out, p.x as u32, p.y as u32))
                .count();
            assert!(
                kept as f32 > 0.8 * band.len() as f32,
                "{name}: only {kept} of {} pixels of the centre line just above the top's hem \
                 (row {hem:.0}) still show the top",
                band.len()
            );
            let hw = gt(s, 23).distance(gt(s, 24));
            let y0 = (hem - 0.08 * s.height_px).max(0.0) as u32;
            let y1 = (hem - 3.0).max(0.0) as u32;
            let x0 = (hips.x - 1.6 * hw).max(0.0) as u32;
            let x1 = ((hips.x + 1.6 * hw) as u32).min(out.width() - 1);
            for y in y0..y1 {
                for x in x0..=x1 {
                    let near_body = (x.saturating_sub(2)..=(x + 2).min(out.width() - 1))
                        .any(|xx| s.is_body(xx, y));
                    assert!(
                        near_body || !changed(&s.image, &out, x, y),
                        "{name}: pixel ({x}, {y}) beside the top, above its hem (row {hem:.0}), \
                         changed"
                    );
                }
            }
        }
    }
}

/// Where a knee dress bares the shins of a barefoot subject in trousers, the painted shin
/// meets the photo's bare foot without a colour step: across the ankle seam (the foot's
/// top edge, ground truth), the mean colour 3–6 px above it and 3–6 px below it differ by
/// less than ΔE 12 (the shin was painted in the face's colour: ΔE 20–30 on main).
#[test]
fn a_painted_shin_meets_a_bare_foot_without_a_colour_step() {
    let (Some(w), Some(x)) = (world(), extra()) else {
        return;
    };
    let photo = image::load_from_memory(&SampleLower::KneeDress.png())
        .expect("sample photo")
        .to_rgba8();
    for (s, person) in &x.barefoot {
        let out = try_on(
            w,
            s,
            person,
            SampleLower::KneeDress.category(),
            LoadedProduct::Image(photo.clone()),
        );
        if let Some(dir) = std::env::var_os("SUBJECTS_OUT") {
            let _ = out.save(
                PathBuf::from(dir).join(format!("barefoot_{}_knee-dress.png", s.spec.pose.name())),
            );
        }
        for side in 0..2 {
            let foot = &s.feet_px[side];
            let (x0, x1) = foot
                .iter()
                .fold((f32::MAX, f32::MIN), |(a, b), p| (a.min(p.x), b.max(p.x)));
            let (mut above, mut below) = (Vec::new(), Vec::new());
            // The middle half of the foot's columns, each at its topmost foot pixel.
            for x in ((x0 + 0.25 * (x1 - x0)) as i32)..=((x1 - 0.25 * (x1 - x0)) as i32) {
                let Some(top) = foot
                    .iter()
                    .filter(|p| p.x.round() as i32 == x)
                    .map(|p| p.y)
                    .reduce(f32::min)
                else {
                    continue;
                };
                for d in 3..=6 {
                    let xf = x as f32;
                    above.extend(rgb(&out, Vec2::new(xf, top - d as f32)));
                    below.extend(rgb(&out, Vec2::new(xf, top + d as f32)));
                }
            }
            assert!(above.len() >= 12, "the foot's top edge has too few columns");
            let (a, b) = (lab(mean(&above)), lab(mean(&below)));
            let de = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            println!(
                "barefoot {} leg {side}: shin {:?} foot {:?} ΔE {de:.1}",
                s.spec.pose.name(),
                mean(&above),
                mean(&below)
            );
            assert!(
                de < 12.0,
                "barefoot {}, leg {side}: a step of ΔE {de:.1} between the painted shin {:?} \
                 and the photo's foot {:?}",
                s.spec.pose.name(),
                mean(&above),
                mean(&below)
            );
        }
    }
}

/// A knee dress on subjects in trousers (the standard ones and the front subject at the
/// gallery's 768×1024): at the ankles (ankle to the sole, ground truth) no pixel of the old
/// trousers stays as it was (a navy bit of the cuff stayed above the front subject's left
/// shoe at 768×1024), and the floor beside the feet (off the body) is left as it was (the
/// foot's contact shadow was smeared into a blurred fill).
#[test]
fn no_old_cuff_at_the_ankles_and_the_floor_beside_the_feet_is_untouched() {
    let (Some(w), Some(x)) = (world(), extra()) else {
        return;
    };
    let photo = image::load_from_memory(&SampleLower::KneeDress.png())
        .expect("sample photo")
        .to_rgba8();
    let (mut checked, mut wrong) = (0, Vec::new());
    let large = std::iter::once((&x.front_large.0, &x.front_large.1));
    for (s, person) in w.subjects.iter().map(|(s, p)| (s, p)).chain(large) {
        if !frontal(s) || s.spec.look.bottom != testkit::Bottom::Trousers {
            continue;
        }
        checked += 1;
        let name = format!(
            "knee dress on {} at {}×{}",
            s.spec.pose.name(),
            s.spec.size.0,
            s.spec.size.1
        );
        let out = try_on(
            w,
            s,
            person,
            SampleLower::KneeDress.category(),
            LoadedProduct::Image(photo.clone()),
        );
        let old = s.spec.look.bottom_colour;
        let (wd, ht) = s.image.dimensions();
        let near_body = |x: u32, y: u32, r: u32| {
            (y.saturating_sub(r)..=(y + r).min(ht - 1))
                .any(|yy| (x.saturating_sub(r)..=(x + r).min(wd - 1)).any(|xx| s.is_body(xx, yy)))
        };
        let (mut cuff, mut cuff_kept, mut floor, mut floor_changed) = (0, 0, 0, 0);
        for side in 0..2 {
            let (ankle, heel, toe) = (gt(s, 27 + side), gt(s, 29 + side), gt(s, 31 + side));
            let r = 0.05 * s.height_px;
            let y0 = (ankle.y - 0.03 * s.height_px).max(0.0) as u32;
            let y1 = (heel.y.max(toe.y) + 0.02 * s.height_px).min(ht as f32 - 1.0) as u32;
            let xa = (ankle.x.min(toe.x) - r).max(0.0) as u32;
            let xb = (ankle.x.max(toe.x) + r).min(wd as f32 - 1.0) as u32;
            for y in y0..=y1 {
                for x in xa..=xb {
                    let was = rgb(&s.image, Vec2::new(x as f32, y as f32)).unwrap_or_default();
                    if s.is_body(x, y) && colour_distance(was, old) < 0.12 {
                        cuff += 1;
                        cuff_kept += usize::from(!changed(&s.image, &out, x, y));
                    } else if !near_body(x, y, 3) {
                        floor += 1;
                        floor_changed += usize::from(changed(&s.image, &out, x, y));
                    }
                }
            }
        }
        println!(
            "{name}: {cuff_kept} of {cuff} cuff pixels kept, {floor_changed} of {floor} floor \
             pixels changed"
        );
        if cuff <= 20 || cuff_kept * 100 > cuff {
            wrong.push(format!(
                "{name}: {cuff_kept} of {cuff} pixels of the old trousers at the ankles still show"
            ));
        }
        if floor_changed * 100 > floor {
            wrong.push(format!(
                "{name}: {floor_changed} of {floor} floor pixels beside the feet changed"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("; "));
    assert!(checked >= 3, "three subjects in trousers");
}

/// Where new shorts or a knee dress leave the old bottom's outline bare, no faint line of
/// it stays: between the hips and the knees, no pixel the try-on changed is a thin dark line
/// on the background (darker by 8 or more than the pixels 2 px either side of it, whose
/// colours agree with each other and with the wall at the row's ends).
/// The contrapposto subject's old shorts left such a dashed line beside the new shorts.
#[test]
fn no_ghost_line_of_the_old_bottom_beside_the_new_one() {
    let Some(w) = world() else { return };
    let px = |img: &RgbaImage, x: u32, y: u32| {
        let c = img.get_pixel(x, y).0;
        [f32::from(c[0]), f32::from(c[1]), f32::from(c[2])]
    };
    let apart = |a: [f32; 3], b: [f32; 3]| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f32::max);
    for sample in [SampleLower::Shorts, SampleLower::KneeDress] {
        let photo = image::load_from_memory(&sample.png())
            .expect("sample photo")
            .to_rgba8();
        for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s)) {
            let name = format!("{} on {}", sample.name(), s.spec.pose.name());
            let out = try_on(
                w,
                s,
                person,
                sample.category(),
                LoadedProduct::Image(photo.clone()),
            );
            let hips = (gt(s, 23) + gt(s, 24)) * 0.5;
            let knees = (gt(s, 25) + gt(s, 26)) * 0.5;
            let hw = gt(s, 23).distance(gt(s, 24));
            let x0 = (hips.x - 2.0 * hw).max(2.0) as u32;
            let x1 = ((hips.x + 2.0 * hw) as u32).min(out.width() - 3);
            let mut lines = Vec::new();
            for y in hips.y as u32..knees.y as u32 {
                // The wall at the row's ends: the line lies on the background.
                let (wa, wb) = (px(&s.image, 3, y), px(&s.image, s.image.width() - 4, y));
                let wall = [0, 1, 2].map(|k| 0.5 * (wa[k] + wb[k]));
                for x in x0..=x1 {
                    if !changed(&s.image, &out, x, y) {
                        continue;
                    }
                    let (c, a, b) = (px(&out, x, y), px(&out, x - 2, y), px(&out, x + 2, y));
                    let on_wall = apart(a, wall) < 14.0 && apart(b, wall) < 14.0;
                    if on_wall && apart(a, b) < 8.0 && luma(a).min(luma(b)) - luma(c) >= 8.0 {
                        lines.push((x, y));
                    }
                }
            }
            println!("{name}: {} ghost-line pixels", lines.len());
            assert!(
                lines.len() <= 3,
                "{name}: {} pixels of a faint line, e.g. {:?}",
                lines.len(),
                &lines[..lines.len().min(6)]
            );
        }
    }
}

#[test]
fn a_maxi_dress_hangs_over_the_back_foot_of_a_walking_subject() {
    let Some(w) = world() else { return };
    let maxi = SampleLower::MaxiDress;
    let photo = image::load_from_memory(&maxi.png())
        .expect("sample photo")
        .to_rgba8();
    let Some((s, person)) = w
        .subjects
        .iter()
        .find(|(s, _)| s.spec.pose == testkit::Pose::Walking)
    else {
        panic!("no walking subject");
    };
    let out = try_on(w, s, person, maxi.category(), LoadedProduct::Image(photo));
    // The back foot is the one further up the photo (further from the camera); the maxi's
    // hem falls below its ankle, so the skirt hangs in front of that foot. Keeping the whole
    // foot in front of the skirt cut a notch there: the foot and the floor showed through
    // a hole in the dress.
    let back = if gt(s, 27).y < gt(s, 28).y { 0 } else { 1 };
    let ankle = gt(s, 27 + back);
    let foot = (gt(s, 29 + back) + gt(s, 31 + back)) * 0.5;
    let pts: Vec<Vec2> = (0..6)
        .flat_map(|i| {
            let c = ankle + (foot - ankle) * (0.3 + 0.1 * i as f32);
            (-2..=2).map(move |dx| c + Vec2::new(dx as f32 * 2.0, 0.0))
        })
        .collect();
    let others = [
        s.spec.look.skin,
        s.spec.look.bottom_colour,
        s.spec.look.shoes,
        [140, 140, 140],
    ];
    let dress = share_nearest(&out, &pts, maxi.base_colour(), &others);
    eprintln!(
        "{}: {:.0}% of the back foot is under the dress",
        s.spec.pose.name(),
        dress * 100.0
    );
    assert!(
        dress > 0.8,
        "{}: only {:.0}% of the back foot's pixels show the maxi dress over it",
        s.spec.pose.name(),
        dress * 100.0
    );
}

#[test]
fn no_wall_is_continued_over_a_jumpsuits_waist_on_any_subject() {
    let Some(w) = world() else { return };
    let suit = SampleLower::Jumpsuit;
    let photo = image::load_from_memory(&suit.png())
        .expect("sample photo")
        .to_rgba8();
    for (s, person) in &w.subjects {
        let out = try_on(
            w,
            s,
            person,
            suit.category(),
            LoadedProduct::Image(photo.clone()),
        );
        // The body's pixels about the waist (ground truth: from 0.45 of the way hips →
        // shoulders down to the hips' line, above the crotch), where the bodice meets the
        // legs; across, between the hip joints only (the body's outline beyond them may give
        // way to the wall where the new garment is slimmer than the old: an old sleeve wider
        // than the arm painted bare, a hip a little wider than the new legs).
        let (hips, shoulders) = ((gt(s, 23) + gt(s, 24)) * 0.5, (gt(s, 11) + gt(s, 12)) * 0.5);
        let (y0, y1) = (hips.y + (shoulders.y - hips.y) * 0.45, hips.y);
        let (lx, rx) = (gt(s, 23).x.min(gt(s, 24).x), gt(s, 23).x.max(gt(s, 24).x));
        let pts: Vec<Vec2> = (y0 as u32..y1 as u32)
            .flat_map(|y| (lx as u32..rx as u32).map(move |x| (x, y)))
            .filter(|&(x, y)| s.is_body(x, y))
            .map(|(x, y)| Vec2::new(x as f32, y as f32))
            .collect();
        let others = [
            suit.base_colour(),
            s.spec.look.skin,
            s.spec.look.top,
            s.spec.look.bottom_colour,
        ];
        let wall = share_nearest(&out, &pts, wall_colour(s), &others) * pts.len() as f32;
        assert!(
            wall <= 12.0,
            "{} on {}: {wall:.0} px of the body about the waist show the wall",
            suit.name(),
            s.spec.pose.name()
        );
    }
}

#[test]
fn no_old_trousers_show_round_the_fingers_of_a_hand_on_the_thigh() {
    let Some(w) = world() else { return };
    let chinos = SampleLower::Trousers;
    let photo = image::load_from_memory(&chinos.png())
        .expect("sample photo")
        .to_rgba8();
    let mut tried = 0;
    for (s, person) in &w.subjects {
        let (hips, knees) = ((gt(s, 23) + gt(s, 24)) * 0.5, (gt(s, 25) + gt(s, 26)) * 0.5);
        let sw = gt(s, 11).distance(gt(s, 12));
        // A wrist (ground truth) above a knee and within 0.7 shoulder widths of the hips'
        // middle across: the hand lies on the hip or thigh, over the trousers.
        let wrists: Vec<Vec2> = [gt(s, 15), gt(s, 16)]
            .into_iter()
            .filter(|p| p.y < knees.y && (p.x - hips.x).abs() < 0.7 * sw)
            .collect();
        if wrists.is_empty() {
            continue;
        }
        tried += 1;
        let out = try_on(
            w,
            s,
            person,
            chinos.category(),
            LoadedProduct::Image(photo.clone()),
        );
        // The body's pixels within a hand's length below each wrist.
        let pts: Vec<Vec2> = wrists
            .iter()
            .flat_map(|&wr| {
                let (rx, ry) = ((0.35 * sw) as i32, (0.45 * sw) as i32);
                (0..=ry).flat_map(move |dy| {
                    (-rx..=rx).map(move |dx| wr + Vec2::new(dx as f32, dy as f32))
                })
            })
            .filter(|p| p.x >= 0.0 && p.y >= 0.0 && s.is_body(p.x as u32, p.y as u32))
            .collect();
        let old = share_nearest(
            &out,
            &pts,
            s.spec.look.bottom_colour,
            &[
                chinos.base_colour(),
                s.spec.look.skin,
                s.spec.look.top,
                wall_colour(s),
            ],
        ) * pts.len() as f32;
        // 280 px when the whole hand's capsule stayed in front; what is left (about 75) is
        // the dark anti-aliased outline of the hand and sleeve, nearest the grey by colour.
        assert!(
            old <= 120.0,
            "{} on {}: {old:.0} px of the old trousers show round the hand",
            chinos.name(),
            s.spec.pose.name()
        );
    }
    assert!(tried >= 1, "a subject with a hand on the thigh");
}
