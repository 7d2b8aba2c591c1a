//! The vision stack: where the faces are and how the heads are turned, where the body's
//! keypoints are, and which pixels are the person — MediaPipe's models with MediaPipe's own
//! pre- and post-processing, re-implemented here from its graph configs (0.10.14).
//!
//! Pipelines (each model runs through an [`Infer`], implemented by the wgpu TFLite executor):
//! - **Faces** ([`face`]): short-range (128²) and full-range (192²) BlazeFace on the
//!   letterboxed photo → SSD decoding ([`anchors`], [`detection`]) → weighted NMS → rotated
//!   ROI ([`roi`]) → face mesh (192²) → 468 landmarks in pixels, a face score, a head pose
//!   ([`head_pose`]). Largest face first. Faces 30–80 px wide get two more mesh passes, each
//!   on the region the previous landmarks give (MediaPipe's tracking pass;
//!   [`Vision::refine_face`]): a detector's box frames such faces badly.
//! - **Body** ([`pose`]): BlazePose detector (224²) → ROI from the alignment keypoints →
//!   pose_landmark_full (256²) → 33 keypoints with visibility/presence (refined on the
//!   heatmap) and the person mask at image resolution.
//! - **Selfie segmentation** ([`segmentation`]): a second person mask.
//! - **Hands** ([`hand`]): palm detection (192²) → rotated hand ROI → hand_landmark_full
//!   (224²) → 21 landmarks in pixels and the subject's side, for rings and bracelets.
//! - **The person** ([`person`]): what a category receives ([`Person`]: the photo, the face
//!   that wears the product, the body, the masks, the hands), and the face policy that picks
//!   that face among the candidates ([`Vision::choose_face`], [`FaceChoice`]).
//! - [`inspect()`](inspect::inspect) runs all three and returns an [`InspectReport`];
//!   [`draw_overlay`] draws it.
//!
//! Image work (letterboxing, rotated crops into tensors, warping masks back) runs on the GPU
//! through [`crate::image_ops`], or on the CPU when the networks do ([`cpu_nets`]).

pub mod anchors;
pub mod cpu_nets;
pub mod detection;
pub mod face;
pub mod gpu_nets;
pub mod hand;
pub mod head_pose;
mod host;
pub mod inspect;
pub mod person;
pub mod pose;
pub mod reference;
pub mod roi;
pub mod segmentation;

use std::sync::Arc;

pub use cpu_nets::{UnknownVisionBackend, VisionBackend};
pub use detection::Detection;
pub use face::Face;
pub use hand::{Hand, Handedness};
pub use head_pose::HeadPose;
pub use inspect::{draw_overlay, InspectReport};
pub use person::{face_belongs_to, BodyChoice, FaceChoice, Person};
pub use pose::{Body, PoseKeypoint};
pub use roi::RotatedRect;

use crate::gpu::{GpuContext, GpuError};
use crate::image_ops::{Affine2, GpuImage, ImageOps, ImageOpsError, TensorSpec};
use crate::models::{ModelError, ModelId};

/// Errors of the vision pipelines.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    /// The GPU context could not be created.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// An image operation failed.
    #[error(transparent)]
    ImageOps(#[from] ImageOpsError),
    /// A model is missing or does not verify.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Running a model failed.
    #[error("running {model:?} failed: {message}")]
    Infer {
        /// The model.
        model: ModelId,
        /// What went wrong (the executor's error, as text).
        message: String,
    },
    /// A model returned outputs of unexpected shapes.
    #[error("unexpected model output: {0}")]
    BadOutput(String),
}

/// Runs one model: NHWC f32 inputs in, outputs in the model's order.
///
/// Implemented by the wgpu TFLite executor (`tflite::Executor`); tests may implement it with a
/// reference interpreter.
pub trait Infer {
    /// Runs the model on `inputs` (one slice per model input).
    fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, VisionError>;
}

/// Builds one network.
pub type MakeNet = Box<dyn FnOnce() -> Result<Box<dyn Infer + Send>, VisionError> + Send>;

/// A network built the first time it runs: a one-off `vto try-on` of glasses never builds the
/// body networks, and the server builds them all up front with [`Vision::warm_up`].
pub struct OnFirstUse {
    model: ModelId,
    make: Option<MakeNet>,
    net: Option<Box<dyn Infer + Send>>,
}

impl OnFirstUse {
    /// `model`, to be built by `make` on its first run.
    pub fn new(model: ModelId, make: MakeNet) -> Self {
        OnFirstUse {
            model,
            make: Some(make),
            net: None,
        }
    }
}

impl Infer for OnFirstUse {
    fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, VisionError> {
        if self.net.is_none() {
            let make = self.make.take().ok_or_else(|| VisionError::Infer {
                model: self.model,
                message: "building this network failed earlier".into(),
            })?;
            self.net = Some(make()?);
        }
        match self.net.as_mut() {
            Some(net) => net.run(inputs),
            None => unreachable!("built just above"),
        }
    }
}

/// One boxed [`Infer`] per model.
pub struct Networks {
    face_short: Box<dyn Infer + Send>,
    face_full: Box<dyn Infer + Send>,
    face_landmark: Box<dyn Infer + Send>,
    pose_detection: Box<dyn Infer + Send>,
    pose_landmark: Box<dyn Infer + Send>,
    selfie: Box<dyn Infer + Send>,
    palm: Box<dyn Infer + Send>,
    hand_landmark: Box<dyn Infer + Send>,
    /// The networks run on the CPU: prepare their inputs there too.
    host_inputs: bool,
}

impl std::fmt::Debug for Networks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Networks { .. }")
    }
}

impl Networks {
    /// Builds the eight networks with `make` (called once per model, in [`ModelId::ALL`] order).
    pub fn from_fn<F>(mut make: F) -> Result<Self, VisionError>
    where
        F: FnMut(ModelId) -> Result<Box<dyn Infer + Send>, VisionError>,
    {
        Ok(Self {
            face_short: make(ModelId::FaceDetectionShortRange)?,
            face_full: make(ModelId::FaceDetectionFullRange)?,
            face_landmark: make(ModelId::FaceLandmark)?,
            pose_detection: make(ModelId::PoseDetection)?,
            pose_landmark: make(ModelId::PoseLandmarkFull)?,
            selfie: make(ModelId::SelfieSegmentation)?,
            palm: make(ModelId::PalmDetectionFull)?,
            hand_landmark: make(ModelId::HandLandmarkFull)?,
            host_inputs: false,
        })
    }

    /// Whether these networks run on the CPU ([`Networks::cpu`]), so that [`Vision`]
    /// crops their inputs and warps their masks on the CPU rather than on the GPU.
    pub fn runs_on_cpu(&self) -> bool {
        self.host_inputs
    }

    fn get(&mut self, id: ModelId) -> &mut (dyn Infer + Send) {
        match id {
            ModelId::FaceDetectionShortRange => self.face_short.as_mut(),
            ModelId::FaceDetectionFullRange => self.face_full.as_mut(),
            ModelId::FaceLandmark => self.face_landmark.as_mut(),
            ModelId::PoseDetection => self.pose_detection.as_mut(),
            ModelId::PoseLandmarkFull => self.pose_landmark.as_mut(),
            ModelId::SelfieSegmentation => self.selfie.as_mut(),
            ModelId::PalmDetectionFull => self.palm.as_mut(),
            ModelId::HandLandmarkFull => self.hand_landmark.as_mut(),
        }
    }

    /// Runs one model on one input and returns its outputs.
    pub fn run(&mut self, id: ModelId, input: &[f32]) -> Result<Vec<Vec<f32>>, VisionError> {
        self.get(id).run(&[input])
    }
}

/// The vision pipelines: GPU image kernels plus the eight networks.
#[derive(Debug)]
pub struct Vision {
    ops: ImageOps,
    nets: Networks,
}

impl Vision {
    /// Builds the pipelines on `ctx` with `nets`.
    ///
    /// When `nets` run on the CPU ([`Networks::runs_on_cpu`]), images uploaded through
    /// [`Vision::image_ops`] keep a host copy and the crops into model inputs and the mask
    /// warps run on the CPU: no GPU round trip per network.
    pub fn new(ctx: Arc<GpuContext>, nets: Networks) -> Self {
        let mut ops = ImageOps::new(ctx);
        ops.keep_host_copies(nets.runs_on_cpu());
        Self { ops, nets }
    }

    /// The image kernels.
    pub fn image_ops(&self) -> &ImageOps {
        &self.ops
    }

    /// Runs every network once, so that the first request pays no first-run costs (kernel
    /// compilation in a GPU driver, scratch buffers): both face detectors, pose detection,
    /// the selfie mask and palm detection through their real pipelines on a blank photo, then
    /// the face mesh, the pose landmarks and the hand landmarks (which a blank photo never
    /// reaches) on neutral tensors.
    pub fn warm_up(&mut self) -> Result<(), VisionError> {
        let blank = image::RgbaImage::from_pixel(320, 240, image::Rgba([128, 128, 128, 255]));
        let photo = self.ops.upload(&blank)?;
        self.detect_faces(&photo)?;
        self.body(&photo)?;
        self.selfie_mask(&photo)?;
        self.detect_palms(&photo)?;
        let side = face::MESH as usize;
        self.nets
            .run(ModelId::FaceLandmark, &vec![0.5; side * side * 3])?;
        let side = pose::SIZE as usize;
        self.nets
            .run(ModelId::PoseLandmarkFull, &vec![0.5; side * side * 3])?;
        let side = hand::LANDMARK_SIZE as usize;
        self.nets
            .run(ModelId::HandLandmarkFull, &vec![0.5; side * side * 3])?;
        Ok(())
    }

    /// Crops a model input: on the CPU when the networks run there and the image has a
    /// host copy, else with the GPU kernel.
    pub(crate) fn crop_to_tensor(
        &self,
        image: &GpuImage,
        to_source: &Affine2,
        spec: &TensorSpec,
    ) -> Result<Vec<f32>, VisionError> {
        match image.host() {
            Some(host) if self.nets.host_inputs => Ok(host::crop_to_tensor(host, to_source, spec)?),
            _ => Ok(self.ops.crop_to_tensor(image, to_source, spec)?),
        }
    }

    /// Warps a mask onto the image grid (see [`ImageOps::warp_mask`]): on the CPU when the
    /// networks run there, else with the GPU kernel.
    pub(crate) fn warp_mask(
        &self,
        mask: &[f32],
        mask_size: (u32, u32),
        to_mask: &Affine2,
        size: (u32, u32),
    ) -> Result<Vec<f32>, VisionError> {
        if self.nets.host_inputs {
            Ok(host::warp_mask(mask, mask_size, to_mask, size)?)
        } else {
            Ok(self.ops.warp_mask(mask, mask_size, to_mask, size)?)
        }
    }
}

/// Finds the output with exactly `len` values (outputs are matched by size, so the order a
/// runtime lists them in does not matter).
pub(crate) fn output(outputs: &[Vec<f32>], len: usize, what: &str) -> Result<usize, VisionError> {
    outputs.iter().position(|o| o.len() == len).ok_or_else(|| {
        VisionError::BadOutput(format!(
            "{what}: no output with {len} values (got sizes {:?})",
            outputs.iter().map(Vec::len).collect::<Vec<_>>()
        ))
    })
}

pub(crate) fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// A one-channel probability mask at image resolution (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Mask {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Probabilities in [0, 1], `width × height`.
    pub data: Vec<f32>,
}

impl Mask {
    /// The fraction of pixels whose probability exceeds 0.5.
    pub fn coverage(&self) -> f32 {
        if self.data.is_empty() {
            return 0.0;
        }
        self.data.iter().filter(|&&v| v > 0.5).count() as f32 / self.data.len() as f32
    }

    /// The run of pixels at or over 0.5 across row `y` that holds the one nearest column `x`
    /// within `reach` pixels (`x` first, then `x − 1`, `x + 1`, …): its first and last
    /// column. `None` when the row is outside the mask or no such pixel is that near.
    pub fn run_across_row(&self, y: i64, x: i64, reach: i64) -> Option<(i64, i64)> {
        if y < 0 || y >= i64::from(self.height) {
            return None;
        }
        let w = i64::from(self.width);
        let on = |x: i64| x >= 0 && x < w && self.data[(y * w + x) as usize] >= 0.5;
        let start = (0..=reach).flat_map(|d| [x - d, x + d]).find(|&x| on(x))?;
        let (mut l, mut r) = (start, start);
        while on(l - 1) {
            l -= 1;
        }
        while on(r + 1) {
            r += 1;
        }
        Some((l, r))
    }
}
