//! A hoodie's hood laid flat above its shoulders: found on the silhouette and taken out of
//! the mask before the landmarks are measured ([`strip`]).
//!
//! A flat-lay hoodie shows its hood as a narrow lobe above the shoulders, about a third of
//! the garment's height. Left in, it is the silhouette's top: the armpit scan's fallback
//! (30 % of the way down) lands in it and the shoulders come out a hood's width apart; the
//! hood would also be drawn standing up behind the wearer's head. Worn down, a hood is
//! hidden behind the neck and shoulders from the front, so the lobe is simply not part of
//! what is drawn.

/// The body starts at the first row at least this share of the garment's widest row wide
/// (the hood's base, where the shoulders spread out beside it); every row above is the
/// lobe's.
const BODY: f32 = 0.35;

/// The lobe is at least this share of the garment's height tall: a flat hood is about a
/// third of it (0.37 on the mint hoodie), while a puffer's stand collar over its sloping
/// shoulders, a hanger's top or a sleeveless dress's bodice above its wide skirt come to
/// 0.12–0.16 by the same measure.
const TALL: f32 = 0.25;

/// The lobe's centre lies within this share of the widest row of the garment's centre.
const CENTRED: f32 = 0.15;

/// `fg` (`w` × `h`) without a hood lobe above the shoulders, or `None` when the top of the
/// silhouette is no such lobe (every tee, shirt, jacket and tank top: their top rows are the
/// shoulders or two straps, as wide as the garment's shoulders).
pub fn strip(fg: &[bool], w: usize, h: usize) -> Option<Vec<bool>> {
    let extent = |y: usize| {
        let row = &fg[y * w..(y + 1) * w];
        let a = row.iter().position(|&b| b)?;
        let b = row.iter().rposition(|&b| b)?;
        Some((a, b + 1))
    };
    let rows: Vec<Option<(usize, usize)>> = (0..h).map(extent).collect();
    let y_top = rows.iter().position(Option::is_some)?;
    let y_bot = rows.iter().rposition(Option::is_some)?;
    let x0 = rows.iter().flatten().map(|r| r.0).min()?;
    let x1 = rows.iter().flatten().map(|r| r.1).max()?;
    let widest = rows.iter().flatten().map(|r| r.1 - r.0).max()? as f32;
    let centre = (x0 + x1) as f32 * 0.5;
    let height = (y_bot - y_top) as f32;
    let y_body =
        (y_top..=y_bot).find(|&y| rows[y].is_some_and(|(a, b)| (b - a) as f32 >= BODY * widest))?;
    let lobe = y_top..y_body;
    let tall = (y_body - y_top) as f32 >= TALL * height;
    let centred = lobe.clone().all(|y| {
        rows[y].is_none_or(|(a, b)| ((a + b) as f32 * 0.5 - centre).abs() <= CENTRED * widest)
    });
    if !tall || !centred {
        return None;
    }
    let mut out = fg.to_vec();
    for y in lobe {
        out[y * w..(y + 1) * w].fill(false);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rectangle of rows `y0..y1`, columns `x0..x1` set in a `w`-wide mask.
    fn fill(m: &mut [bool], w: usize, (x0, y0, x1, y1): (usize, usize, usize, usize)) {
        for y in y0..y1 {
            m[y * w + x0..y * w + x1].fill(true);
        }
    }

    /// A hoodie's silhouette (a body with a narrow lobe above it) loses the lobe; a tee's
    /// (shoulders at the top) and a tank top's (two straps) are left alone.
    #[test]
    fn a_hood_above_the_shoulders_is_stripped_and_nothing_else() {
        let (w, h) = (200, 240);
        let mut hoodie = vec![false; w * h];
        fill(&mut hoodie, w, (80, 10, 120, 80)); // the hood
        fill(&mut hoodie, w, (30, 80, 170, 230)); // the body and sleeves
        let out = strip(&hoodie, w, h).expect("a hood");
        assert!(!out[30 * w + 100], "the hood is gone");
        assert!(out[90 * w + 100], "the body stays");
        assert_eq!(out.iter().filter(|&&b| b).count(), 140 * 150);

        // A stand collar (a puffer's) is no hood.
        let mut puffer = vec![false; w * h];
        fill(&mut puffer, w, (85, 10, 115, 35));
        fill(&mut puffer, w, (30, 35, 170, 230));
        assert!(strip(&puffer, w, h).is_none(), "a collar is no hood");

        let mut tee = vec![false; w * h];
        fill(&mut tee, w, (30, 20, 170, 230));
        assert!(strip(&tee, w, h).is_none());

        let mut tank = vec![false; w * h];
        fill(&mut tank, w, (55, 10, 70, 60)); // straps
        fill(&mut tank, w, (130, 10, 145, 60));
        fill(&mut tank, w, (50, 60, 150, 230));
        assert!(strip(&tank, w, h).is_none(), "straps are no hood");
    }
}
