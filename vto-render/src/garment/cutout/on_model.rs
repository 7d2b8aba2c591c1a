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
//! Limits: an on-model photo that shows the whole person with the head inside the frame,
//! or whose cut-out stops short of the top edge, is not told from a flat-lay by this sign.
//! Skin beside the garment was tried and does not separate them: wood floors, beige and
//! khaki garments and prints are skin-hued too, and black-and-white photos show no hue.

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
}
