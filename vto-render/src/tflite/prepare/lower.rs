//! Lowering a parsed graph to a [`Plan`]: operator by operator, shapes checked and window
//! geometry worked out.

use super::*;

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
                // Its output must hold as many values as its shape says (a kernel reads it
                // by that shape: a 24-value bias declared as 48 panicked in the packing).
                if v.len() != numel(y) {
                    return Err(bad(format!(
                        "operator {oi}: DEQUANTIZE gives {} values, its output's shape says {}",
                        v.len(),
                        numel(y)
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
