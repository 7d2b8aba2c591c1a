//! Telling a garment photographed on a person (an on-model product photo) from one laid
//! flat, hung or on a ghost mannequin.
//!
//! The cut-out of an on-model photo is the person as much as the garment: the segmentation
//! keeps whatever stands out from the scene, arms, legs and all, and the outline measured
//! is a body's. The sign read here is the frame's top ([`top_contact`]): a worn garment
//! photographed without the head (as shops crop on-model shots) runs off the top edge,
//! while a garment laid out for its photo lies inside the frame (and one cut off at the top
//! has lost the shoulders or the waistband it is measured by). Over [`TOP_CONTACT`] of the
//! top row covered, the photo is refused ([`crate::garment::error::GarmentError::OnModel`]).
//!
//! A whole person with the head inside the frame is told by the second sign, the head
//! ([`head_on_top`]): a face the face detector finds on the product photo (given by the
//! caller, who runs the vision stack) at the top of the cut-out — its box reaching within
//! [`HEAD_TOP`] of the cut-out's height from the cut-out's top row, over the cut-out, and at
//! least [`HEAD_MIN`] of its height tall. A person's head is the highest part of their
//! silhouette; a face printed on a tee lies on the chest, under the collar (the suit photo of
//! the test set, a man standing in a corridor, was cut out head to shoes and worn as a
//! garbled one-piece on every person; its face is found at the top).
//!
//! Limits: a headless on-model photo whose cut-out stops short of the top edge is not told
//! from a flat-lay. Skin beside the garment was tried and does not separate them: wood
//! floors, beige and khaki garments and prints are skin-hued too, and black-and-white photos
//! show no hue.

/// The share of the frame's top row covered by the cut-out over which the photo is taken
/// as on-model. The 33 flat-lay, hanger and ghost photos of the test set cover at most 3 %
/// (a chiffon dress's hanger loop), the on-model jeans and outfit photos 22 % and 45 %.
pub const TOP_CONTACT: f32 = 0.1;

/// The share of the frame's top row that the cut-out `fg` (`w` wide) covers.
pub fn top_contact(fg: &[bool], w: usize) -> f32 {
    if w == 0 || fg.len() < w {
        return 0.0;
    }
    fg[..w].iter().filter(|&&v| v).count() as f32 / w as f32
}

/// Whether the cut-out `fg` (`w` wide) shows a garment worn by a person (see the module
/// docs).
pub fn worn_by_a_person(fg: &[bool], w: usize) -> bool {
    top_contact(fg, w) > TOP_CONTACT
}

/// How far below the cut-out's top row (a share of its height) a head's face box may start.
pub const HEAD_TOP: f32 = 0.12;
/// The least height of a head's face box, a share of the cut-out's height.
pub const HEAD_MIN: f32 = 0.03;

/// Whether one of `faces` (boxes `[x0, y0, x1, y1]` in the cut-out's pixels) is the head of
/// a person the cut-out `fg` (`w` wide) shows (see the module docs).
pub fn head_on_top(fg: &[bool], w: usize, faces: &[[f32; 4]]) -> bool {
    if w == 0 || faces.is_empty() {
        return false;
    }
    let rows = fg.len() / w;
    let row_has = |y: usize| fg[y * w..(y + 1) * w].iter().any(|&v| v);
    let (Some(top), Some(bottom)) = (
        (0..rows).find(|&y| row_has(y)),
        (0..rows).rfind(|&y| row_has(y)),
    ) else {
        return false;
    };
    let height = (bottom + 1 - top) as f32;
    faces.iter().any(|&[x0, y0, x1, y1]| {
        let (cx, cy) = (((x0 + x1) / 2.0) as usize, ((y0 + y1) / 2.0) as usize);
        let over = cx < w && cy < rows && fg[cy * w + cx];
        over && y1 - y0 >= HEAD_MIN * height && y0 - top as f32 <= HEAD_TOP * height
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut-out running off the frame's top is on-model; one inside the frame, or touching
    /// the top with a hanger's loop only, is not.
    #[test]
    fn a_garment_cut_by_the_frames_top_is_on_model() {
        let w = 50;
        let mut fg = vec![false; w * 40];
        for y in 5..35 {
            for x in 10..40 {
                fg[y * w + x] = true;
            }
        }
        assert_eq!(top_contact(&fg, w), 0.0);
        assert!(!worn_by_a_person(&fg, w));
        fg[24] = true;
        assert!(!worn_by_a_person(&fg, w));
        fg[10..40].iter_mut().for_each(|v| *v = true);
        assert!(top_contact(&fg, w) > TOP_CONTACT);
        assert!(worn_by_a_person(&fg, w));
    }

    /// A face at the top of a standing person's cut-out is a head; one on a tee's chest, or
    /// too small, is not.
    #[test]
    fn a_face_at_the_top_of_the_cut_out_is_a_head() {
        let (w, h) = (60, 100);
        let mut fg = vec![false; w * h];
        for y in 10..95 {
            for x in 20..40 {
                fg[y * w + x] = true;
            }
        }
        assert!(head_on_top(&fg, w, &[[24.0, 11.0, 36.0, 21.0]]));
        assert!(
            !head_on_top(&fg, w, &[[24.0, 40.0, 36.0, 50.0]]),
            "on the chest"
        );
        assert!(!head_on_top(&fg, w, &[[29.0, 11.0, 31.0, 12.0]]), "a speck");
        assert!(
            !head_on_top(&fg, w, &[[44.0, 11.0, 56.0, 21.0]]),
            "beside it"
        );
        assert!(!head_on_top(&fg, w, &[]));
    }
}
