//! A lopsided pair of sleeves set right by the flat-lay's symmetry.
//!
//! A product photo lays a top out symmetric about its centre: its two sleeves are about as
//! long as each other. When the outline scan measures one sleeve several times longer than
//! the other, the longer one is not a sleeve: it took in a strip beside the torso below the
//! armpit (a hem corner found too far in, a ghost mannequin's shadow, the photo's edge) and
//! runs from the shoulder down to the hem. Worn, such a "sleeve" hung down the arm as a long
//! thin tail on a short-sleeved tee. The shorter sleeve is the sound one (a stray strip only
//! ever adds length): the longer is replaced by its mirror image about the shoulders'
//! perpendicular bisector, set on its own side's seam, and its pixels away from the mirrored
//! sleeve go back to the torso.

use glam::Vec2;

use crate::garment::cutout::Sleeve;
use crate::garment::geom::seg_dist;
use crate::garment::label;

/// Sleeves whose lengths differ by more than this factor are lopsided. Sleeves laid out
/// with one folded or bent differ by up to about 1.35 on the shop photos kept for tests.
pub const LOPSIDED: f32 = 1.6;

/// Replaces the longer of a lopsided pair of `sleeves` (see the module docs) by the
/// shorter one mirrored onto its own seam (`shoulder[k]`–`armpit[k]`), relabelling its
/// pixels in `labels` (row-major, `w` wide) that lie off the mirrored sleeve as torso.
/// Returns which sleeve was replaced, if any.
pub fn mirror_lopsided(
    sleeves: &mut [Option<Sleeve>; 2],
    labels: &mut [u8],
    w: usize,
    shoulder: [Vec2; 2],
    armpit: [Vec2; 2],
) -> Option<usize> {
    let [Some(a), Some(b)] = *sleeves else {
        return None;
    };
    let (la, lb) = (a.length(), b.length());
    if la.max(lb) <= LOPSIDED * la.min(lb).max(1.0) {
        return None;
    }
    let (bad, good) = if la > lb { (0, b) } else { (1, a) };
    // Reflection about the perpendicular bisector of the shoulder line.
    let u = (shoulder[1] - shoulder[0]).try_normalize()?;
    let reflect = |d: Vec2| d - 2.0 * d.dot(u) * u;
    let seam_root = (shoulder[bad] + armpit[bad]) * 0.5;
    let root = seam_root + reflect(good.root - (shoulder[1 - bad] + armpit[1 - bad]) * 0.5);
    let mirrored = Sleeve {
        root,
        cuff: root + reflect(good.cuff - good.root),
        root_half_width: good.root_half_width,
        cuff_half_width: good.cuff_half_width,
    };
    let id = if bad == 0 {
        label::SLEEVE_LEFT
    } else {
        label::SLEEVE_RIGHT
    };
    // The mirrored sleeve's pixels: within its widest half-width (and a margin for the
    // outline's own unevenness) of its axis.
    let reach = mirrored.root_half_width.max(mirrored.cuff_half_width) * 1.5 + 2.0;
    for (i, l) in labels.iter_mut().enumerate() {
        if *l != id {
            continue;
        }
        let p = Vec2::new((i % w) as f32, (i / w) as f32);
        if seg_dist(p, mirrored.root, mirrored.cuff).0 > reach {
            *l = label::TORSO;
        }
    }
    sleeves[bad] = Some(mirrored);
    Some(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeve(root: Vec2, cuff: Vec2) -> Sleeve {
        Sleeve {
            root,
            cuff,
            root_half_width: 10.0,
            cuff_half_width: 8.0,
        }
    }

    /// A tee's short left sleeve and a "right sleeve" running down the torso's side to the
    /// hem: the right becomes the left's mirror on its own seam, the strip's pixels torso,
    /// the real sleeve's pixels stay.
    #[test]
    fn a_sleeve_four_times_the_other_is_the_others_mirror() {
        let shoulder = [Vec2::new(40.0, 20.0), Vec2::new(160.0, 20.0)];
        let armpit = [Vec2::new(40.0, 60.0), Vec2::new(160.0, 60.0)];
        let mut sleeves = [
            Some(sleeve(Vec2::new(40.0, 40.0), Vec2::new(10.0, 55.0))),
            Some(sleeve(Vec2::new(160.0, 40.0), Vec2::new(165.0, 180.0))),
        ];
        let w = 200;
        let mut labels = vec![0u8; w * 200];
        // The real right sleeve, out to the right of its seam; the strip down the side.
        labels[45 * w + 180] = label::SLEEVE_RIGHT;
        labels[150 * w + 165] = label::SLEEVE_RIGHT;
        let fixed = mirror_lopsided(&mut sleeves, &mut labels, w, shoulder, armpit);
        assert_eq!(fixed, Some(1));
        let r = sleeves[1].unwrap();
        assert!(r.root.distance(Vec2::new(160.0, 40.0)) < 1e-3, "{r:?}");
        assert!(r.cuff.distance(Vec2::new(190.0, 55.0)) < 1e-3, "{r:?}");
        assert_eq!(labels[45 * w + 180], label::SLEEVE_RIGHT);
        assert_eq!(labels[150 * w + 165], label::TORSO);
    }

    /// Sleeves laid out unevenly (one folded a little) are left as they are.
    #[test]
    fn sleeves_of_like_length_are_kept() {
        let shoulder = [Vec2::new(40.0, 20.0), Vec2::new(160.0, 20.0)];
        let armpit = [Vec2::new(40.0, 60.0), Vec2::new(160.0, 60.0)];
        let before = [
            Some(sleeve(Vec2::new(40.0, 40.0), Vec2::new(0.0, 150.0))),
            Some(sleeve(Vec2::new(160.0, 40.0), Vec2::new(190.0, 130.0))),
        ];
        let mut sleeves = before;
        let mut labels = vec![label::SLEEVE_RIGHT; 200 * 200];
        assert_eq!(
            mirror_lopsided(&mut sleeves, &mut labels, 200, shoulder, armpit),
            None
        );
        assert_eq!(sleeves, before);
        assert!(labels.iter().all(|&l| l == label::SLEEVE_RIGHT));
    }
}
