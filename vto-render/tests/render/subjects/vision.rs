//! The real networks find the rendered subjects (body, hands) near their ground truth.

use super::*;

#[test]
fn every_subject_is_found_by_the_real_networks_near_its_ground_truth() {
    let Some(w) = world() else { return };
    for (s, person) in &w.subjects {
        let name = s.spec.pose.name();
        let body = person
            .body
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no body found"));
        assert!(person.face.is_some(), "{name}: no face found");
        for i in [11, 12, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32] {
            let k = &body.keypoints[i];
            let e = Vec2::new(k.x, k.y).distance(gt(s, i));
            // 5% of the body's height: a hip joint inside the pelvis is where MediaPipe's
            // hip is least sure (it measures 1–2.5%), and feet are small.
            assert!(
                e < 0.05 * s.height_px,
                "{name}: keypoint {i} is {e:.0} px from the ground truth ({:.0} px tall)",
                s.height_px
            );
        }
    }
}

#[test]
fn the_hand_networks_find_a_rendered_hand_close_up() {
    let Some(w) = world() else { return };
    let body = BaseBody::load(&testkit::assets_dir(&models_dir())).expect("assets");
    let spec = testkit::standard((512, 512))[0];
    let shot = testkit::render_hand(&body, &spec, w.renderer.rasterizer()).expect("render");
    let needs = Needs {
        face: false,
        face_optional: false,
        body: false,
        person_mask: false,
        face_of_body: false,
        hands: true,
    };
    let seen = w.renderer.see(&shot.image, needs).expect("vision");
    let size = shot.extent.1.distance(shot.extent.0);
    // The close-up's hand (the one whose middle knuckle is nearest the ground truth) has its
    // knuckle within 5% of the hand's size of the rig's joint.
    let best = seen
        .hands
        .iter()
        .filter_map(|h| {
            h.landmarks
                .get(9)
                .map(|p| Vec2::new(p[0], p[1]).distance(shot.knuckle))
        })
        .fold(f32::MAX, f32::min);
    assert!(
        best < 0.05 * size,
        "nearest middle knuckle {best:.0} px off ({size:.0} px hand)"
    );
}
