//! Selfie segmentation: a second person mask, from the whole photo stretched to 256×256
//! (`selfie_segmentation_cpu.pbtxt`: no aspect kept, [0, 1] input, zero border; the model's
//! output is already a probability).

use super::roi::RotatedRect;
use super::{output, Mask, Vision, VisionError};
use crate::image_ops::{Border, GpuImage, TensorSpec};
use crate::models::ModelId;

const SIZE: u32 = 256;

impl Vision {
    /// The selfie-segmentation person mask at image resolution.
    pub fn selfie_mask(&mut self, image: &GpuImage) -> Result<Mask, VisionError> {
        let to_image =
            RotatedRect::whole(image.width(), image.height()).tensor_to_image(SIZE, SIZE);
        let tensor = self.crop_to_tensor(
            image,
            &to_image,
            &TensorSpec {
                width: SIZE,
                height: SIZE,
                range_min: 0.0,
                range_max: 1.0,
                border: Border::Zero,
            },
        )?;
        let outputs = self.nets.run(ModelId::SelfieSegmentation, &tensor)?;
        let si = output(&outputs, (SIZE * SIZE) as usize, "selfie segmentation")?;
        let probs: Vec<f32> = outputs[si].iter().map(|v| v.clamp(0.0, 1.0)).collect();
        self.mask_to_image(&probs, &to_image, image)
    }
}
