//! Small holes inside a warped garment. A flat-lay's armpit is a notch between the sleeve's
//! underside and the torso's side; swung down with the sleeve, the notch can close below
//! its corner and leave a little gap through which the photo (often the wall between arm
//! and body) shows, ringed by the garment. A worn garment has no such hole: the fabric runs
//! on under the arm. The holes are found (uncovered pixels the photo's border cannot reach
//! through other uncovered pixels) and filled with the garment around them.

use std::collections::VecDeque;

use crate::garment::geom::neighbours4;
use crate::garment::warp::WarpOutput;

/// Coverage (alpha out of 255) below which a pixel counts as uncovered.
const OPEN: u8 = 128;

/// The holes of `w`: 4-connected components of uncovered pixels that no path of uncovered
/// pixels joins to the border, of at most `max_area` pixels each (a bigger enclosed gap,
/// such as the space between a hand on the hip and the waist, is real and stays). Each
/// hole is its pixel indices.
pub fn enclosed(w: &WarpOutput, max_area: usize) -> Vec<Vec<usize>> {
    let (wu, hu) = (w.width as usize, w.height as usize);
    if wu == 0 || hu == 0 {
        return Vec::new();
    }
    let open = |i: usize| w.rgba[i][3] < OPEN;
    let mut seen = vec![false; wu * hu];
    let mut queue = VecDeque::new();
    let neighbours = |i: usize| neighbours4(i, wu, hu);
    // Everything uncovered that the border reaches.
    for (i, seen) in seen.iter_mut().enumerate() {
        let (x, y) = (i % wu, i / wu);
        if (x == 0 || y == 0 || x + 1 == wu || y + 1 == hu) && open(i) {
            *seen = true;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for n in neighbours(i) {
            if !seen[n] && open(n) {
                seen[n] = true;
                queue.push_back(n);
            }
        }
    }
    // What is left uncovered is enclosed.
    let mut holes = Vec::new();
    for start in 0..wu * hu {
        if seen[start] || !open(start) {
            continue;
        }
        seen[start] = true;
        let mut hole = vec![start];
        let mut k = 0;
        while k < hole.len() {
            for n in neighbours(hole[k]) {
                if !seen[n] && open(n) {
                    seen[n] = true;
                    hole.push(n);
                }
            }
            k += 1;
        }
        if hole.len() <= max_area {
            holes.push(hole);
        }
    }
    holes
}

/// Fills `holes` of `w` opaque with the garment around them, peeled in from each hole's rim
/// (a pixel takes the mean colour of its covered 8-neighbours, ring by ring) and labelled
/// like its first covered neighbour. Returns the pixels filled.
pub fn fill(w: &mut WarpOutput, holes: &[Vec<usize>]) -> usize {
    let (wu, hu) = (w.width as usize, w.height as usize);
    let mut todo: Vec<usize> = holes.iter().flatten().copied().collect();
    let mut filled = 0;
    while !todo.is_empty() {
        let mut ring = Vec::new();
        let mut rest = Vec::new();
        for &i in &todo {
            let (x, y) = ((i % wu) as i64, (i / wu) as i64);
            let (mut sum, mut n, mut label) = ([0.0f32; 3], 0.0f32, None);
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let (nx, ny) = (x + dx, y + dy);
                    if (dx, dy) == (0, 0) || nx < 0 || ny < 0 || nx >= wu as i64 || ny >= hu as i64
                    {
                        continue;
                    }
                    let j = ny as usize * wu + nx as usize;
                    let c = w.rgba[j];
                    if c[3] < OPEN {
                        continue;
                    }
                    let a = f32::from(c[3]);
                    for (s, v) in sum.iter_mut().zip(c) {
                        *s += f32::from(v) * 255.0 / a;
                    }
                    n += 1.0;
                    label.get_or_insert(w.top[j]);
                }
            }
            match label {
                Some(label) => ring.push((i, sum.map(|s| (s / n).round().min(255.0) as u8), label)),
                None => rest.push(i),
            }
        }
        if ring.is_empty() {
            break;
        }
        // A whole ring at once, so the fill does not smear in the scan's direction.
        for (i, [r, g, b], label) in ring {
            w.rgba[i] = [r, g, b, 255];
            w.top[i] = label;
            filled += 1;
        }
        todo = rest;
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 12×10 output: a red ring (3..9 × 2..8) round a 2×2 hole, and a green band along
    /// the left edge with a notch open to the border.
    fn sample() -> WarpOutput {
        let (w, h) = (12u32, 10u32);
        let mut rgba = vec![[0u8; 4]; (w * h) as usize];
        let mut top = vec![0u8; (w * h) as usize];
        for y in 2..8 {
            for x in 3..9 {
                let i = (y * w + x) as usize;
                if !(4..6).contains(&y) || !(5..7).contains(&x) {
                    rgba[i] = [200, 20, 30, 255];
                    top[i] = 1;
                }
            }
            if y != 4 {
                rgba[(y * w) as usize] = [0, 100, 0, 255];
                top[(y * w) as usize] = 2;
            }
        }
        WarpOutput {
            width: w,
            height: h,
            rgba,
            top,
        }
    }

    #[test]
    fn only_the_ringed_hole_is_found_and_filled_with_the_ring_colour() {
        let mut w = sample();
        let holes = enclosed(&w, 10);
        assert_eq!(
            holes.len(),
            1,
            "one enclosed hole, the border notch is open"
        );
        let mut hole = holes[0].clone();
        hole.sort_unstable();
        assert_eq!(hole, vec![4 * 12 + 5, 4 * 12 + 6, 5 * 12 + 5, 5 * 12 + 6]);
        assert_eq!(fill(&mut w, &holes), 4);
        for i in hole {
            assert_eq!(w.rgba[i], [200, 20, 30, 255]);
            assert_eq!(w.top[i], 1);
        }
        assert_eq!(
            w.rgba[4 * 12][3],
            0,
            "the notch open to the border stays open"
        );
    }

    #[test]
    fn a_hole_bigger_than_the_limit_stays_open() {
        let w = sample();
        assert!(enclosed(&w, 3).is_empty());
    }
}
