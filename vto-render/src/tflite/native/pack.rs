//! Packing a model for the native executor: lowering, fusing, planning the buffers and
//! laying out every kernel's weights once ([`Packed::new`]).

use super::*;

fn act_of(a: Activation) -> Act {
    Act::from_fused(a)
}

impl Packed {
    /// Lowers, fuses and plans `model` and packs its weights.
    pub(super) fn new(model: &Model) -> Result<Packed, TfliteError> {
        let mut plan = lower(model.graph())?;
        fuse(&mut plan);
        let alloc = plan_buffers(&plan);
        let buf_lens: Vec<usize> = alloc.sizes.iter().map(|&b| (b / 4) as usize).collect();
        let mut consts: Vec<Vec<f32>> = Vec::new();
        let mut const_index = std::collections::HashMap::new();
        let mut src = |t: usize| -> Src {
            if let Some(c) = plan.consts.get(&t) {
                let i = *const_index.entry(t).or_insert_with(|| {
                    consts.push(c.clone());
                    consts.len() - 1
                });
                Src::Const(i)
            } else {
                Src::Buf(alloc.slot[&t], plan.numel(t))
            }
        };
        let constant = |t: usize, what: &str| -> Result<&Vec<f32>, TfliteError> {
            plan.consts
                .get(&t)
                .ok_or_else(|| TfliteError::Unsupported(format!("{what} computed at run time")))
        };
        let mut kernels = Vec::new();
        let mut scratch = 0usize;
        for step in &plan.steps {
            let y = step.writes();
            let kernel = match step {
                Step::Reshape { .. } => continue,
                Step::Conv {
                    x, w, b, geo, epi, ..
                } => {
                    let pointwise = geo.k_h == 1
                        && geo.k_w == 1
                        && geo.stride_h == 1
                        && geo.stride_w == 1
                        && geo.pad_top == 0
                        && geo.pad_left == 0
                        && geo.in_h == geo.out_h
                        && geo.in_w == geo.out_w;
                    let k = geo.k_h * geo.k_w * geo.in_c;
                    // Measured per layer (`--profile --all`, one thread, 2026-11-24): the
                    // register-blocked kernel with patches gathered per tile takes 0.5× the
                    // im2col GEMM on the mesh and pose heads (one output pixel: the GEMM packs
                    // all the weights on every run) and 0.7× on the RGB stems, against the
                    // earlier direct loop (one accumulator per 8 outputs, latency-bound).
                    let gather = !pointwise && geo.out_c >= SMALL_N && k <= GATHER_LEN;
                    let direct = !pointwise && !gather && k <= DIRECT_MAX_K && geo.out_c < SMALL_N;
                    if !pointwise && !direct && !gather {
                        scratch = scratch.max(geo.out_h * geo.out_w * k);
                    }
                    let mut wv = constant(*w, "convolution weights")?.clone();
                    let bias = b
                        .map(|b| constant(b, "convolution bias").cloned())
                        .transpose()?;
                    let alpha = epi
                        .alpha
                        .map(|a| constant(a, "PRELU slopes").cloned())
                        .transpose()?
                        .unwrap_or_default();
                    let pw = ((pointwise && Pointwise::wins(geo.in_c, geo.out_c)) || gather)
                        .then(|| Pointwise::pack(&wv, k, geo.out_c, bias.as_deref(), &alpha));
                    if pw.is_some() {
                        wv = Vec::new();
                    }
                    Kernel::Conv {
                        x: src(*x),
                        w: wv,
                        direct,
                        pw,
                        geo: *geo,
                        epi: Epi {
                            bias,
                            act1: epi.act1,
                            residual: epi.residual.map(|(r, rc)| (src(r), rc)),
                            act2: epi.act2,
                            alpha,
                        },
                        pointwise,
                    }
                }
                Step::Depthwise {
                    x,
                    w,
                    b,
                    geo,
                    mult,
                    epi,
                    ..
                } => Kernel::Depthwise {
                    x: src(*x),
                    w: constant(*w, "depthwise weights")?.clone(),
                    geo: *geo,
                    mult: *mult,
                    epi: Epi {
                        bias: b
                            .map(|b| constant(b, "depthwise bias").cloned())
                            .transpose()?,
                        act1: epi.act1,
                        residual: epi.residual.map(|(r, rc)| (src(r), rc)),
                        act2: epi.act2,
                        alpha: epi
                            .alpha
                            .map(|a| constant(a, "PRELU slopes").cloned())
                            .transpose()?
                            .unwrap_or_default(),
                    },
                },
                Step::TransposeConv { x, w, b, geo, .. } => {
                    let wt = constant(*w, "transpose convolution weights")?;
                    let n = geo.k_h * geo.k_w * geo.out_c;
                    let mut packed = vec![0.0; n * geo.in_c];
                    for oc in 0..geo.out_c {
                        for k in 0..geo.k_h * geo.k_w {
                            let src = &wt[(oc * geo.k_h * geo.k_w + k) * geo.in_c..][..geo.in_c];
                            packed[(k * geo.out_c + oc) * geo.in_c..][..geo.in_c]
                                .copy_from_slice(src);
                        }
                    }
                    scratch = scratch.max(geo.in_h * geo.in_w * n);
                    Kernel::TransposeConv {
                        x: src(*x),
                        w: packed,
                        bias: b
                            .map(|b| constant(b, "transpose convolution bias").cloned())
                            .transpose()?,
                        geo: *geo,
                    }
                }
                Step::Binary {
                    op,
                    a,
                    b,
                    a_shape,
                    b_shape,
                    out_shape,
                    act,
                    ..
                } => Kernel::Binary {
                    op: *op,
                    a: src(*a),
                    b: src(*b),
                    a_shape: *a_shape,
                    b_shape: *b_shape,
                    out_shape: *out_shape,
                    act: act_of(*act),
                },
                Step::Unary { op, x, .. } => Kernel::Unary {
                    op: *op,
                    x: src(*x),
                },
                Step::Pad {
                    x,
                    in_shape,
                    out_shape,
                    before,
                    ..
                } => Kernel::Pad {
                    x: src(*x),
                    in_shape: *in_shape,
                    out_shape: *out_shape,
                    before: *before,
                },
                Step::Pool {
                    max, x, geo, act, ..
                } => Kernel::Pool {
                    max: *max,
                    x: src(*x),
                    geo: *geo,
                    act: act_of(*act),
                },
                Step::Concat {
                    parts,
                    outer,
                    inner,
                    out_axis,
                    act,
                    ..
                } => Kernel::Concat {
                    parts: parts.iter().map(|&(t, len)| (src(t), len)).collect(),
                    outer: *outer,
                    inner: *inner,
                    out_axis: *out_axis,
                    act: act_of(*act),
                },
                Step::Resize {
                    x,
                    geo,
                    align_corners,
                    half_pixel_centers,
                    ..
                } => Kernel::Resize {
                    x: src(*x),
                    geo: *geo,
                    align_corners: *align_corners,
                    half_pixel_centers: *half_pixel_centers,
                },
                Step::DepthToSpace { x, geo, block, .. } => Kernel::DepthToSpace {
                    x: src(*x),
                    geo: *geo,
                    block: *block,
                },
            };
            kernels.push((kernel, alloc.slot[&y], plan.numel(y)));
        }
        let inputs = plan
            .inputs
            .iter()
            .map(|&t| (alloc.slot[&t], plan.numel(t)))
            .collect();
        let outputs = outputs_of(&plan, &alloc.slot);
        Ok(Packed {
            kernels,
            consts,
            buf_lens,
            scratch_len: scratch,
            inputs,
            outputs,
        })
    }
}

fn outputs_of(plan: &Plan, slot: &std::collections::HashMap<usize, usize>) -> Vec<Output> {
    plan.outputs
        .iter()
        .map(|&t| match plan.consts.get(&t) {
            Some(c) => Output::Const(c.clone()),
            None => Output::Buf(slot[&t], plan.numel(t)),
        })
        .collect()
}
