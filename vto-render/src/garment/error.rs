//! What can go wrong in the garment stage, one variant per failure, each saying whose input
//! was at fault: the product photo, the person photo, the fit, or the GPU.

use crate::gpu::ReadbackError;

/// Why the garment pipeline could not dress the person.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    /// The product photo is smaller than 16 pixels on a side.
    #[error(
        "no garment was found in the product photo: the photo is {width}x{height} pixels, too small"
    )]
    PhotoTooSmall {
        /// The photo's width.
        width: u32,
        /// The photo's height.
        height: u32,
    },
    /// Nothing in the product photo stands out from its background (under 2 % of it).
    #[error(
        "no garment was found in the product photo: nothing stands out from the background \
         (a garment must fill at least 2 % of the photo)"
    )]
    NothingStandsOut,
    /// The garment fills the product photo: no plain background lies around it.
    #[error(
        "no garment was found in the product photo: no plain background around the garment \
         (it must lie inside the frame with a margin)"
    )]
    NoBackground,
    /// The product photo shows the garment worn by a person (an on-model photo): the
    /// garment cannot be told from the body wearing it.
    #[error(
        "the product photo shows the garment worn by a person; garments need a photo of the \
         garment alone (laid flat, on a hanger or on a ghost mannequin) on a plain or even \
         background"
    )]
    OnModel,
    /// The garment was cut out but its silhouette could not be measured.
    #[error("no garment was found in the product photo: {0}")]
    Unmeasurable(Unmeasurable),
    /// The person photo shows no upper body a garment can use (the reason in words).
    #[error("the person photo shows no body a garment can be fitted to ({0})")]
    NoUpperBody(&'static str),
    /// The person photo does not show the legs a lower garment needs (the reason in words).
    #[error(
        "the legs are not visible in the person photo ({0}); pants, dresses and outfits need a \
         photo with the hips and knees in view"
    )]
    LegsHidden(String),
    /// A warp part has unpaired control points, or fewer than 3 or more than the kernel
    /// takes.
    #[error(
        "the garment warp could not be solved: part {label} has {body} body and {garment} \
         garment points (3–{max} pairs needed)"
    )]
    ControlPoints {
        /// The part's label.
        label: u8,
        /// Its control points on the body.
        body: usize,
        /// Its control points on the garment.
        garment: usize,
        /// The most pairs a part may have.
        max: usize,
    },
    /// A warp part's control points are collinear or coincide: its spline has no solution.
    #[error(
        "the garment warp could not be solved: the control points of part {label} are \
         collinear or coincide"
    )]
    Collinear {
        /// The part's label.
        label: u8,
    },
    /// The garment's texture and label map do not match its size.
    #[error(
        "the garment warp could not be solved: a {width}x{height} garment with {texels} texels \
         and {labels} labels"
    )]
    TextureSize {
        /// The garment image's width.
        width: u32,
        /// The garment image's height.
        height: u32,
        /// RGBA texels given.
        texels: usize,
        /// Labels given.
        labels: usize,
    },
    /// More warp parts than the kernel takes.
    #[error("the garment warp could not be solved: {parts} parts (at most {max})")]
    TooManyParts {
        /// The parts given.
        parts: usize,
        /// The most the kernel takes.
        max: usize,
    },
    /// The garment's or the body's width to fit by is zero (`"shoulder"`, `"hip"`).
    #[error("the garment warp could not be solved: zero {0} width")]
    ZeroWidth(&'static str),
    /// A skirt's hem would lie above its waist on this body.
    #[error("the garment warp could not be solved: the skirt's hem lies above its waist")]
    HemAboveWaist,
    /// The warp kernel's result could not be read back from the GPU.
    #[error("the garment warp failed on the GPU: {}", .0 .0)]
    Gpu(#[source] ReadbackError),
}

impl GarmentError {
    /// Whose input the failure lies in.
    pub fn cause(&self) -> Cause {
        match self {
            GarmentError::PhotoTooSmall { .. }
            | GarmentError::NothingStandsOut
            | GarmentError::NoBackground
            | GarmentError::OnModel
            | GarmentError::Unmeasurable(_) => Cause::ProductPhoto,
            GarmentError::NoUpperBody(_) | GarmentError::LegsHidden(_) => Cause::PersonPhoto,
            GarmentError::ControlPoints { .. }
            | GarmentError::Collinear { .. }
            | GarmentError::TextureSize { .. }
            | GarmentError::TooManyParts { .. }
            | GarmentError::ZeroWidth(_)
            | GarmentError::HemAboveWaist => Cause::Fit,
            GarmentError::Gpu(_) => Cause::Gpu,
        }
    }
}

/// Whose input a [`GarmentError`] lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The product photo holds no garment the stage can measure.
    ProductPhoto,
    /// The person photo lacks the body the garment needs.
    PersonPhoto,
    /// The garment cannot be fitted to this body (degenerate measurements).
    Fit,
    /// The GPU failed (nobody's input).
    Gpu,
}

/// What of a cut-out garment's silhouette could not be measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unmeasurable {
    /// A top's outline (its rows, torso span or hem).
    #[error("the garment's outline could not be measured")]
    Outline,
    /// The garment is under 16 pixels tall or wide.
    #[error("the garment is too small to measure")]
    TooSmall,
    /// The shoulders and the hem lie too close together.
    #[error("the garment's shoulders and hem could not be told apart")]
    ShouldersAndHem,
    /// A dress's outline.
    #[error("the dress's outline could not be measured")]
    DressOutline,
    /// A dress too small for its waist to split bodice and skirt.
    #[error("the dress is too small to tell its bodice from its skirt")]
    DressWaist,
}
