//! A close-up of a hand from the same base mesh (the stretch goal: do the palm and hand
//! landmark networks find it, for rings?).

use glam::{Vec2, Vec3};
use image::{Rgba, RgbaImage};

use super::body::{BaseBody, Part};
use super::pose::Pose;
use super::subject::{body_scene, hash, pose_body, Camera, SubjectSpec};
use crate::raster::{RasterError, Rasterizer, Shadow};

/// A close-up of the left hand (the back of the hand, fingers down, the body behind it out of
/// the frame's centre), for the palm and hand-landmark networks.
#[derive(Debug, Clone)]
pub struct HandShot {
    /// The photo.
    pub image: RgbaImage,
    /// The wrist joint (pixels).
    pub wrist: Vec2,
    /// The middle finger's knuckle (pixels): where a ring's finger starts.
    pub knuckle: Vec2,
    /// The ring finger's knuckle (MCP, pixels).
    pub ring_mcp: Vec2,
    /// The ring finger's middle joint (PIP, pixels).
    pub ring_pip: Vec2,
    /// The hand's pixel extent (min, max) from its vertices.
    pub extent: (Vec2, Vec2),
}

/// Renders a close-up of `spec`'s left hand in the front pose, 45 cm from it, from the
/// person's left-front.
pub fn render_hand(
    body: &BaseBody,
    spec: &SubjectSpec,
    raster: &Rasterizer,
) -> Result<HandShot, RasterError> {
    let (w, h) = spec.size;
    let spec = SubjectSpec {
        pose: Pose::Front,
        ..*spec
    };
    let posed = pose_body(body, &spec);
    let joint = |name: &str| -> Vec3 {
        let b = body.bone(name).unwrap_or(0);
        posed
            .place
            .transform_point3(posed.bones[b].transform_point3(body.heads[b]))
    };
    let hand: Vec<Vec3> = (0..body.rest.len())
        .filter(|&i| body.parts[i] == Part::Hand && body.rest[i].x > 0.0)
        .map(|i| posed.positions[i])
        .collect();
    let centre = hand.iter().sum::<Vec3>() / hand.len().max(1) as f32;
    let eye = centre + Vec3::new(38.0, 6.0, 22.0);
    let focal = 1.1 * w.max(h) as f32;
    let cam = Camera::look_at(
        eye,
        centre,
        focal,
        Vec2::new(w as f32 / 2.0, h as f32 / 2.0),
    );
    // A plain backdrop with a soft vertical gradient.
    let background = RgbaImage::from_fn(w, h, |x, y| {
        let t = y as f32 / h as f32;
        let n = hash(x as i32 / 2, y as i32 / 2, spec.room) * 4.0;
        let c = [
            196.0 - 30.0 * t + n,
            192.0 - 28.0 * t + n,
            186.0 - 24.0 * t + n,
        ];
        Rgba([c[0] as u8, c[1] as u8, c[2] as u8, 255])
    });
    let none = Shadow {
        offset: [0.0; 2],
        radius: 1.0,
        strength: 0.0,
    };
    let scene = body_scene(body, &spec.look, &posed.positions, &cam, (w, h), none);
    let (image, _) = raster.render(&background, &scene)?;
    let mut lo = Vec2::splat(f32::MAX);
    let mut hi = Vec2::splat(f32::MIN);
    for p in &hand {
        let q = cam.project(*p);
        lo = lo.min(q);
        hi = hi.max(q);
    }
    Ok(HandShot {
        image,
        wrist: cam.project(joint("wrist.L")),
        knuckle: cam.project(joint("finger3-1.L")),
        ring_mcp: cam.project(joint("finger4-1.L")),
        ring_pip: cam.project(joint("finger4-2.L")),
        extent: (lo, hi),
    })
}
