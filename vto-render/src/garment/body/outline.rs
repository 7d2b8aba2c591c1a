//! The person's outline a garment is fitted and composed in: the selfie-segmentation mask
//! (sharp, at the photo's resolution), else the pose model's own mask.
//!
//! The selfie mask covers every person in the photo. When the vision stage saw several
//! ([`crate::vision::BodyChoice::candidates`]), it is limited to the person who wears the
//! product by the pose model's mask, which the landmark model computes for that person
//! alone: a garment then uncovers, fills and clips only on them, and a neighbour's legs or
//! arms are not taken for theirs.

use crate::vision::Person;

/// The pose mask's probability at which the selfie mask is kept whole; below it, the selfie
/// mask fades out in proportion (the pose mask's edge is soft and coarse: 256² over the
/// person's region).
const POSE_KEEP: f32 = 0.5;

/// The person's outline at the photo's size (row-major probabilities), or `None` when no
/// mask of that size was computed.
pub fn person_outline(person: &Person) -> Option<Vec<f32>> {
    let (w, h) = person.photo.dimensions();
    let n = (w * h) as usize;
    let pose = person
        .body
        .as_ref()
        .and_then(|b| b.mask.as_ref())
        .filter(|m| m.data.len() == n);
    let selfie = person.mask.as_ref().filter(|m| m.data.len() == n);
    let several = person.body_choice.is_some_and(|c| c.candidates > 1);
    match (selfie, pose) {
        (Some(s), Some(p)) if several => Some(
            s.data
                .iter()
                .zip(&p.data)
                .map(|(&s, &p)| s * (p / POSE_KEEP).clamp(0.0, 1.0))
                .collect(),
        ),
        (Some(s), _) => Some(s.data.clone()),
        (None, Some(p)) => Some(p.data.clone()),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::garment::Figure;
    use crate::vision::{BodyChoice, Mask};

    /// Two people in the selfie mask, one in the pose mask: with several people seen, only
    /// the one who wears the product is kept; with one person seen, the selfie mask as is.
    #[test]
    fn several_people_keep_only_the_one_who_wears_the_product() {
        let mut person = Figure::jeans(40, 20).person();
        let (w, h) = person.photo.dimensions();
        let n = (w * h) as usize;
        let selfie: Vec<f32> = (0..n)
            .map(|i| if i % w as usize % 20 < 18 { 1.0 } else { 0.0 })
            .collect();
        let pose: Vec<f32> = (0..n)
            .map(|i| if (i % w as usize) < 20 { 0.9 } else { 0.0 })
            .collect();
        person.mask = Some(Mask {
            width: w,
            height: h,
            data: selfie.clone(),
        });
        person.body.as_mut().unwrap().mask = Some(Mask {
            width: w,
            height: h,
            data: pose,
        });
        person.body_choice = Some(BodyChoice {
            candidates: 1,
            rank: 0,
            refined: false,
        });
        assert_eq!(person_outline(&person).unwrap(), selfie);
        person.body_choice = Some(BodyChoice {
            candidates: 2,
            rank: 0,
            refined: false,
        });
        let out = person_outline(&person).unwrap();
        let x = |i: usize| i % w as usize;
        assert!(out.iter().enumerate().all(|(i, &v)| if x(i) >= 20 {
            v == 0.0
        } else {
            v == selfie[i]
        }));
        assert!(out.iter().any(|&v| v > 0.5), "the chosen person stays");
    }
}
