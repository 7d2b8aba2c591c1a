//! Load-time lowering shared by the GPU executor and the CPU reference: constants are decoded
//! (float16 → float32, sparse → dense), DEQUANTIZE/DENSIFY of constants are folded away, and
//! every remaining operator becomes a [`Step`] with its geometry worked out.

use std::collections::HashMap;

pub(crate) use super::schema::Activation;
use super::schema::{DimMeta, Graph, OpKind, Padding, Sparsity, TensorType};
use super::TfliteError;

mod buffers;
mod decode;
mod fuse;
mod heads;
mod lower;
mod plan;

pub(crate) use buffers::plan_buffers;
pub(crate) use lower::lower;
pub(crate) use plan::*;

pub(crate) use decode::densify;
use decode::{decode_floats, decode_i32s};
pub(crate) use fuse::fuse;

fn bad(msg: impl Into<String>) -> TfliteError {
    TfliteError::Malformed(msg.into())
}

/// Largest tensor accepted (elements): 256 Mi floats, far above what these models use.
const MAX_ELEMENTS: usize = 1 << 28;

fn rank4(shape: &[usize]) -> Result<[usize; 4], TfliteError> {
    if shape.len() > 4 {
        return Err(TfliteError::Unsupported(format!(
            "tensor of rank {} (at most 4 supported)",
            shape.len()
        )));
    }
    let mut out = [1usize; 4];
    out[4 - shape.len()..].copy_from_slice(shape);
    Ok(out)
}

fn nhwc(shape: &[usize], what: &str) -> Result<(usize, usize, usize), TfliteError> {
    match shape {
        [1, h, w, c] => Ok((*h, *w, *c)),
        _ => Err(TfliteError::Unsupported(format!(
            "{what} expects a [1,H,W,C] tensor, got {shape:?}"
        ))),
    }
}

/// TFLite's padding rule: (pad_before, expected output size).
pub(crate) fn window_padding(
    padding: Padding,
    input: usize,
    kernel: usize,
    stride: usize,
    dilation: usize,
) -> (usize, usize) {
    let eff = (kernel - 1) * dilation + 1;
    match padding {
        Padding::Same => {
            let out = input.div_ceil(stride);
            let total = ((out.saturating_sub(1)) * stride + eff).saturating_sub(input);
            (total / 2, out)
        }
        Padding::Valid => (0, (input + stride).saturating_sub(eff) / stride),
    }
}

#[cfg(test)]
mod tests {
    use super::decode::f16_to_f32;
    use super::*;

    #[test]
    fn f16_decodes_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
    }

    #[test]
    fn same_padding_matches_tflite() {
        // 128 input, 5x5 kernel, stride 2: out 64, total pad 3, 1 before.
        assert_eq!(window_padding(Padding::Same, 128, 5, 2, 1), (1, 64));
        assert_eq!(window_padding(Padding::Valid, 194, 3, 2, 1), (0, 96));
        assert_eq!(window_padding(Padding::Same, 7, 3, 1, 2), (2, 7));
    }

    #[test]
    fn densify_csr_and_blocks() {
        // 2x4 matrix [[0,1,0,2],[3,0,0,0]] in CSR.
        let sp = Sparsity {
            traversal_order: vec![0, 1],
            block_map: vec![],
            dim_metadata: vec![
                DimMeta::Dense { size: 2 },
                DimMeta::SparseCsr {
                    segments: vec![0, 2, 3],
                    indices: vec![1, 3, 0],
                },
            ],
        };
        let d = densify(&[2, 4], &sp, &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(d, vec![0.0, 1.0, 0.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
        // 2x4 with 1x2 blocks along dim 1: blocks (row, block col) stored sparse.
        let sp = Sparsity {
            traversal_order: vec![0, 1, 2],
            block_map: vec![1],
            dim_metadata: vec![
                DimMeta::Dense { size: 2 },
                DimMeta::SparseCsr {
                    segments: vec![0, 1, 2],
                    indices: vec![1, 0],
                },
                DimMeta::Dense { size: 2 },
            ],
        };
        let d = densify(&[2, 4], &sp, &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!(d, vec![0.0, 0.0, 5.0, 6.0, 7.0, 8.0, 0.0, 0.0]);
        // Out-of-range data is an error, not a panic.
        assert!(densify(&[2, 4], &sp, &[5.0]).is_err());
    }
}
