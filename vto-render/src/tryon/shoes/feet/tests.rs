//! Tests of the feet: the camera, the floor and each foot's pose on drawn bodies.

use super::*;
use crate::vision::{Detection, RotatedRect};

/// A standing body in a `w`×`h` photo: keypoints at `pts` (index, x, y), every other at
/// the centre, all visible.
pub(crate) fn body(pts: &[(usize, f32, f32)], w: u32, h: u32) -> Body {
    let mut keypoints = vec![
        PoseKeypoint {
            x: w as f32 / 2.0,
            y: h as f32 / 2.0,
            z: 0.0,
            visibility: 0.99,
            presence: 0.99,
        };
        33
    ];
    for &(i, x, y) in pts {
        keypoints[i].x = x;
        keypoints[i].y = y;
    }
    Body {
        detection: Detection {
            score: 0.9,
            xmin: 0.0,
            ymin: 0.0,
            xmax: w as f32,
            ymax: h as f32,
            keypoints: Vec::new(),
        },
        roi: RotatedRect {
            cx: 0.0,
            cy: 0.0,
            width: 1.0,
            height: 1.0,
            rotation: 0.0,
        },
        score: 0.9,
        keypoints,
        mask_coverage: 0.0,
        mask: None,
    }
}

/// A person facing the camera (their left on the image's right) in a 600×1000 photo:
/// hips at y 520, knees 700, ankles 880, heels 895, toes 925 (toward the camera, turned
/// out).
pub(crate) fn standing() -> Body {
    body(
        &[
            (11, 350.0, 250.0),
            (12, 250.0, 250.0),
            (23, 330.0, 520.0),
            (24, 270.0, 520.0),
            (25, 332.0, 700.0),
            (26, 268.0, 700.0),
            (27, 335.0, 880.0),
            (28, 265.0, 880.0),
            (29, 332.0, 895.0),
            (30, 268.0, 895.0),
            (31, 345.0, 925.0),
            (32, 255.0, 925.0),
        ],
        600,
        1000,
    )
}

#[test]
fn a_standing_body_gets_two_feet_toward_the_camera() {
    let b = standing();
    let frame = FloorFrame::new(&b, 600, 1000).unwrap();
    assert_eq!(frame.scale_source, "leg");
    assert!(
        (frame.px_per_cm - 360.0 / LEG_CM).abs() < 0.1,
        "{}",
        frame.px_per_cm
    );
    assert!(
        (5.0..40.0).contains(&frame.view_down_deg),
        "{}",
        frame.view_down_deg
    );
    for side in [Side::Left, Side::Right] {
        let f = foot(&b, &frame, side, (600, 1000)).unwrap();
        // The toes come toward the camera and turn out a little.
        assert!(f.heading.z < -0.5, "{side:?} {:?}", f.heading);
        let out = if side == Side::Left { 1.0 } else { -1.0 };
        assert!(f.heading.x * out > 0.0, "{side:?} {:?}", f.heading);
        // The heel's floor point projects just below the heel keypoint.
        let p = frame.camera.project(f.heel);
        assert!(
            (p.x - f.heel_px.x).abs() < 1.0 && p.y > f.heel_px.y,
            "{p:?}"
        );
        assert!(f.confidence > 0.3 && f.confidence <= f.visibility);
    }
}

#[test]
fn hidden_feet_say_why() {
    let mut b = standing();
    b.keypoints[31].visibility = 0.2;
    let frame = FloorFrame::new(&b, 600, 1000).unwrap();
    assert_eq!(
        foot(&b, &frame, Side::Left, (600, 1000)),
        Err(Hidden::LowVisibility(0.2))
    );
    b.keypoints[30].y = 1200.0;
    assert_eq!(
        foot(&b, &frame, Side::Right, (600, 1000)),
        Err(Hidden::OutOfFrame)
    );
}

#[test]
fn a_foreshortened_foot_follows_the_body_not_the_keypoint_noise() {
    // A foot toward the camera spans 33 px heel → toe; 20 px of sideways toe noise alone
    // would turn it ~35° (the measured heading), the body's facing keeps it near 10°.
    let mut b = standing();
    b.keypoints[31].x += 20.0;
    let frame = FloorFrame::new(&b, 600, 1000).unwrap();
    let f = foot(&b, &frame, Side::Left, (600, 1000)).unwrap();
    assert!((f.yaw_deg() - 10.0).abs() < 12.0, "{}", f.yaw_deg());
    // A body turned (the left hip 80 px farther from the camera) turns the prior.
    let mut b = standing();
    b.keypoints[23].z = 80.0;
    let f = foot(&b, &frame, Side::Left, (600, 1000)).unwrap();
    let r = foot(&standing(), &frame, Side::Left, (600, 1000)).unwrap();
    assert!(
        f.yaw_deg() > r.yaw_deg() + 20.0,
        "{} vs {}",
        f.yaw_deg(),
        r.yaw_deg()
    );
}

#[test]
fn a_body_seen_from_behind_gets_its_toes_away_from_the_camera() {
    // The standing body mirrored across the photo (its left on the image's left), the
    // toe keypoints below the heels as the pose model puts hidden toes.
    let mut b = standing();
    for k in &mut b.keypoints {
        k.x = 600.0 - k.x;
    }
    // The face's keypoints mirrored too: left eye and ear on the image's left.
    assert!(!seen_from_behind(&b));
    for (i, x) in [(2, 290.0), (5, 310.0), (7, 280.0), (8, 320.0)] {
        b.keypoints[i].x = x;
    }
    assert!(seen_from_behind(&b) && !seen_from_behind(&standing()));
    let frame = FloorFrame::new(&b, 600, 1000).unwrap();
    for side in [Side::Left, Side::Right] {
        let f = foot(&b, &frame, side, (600, 1000)).unwrap();
        assert!(f.heading.z > 0.5, "{side:?} {:?}", f.heading);
    }
}

#[test]
fn a_side_view_foot_points_along_the_image() {
    // Heel at x 300, toe 60 px to the right at the same height: the foot points right.
    let mut b = standing();
    b.keypoints[30].x = 300.0;
    b.keypoints[32].x = 360.0;
    b.keypoints[32].y = 900.0;
    let frame = FloorFrame::new(&b, 600, 1000).unwrap();
    let f = foot(&b, &frame, Side::Right, (600, 1000)).unwrap();
    assert!(f.heading.x > 0.8, "{:?}", f.heading);
    assert!((f.yaw_deg() - 90.0).abs() < 35.0, "{}", f.yaw_deg());
}
