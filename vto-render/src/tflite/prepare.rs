//! Load-time lowering shared by the GPU executor and the CPU reference: constants are decoded
//! (float16 → float32, sparse → dense), DEQUANTIZE/DENSIFY of constants are folded away, and
//! every remaining operator becomes a [`Step`] with its geometry worked out.

use std::collections::HashMap;

pub(crate) use super::schema::Activation;
use super::schema::{DimMeta, Graph, OpKind, Padding, Sparsity, TensorType};
use super::TfliteError;

mod decode;
mod fuse;
mod heads;

pub(crate) use decode::densify;
use decode::{decode_floats, decode_i32s};
pub(crate) use fuse::fuse;

/// Elementwise binary operators (broadcasting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Mul,
    /// `a >= 0 ? a : a * b`.
    Prelu,
}

impl BinOp {
    pub(crate) fn code(self) -> u32 {
        match self {
            Self::Add => 0,
            Self::Mul => 1,
            Self::Prelu => 2,
        }
    }
    pub(crate) fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            Self::Add => a + b,
            Self::Mul => a * b,
            Self::Prelu => {
                if a >= 0.0 {
                    a
                } else {
                    a * b
                }
            }
        }
    }
}

/// Elementwise unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Relu,
    Relu6,
    Logistic,
    HardSwish,
    Tanh,
}

impl UnOp {
    pub(crate) fn code(self) -> u32 {
        match self {
            Self::Relu => 0,
            Self::Relu6 => 1,
            Self::Logistic => 2,
            Self::HardSwish => 3,
            Self::Tanh => 4,
        }
    }
    pub(crate) fn apply(self, x: f32) -> f32 {
        match self {
            Self::Relu => x.max(0.0),
            Self::Relu6 => x.clamp(0.0, 6.0),
            Self::Logistic => 1.0 / (1.0 + (-x).exp()),
            Self::HardSwish => x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
            Self::Tanh => x.tanh(),
        }
    }
}

/// An activation applied in a convolution's epilogue: the fused activations of TFLite plus
/// the standalone activation operators folded into the convolution by [`fuse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
    None,
    Relu,
    ReluN1To1,
    Relu6,
    Tanh,
    HardSwish,
    Logistic,
    /// PRELU with the epilogue's per-channel `alpha`.
    Prelu,
}

impl Act {
    pub(crate) fn from_fused(a: Activation) -> Act {
        match a {
            Activation::None => Act::None,
            Activation::Relu => Act::Relu,
            Activation::ReluN1To1 => Act::ReluN1To1,
            Activation::Relu6 => Act::Relu6,
            Activation::Tanh => Act::Tanh,
        }
    }
    fn from_unary(u: UnOp) -> Act {
        match u {
            UnOp::Relu => Act::Relu,
            UnOp::Relu6 => Act::Relu6,
            UnOp::Logistic => Act::Logistic,
            UnOp::HardSwish => Act::HardSwish,
            UnOp::Tanh => Act::Tanh,
        }
    }
    /// The code of `shared/activation.wgsl`.
    pub(crate) fn code(self) -> u32 {
        match self {
            Act::None => 0,
            Act::Relu => 1,
            Act::ReluN1To1 => 2,
            Act::Relu6 => 3,
            Act::Tanh => 4,
            Act::HardSwish => 5,
            Act::Logistic => 6,
            Act::Prelu => 7,
        }
    }
    pub(crate) fn apply(self, x: f32, alpha: f32) -> f32 {
        match self {
            Act::None => x,
            Act::Relu => x.max(0.0),
            Act::ReluN1To1 => x.clamp(-1.0, 1.0),
            Act::Relu6 => x.clamp(0.0, 6.0),
            Act::Tanh => x.tanh(),
            Act::HardSwish => UnOp::HardSwish.apply(x),
            Act::Logistic => UnOp::Logistic.apply(x),
            Act::Prelu => BinOp::Prelu.apply(x, alpha),
        }
    }
}

/// What a convolution does after accumulating: `act2(act1(acc + bias) + residual)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Epilogue {
    pub act1: Act,
    /// A tensor of the output's spatial size added after `act1`: (tensor, its channels);
    /// channels beyond its own count are zero (a folded channel PAD).
    pub residual: Option<(usize, usize)>,
    pub act2: Act,
    /// Per-output-channel PRELU slopes (a constant tensor), used by `Act::Prelu`.
    pub alpha: Option<usize>,
}

impl Epilogue {
    fn fused(a: Activation) -> Epilogue {
        Epilogue {
            act1: Act::from_fused(a),
            residual: None,
            act2: Act::None,
            alpha: None,
        }
    }
    /// Applies the epilogue to channel `c` of pixel `pix` on the CPU.
    pub(crate) fn apply(
        &self,
        v: f32,
        pix: usize,
        c: usize,
        vals: &HashMap<usize, Vec<f32>>,
    ) -> f32 {
        let alpha = self.alpha.map_or(0.0, |a| vals[&a][c]);
        let mut v = self.act1.apply(v, alpha);
        if let Some((r, rc)) = self.residual {
            if c < rc {
                v += vals[&r][pix * rc + c];
            }
        }
        self.act2.apply(v, alpha)
    }
}

/// Geometry of a 2-D window operator (conv, depthwise, pool, transpose conv), batch 1, NHWC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Geo {
    pub in_h: usize,
    pub in_w: usize,
    pub in_c: usize,
    pub out_h: usize,
    pub out_w: usize,
    pub out_c: usize,
    pub k_h: usize,
    pub k_w: usize,
    pub stride_h: usize,
    pub stride_w: usize,
    pub dil_h: usize,
    pub dil_w: usize,
    pub pad_top: usize,
    pub pad_left: usize,
}

/// One runtime operator with everything resolved. Tensor fields are tensor indices.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// CONV_2D; weights `[out_c, k_h, k_w, in_c]`.
    Conv {
        x: usize,
        w: usize,
        b: Option<usize>,
        y: usize,
        geo: Geo,
        epi: Epilogue,
    },
    /// DEPTHWISE_CONV_2D; weights `[1, k_h, k_w, out_c]`, `out_c = in_c * mult`.
    Depthwise {
        x: usize,
        w: usize,
        b: Option<usize>,
        y: usize,
        geo: Geo,
        mult: usize,
        epi: Epilogue,
    },
    /// Convolution2DTransposeBias; weights `[out_c, k_h, k_w, in_c]`.
    TransposeConv {
        x: usize,
        w: usize,
        b: Option<usize>,
        y: usize,
        geo: Geo,
    },
    /// Broadcasting binary op; shapes right-aligned to rank 4.
    Binary {
        op: BinOp,
        a: usize,
        b: usize,
        y: usize,
        a_shape: [usize; 4],
        b_shape: [usize; 4],
        out_shape: [usize; 4],
        act: Activation,
    },
    /// Elementwise unary op.
    Unary { op: UnOp, x: usize, y: usize },
    /// Zero padding; shapes right-aligned to rank 4.
    Pad {
        x: usize,
        y: usize,
        in_shape: [usize; 4],
        out_shape: [usize; 4],
        before: [usize; 4],
    },
    /// MAX_POOL_2D / AVERAGE_POOL_2D.
    Pool {
        max: bool,
        x: usize,
        y: usize,
        geo: Geo,
        act: Activation,
    },
    /// RESHAPE: `y` is a view of `x`.
    Reshape { x: usize, y: usize },
    /// CONCATENATION: `parts[i]` is (tensor, size along the axis).
    Concat {
        parts: Vec<(usize, usize)>,
        y: usize,
        outer: usize,
        inner: usize,
        out_axis: usize,
        act: Activation,
    },
    /// RESIZE_BILINEAR (batch 1).
    Resize {
        x: usize,
        y: usize,
        geo: Geo,
        align_corners: bool,
        half_pixel_centers: bool,
    },
    /// DEPTH_TO_SPACE (batch 1).
    DepthToSpace {
        x: usize,
        y: usize,
        geo: Geo,
        block: usize,
    },
}

impl Step {
    /// Tensors read by the step.
    pub(crate) fn reads(&self) -> Vec<usize> {
        match self {
            Step::Conv { x, w, b, epi, .. } | Step::Depthwise { x, w, b, epi, .. } => {
                let mut v = vec![*x, *w];
                v.extend(b.iter().copied());
                v.extend(epi.residual.map(|r| r.0));
                v.extend(epi.alpha);
                v
            }
            Step::TransposeConv { x, w, b, .. } => {
                let mut v = vec![*x, *w];
                v.extend(b.iter().copied());
                v
            }
            Step::Binary { a, b, .. } => vec![*a, *b],
            Step::Unary { x, .. }
            | Step::Pad { x, .. }
            | Step::Pool { x, .. }
            | Step::Reshape { x, .. }
            | Step::Resize { x, .. }
            | Step::DepthToSpace { x, .. } => vec![*x],
            Step::Concat { parts, .. } => parts.iter().map(|p| p.0).collect(),
        }
    }

    /// The tensor written by the step.
    pub(crate) fn writes(&self) -> usize {
        match self {
            Step::Conv { y, .. }
            | Step::Depthwise { y, .. }
            | Step::TransposeConv { y, .. }
            | Step::Binary { y, .. }
            | Step::Unary { y, .. }
            | Step::Pad { y, .. }
            | Step::Pool { y, .. }
            | Step::Reshape { y, .. }
            | Step::Concat { y, .. }
            | Step::Resize { y, .. }
            | Step::DepthToSpace { y, .. } => *y,
        }
    }
}

/// The lowered model.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Dense float32 values of the constant tensors.
    pub consts: HashMap<usize, Vec<f32>>,
    /// Runtime steps in execution order.
    pub steps: Vec<Step>,
    /// Shapes of all tensors.
    pub shapes: Vec<Vec<usize>>,
    /// Graph inputs and outputs.
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
}

impl Plan {
    pub(crate) fn numel(&self, t: usize) -> usize {
        self.shapes[t].iter().product()
    }
}

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

/// Lowers a graph into a [`Plan`].
pub(crate) fn lower(g: &Graph) -> Result<Plan, TfliteError> {
    let shapes: Vec<Vec<usize>> = g.tensors.iter().map(|t| t.shape.clone()).collect();
    // Sizes come from the file: refuse absurd ones before anything allocates.
    for (i, s) in shapes.iter().enumerate() {
        let elements = s.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if s.len() > 8 || elements.is_none_or(|n| n > MAX_ELEMENTS) {
            return Err(bad(format!("tensor {i} has an absurd shape {s:?}")));
        }
    }
    let n = shapes.len();
    let numel = |t: usize| -> usize { shapes[t].iter().product() };
    let mut consts: HashMap<usize, Vec<f32>> = HashMap::new();
    // Decode every dense float constant; sparse ones wait for their DENSIFY.
    let mut sparse_raw: HashMap<usize, Vec<f32>> = HashMap::new();
    let mut int_consts: HashMap<usize, Vec<i32>> = HashMap::new();
    for (i, t) in g.tensors.iter().enumerate() {
        let data = g.buffers.get(t.buffer).map(Vec::as_slice).unwrap_or(&[]);
        if data.is_empty() {
            continue;
        }
        match t.ty {
            TensorType::F32 | TensorType::F16 => {
                let v = decode_floats(t.ty, data)?;
                if t.sparsity.is_some() {
                    sparse_raw.insert(i, v);
                } else {
                    if v.len() != numel(i) {
                        return Err(bad(format!(
                            "constant tensor {i} ({}) holds {} values, shape says {}",
                            t.name,
                            v.len(),
                            numel(i)
                        )));
                    }
                    consts.insert(i, v);
                }
            }
            TensorType::I32 => {
                int_consts.insert(i, decode_i32s(data)?);
            }
            _ => {}
        }
    }

    let mut steps = Vec::new();
    for (oi, op) in g.operators.iter().enumerate() {
        let input = |k: usize| -> Result<usize, TfliteError> {
            op.inputs
                .get(k)
                .copied()
                .flatten()
                .ok_or_else(|| bad(format!("operator {oi} lacks input {k}")))
        };
        let opt_input = |k: usize| op.inputs.get(k).copied().flatten();
        let y = *op
            .outputs
            .first()
            .ok_or_else(|| bad(format!("operator {oi} has no output")))?;
        let float_out = |t: usize| -> Result<(), TfliteError> {
            match g.tensors[t].ty {
                TensorType::F32 => Ok(()),
                other => Err(TfliteError::Unsupported(format!(
                    "activation tensor {} of type {other:?} (only float32 is supported)",
                    g.tensors[t].name
                ))),
            }
        };
        match &op.kind {
            OpKind::Unsupported { name } => {
                return Err(TfliteError::UnsupportedOperator { name: name.clone() })
            }
            OpKind::Dequantize => {
                let x = input(0)?;
                let v = consts.get(&x).cloned().ok_or_else(|| {
                    TfliteError::Unsupported("DEQUANTIZE of a non-constant tensor".into())
                })?;
                if g.tensors[x].ty != TensorType::F16 && g.tensors[x].ty != TensorType::F32 {
                    return Err(TfliteError::Unsupported(format!(
                        "DEQUANTIZE from {:?} (only float16 is supported)",
                        g.tensors[x].ty
                    )));
                }
                consts.insert(y, v);
            }
            OpKind::Densify => {
                let x = input(0)?;
                let raw = sparse_raw.get(&x).ok_or_else(|| {
                    TfliteError::Unsupported("DENSIFY of a non-constant tensor".into())
                })?;
                let sp = g.tensors[x]
                    .sparsity
                    .as_ref()
                    .ok_or_else(|| bad("DENSIFY input without sparsity"))?;
                let dense = densify(&shapes[y], sp, raw)?;
                consts.insert(y, dense);
            }
            OpKind::Conv2d(o) | OpKind::DepthwiseConv2d(o) => {
                float_out(y)?;
                let (x, w, b) = (input(0)?, input(1)?, opt_input(2));
                let (in_h, in_w, in_c) = nhwc(&shapes[x], "convolution")?;
                let (out_h, out_w, out_c) = nhwc(&shapes[y], "convolution")?;
                let ws = &shapes[w];
                if ws.len() != 4 {
                    return Err(bad("convolution weights must have rank 4"));
                }
                let (k_h, k_w) = (ws[1], ws[2]);
                if k_h == 0 || k_w == 0 {
                    return Err(bad(format!("operator {oi}: empty convolution kernel")));
                }
                let (pad_top, oh) = window_padding(o.padding, in_h, k_h, o.stride_h, o.dilation_h);
                let (pad_left, ow) = window_padding(o.padding, in_w, k_w, o.stride_w, o.dilation_w);
                if (oh, ow) != (out_h, out_w) {
                    return Err(bad(format!(
                        "operator {oi}: output {out_h}x{out_w}, padding rule gives {oh}x{ow}"
                    )));
                }
                let geo = Geo {
                    in_h,
                    in_w,
                    in_c,
                    out_h,
                    out_w,
                    out_c,
                    k_h,
                    k_w,
                    stride_h: o.stride_h,
                    stride_w: o.stride_w,
                    dil_h: o.dilation_h,
                    dil_w: o.dilation_w,
                    pad_top,
                    pad_left,
                };
                if let Some(b) = b {
                    if numel(b) != out_c {
                        return Err(bad(format!("operator {oi}: bias size mismatch")));
                    }
                }
                if matches!(op.kind, OpKind::Conv2d(_)) {
                    if ws[0] != out_c || ws[3] != in_c {
                        return Err(bad(format!("operator {oi}: conv weights {ws:?}")));
                    }
                    steps.push(Step::Conv {
                        x,
                        w,
                        b,
                        y,
                        geo,
                        epi: Epilogue::fused(o.activation),
                    });
                } else {
                    if ws[0] != 1 || ws[3] != out_c || in_c == 0 || out_c % in_c != 0 {
                        return Err(bad(format!("operator {oi}: depthwise weights {ws:?}")));
                    }
                    steps.push(Step::Depthwise {
                        x,
                        w,
                        b,
                        y,
                        geo,
                        mult: out_c / in_c,
                        epi: Epilogue::fused(o.activation),
                    });
                }
            }
            OpKind::TransposeConvBias {
                padding,
                stride_h,
                stride_w,
            } => {
                float_out(y)?;
                let (x, w, b) = (input(0)?, input(1)?, opt_input(2));
                let (in_h, in_w, in_c) = nhwc(&shapes[x], "transpose convolution")?;
                let (out_h, out_w, out_c) = nhwc(&shapes[y], "transpose convolution")?;
                let ws = &shapes[w];
                if ws.len() != 4 || ws[0] != out_c || ws[3] != in_c {
                    return Err(bad(format!("operator {oi}: transpose conv weights {ws:?}")));
                }
                let (k_h, k_w) = (ws[1], ws[2]);
                if k_h == 0 || k_w == 0 {
                    return Err(bad(format!("operator {oi}: empty convolution kernel")));
                }
                // Padding as for the forward convolution from the output to the input size.
                let pad = |inp: usize, out: usize, k: usize, s: usize| match padding {
                    Padding::Same => ((inp.saturating_sub(1)) * s + k).saturating_sub(out) / 2,
                    Padding::Valid => 0,
                };
                let geo = Geo {
                    in_h,
                    in_w,
                    in_c,
                    out_h,
                    out_w,
                    out_c,
                    k_h,
                    k_w,
                    stride_h: *stride_h,
                    stride_w: *stride_w,
                    dil_h: 1,
                    dil_w: 1,
                    pad_top: pad(in_h, out_h, k_h, *stride_h),
                    pad_left: pad(in_w, out_w, k_w, *stride_w),
                };
                steps.push(Step::TransposeConv { x, w, b, y, geo });
            }
            OpKind::Add(_) | OpKind::Mul(_) | OpKind::Prelu => {
                float_out(y)?;
                let (a, b) = (input(0)?, input(1)?);
                let (bop, act) = match &op.kind {
                    OpKind::Add(act) => (BinOp::Add, *act),
                    OpKind::Mul(act) => (BinOp::Mul, *act),
                    _ => (BinOp::Prelu, Activation::None),
                };
                let (a_shape, b_shape, out_shape) =
                    (rank4(&shapes[a])?, rank4(&shapes[b])?, rank4(&shapes[y])?);
                for d in 0..4 {
                    let ok = |s: usize| s == out_shape[d] || s == 1;
                    if !ok(a_shape[d]) || !ok(b_shape[d]) {
                        return Err(bad(format!(
                            "operator {oi}: shapes {:?} and {:?} do not broadcast to {:?}",
                            shapes[a], shapes[b], shapes[y]
                        )));
                    }
                }
                steps.push(Step::Binary {
                    op: bop,
                    a,
                    b,
                    y,
                    a_shape,
                    b_shape,
                    out_shape,
                    act,
                });
            }
            OpKind::Relu | OpKind::Relu6 | OpKind::Logistic | OpKind::HardSwish | OpKind::Tanh => {
                float_out(y)?;
                let x = input(0)?;
                if numel(x) != numel(y) {
                    return Err(bad(format!("operator {oi}: size mismatch")));
                }
                let u = match op.kind {
                    OpKind::Relu => UnOp::Relu,
                    OpKind::Relu6 => UnOp::Relu6,
                    OpKind::Logistic => UnOp::Logistic,
                    OpKind::HardSwish => UnOp::HardSwish,
                    _ => UnOp::Tanh,
                };
                steps.push(Step::Unary { op: u, x, y });
            }
            OpKind::Pad => {
                float_out(y)?;
                let x = input(0)?;
                let p = int_consts
                    .get(&input(1)?)
                    .ok_or_else(|| TfliteError::Unsupported("PAD with runtime paddings".into()))?;
                let r = shapes[x].len();
                if p.len() != 2 * r || r > 4 {
                    return Err(bad(format!(
                        "operator {oi}: paddings do not match rank {r}"
                    )));
                }
                let in_shape = rank4(&shapes[x])?;
                let out_shape = rank4(&shapes[y])?;
                let mut before = [0usize; 4];
                for d in 0..r {
                    let (lo, hi) = (p[2 * d], p[2 * d + 1]);
                    if lo < 0 || hi < 0 {
                        return Err(bad("negative padding"));
                    }
                    let dd = 4 - r + d;
                    if in_shape[dd] + lo as usize + hi as usize != out_shape[dd] {
                        return Err(bad(format!("operator {oi}: PAD output shape mismatch")));
                    }
                    before[dd] = lo as usize;
                }
                steps.push(Step::Pad {
                    x,
                    y,
                    in_shape,
                    out_shape,
                    before,
                });
            }
            OpKind::MaxPool2d(o) | OpKind::AveragePool2d(o) => {
                float_out(y)?;
                let x = input(0)?;
                let (in_h, in_w, in_c) = nhwc(&shapes[x], "pooling")?;
                let (out_h, out_w, out_c) = nhwc(&shapes[y], "pooling")?;
                let (pad_top, oh) = window_padding(o.padding, in_h, o.filter_h, o.stride_h, 1);
                let (pad_left, ow) = window_padding(o.padding, in_w, o.filter_w, o.stride_w, 1);
                if (oh, ow, out_c) != (out_h, out_w, in_c) {
                    return Err(bad(format!("operator {oi}: pool output shape mismatch")));
                }
                steps.push(Step::Pool {
                    max: matches!(op.kind, OpKind::MaxPool2d(_)),
                    x,
                    y,
                    geo: Geo {
                        in_h,
                        in_w,
                        in_c,
                        out_h,
                        out_w,
                        out_c,
                        k_h: o.filter_h,
                        k_w: o.filter_w,
                        stride_h: o.stride_h,
                        stride_w: o.stride_w,
                        dil_h: 1,
                        dil_w: 1,
                        pad_top,
                        pad_left,
                    },
                    act: o.activation,
                });
            }
            OpKind::FullyConnected { activation } => {
                float_out(y)?;
                let (x, w, b) = (input(0)?, input(1)?, opt_input(2));
                steps.push(heads::fully_connected(
                    oi,
                    &shapes,
                    x,
                    w,
                    b,
                    y,
                    *activation,
                )?);
            }
            OpKind::Mean { keep_dims } => {
                float_out(y)?;
                let x = input(0)?;
                let axes = int_consts
                    .get(&input(1)?)
                    .ok_or_else(|| TfliteError::Unsupported("MEAN with runtime axes".into()))?;
                steps.push(heads::mean(oi, &shapes, x, axes, y, *keep_dims)?);
            }
            OpKind::Reshape => {
                let x = input(0)?;
                if numel(x) != numel(y) {
                    return Err(bad(format!("operator {oi}: RESHAPE changes the size")));
                }
                if let Some(v) = consts.get(&x).cloned() {
                    consts.insert(y, v);
                } else {
                    steps.push(Step::Reshape { x, y });
                }
            }
            OpKind::Concatenation { axis, activation } => {
                float_out(y)?;
                let r = shapes[y].len() as i32;
                let ax = if *axis < 0 { axis + r } else { *axis };
                if ax < 0 || ax >= r {
                    return Err(bad(format!(
                        "operator {oi}: concat axis {axis} out of range"
                    )));
                }
                let ax = ax as usize;
                let ys = &shapes[y];
                let outer: usize = ys[..ax].iter().product();
                let inner: usize = ys[ax + 1..].iter().product();
                let mut parts = Vec::new();
                let mut total = 0;
                for k in 0..op.inputs.len() {
                    let t = input(k)?;
                    let s = &shapes[t];
                    if s.len() != ys.len() || (0..s.len()).any(|d| d != ax && s[d] != ys[d]) {
                        return Err(bad(format!("operator {oi}: concat shapes differ")));
                    }
                    parts.push((t, s[ax]));
                    total += s[ax];
                }
                if total != ys[ax] {
                    return Err(bad(format!("operator {oi}: concat sizes do not add up")));
                }
                steps.push(Step::Concat {
                    parts,
                    y,
                    outer,
                    inner,
                    out_axis: ys[ax],
                    act: *activation,
                });
            }
            OpKind::ResizeBilinear {
                align_corners,
                half_pixel_centers,
            } => {
                float_out(y)?;
                let x = input(0)?;
                let (in_h, in_w, in_c) = nhwc(&shapes[x], "RESIZE_BILINEAR")?;
                let (out_h, out_w, out_c) = nhwc(&shapes[y], "RESIZE_BILINEAR")?;
                if in_c != out_c {
                    return Err(bad("RESIZE_BILINEAR changes channels"));
                }
                steps.push(Step::Resize {
                    x,
                    y,
                    geo: Geo {
                        in_h,
                        in_w,
                        in_c,
                        out_h,
                        out_w,
                        out_c,
                        ..Geo::default()
                    },
                    align_corners: *align_corners,
                    half_pixel_centers: *half_pixel_centers,
                });
            }
            OpKind::DepthToSpace { block_size } => {
                float_out(y)?;
                let x = input(0)?;
                let (in_h, in_w, in_c) = nhwc(&shapes[x], "DEPTH_TO_SPACE")?;
                let (out_h, out_w, out_c) = nhwc(&shapes[y], "DEPTH_TO_SPACE")?;
                let bs = *block_size;
                if out_h != in_h * bs || out_w != in_w * bs || out_c * bs * bs != in_c {
                    return Err(bad("DEPTH_TO_SPACE shape mismatch"));
                }
                steps.push(Step::DepthToSpace {
                    x,
                    y,
                    geo: Geo {
                        in_h,
                        in_w,
                        in_c,
                        out_h,
                        out_w,
                        out_c,
                        ..Geo::default()
                    },
                    block: bs,
                });
            }
        }
    }
    for st in &steps {
        for t in st.reads().into_iter().chain(std::iter::once(st.writes())) {
            if numel(t) == 0 {
                return Err(TfliteError::Unsupported(format!(
                    "empty tensor {t} ({})",
                    g.tensors[t].name
                )));
            }
        }
    }
    // Every tensor a step reads must be a constant, a graph input or written by an earlier step.
    let mut known = vec![false; n];
    for &i in &g.inputs {
        known[i] = true;
    }
    for &c in consts.keys() {
        known[c] = true;
    }
    for s in &steps {
        for r in s.reads() {
            if !known[r] {
                return Err(bad(format!(
                    "tensor {r} ({}) is read before it is written",
                    g.tensors[r].name
                )));
            }
        }
        known[s.writes()] = true;
    }
    for &o in &g.outputs {
        if !known[o] {
            return Err(bad(format!("graph output {o} is never written")));
        }
    }
    Ok(Plan {
        consts,
        steps,
        shapes,
        inputs: g.inputs.clone(),
        outputs: g.outputs.clone(),
    })
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
