//! Lowering of the operators of classifier and regressor heads (the hand landmark model's):
//! FULLY_CONNECTED becomes a 1×1 convolution and a spatial MEAN an average pool, so both run
//! on kernels every executor already has, with the CPU reference as their oracle.

use super::{bad, nhwc, Activation, Epilogue, Geo, Step};
use crate::tflite::TfliteError;

/// FULLY_CONNECTED: `y = x · wᵀ + b` over rows of K values, as a 1×1 convolution over a
/// 1×rows image (the weights `[O, K]` are the filter `[O, 1, 1, K]`).
pub(super) fn fully_connected(
    oi: usize,
    shapes: &[Vec<usize>],
    x: usize,
    w: usize,
    b: Option<usize>,
    y: usize,
    activation: Activation,
) -> Result<Step, TfliteError> {
    let numel = |t: usize| -> usize { shapes[t].iter().product() };
    let ws = &shapes[w];
    let [out_c, in_c] = ws[..] else {
        return Err(bad(format!(
            "operator {oi}: FULLY_CONNECTED weights {ws:?}"
        )));
    };
    if in_c == 0 || numel(x) % in_c != 0 {
        return Err(bad(format!(
            "operator {oi}: FULLY_CONNECTED input {:?} is not rows of {in_c}",
            shapes[x]
        )));
    }
    let rows = numel(x) / in_c;
    if numel(y) != rows * out_c {
        return Err(bad(format!("operator {oi}: FULLY_CONNECTED output size")));
    }
    if b.is_some_and(|b| numel(b) != out_c) {
        return Err(bad(format!("operator {oi}: bias size mismatch")));
    }
    Ok(Step::Conv {
        x,
        w,
        b,
        y,
        geo: Geo {
            in_h: 1,
            in_w: rows,
            in_c,
            out_h: 1,
            out_w: rows,
            out_c,
            k_h: 1,
            k_w: 1,
            stride_h: 1,
            stride_w: 1,
            dil_h: 1,
            dil_w: 1,
            pad_top: 0,
            pad_left: 0,
        },
        epi: Epilogue::fused(activation),
    })
}

/// MEAN over the spatial axes of a `[1,H,W,C]` tensor (global average pooling), as an
/// average pool with an H×W window. Other axes are refused: these models use none.
pub(super) fn mean(
    oi: usize,
    shapes: &[Vec<usize>],
    x: usize,
    axes: &[i32],
    y: usize,
    keep_dims: bool,
) -> Result<Step, TfliteError> {
    let (in_h, in_w, in_c) = nhwc(&shapes[x], "MEAN")?;
    let mut axes: Vec<i32> = axes
        .iter()
        .map(|&a| if a < 0 { a + 4 } else { a })
        .collect();
    axes.sort_unstable();
    if axes != [1, 2] {
        return Err(TfliteError::Unsupported(format!(
            "MEAN over axes {axes:?} (only the spatial axes [1, 2] are supported)"
        )));
    }
    let want: &[usize] = if keep_dims {
        &[1, 1, 1, in_c]
    } else {
        &[1, in_c]
    };
    if shapes[y] != want {
        return Err(bad(format!(
            "operator {oi}: MEAN output shape {:?}",
            shapes[y]
        )));
    }
    Ok(Step::Pool {
        max: false,
        x,
        y,
        geo: Geo {
            in_h,
            in_w,
            in_c,
            out_h: 1,
            out_w: 1,
            out_c: in_c,
            k_h: in_h,
            k_w: in_w,
            stride_h: 1,
            stride_w: 1,
            dil_h: 1,
            dil_w: 1,
            pad_top: 0,
            pad_left: 0,
        },
        act: Activation::None,
    })
}
