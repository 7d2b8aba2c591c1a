//! Fusing a lowered plan: activations, PRELU and residual ADDs folded into the epilogue
//! of the convolution that produces their input.

use super::*;

fn writes_mut(s: &mut Step) -> &mut usize {
    match s {
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
        | Step::DepthToSpace { y, .. } => y,
    }
}

/// Appends an activation to an epilogue; false when there is no free slot.
fn push_act(epi: &mut Epilogue, a: Act) -> bool {
    if epi.residual.is_none() && epi.act1 == Act::None {
        epi.act1 = a;
    } else if epi.act2 == Act::None {
        epi.act2 = a;
    } else {
        return false;
    }
    true
}

/// Folds cheap neighbours into convolutions, to save dispatches and memory passes:
/// - a spatial-only PAD feeding only a convolution becomes the convolution's padding;
/// - an activation operator (RELU, RELU6, HARD_SWISH, LOGISTIC, TANH, per-channel PRELU)
///   applied to a convolution's only consumer moves into its epilogue;
/// - a same-shape ADD of a convolution's output and an earlier tensor becomes the epilogue's
///   residual (a channel-only PAD of that tensor, used nowhere else, folds away too).
///
/// The CPU reference runs the unfused plan, so kernel tests check the fusion too.
pub(crate) fn fuse(plan: &mut Plan) {
    let mut steps: Vec<Option<Step>> = plan.steps.drain(..).map(Some).collect();
    // Consumers of each tensor (step indices), graph outputs counted as a consumer.
    let mut consumers: HashMap<usize, usize> = HashMap::new();
    let mut producer: HashMap<usize, usize> = HashMap::new();
    for (i, s) in steps.iter().enumerate() {
        let s = s.as_ref().expect("fresh");
        for r in s.reads() {
            *consumers.entry(r).or_default() += 1;
        }
        producer.insert(s.writes(), i);
    }
    for &o in &plan.outputs {
        *consumers.entry(o).or_default() += 1;
    }
    let single = |consumers: &HashMap<usize, usize>, t: usize| consumers.get(&t) == Some(&1);
    // The index of the (live) step reading `t`, after `from`.
    let reader = |steps: &[Option<Step>], t: usize, from: usize| {
        (from + 1..steps.len()).find(|&j| steps[j].as_ref().is_some_and(|s| s.reads().contains(&t)))
    };
    for i in 0..steps.len() {
        let Some(Step::Conv { .. } | Step::Depthwise { .. }) = &steps[i] else {
            continue;
        };
        // 1. Spatial PAD on the input.
        let x = match &steps[i] {
            Some(Step::Conv { x, .. } | Step::Depthwise { x, .. }) => *x,
            _ => unreachable!(),
        };
        if let Some(&k) = producer.get(&x) {
            if let Some(Step::Pad {
                x: px,
                in_shape,
                out_shape,
                before,
                ..
            }) = &steps[k]
            {
                let spatial_only = in_shape[0] == out_shape[0] && in_shape[3] == out_shape[3];
                if spatial_only && single(&consumers, x) && in_shape[0] == 1 {
                    let (px, ih, iw, bt, bl) =
                        (*px, in_shape[1], in_shape[2], before[1], before[2]);
                    if let Some(Step::Conv { x, geo, .. } | Step::Depthwise { x, geo, .. }) =
                        &mut steps[i]
                    {
                        *x = px;
                        geo.in_h = ih;
                        geo.in_w = iw;
                        geo.pad_top += bt;
                        geo.pad_left += bl;
                    }
                    steps[k] = None;
                }
            }
        }
        // 2. Activations and residual adds on the output.
        loop {
            let (y, epi, out_c) = match &steps[i] {
                Some(Step::Conv { y, epi, geo, .. } | Step::Depthwise { y, epi, geo, .. }) => {
                    (*y, *epi, geo.out_c)
                }
                _ => unreachable!(),
            };
            if !single(&consumers, y) {
                break;
            }
            let Some(j) = reader(&steps, y, i) else {
                break;
            };
            let mut new_epi = epi;
            let mut drop_pad = None;
            let next_y = match steps[j].as_ref() {
                Some(Step::Unary { op, y: uy, .. }) => {
                    if !push_act(&mut new_epi, Act::from_unary(*op)) {
                        break;
                    }
                    *uy
                }
                Some(Step::Binary {
                    op: BinOp::Prelu,
                    a,
                    b,
                    y: by,
                    b_shape,
                    ..
                }) if *a == y
                    && plan.consts.contains_key(b)
                    && b_shape[..3] == [1, 1, 1]
                    && b_shape[3] == out_c =>
                {
                    if epi.alpha.is_some() || !push_act(&mut new_epi, Act::Prelu) {
                        break;
                    }
                    new_epi.alpha = Some(*b);
                    *by
                }
                Some(Step::Binary {
                    op: BinOp::Add,
                    a,
                    b,
                    y: by,
                    a_shape,
                    b_shape,
                    out_shape,
                    act,
                }) if a_shape == out_shape && b_shape == out_shape && a != b => {
                    if epi.act2 != Act::None || epi.residual.is_some() {
                        break;
                    }
                    let other = if *a == y { *b } else { *a };
                    let mut res = (other, out_c);
                    if let Some(&k) = producer.get(&other) {
                        if let Some(Step::Pad {
                            x: px,
                            in_shape,
                            out_shape: ps,
                            before,
                            ..
                        }) = &steps[k]
                        {
                            if in_shape[..3] == ps[..3]
                                && *before == [0, 0, 0, 0]
                                && single(&consumers, other)
                            {
                                res = (*px, in_shape[3]);
                                drop_pad = Some(k);
                            }
                        }
                    }
                    // The residual must exist before step i runs.
                    if producer.get(&res.0).is_some_and(|&k| k > i) {
                        break;
                    }
                    new_epi.residual = Some(res);
                    new_epi.act2 = Act::from_fused(*act);
                    *by
                }
                _ => break,
            };
            if let Some(k) = drop_pad {
                steps[k] = None;
            }
            steps[j] = None;
            if let Some(Step::Conv { epi, .. } | Step::Depthwise { epi, .. }) = &mut steps[i] {
                *epi = new_epi;
            }
            if let Some(s) = steps[i].as_mut() {
                *writes_mut(s) = next_y;
            }
            producer.insert(next_y, i);
        }
    }
    plan.steps = steps.into_iter().flatten().collect();
}
