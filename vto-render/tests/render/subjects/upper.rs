//! Tops on the rendered subjects: the torso in the product's colour, necklines, holes,
//! sleeves from the shoulder to their end, no fold, no shoulder poking out.

use super::*;

#[test]
fn a_tee_shows_its_colour_on_the_torso_between_shoulders_and_hips() {
    let Some(w) = world() else { return };
    let tee = SampleGarment::PlainTee;
    let photo = image::load_from_memory(&tee.png())
        .expect("sample photo")
        .to_rgba8();
    let want = tee.base_colour();
    for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s)) {
        let name = format!("{} on {}", tee.name(), s.spec.pose.name());
        let out = try_on(
            w,
            s,
            person,
            tee.category(),
            LoadedProduct::Image(photo.clone()),
        );
        assert_eq!(
            out.dimensions(),
            s.image.dimensions(),
            "{name}: output size"
        );
        let old = [s.spec.look.top, s.spec.look.skin];
        // The torso: a grid inset in the quad shoulders → hips.
        let (ls, rs, lh, rh) = (gt(s, 11), gt(s, 12), gt(s, 23), gt(s, 24));
        let mut torso = Vec::new();
        for i in 0..6 {
            for j in 0..6 {
                let (u, v) = (0.25 + 0.5 * i as f32 / 5.0, 0.15 + 0.7 * j as f32 / 5.0);
                let top = rs + (ls - rs) * u;
                let bottom = rh + (lh - rh) * u;
                torso.push(top + (bottom - top) * v);
            }
        }
        let share = share_nearest(&out, &torso, want, &old);
        assert!(
            share > 0.8,
            "{name}: only {:.0}% of the torso shows the tee's colour",
            share * 100.0
        );
    }
}

#[test]
fn a_short_sleeved_tee_bares_the_forearms_of_a_long_sleeved_subject() {
    let Some(w) = world() else { return };
    let tee = SampleGarment::PlainTee;
    let photo = image::load_from_memory(&tee.png())
        .expect("sample photo")
        .to_rgba8();
    // A top as skin-coloured as the arm (the walking subject's rust top on brown skin) is
    // left out: colour cannot tell its sleeve from a bare arm, here or in our compose (a known
    // limit, said in the docs); every other frontal subject must come out bare-armed.
    let distinct = |s: &Subject| {
        let top = s.spec.look.top.map(f32::from);
        colour_distance(top, s.spec.look.skin) > 0.6
    };
    let mut tried = 0;
    for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s) && distinct(s)) {
        tried += 1;
        let name = format!("{} on {}", tee.name(), s.spec.pose.name());
        let out = try_on(
            w,
            s,
            person,
            tee.category(),
            LoadedProduct::Image(photo.clone()),
        );
        // The forearms (elbow → wrist, ground truth) must no longer show the old sleeves.
        let forearms: Vec<Vec2> = (0..2)
            .flat_map(|k| {
                let (e, wr) = (gt(s, 13 + k), gt(s, 15 + k));
                (1..6).map(move |i| e + (wr - e) * (i as f32 / 6.0))
            })
            .collect();
        let share = share_nearest(
            &out,
            &forearms,
            s.spec.look.top,
            &[s.spec.look.skin, tee.base_colour()],
        );
        // At most one point in ten: where a forearm crosses the new tee, its shaded fold can
        // read nearer a dark old top than the tee's base colour.
        assert!(
            share <= 0.1,
            "{name}: {:.0}% of the forearms still show the old long sleeves",
            share * 100.0
        );
    }
    assert!(
        tried >= 2,
        "at least two subjects with a top unlike their skin"
    );
}

/// The tee on every frontal subject whose top is unlike its skin: (subject, result).
fn plain_tees(w: &World) -> Vec<(&Subject, RgbaImage)> {
    let tee = SampleGarment::PlainTee;
    let photo = image::load_from_memory(&tee.png())
        .expect("sample photo")
        .to_rgba8();
    w.subjects
        .iter()
        .filter(|(s, _)| {
            frontal(s) && colour_distance(s.spec.look.top.map(f32::from), s.spec.look.skin) > 0.6
        })
        .map(|(s, person)| {
            let out = try_on(
                w,
                s,
                person,
                tee.category(),
                LoadedProduct::Image(photo.clone()),
            );
            (s, out)
        })
        .collect()
}

#[test]
fn a_tee_neckline_lower_than_the_old_collar_shows_skin_not_the_old_top() {
    let Some(w) = world() else { return };
    let tee = SampleGarment::PlainTee;
    let results = plain_tees(w);
    assert!(results.len() >= 2, "at least two subjects to try");
    for (s, out) in results {
        // The chest under the neck (ground truth): 0.2 shoulder widths above the shoulders'
        // line to 0.15 below, 0.15 either side of the middle. The old top's collar is high
        // (at the neck); the tee's crew neck is lower, so part of this shows chest.
        let (ls, rs) = (gt(s, 11), gt(s, 12));
        let (mid, sw) = ((ls + rs) * 0.5, ls.distance(rs));
        let across = (ls - rs).normalize();
        let down = Vec2::new(-across.y, across.x) * across.x.signum();
        let pts: Vec<Vec2> = (0..8)
            .flat_map(|i| {
                (0..8).map(move |j| {
                    mid + across * sw * (-0.15 + 0.3 * i as f32 / 7.0)
                        + down * sw * (-0.2 + 0.35 * j as f32 / 7.0)
                })
            })
            .filter(|p| s.is_body(p.x as u32, p.y as u32))
            .collect();
        let old = share_nearest(
            &out,
            &pts,
            s.spec.look.top,
            &[s.spec.look.skin, tee.base_colour()],
        );
        assert!(
            old <= 0.05,
            "{} on {}: {:.0}% of the chest under the neck still shows the old top",
            tee.name(),
            s.spec.pose.name(),
            old * 100.0
        );
    }
}

#[test]
fn no_wall_shows_through_a_hole_in_a_tee() {
    let Some(w) = world() else { return };
    let tee = SampleGarment::PlainTee;
    for (s, out) in plain_tees(w) {
        let (wd, ht) = out.dimensions();
        let (wu, hu) = (wd as usize, ht as usize);
        let wall = wall_colour(s);
        let others = [s.spec.look.top, s.spec.look.skin, wall];
        let is_tee = |x: usize, y: usize| {
            let c = out.get_pixel(x as u32, y as u32).0;
            let c = [c[0], c[1], c[2]].map(f32::from);
            let d = colour_distance(c, tee.base_colour());
            others.iter().all(|o| colour_distance(c, *o) > d)
        };
        // What the border reaches through pixels that are not the tee.
        let mut reached = vec![false; wu * hu];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for x in 0..wu {
            stack.extend([(x, 0), (x, hu - 1)]);
        }
        for y in 0..hu {
            stack.extend([(0, y), (wu - 1, y)]);
        }
        while let Some((x, y)) = stack.pop() {
            let i = y * wu + x;
            if reached[i] || is_tee(x, y) {
                continue;
            }
            reached[i] = true;
            if x > 0 {
                stack.push((x - 1, y));
            }
            if x + 1 < wu {
                stack.push((x + 1, y));
            }
            if y > 0 {
                stack.push((x, y - 1));
            }
            if y + 1 < hu {
                stack.push((x, y + 1));
            }
        }
        // Enclosed by the tee yet the wall (off the body in the photo): a hole.
        let holes = (0..wu * hu)
            .filter(|&i| {
                let (x, y) = (i % wu, i / wu);
                !reached[i] && !is_tee(x, y) && !s.is_body(x as u32, y as u32)
            })
            .count();
        assert!(
            holes <= 3,
            "{} on {}: {holes} px of wall show through holes in the tee",
            tee.name(),
            s.spec.pose.name()
        );
    }
}

/// The body's pixels on the outer half of each upper arm (ground truth: the subject's mask
/// within a capsule about shoulder → elbow, from 10 % to 80 % of the way, on the side away
/// from the torso), where a long sleeve must lie from its shoulder seam down.
fn outer_upper_arms(s: &Subject) -> Vec<Vec2> {
    let (ls, rs) = (gt(s, 11), gt(s, 12));
    let width = ls.distance(rs);
    let mid = (ls + rs) * 0.5;
    let mut pts = Vec::new();
    for k in 0..2 {
        let (sh, el) = (gt(s, 11 + k), gt(s, 13 + k));
        let axis = el - sh;
        let away = (sh - mid).normalize_or_zero();
        let (x0, x1) = (sh.x.min(el.x) - width * 0.3, sh.x.max(el.x) + width * 0.3);
        let (y0, y1) = (sh.y.min(el.y) - width * 0.3, sh.y.max(el.y) + width * 0.3);
        for y in y0.max(0.0) as u32..y1.max(0.0) as u32 {
            for x in x0.max(0.0) as u32..x1.max(0.0) as u32 {
                let p = Vec2::new(x as f32, y as f32);
                let t = (p - sh).dot(axis) / axis.length_squared().max(1.0);
                let off = p - (sh + axis * t);
                if (0.1..0.8).contains(&t)
                    && off.length() < width * 0.25
                    && off.dot(away) > 0.0
                    && s.is_body(x, y)
                {
                    pts.push(p);
                }
            }
        }
    }
    pts
}

#[test]
fn a_long_sleeved_jacket_covers_the_upper_arms_from_the_shoulder_down() {
    let Some(w) = world() else { return };
    let jacket = SampleGarment::Jacket;
    let photo = image::load_from_memory(&jacket.png())
        .expect("sample photo")
        .to_rgba8();
    // The subjects standing with their arms hanging free of the torso (the walking subject's
    // rust top is as skin-coloured as its arms: colour cannot tell them apart).
    for (s, person) in w.subjects.iter().filter(|(s, _)| {
        matches!(
            s.spec.pose,
            testkit::Pose::Front | testkit::Pose::Contrapposto
        )
    }) {
        let name = format!("{} on {}", jacket.name(), s.spec.pose.name());
        let out = try_on(
            w,
            s,
            person,
            jacket.category(),
            LoadedProduct::Image(photo.clone()),
        );
        let arms = outer_upper_arms(s);
        assert!(arms.len() > 200, "{name}: {} upper-arm pixels", arms.len());
        // Skin where the old long sleeve was uncovered beside the new sleeve: while a
        // hanging sleeve's root was taken as wide as its oblique seam is long, its first
        // cross-sections fell off the sleeve's texels and it began mid-arm (46 % skin on the
        // front subject; 3 % and 8 % on the two subjects since).
        let skin = share_nearest(
            &out,
            &arms,
            s.spec.look.skin,
            &[jacket.base_colour(), s.spec.look.top],
        );
        eprintln!(
            "{name}: {:.1}% of the outer upper arms are skin",
            skin * 100.0
        );
        assert!(
            skin < 0.1,
            "{name}: {:.0}% of the outer upper arms show skin beside the jacket's sleeves",
            skin * 100.0
        );
    }
}

/// Pixels of `part`'s region whose spline lands on the part's own garment texels with the
/// garment turned over (the map's Jacobian not positive): fabric folded inside out.
fn folded_texels(
    part: &vto_render::garment::warp::Part,
    g: &vto_render::garment::GarmentImage,
    norm: f32,
) -> (usize, usize) {
    let warp = vto_render::garment::PartWarp::solve(part, norm).expect("a spline");
    let (mut folded, mut on) = (0, 0);
    let [x0, y0, x1, y1] = part.region;
    for y in (y0.max(0.0) as u32..y1.max(0.0) as u32).step_by(2) {
        for x in (x0.max(0.0) as u32..x1.max(0.0) as u32).step_by(2) {
            let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let q = warp.eval(p);
            if q.x < 0.0 || q.y < 0.0 || q.x >= g.width as f32 || q.y >= g.height as f32 {
                continue;
            }
            if g.labels[q.y as usize * g.width as usize + q.x as usize] != part.label {
                continue;
            }
            on += 1;
            let (dx, dy) = (warp.eval(p + Vec2::X) - q, warp.eval(p + Vec2::Y) - q);
            if dx.perp_dot(dy) <= 0.0 {
                folded += 1;
            }
        }
    }
    (folded, on)
}

#[test]
fn no_sleeve_is_turned_inside_out_on_any_subject() {
    use vto_render::garment::cutout::outfit::{split_outfit, PieceKind};
    use vto_render::garment::upper::fit::fit_upper;
    use vto_render::garment::{cutout, label, BodyFrame};
    use vto_render::tryon::UpperGarment;
    let Some(w) = world() else { return };
    let mut tops: Vec<(String, RgbaImage, UpperGarment)> = [
        SampleGarment::PlainTee,
        SampleGarment::DottedTee,
        SampleGarment::LongShirt,
        SampleGarment::Jacket,
    ]
    .into_iter()
    .map(|g| {
        let kind = match g.category() {
            vto_core::Category::Shirt => UpperGarment::Shirt,
            vto_core::Category::Jacket => UpperGarment::Jacket,
            _ => UpperGarment::Tshirt,
        };
        (g.name().to_string(), g.render(), kind)
    })
    .collect();
    // The outfit's top is worn as a shirt (`tryon::lower`).
    let pieces = split_outfit(&SampleLower::TwoPiece.render()).expect("the outfit's pieces");
    let top = pieces
        .iter()
        .find(|p| p.kind == PieceKind::Top)
        .expect("the outfit's top");
    tops.push(("outfit top".into(), top.photo.clone(), UpperGarment::Shirt));
    let mut bad = Vec::new();
    for (s, person) in &w.subjects {
        let frame = BodyFrame::new(person).expect("a body frame");
        let (pw, ph) = s.image.dimensions();
        for (name, photo, kind) in &tops {
            let g = cutout::prepare(photo).expect("a garment");
            let fit = fit_upper(&g.landmarks, &frame, kind.ease()).expect("a fit");
            for part in fit.parts.iter().filter(|p| p.label != label::TORSO) {
                let (folded, on) = folded_texels(part, &g, pw.max(ph) as f32);
                eprintln!(
                    "{name} on {}: sleeve {}: {folded} of {on} texel samples folded",
                    s.spec.pose.name(),
                    part.label
                );
                // A sleeve pinned at an armpit out over a hanging arm turned its root
                // inside out: 10–26 % of every short sleeve's samples, and the outfit's
                // top on the walking subject showed a flap of sleeve beside the arm. Long
                // sleeves keep a small fold on the inner arm (under 4.5 %; were up to 8 %).
                if folded * 20 > on {
                    bad.push(format!(
                        "{name} on {}: {folded} of {on} sleeve samples",
                        s.spec.pose.name()
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "sleeves folded over: {bad:?}");
}

/// The point of the chain `pts` nearest `p`: its arc length from the chain's start.
fn arc_along(pts: &[Vec2], p: Vec2) -> f32 {
    let (mut best, mut best_s, mut s0) = (f32::MAX, 0.0, 0.0);
    for seg in pts.windows(2) {
        let (a, b) = (seg[0], seg[1]);
        let ab = b - a;
        let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
        let d = p.distance(a + ab * t);
        if d < best {
            (best, best_s) = (d, s0 + t * ab.length());
        }
        s0 += ab.length();
    }
    best_s
}

/// The arm pixels (ground truth: the visible upper arm and forearm) between 15 % down the
/// upper arm and 0.15 shoulder widths short of the new sleeve's end (the engine's cuff; past
/// it a hand held in front of the cuff is kept, which colour alone cannot tell from an old
/// skin-coloured sleeve), that still show skin or the old top rather than the new garment:
/// (leaking, counted) per arm.
fn sleeve_leaks(
    s: &Subject,
    out: &RgbaImage,
    cuffs: &[Vec2],
    want: [u8; 3],
) -> Vec<(usize, usize)> {
    let sw = gt(s, 11).distance(gt(s, 12));
    let mut per_arm = Vec::new();
    for k in 0..2 {
        let chain = [gt(s, 11 + k), gt(s, 13 + k), gt(s, 15 + k)];
        // The id pass's arm nearest this elbow, and the engine's cuff nearest this arm.
        let Some(px) = s.arms_px.iter().min_by(|a, b| {
            let d = |v: &Vec<Vec2>| {
                let c = v.iter().copied().sum::<Vec2>() / v.len().max(1) as f32;
                c.distance(chain[1])
            };
            d(a).total_cmp(&d(b))
        }) else {
            continue;
        };
        let Some(cuff) = cuffs
            .iter()
            .copied()
            .min_by(|a, b| a.distance(chain[1]).total_cmp(&b.distance(chain[1])))
        else {
            continue;
        };
        let from = 0.15 * chain[0].distance(chain[1]);
        let to = arc_along(&chain, cuff) - 0.15 * sw;
        let (mut bad, mut n) = (0, 0);
        for p in px {
            let a = arc_along(&chain, *p);
            if a < from || a > to {
                continue;
            }
            let Some(c) = rgb(out, *p) else { continue };
            n += 1;
            let old = colour_distance(c, s.spec.look.skin).min(colour_distance(c, s.spec.look.top));
            if old < colour_distance(c, want) {
                bad += 1;
            }
        }
        per_arm.push((bad, n));
    }
    per_arm
}

/// A sleeve is as wide as the arm under it (its width per cross-section from the person
/// mask, never narrower than the arm): on the frontal subjects (front, contrapposto), at
/// most 3 % of each arm's visible pixels from the shoulder to the new sleeve's end (short
/// tee, long jacket) still show skin or the old top. With the sleeve's width from a fixed
/// arm radius (0.13 shoulder widths) the tee left 6–18 % of each arm bare beside its sleeves
/// and the jacket up to 6 %.
#[test]
fn sleeves_cover_the_arm_from_the_shoulder_to_their_end() {
    let Some(w) = world() else { return };
    let (mut checked, mut leaks) = (0, Vec::new());
    for garment in [SampleGarment::PlainTee, SampleGarment::Jacket] {
        let photo = image::load_from_memory(&garment.png())
            .expect("sample photo")
            .to_rgba8();
        // A top as skin-coloured as the arm (the walking subject's rust top) is left out:
        // by the wrist, where the hand is kept in front of its cuff, colour cannot tell its
        // old sleeve from skin (a known limit of compose; the tee bares no wrist there).
        for (s, person) in w.subjects.iter().filter(|(s, _)| {
            frontal(s) && colour_distance(s.spec.look.top.map(f32::from), s.spec.look.skin) > 0.6
        }) {
            let name = format!("{} on {}", garment.name(), s.spec.pose.name());
            let tryon = builtin_tryon(garment.category()).expect("a built-in try-on");
            let look = tryon
                .try_on(
                    w.renderer.stages(),
                    person,
                    &LoadedProduct::Image(photo.clone()),
                )
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let cuffs: Vec<Vec2> = look.metadata["fit"]["cuffs_px"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| {
                    let c = c.as_array()?;
                    Some(Vec2::new(
                        c.first()?.as_f64()? as f32,
                        c.get(1)?.as_f64()? as f32,
                    ))
                })
                .collect();
            assert_eq!(cuffs.len(), 2, "{name}: two sleeves");
            for (k, (bad, n)) in sleeve_leaks(s, &look.image, &cuffs, garment.base_colour())
                .into_iter()
                .enumerate()
            {
                let share = bad as f32 / n.max(1) as f32;
                eprintln!("{name}: arm {k}: {bad} of {n} sleeve pixels show skin or the old top");
                if n < 150 {
                    continue;
                }
                checked += 1;
                if share >= 0.03 {
                    leaks.push(format!("{name}, arm {k}: {:.1}%", share * 100.0));
                }
            }
        }
    }
    assert!(checked >= 4, "only {checked} arms checked");
    assert!(
        leaks.is_empty(),
        "the arm under the sleeve shows skin or the old top: {leaks:?}"
    );
}

/// Garment pixels around shoulder `k` (ground truth, 11 + k) more than `gap` px from every
/// body pixel: in the box from 0.35 shoulder widths above the shoulder point to 0.1 below it,
/// 0.35 either side; a pixel counts as garment where it changed and is nearer the garment's
/// colour than it was before.
fn off_body_near_shoulder(
    s: &Subject,
    out: &RgbaImage,
    k: usize,
    want: [u8; 3],
    gap: i64,
) -> Vec<Vec2> {
    let sh = gt(s, 11 + k);
    let sw = gt(s, 11).distance(gt(s, 12));
    let (w, h) = (i64::from(out.width()), i64::from(out.height()));
    let near_body = |x: i64, y: i64| {
        (y - gap..=y + gap).any(|yy| {
            (x - gap..=x + gap)
                .any(|xx| xx >= 0 && yy >= 0 && xx < w && yy < h && s.is_body(xx as u32, yy as u32))
        })
    };
    let mut off = Vec::new();
    let (x0, x1) = ((sh.x - 0.35 * sw) as i64, (sh.x + 0.35 * sw) as i64);
    let (y0, y1) = ((sh.y - 0.35 * sw) as i64, (sh.y + 0.1 * sw) as i64);
    for y in y0.max(0)..y1.min(h) {
        for x in x0.max(0)..x1.min(w) {
            let (xu, yu) = (x as u32, y as u32);
            if !changed(&s.image, out, xu, yu) || near_body(x, y) {
                continue;
            }
            let p = Vec2::new(x as f32, y as f32);
            let (Some(now), Some(before)) = (rgb(out, p), rgb(&s.image, p)) else {
                continue;
            };
            let before = before.map(|v| v as u8);
            if colour_distance(now, want) < colour_distance(now, before) {
                off.push(p);
            }
        }
    }
    off
}

/// The garment's shoulders round over the person's (the shoulder line on the mask's
/// contour, the garment cut back to the mask around the shoulders): around each shoulder
/// point of the frontal subjects no more than 20 garment pixels lie over 4 px outside the
/// body (ground truth; the walking subject's person mask itself overshoots its shoulder by
/// about 5 px, which leaves a 13-pixel sliver). Before, the jacket's square corners poked up and out as "horns"
/// (300–540 pixels per shoulder over 3 px out), and every top's shoulder line stood above
/// the trapezius by the collar (130–400).
#[test]
fn no_garment_shoulder_pokes_out_of_the_body() {
    let Some(w) = world() else { return };
    let mut horns = Vec::new();
    for garment in [
        SampleGarment::Jacket,
        SampleGarment::PlainTee,
        SampleGarment::LongShirt,
    ] {
        let photo = image::load_from_memory(&garment.png())
            .expect("sample photo")
            .to_rgba8();
        for (s, person) in w.subjects.iter().filter(|(s, _)| frontal(s)) {
            let name = format!("{} on {}", garment.name(), s.spec.pose.name());
            let out = try_on(
                w,
                s,
                person,
                garment.category(),
                LoadedProduct::Image(photo.clone()),
            );
            for k in 0..2 {
                let off = off_body_near_shoulder(s, &out, k, garment.base_colour(), 4);
                eprintln!(
                    "{name}: shoulder {k}: {} garment pixels off the body",
                    off.len()
                );
                if off.len() > 20 {
                    horns.push(format!("{name}, shoulder {k}: {}", off.len()));
                }
            }
        }
    }
    assert!(horns.is_empty(), "garment pixels off the body: {horns:?}");
}
