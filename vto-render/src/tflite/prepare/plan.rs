//! The lowered program: its steps (operators with their geometry and fused epilogues) and
//! the tensors they read and write.

use super::*;

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
    pub(super) fn from_unary(u: UnOp) -> Act {
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
    pub(super) fn fused(a: Activation) -> Epilogue {
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
