//! The person, as a garment sees them: the body frame from the pose keypoints (shoulder
//! seams, the torso's axis, each arm's chain), the face to protect and the skin colour.
//!
//! Index 0 is always the side on the image's left (the subject's right in a frontal photo), as
//! in [`crate::garment::cutout::GarmentLandmarks`]: a front-view garment photo and a frontal person
//! photo then pair up side by side.

use glam::Vec2;
use image::RgbaImage;

/// A body whose shoulders' depth difference (pose z) exceeds this many times their width
/// across the photo is refused as turned sideways (see [`BodyFrame::new`]).
const TURNED_DEPTH_RATIO: f32 = 3.0;

/// Shoulders less than 12 px apart whose pose depths differ by more than this many times
/// that distance are one behind the other: the body is in profile.
const PROFILE_DEPTH: f32 = 5.0;

/// Below [`TURNED_DEPTH_RATIO`], a deep shoulder turn is refused only with the head turned
/// more than this from frontal (degrees of yaw).
const HEAD_YAW_SIDEWAYS_DEG: f32 = 45.0;

use crate::garment::body::outline::person_outline;
use crate::garment::body::tone::{Tone, ToneInput, ToneSource};
use crate::garment::error::GarmentError;
use crate::garment::geom::perp;
use crate::vision::pose::PoseKeypoint;
use crate::vision::Person;

/// MediaPipe's face-oval landmarks, in order around the face.
pub const FACE_OVAL: [usize; 36] = [
    10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152,
    148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
];

/// Without a face, the chin is placed this fraction of the shoulder keypoints' span above
/// their midpoint (an adult's chin is about 9–11 cm above the shoulder joints, which are
/// about 36 cm apart).
pub const CHIN_ABOVE_SHOULDERS: f32 = 0.28;

/// Hip keypoints seen at least this much count as seen ([`BodyFrame::hips_seen`]).
pub const HIPS_SEEN: f32 = 0.5;

/// Cheek and forehead landmarks the skin colour is sampled around.
const SKIN_LANDMARKS: [usize; 6] = [50, 280, 101, 330, 151, 9];

/// Arms whose elbow or wrist the pose model sees less than this are not drawn in front or
/// given skin (the astronaut's arm behind her helmet has 0.09; her visible arm 0.32).
pub const ARM_VISIBLE: f32 = 0.25;

/// One arm: shoulder, elbow, wrist and the hand's centre, with the pose's visibility.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arm {
    /// Shoulder, elbow, wrist, hand (the mean of pinky, index and thumb).
    pub chain: [Vec2; 4],
    /// Visibility of elbow and wrist (min of the two).
    pub visibility: f32,
}

impl Arm {
    /// The point `s` pixels along the chain from `start` (which lies near the shoulder),
    /// continuing past the hand along its last segment; and the unit direction there.
    pub fn along(&self, start: Vec2, s: f32) -> (Vec2, Vec2) {
        let pts = [start, self.chain[1], self.chain[2], self.chain[3]];
        let mut left = s.max(0.0);
        for k in 0..3 {
            let seg = pts[k + 1] - pts[k];
            let len = seg.length();
            let dir = seg.try_normalize().unwrap_or(Vec2::Y);
            if left <= len || k == 2 {
                return (pts[k] + dir * left, dir);
            }
            left -= len;
        }
        (pts[3], Vec2::Y)
    }
}

/// The body frame a garment is fitted to (image pixels).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyFrame {
    /// Shoulder keypoint to shoulder keypoint, in pixels.
    pub shoulder_width: f32,
    /// The shoulder keypoints (image left, right).
    pub shoulder: [Vec2; 2],
    /// Where a garment's shoulder seams sit: a little outside and above the joints.
    pub seam: [Vec2; 2],
    /// Unit vector from the left seam to the right.
    pub across: Vec2,
    /// Unit vector down the torso (shoulders' midpoint towards the hips').
    pub down: Vec2,
    /// The hips' midpoint (extrapolated by the pose model when outside the photo).
    pub hips: Vec2,
    /// Whether both hip keypoints lie inside the photo and the pose model sees them
    /// (visibility ≥ [`HIPS_SEEN`]): the torso's length can then be trusted over the
    /// shoulders' width, which a turned body foreshortens.
    pub hips_seen: bool,
    /// The arms (image left, right).
    pub arms: [Arm; 2],
    /// The face outline, when a face was found.
    pub face_oval: Vec<Vec2>,
    /// The skin colour (sRGB 0–255): sampled from the face when a face was found, else
    /// [`Tone::measure`]'s.
    pub skin: Option<[f32; 3]>,
    /// Without a face: where the skin colour and the light come from ([`Tone`]).
    pub tone: Option<Tone>,
}

fn kp(k: &[PoseKeypoint], i: usize) -> Option<(Vec2, f32)> {
    k.get(i)
        .map(|p| (Vec2::new(p.x, p.y), p.visibility.min(p.presence)))
}

impl BodyFrame {
    /// The frame of `person`'s body (needs the pose keypoints; the face is optional). A body
    /// turned sideways is refused: a top needs a frontal upper body.
    pub fn new(person: &Person) -> Result<BodyFrame, GarmentError> {
        Self::build(person, true)
    }

    /// [`BodyFrame::new`] for a garment worn on the legs only (trousers, shorts): a body
    /// turned three-quarters or more is accepted, since the legs, not the shoulders, carry
    /// the garment ([`crate::garment::body::legs::Legs`] refuses legs it cannot fit).
    pub fn for_legs(person: &Person) -> Result<BodyFrame, GarmentError> {
        Self::build(person, false)
    }

    fn build(person: &Person, frontal: bool) -> Result<BodyFrame, GarmentError> {
        let no_body = GarmentError::NoUpperBody;
        let body = person.body.as_ref().ok_or_else(|| no_body("no pose"))?;
        let k = &body.keypoints;
        let (s11, v11) = kp(k, 11).ok_or_else(|| no_body("no shoulders"))?;
        let (s12, v12) = kp(k, 12).ok_or_else(|| no_body("no shoulders"))?;
        if v11.min(v12) < 0.3 {
            return Err(no_body("the shoulders are not visible"));
        }
        let sw = s11.distance(s12);
        let (w, h) = person.photo.dimensions();
        if sw < 12.0 || !sw.is_finite() {
            // One shoulder behind the other: the pose's depths differ by far more than the
            // shoulders lie apart across the photo.
            let profile = match (k.get(11), k.get(12)) {
                (Some(a), Some(b)) => (a.z - b.z).abs() > PROFILE_DEPTH * sw.max(1.0),
                _ => false,
            };
            return Err(no_body(if profile {
                "the body is seen from the side, in profile; garments need it from the front \
                 or turned at most three-quarters"
            } else {
                "the shoulders are too close together"
            }));
        }
        let in_photo = |p: Vec2| {
            p.x > -0.1 * w as f32
                && p.x < 1.1 * w as f32
                && p.y > -0.1 * h as f32
                && p.y < 1.1 * h as f32
        };
        if !in_photo(s11) || !in_photo(s12) {
            return Err(no_body("the shoulders are outside the photo"));
        }
        // Side 0 is the image's left.
        let swap = s11.x > s12.x;
        let pick = |a: usize, b: usize| {
            let (pa, pb) = (kp(k, a), kp(k, b));
            if swap {
                (pb, pa)
            } else {
                (pa, pb)
            }
        };
        let side = |a: usize, b: usize| -> Result<[(Vec2, f32); 2], GarmentError> {
            let (pa, pb) = pick(a, b);
            Ok([
                pa.ok_or_else(|| no_body("missing keypoints"))?,
                pb.ok_or_else(|| no_body("missing keypoints"))?,
            ])
        };
        let shoulder = side(11, 12)?.map(|p| p.0);
        let elbow = side(13, 14)?;
        let wrist = side(15, 16)?;
        let hip = side(23, 24)?;
        let hand = [side(17, 18)?, side(19, 20)?, side(21, 22)?];
        let mid = (shoulder[0] + shoulder[1]) * 0.5;
        let across = (shoulder[1] - shoulder[0]) / sw;
        let square = perp(across);
        let hips = (hip[0].0 + hip[1].0) * 0.5;
        let inside = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x < w as f32 && p.y < h as f32;
        let hips_seen = hip.iter().all(|&(p, v)| v >= HIPS_SEEN && inside(p));
        // The torso axis from the hips, kept within 25° of square to the shoulders (the pose
        // extrapolates hips outside the photo).
        let down = match (hips - mid).try_normalize() {
            Some(d) if d.dot(square) > 25f32.to_radians().cos() => d,
            Some(d) if d.dot(square) > 0.0 => {
                let t = 25f32.to_radians();
                let sign = d.dot(across).signum();
                (square * t.cos() + across * t.sin() * sign).normalize()
            }
            _ => square,
        };
        let seam = [
            shoulder[0] - across * 0.07 * sw - down * 0.12 * sw,
            shoulder[1] + across * 0.07 * sw - down * 0.12 * sw,
        ];
        let arms = [0, 1].map(|s| {
            let hand_c = (hand[0][s].0 + hand[1][s].0 + hand[2][s].0) / 3.0;
            Arm {
                chain: [shoulder[s], elbow[s].0, wrist[s].0, hand_c],
                visibility: elbow[s].1.min(wrist[s].1),
            }
        });
        // Turned sideways: the shoulders' depth difference (the pose model's z, in the same
        // pixel scale) against their distance across the photo. The model's z overstates a
        // turn about threefold (on rendered subjects of known pose, a 35° turn gives a depth
        // difference of 2.2× the width across, where the truth is tan 35° = 0.7), so it decides
        // alone only beyond TURNED_DEPTH_RATIO (about 45° and more). Between that and 1.4×, the
        // body is refused when the head is turned past HEAD_YAW_SIDEWAYS_DEG as well: a 3/4
        // pose facing the camera is accepted, a body and face in profile are not.
        let dz = match (k.get(11), k.get(12)) {
            (Some(a), Some(b)) => (a.z - b.z).abs(),
            _ => 0.0,
        };
        let head_yaw = person
            .face
            .as_ref()
            .and_then(|c| c.face.head_pose.as_ref())
            .map(|p| p.yaw_pitch_roll_deg[0].abs());
        let turned = dz > TURNED_DEPTH_RATIO * sw
            || (dz > 1.4 * sw && head_yaw.is_some_and(|y| y > HEAD_YAW_SIDEWAYS_DEG));
        let narrow = person
            .face
            .as_ref()
            .is_some_and(|c| c.face.width_px() > 0.0 && sw < 1.1 * c.face.width_px());
        if frontal && (turned || narrow) {
            return Err(no_body(
                "the body is turned sideways; garments need a frontal upper body with both \
                 shoulders in view",
            ));
        }
        let (face_oval, skin, tone) = match &person.face {
            Some(choice) => {
                let lm = &choice.face.landmarks;
                let oval: Vec<Vec2> = FACE_OVAL
                    .iter()
                    .filter_map(|&i| lm.get(i).map(|p| Vec2::new(p[0], p[1])))
                    .collect();
                (
                    oval,
                    skin_colour(&person.photo, lm, choice.face.width_px()),
                    None,
                )
            }
            None => {
                let mask = person_outline(person).unwrap_or_default();
                let tone = Tone::measure(&ToneInput {
                    photo: &person.photo,
                    mask: &mask,
                    keypoints: k,
                    shoulder,
                    hips,
                    across,
                    down,
                });
                (Vec::new(), Some(tone.skin), Some(tone))
            }
        };
        Ok(BodyFrame {
            shoulder_width: sw,
            shoulder,
            seam,
            across,
            down,
            hips,
            hips_seen,
            arms,
            face_oval,
            skin,
            tone,
        })
    }

    /// Where the skin colour and the light come from, for metadata:
    /// `{"skin": …, "light": …}` ([`ToneSource::as_str`]).
    pub fn tone_sources(&self) -> serde_json::Value {
        let (skin, light) = match &self.tone {
            Some(t) => t.source_names(),
            None => (ToneSource::Face.as_str(), ToneSource::Face.as_str()),
        };
        serde_json::json!({ "skin": skin, "light": light, "face": self.tone.is_none() })
    }

    /// The chin: the face oval's lowest point along the torso axis; without a face (a
    /// head-cropped photo, a back view), [`CHIN_ABOVE_SHOULDERS`] of the shoulders' width
    /// above their midpoint, so a neckline and the neck's skin sit where they would.
    pub fn chin(&self) -> Option<Vec2> {
        let from_face = self
            .face_oval
            .iter()
            .copied()
            .max_by(|a, b| a.dot(self.down).total_cmp(&b.dot(self.down)));
        from_face.or_else(|| {
            let mid = (self.shoulder[0] + self.shoulder[1]) * 0.5;
            (self.tone.is_some())
                .then(|| mid - self.down * CHIN_ABOVE_SHOULDERS * self.shoulder_width)
        })
    }
}

/// The median colour of the skin around the cheeks and forehead.
fn skin_colour(photo: &RgbaImage, lm: &[[f32; 3]], face_width: f32) -> Option<[f32; 3]> {
    let r = (face_width * 0.04).clamp(1.0, 40.0) as i32;
    let (w, h) = photo.dimensions();
    let mut ch: [Vec<u8>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for &i in &SKIN_LANDMARKS {
        let Some(p) = lm.get(i) else { continue };
        let (cx, cy) = (p[0] as i32, p[1] as i32);
        for dy in -r..=r {
            for dx in -r..=r {
                let (x, y) = (cx + dx, cy + dy);
                if dx * dx + dy * dy > r * r || x < 0 || y < 0 || x >= w as i32 || y >= h as i32 {
                    continue;
                }
                let px = photo.get_pixel(x as u32, y as u32).0;
                for c in 0..3 {
                    ch[c].push(px[c]);
                }
            }
        }
    }
    if ch[0].len() < 4 {
        return None;
    }
    let mut out = [0.0; 3];
    for c in 0..3 {
        ch[c].sort_unstable();
        out[c] = f32::from(ch[c][ch[c].len() / 2]);
    }
    Some(out)
}
