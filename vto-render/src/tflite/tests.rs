//! Kernel tests: every WGSL kernel against the CPU reference on small random graphs with odd
//! sizes, SAME/VALID padding, strides 2 and dilation; plus shader validation and error paths.
//!
//! Tolerance: |gpu - cpu| <= 1e-4 * max(1, |cpu|) (float32; only the summation order differs).

use super::cpu::run_reference;
use super::schema::*;
use super::{CpuArena, CpuExecutor, CpuPlan};
use super::{Executor, Model, TfliteError};
use crate::gpu::GpuContext;

/// Builds small graphs in memory.
struct G {
    g: Graph,
}

impl G {
    fn new() -> Self {
        G {
            g: Graph {
                tensors: Vec::new(),
                buffers: vec![Vec::new()],
                operators: Vec::new(),
                inputs: Vec::new(),
                outputs: Vec::new(),
            },
        }
    }
    fn tensor(&mut self, shape: &[usize]) -> usize {
        self.g.tensors.push(Tensor {
            name: format!("t{}", self.g.tensors.len()),
            shape: shape.to_vec(),
            ty: TensorType::F32,
            buffer: 0,
            sparsity: None,
        });
        self.g.tensors.len() - 1
    }
    fn input(&mut self, shape: &[usize]) -> usize {
        let t = self.tensor(shape);
        self.g.inputs.push(t);
        t
    }
    fn raw_const(&mut self, shape: &[usize], ty: TensorType, bytes: Vec<u8>) -> usize {
        self.g.buffers.push(bytes);
        let t = self.tensor(shape);
        self.g.tensors[t].ty = ty;
        self.g.tensors[t].buffer = self.g.buffers.len() - 1;
        t
    }
    fn constant(&mut self, shape: &[usize], rng: &mut Rng) -> usize {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| rng.next()).collect();
        self.raw_const(shape, TensorType::F32, bytemuck::cast_slice(&data).to_vec())
    }
    fn const_i32(&mut self, shape: &[usize], data: &[i32]) -> usize {
        self.raw_const(shape, TensorType::I32, bytemuck::cast_slice(data).to_vec())
    }
    fn op(&mut self, kind: OpKind, inputs: &[usize], out_shape: &[usize]) -> usize {
        let y = self.tensor(out_shape);
        self.g.operators.push(Operator {
            kind,
            inputs: inputs.iter().map(|&i| Some(i)).collect(),
            outputs: vec![y],
        });
        y
    }
    fn output(&mut self, t: usize) {
        self.g.outputs.push(t);
    }
    fn model(self) -> Model {
        Model::from_graph(self.g)
    }
}

/// xorshift32, values in [-1, 1).
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
}

fn ctx() -> std::sync::Arc<GpuContext> {
    GpuContext::shared().expect("a wgpu adapter (lavapipe in CI)")
}

/// Runs `model` on random inputs on the GPU and the CPU reference and compares; returns the
/// number of compared values.
fn check(model: &Model, seed: u32) -> usize {
    let mut rng = Rng(seed);
    let inputs: Vec<Vec<f32>> = model
        .inputs()
        .iter()
        .map(|i| {
            (0..i.shape.iter().product::<usize>())
                .map(|_| rng.next() * 3.0)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
    let want = run_reference(model, &refs).expect("cpu reference");
    let mut exec = Executor::new(ctx(), model).expect("executor");
    // Twice: buffers are reused across runs.
    let _ = exec.run(&refs).expect("gpu run");
    let got = exec.run(&refs).expect("gpu run");
    let mut native = CpuExecutor::new(model).expect("native executor");
    let _ = native.run(&refs).expect("native run");
    let fast = native.run(&refs).expect("native run");
    let mut n = 0;
    for (name, got) in [("gpu", &got), ("native", &fast)] {
        n = 0;
        assert_eq!(got.len(), want.len(), "{name}: output count");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.len(), w.len(), "{name}: output {k} length");
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                let tol = 1e-4 * b.abs().max(1.0);
                assert!(
                    (a - b).abs() <= tol,
                    "output {k}[{i}]: {name} {a} vs reference {b}"
                );
                n += 1;
            }
        }
    }
    n
}

fn conv_opts(padding: Padding, stride: usize, dilation: usize, act: Activation) -> ConvOptions {
    ConvOptions {
        padding,
        stride_h: stride,
        stride_w: stride,
        dilation_h: dilation,
        dilation_w: dilation,
        depth_multiplier: 1,
        activation: act,
    }
}

fn out_size(padding: Padding, n: usize, k: usize, s: usize, d: usize) -> usize {
    super::prepare::window_padding(padding, n, k, s, d).1
}

#[test]
fn conv2d_matches_cpu() {
    let mut rng = Rng(7);
    let cases = [
        // (h, w, in_c, out_c, k, stride, dilation, padding, activation)
        (13, 11, 5, 7, 3, 1, 1, Padding::Same, Activation::None),
        (13, 11, 3, 9, 3, 2, 1, Padding::Same, Activation::Relu),
        (14, 9, 4, 8, 5, 2, 1, Padding::Same, Activation::Relu6),
        (15, 10, 6, 5, 3, 2, 1, Padding::Valid, Activation::ReluN1To1),
        (12, 13, 5, 6, 3, 1, 2, Padding::Same, Activation::Tanh),
        (9, 7, 10, 13, 1, 1, 1, Padding::Valid, Activation::None),
        (2, 2, 8, 3, 2, 1, 1, Padding::Valid, Activation::None),
        // Wide layers (conv2d_wide.wgsl), with a partial last block of 16 channels.
        (11, 13, 7, 40, 3, 2, 1, Padding::Same, Activation::Relu6),
        (5, 17, 9, 33, 1, 1, 1, Padding::Valid, Activation::None),
        (3, 3, 16, 64, 3, 1, 1, Padding::Valid, Activation::None),
        // Direct convolutions: an RGB stem whose 12 outputs end in an overlapping block of
        // eight, and a one-channel head (dot products).
        (17, 19, 3, 12, 3, 2, 1, Padding::Same, Activation::Relu),
        (20, 21, 8, 1, 3, 1, 1, Padding::Same, Activation::None),
    ];
    for (i, &(h, w, ic, oc, k, s, d, pad, act)) in cases.iter().enumerate() {
        let mut g = G::new();
        let x = g.input(&[1, h, w, ic]);
        let wt = g.constant(&[oc, k, k, ic], &mut rng);
        let b = g.constant(&[oc], &mut rng);
        let (oh, ow) = (out_size(pad, h, k, s, d), out_size(pad, w, k, s, d));
        let y = g.op(
            OpKind::Conv2d(conv_opts(pad, s, d, act)),
            &[x, wt, b],
            &[1, oh, ow, oc],
        );
        g.output(y);
        assert!(check(&g.model(), 100 + i as u32) > 0, "case {i}");
    }
}

#[test]
fn depthwise_matches_cpu() {
    let mut rng = Rng(8);
    let cases = [
        // (h, w, c, mult, k, stride, dilation, padding)
        (13, 11, 5, 1, 3, 1, 1, Padding::Same),
        (13, 12, 6, 1, 3, 2, 1, Padding::Same),
        (11, 9, 3, 2, 5, 2, 1, Padding::Valid),
        (10, 10, 7, 1, 3, 1, 2, Padding::Same),
        (16, 16, 8, 1, 5, 1, 1, Padding::Same),
        // Stride 1 over rows longer than one run of tiled weights (256 / c pixels), with a
        // channel count that is not a multiple of eight.
        (9, 40, 20, 1, 3, 1, 1, Padding::Same),
        (7, 30, 12, 1, 5, 1, 1, Padding::Valid),
    ];
    for (i, &(h, w, c, m, k, s, d, pad)) in cases.iter().enumerate() {
        let mut g = G::new();
        let x = g.input(&[1, h, w, c]);
        let wt = g.constant(&[1, k, k, c * m], &mut rng);
        let b = g.constant(&[c * m], &mut rng);
        let (oh, ow) = (out_size(pad, h, k, s, d), out_size(pad, w, k, s, d));
        let mut o = conv_opts(pad, s, d, Activation::Relu6);
        o.depth_multiplier = m;
        let y = g.op(OpKind::DepthwiseConv2d(o), &[x, wt, b], &[1, oh, ow, c * m]);
        g.output(y);
        assert!(check(&g.model(), 200 + i as u32) > 0, "case {i}");
    }
}

#[test]
fn transpose_conv_matches_cpu() {
    let mut rng = Rng(9);
    for (i, &(h, w, ic, oc, k, s, pad)) in [
        (7, 5, 6, 1, 2, 2, Padding::Same),
        (6, 7, 5, 6, 3, 2, Padding::Same),
        (5, 5, 3, 2, 3, 1, Padding::Valid),
    ]
    .iter()
    .enumerate()
    {
        let mut g = G::new();
        let x = g.input(&[1, h, w, ic]);
        let wt = g.constant(&[oc, k, k, ic], &mut rng);
        let b = g.constant(&[oc], &mut rng);
        let (oh, ow) = match pad {
            Padding::Same => (h * s, w * s),
            Padding::Valid => ((h - 1) * s + k, (w - 1) * s + k),
        };
        let y = g.op(
            OpKind::TransposeConvBias {
                padding: pad,
                stride_h: s,
                stride_w: s,
            },
            &[x, wt, b],
            &[1, oh, ow, oc],
        );
        g.output(y);
        assert!(check(&g.model(), 300 + i as u32) > 0, "case {i}");
    }
}

#[test]
fn binary_ops_broadcast_like_cpu() {
    let mut rng = Rng(10);
    let mut g = G::new();
    let a = g.input(&[1, 5, 7, 6]);
    let b = g.input(&[1, 5, 7, 6]);
    let s = g.op(OpKind::Add(Activation::Relu), &[a, b], &[1, 5, 7, 6]);
    let se = g.input(&[1, 1, 1, 6]);
    let m = g.op(OpKind::Mul(Activation::None), &[s, se], &[1, 5, 7, 6]);
    let alpha = g.constant(&[1, 1, 6], &mut rng);
    let p = g.op(OpKind::Prelu, &[a, alpha], &[1, 5, 7, 6]);
    let row = g.constant(&[7, 1], &mut rng);
    let r = g.op(OpKind::Add(Activation::Relu6), &[p, row], &[1, 5, 7, 6]);
    g.output(m);
    g.output(r);
    assert_eq!(check(&g.model(), 400), 2 * 5 * 7 * 6);
}

#[test]
fn unary_ops_match_cpu() {
    let mut g = G::new();
    let x = g.input(&[1, 3, 5, 7]);
    for kind in [
        OpKind::Relu,
        OpKind::Relu6,
        OpKind::Logistic,
        OpKind::HardSwish,
        OpKind::Tanh,
    ] {
        let y = g.op(kind, &[x], &[1, 3, 5, 7]);
        g.output(y);
    }
    assert_eq!(check(&g.model(), 500), 5 * 105);
}

#[test]
fn pad_pool_reshape_concat_match_cpu() {
    let mut g = G::new();
    let x = g.input(&[1, 9, 7, 5]);
    let pc = g.const_i32(&[4, 2], &[0, 0, 0, 0, 0, 0, 0, 3]);
    let ch = g.op(OpKind::Pad, &[x, pc], &[1, 9, 7, 8]);
    let ps = g.const_i32(&[4, 2], &[0, 0, 1, 2, 0, 1, 0, 0]);
    let sp = g.op(OpKind::Pad, &[ch, ps], &[1, 12, 8, 8]);
    let pool = |padding, k, s, act| PoolOptions {
        padding,
        stride_h: s,
        stride_w: s,
        filter_h: k,
        filter_w: k,
        activation: act,
    };
    let mx = g.op(
        OpKind::MaxPool2d(pool(Padding::Same, 3, 2, Activation::None)),
        &[sp],
        &[1, 6, 4, 8],
    );
    let av = g.op(
        OpKind::AveragePool2d(pool(Padding::Same, 3, 2, Activation::Relu)),
        &[sp],
        &[1, 6, 4, 8],
    );
    let mv = g.op(
        OpKind::MaxPool2d(pool(Padding::Valid, 2, 2, Activation::None)),
        &[x],
        &[1, 4, 3, 5],
    );
    let gap = g.op(
        OpKind::AveragePool2d(PoolOptions {
            padding: Padding::Valid,
            stride_h: 1,
            stride_w: 1,
            filter_h: 9,
            filter_w: 7,
            activation: Activation::None,
        }),
        &[x],
        &[1, 1, 1, 5],
    );
    let cat_c = g.op(
        OpKind::Concatenation {
            axis: -1,
            activation: Activation::None,
        },
        &[mx, av],
        &[1, 6, 4, 16],
    );
    let r1 = g.op(OpKind::Reshape, &[mx], &[1, 24, 8]);
    let r2 = g.op(OpKind::Reshape, &[mv], &[1, 12, 5]);
    let pad8 = g.const_i32(&[3, 2], &[0, 0, 0, 0, 0, 3]);
    let r2p = g.op(OpKind::Pad, &[r2, pad8], &[1, 12, 8]);
    let cat_a = g.op(
        OpKind::Concatenation {
            axis: 1,
            activation: Activation::Relu,
        },
        &[r1, r2p],
        &[1, 36, 8],
    );
    for t in [cat_c, cat_a, gap] {
        g.output(t);
    }
    assert_eq!(check(&g.model(), 600), 6 * 4 * 16 + 36 * 8 + 5);
}

#[test]
fn resize_and_depth_to_space_match_cpu() {
    let mut g = G::new();
    let x = g.input(&[1, 5, 6, 3]);
    let size = g.const_i32(&[2], &[12, 9]);
    let mut outs = Vec::new();
    for (align_corners, half_pixel_centers) in [(false, false), (true, false), (false, true)] {
        let y = g.op(
            OpKind::ResizeBilinear {
                align_corners,
                half_pixel_centers,
            },
            &[x, size],
            &[1, 12, 9, 3],
        );
        outs.push(y);
    }
    let d = g.input(&[1, 3, 4, 8]);
    let y = g.op(OpKind::DepthToSpace { block_size: 2 }, &[d], &[1, 6, 8, 2]);
    outs.push(y);
    for o in outs {
        g.output(o);
    }
    assert_eq!(check(&g.model(), 700), 3 * 12 * 9 * 3 + 6 * 8 * 2);
}

#[test]
fn chains_reuse_buffers_correctly() {
    // A residual chain: the skip input must survive while later tensors reuse buffers.
    let mut rng = Rng(11);
    let mut g = G::new();
    let x = g.input(&[1, 8, 8, 4]);
    let mut cur = x;
    for _ in 0..4 {
        let w = g.constant(&[4, 3, 3, 4], &mut rng);
        let b = g.constant(&[4], &mut rng);
        let c = g.op(
            OpKind::Conv2d(conv_opts(Padding::Same, 1, 1, Activation::Relu)),
            &[cur, w, b],
            &[1, 8, 8, 4],
        );
        let dw = g.constant(&[1, 3, 3, 4], &mut rng);
        let db = g.constant(&[4], &mut rng);
        let d = g.op(
            OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 1, 1, Activation::None)),
            &[c, dw, db],
            &[1, 8, 8, 4],
        );
        cur = g.op(OpKind::Add(Activation::None), &[d, cur], &[1, 8, 8, 4]);
    }
    g.output(cur);
    let model = g.model();
    assert_eq!(check(&model, 800), 256);
    let exec = Executor::new(ctx(), &model).expect("executor");
    // 13 activation tensors of 1 KiB; liveness sharing needs at most 4 buffers.
    assert!(
        exec.activation_bytes() <= 4 * 1024,
        "{}",
        exec.activation_bytes()
    );
}

#[test]
fn float16_weights_are_dequantized_at_load() {
    let mut g = G::new();
    let x = g.input(&[1, 4, 4, 2]);
    // 1x1 conv, weights 1.0, -2.0, 0.5, 0.25 as float16.
    let halves: [u16; 4] = [0x3c00, 0xc000, 0x3800, 0x3400];
    let w16 = g.raw_const(
        &[2, 1, 1, 2],
        TensorType::F16,
        bytemuck::cast_slice(&halves).to_vec(),
    );
    let w = g.op(OpKind::Dequantize, &[w16], &[2, 1, 1, 2]);
    let y = g.op(
        OpKind::Conv2d(conv_opts(Padding::Valid, 1, 1, Activation::None)),
        &[x, w],
        &[1, 4, 4, 2],
    );
    g.output(y);
    let model = g.model();
    let input: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let out = Executor::new(ctx(), &model)
        .expect("executor")
        .run(&[&input])
        .expect("run");
    // Pixel 1: x = (2, 3) → (2 - 6, 1 + 0.75).
    assert_eq!(&out[0][2..4], &[-4.0, 1.75]);
    assert_eq!(check(&model, 900), 32);
}

#[test]
fn unsupported_operator_is_named() {
    let mut g = G::new();
    let x = g.input(&[1, 4]);
    let y = g.op(
        OpKind::Unsupported {
            name: "SOFTMAX".into(),
        },
        &[x],
        &[1, 4],
    );
    g.output(y);
    match Executor::new(ctx(), &g.model()) {
        Err(TfliteError::UnsupportedOperator { name }) => assert_eq!(name, "SOFTMAX"),
        other => panic!("expected UnsupportedOperator, got {other:?}"),
    }
}

#[test]
fn wrong_inputs_are_errors() {
    let mut g = G::new();
    let x = g.input(&[1, 2, 2, 1]);
    let y = g.op(OpKind::Relu, &[x], &[1, 2, 2, 1]);
    g.output(y);
    let mut exec = Executor::new(ctx(), &g.model()).expect("executor");
    assert!(matches!(exec.run(&[]), Err(TfliteError::BadInput(_))));
    assert!(matches!(
        exec.run(&[&[1.0, 2.0]]),
        Err(TfliteError::BadInput(_))
    ));
    assert_eq!(
        exec.run(&[&[1.0, -2.0, 3.0, -4.0]]).expect("run")[0],
        vec![1.0, 0.0, 3.0, 0.0]
    );
}

#[test]
fn native_executor_rejects_wrong_inputs() {
    let mut g = G::new();
    let x = g.input(&[1, 2, 2, 1]);
    let y = g.op(OpKind::Relu, &[x], &[1, 2, 2, 1]);
    g.output(y);
    let mut exec = CpuExecutor::new(&g.model()).expect("executor");
    assert!(matches!(exec.run(&[]), Err(TfliteError::BadInput(_))));
    assert!(matches!(
        exec.run(&[&[1.0, 2.0]]),
        Err(TfliteError::BadInput(_))
    ));
    assert_eq!(
        exec.run(&[&[1.0, -2.0, 3.0, -4.0]]).expect("run")[0],
        vec![1.0, 0.0, 3.0, 0.0]
    );
}

#[test]
fn layers_large_enough_to_split_over_threads_match_cpu() {
    // Big enough that the native executor splits rows over its thread pool (im2col conv,
    // pointwise conv with a residual, depthwise with PRELU, strided depthwise).
    let mut rng = Rng(13);
    let mut g = G::new();
    let x = g.input(&[1, 37, 35, 16]);
    let w = g.constant(&[32, 3, 3, 16], &mut rng);
    let b = g.constant(&[32], &mut rng);
    let c = g.op(
        OpKind::Conv2d(conv_opts(Padding::Same, 1, 1, Activation::Relu6)),
        &[x, w, b],
        &[1, 37, 35, 32],
    );
    let w1 = g.constant(&[32, 1, 1, 32], &mut rng);
    let c1 = g.op(
        OpKind::Conv2d(conv_opts(Padding::Valid, 1, 1, Activation::None)),
        &[c, w1],
        &[1, 37, 35, 32],
    );
    let s = g.op(OpKind::Add(Activation::Relu), &[c1, c], &[1, 37, 35, 32]);
    let dw = g.constant(&[1, 5, 5, 32], &mut rng);
    let d = g.op(
        OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 1, 1, Activation::None)),
        &[s, dw],
        &[1, 37, 35, 32],
    );
    let alpha = g.constant(&[1, 1, 32], &mut rng);
    let d = g.op(OpKind::Prelu, &[d, alpha], &[1, 37, 35, 32]);
    let dw2 = g.constant(&[1, 3, 3, 32], &mut rng);
    let d2 = g.op(
        OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 2, 1, Activation::None)),
        &[d, dw2],
        &[1, 19, 18, 32],
    );
    g.output(d2);
    let model = g.model();
    assert_eq!(check(&model, 1300), 19 * 18 * 32);
}

#[test]
fn fused_epilogues_match_unfused_cpu() {
    // Patterns the executor folds into convolutions (the CPU reference runs them unfused):
    // spatial PAD → VALID conv, conv → PRELU, conv → HARD_SWISH, depthwise → LOGISTIC,
    // depthwise → RELU → ADD(skip) → RELU, conv → ADD(channel-PAD(skip)) → PRELU.
    let mut rng = Rng(12);
    let mut g = G::new();
    let x = g.input(&[1, 9, 10, 6]);
    let pads = g.const_i32(&[4, 2], &[0, 0, 1, 1, 2, 1, 0, 0]);
    let xp = g.op(OpKind::Pad, &[x, pads], &[1, 11, 13, 6]);
    let w = g.constant(&[8, 3, 3, 6], &mut rng);
    let b = g.constant(&[8], &mut rng);
    let c = g.op(
        OpKind::Conv2d(conv_opts(Padding::Valid, 1, 1, Activation::None)),
        &[xp, w, b],
        &[1, 9, 11, 8],
    );
    let alpha = g.constant(&[1, 1, 8], &mut rng);
    let c = g.op(OpKind::Prelu, &[c, alpha], &[1, 9, 11, 8]);
    let w1 = g.constant(&[8, 1, 1, 8], &mut rng);
    let c1 = g.op(
        OpKind::Conv2d(conv_opts(Padding::Valid, 1, 1, Activation::None)),
        &[c, w1],
        &[1, 9, 11, 8],
    );
    let hs = g.op(OpKind::HardSwish, &[c1], &[1, 9, 11, 8]);
    let dw = g.constant(&[1, 3, 3, 8], &mut rng);
    let d = g.op(
        OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 1, 1, Activation::None)),
        &[hs, dw],
        &[1, 9, 11, 8],
    );
    let d = g.op(OpKind::Relu, &[d], &[1, 9, 11, 8]);
    let s = g.op(OpKind::Add(Activation::None), &[hs, d], &[1, 9, 11, 8]);
    let s = g.op(OpKind::Relu, &[s], &[1, 9, 11, 8]);
    let dw2 = g.constant(&[1, 3, 3, 8], &mut rng);
    let lg = g.op(
        OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 2, 1, Activation::None)),
        &[s, dw2],
        &[1, 5, 6, 8],
    );
    let lg = g.op(OpKind::Logistic, &[lg], &[1, 5, 6, 8]);
    // Residual with fewer channels, zero-extended by a PAD computed after the conv.
    let w2 = g.constant(&[12, 1, 1, 8], &mut rng);
    let c2 = g.op(
        OpKind::Conv2d(conv_opts(Padding::Valid, 1, 1, Activation::None)),
        &[lg, w2],
        &[1, 5, 6, 12],
    );
    let cpad = g.const_i32(&[4, 2], &[0, 0, 0, 0, 0, 0, 0, 4]);
    let skip = g.op(OpKind::Pad, &[lg, cpad], &[1, 5, 6, 12]);
    let r = g.op(OpKind::Add(Activation::None), &[skip, c2], &[1, 5, 6, 12]);
    let alpha2 = g.constant(&[12], &mut rng);
    let r = g.op(OpKind::Prelu, &[r, alpha2], &[1, 5, 6, 12]);
    g.output(r);
    let model = g.model();
    assert_eq!(check(&model, 1000), 5 * 6 * 12);
    // Everything above folds into the five convolutions.
    let exec = Executor::new(ctx(), &model).expect("executor");
    assert_eq!(exec.dispatch_count(), 5);
}

#[test]
fn absurd_graphs_are_errors() {
    // A huge shape, an empty kernel, and an operator reading a tensor nobody writes.
    let mut g = G::new();
    let x = g.input(&[1, 1 << 20, 1 << 20, 3]);
    let y = g.op(OpKind::Relu, &[x], &[1, 1 << 20, 1 << 20, 3]);
    g.output(y);
    assert!(matches!(
        Executor::new(ctx(), &g.model()),
        Err(TfliteError::Malformed(_))
    ));
    let mut g = G::new();
    let mut rng = Rng(1);
    let x = g.input(&[1, 4, 4, 2]);
    let w = g.constant(&[2, 0, 0, 2], &mut rng);
    let y = g.op(
        OpKind::Conv2d(conv_opts(Padding::Same, 1, 1, Activation::None)),
        &[x, w],
        &[1, 4, 4, 2],
    );
    g.output(y);
    assert!(Executor::new(ctx(), &g.model()).is_err());
    let mut g = G::new();
    let x = g.input(&[1, 4]);
    let orphan = g.tensor(&[1, 4]);
    let y = g.op(OpKind::Add(Activation::None), &[x, orphan], &[1, 4]);
    g.output(y);
    assert!(matches!(
        Executor::new(ctx(), &g.model()),
        Err(TfliteError::Malformed(_))
    ));
}

/// MEAN over H and W then FULLY_CONNECTED (+ LOGISTIC, fused into the epilogue), as the
/// hand landmark model's heads: the reference against a direct computation, then every
/// executor against the reference.
#[test]
fn mean_and_fully_connected_match_a_direct_computation() {
    let mut rng = Rng(900);
    let (h, w, c, o) = (7, 5, 11, 6);
    let mut g = G::new();
    let x = g.input(&[1, h, w, c]);
    let axes = g.const_i32(&[2], &[1, 2]);
    let mean = g.op(OpKind::Mean { keep_dims: false }, &[x, axes], &[1, c]);
    let wt = g.constant(&[o, c], &mut rng);
    let b = g.constant(&[o], &mut rng);
    let fc = g.op(
        OpKind::FullyConnected {
            activation: Activation::Relu,
        },
        &[mean, wt, b],
        &[1, o],
    );
    let w1 = g.constant(&[1, c], &mut rng);
    let b1 = g.constant(&[1], &mut rng);
    let flag = g.op(
        OpKind::FullyConnected {
            activation: Activation::None,
        },
        &[mean, w1, b1],
        &[1, 1],
    );
    let prob = g.op(OpKind::Logistic, &[flag], &[1, 1]);
    let axes_neg = g.const_i32(&[2], &[-3, -2]);
    let kept = g.op(
        OpKind::Mean { keep_dims: true },
        &[x, axes_neg],
        &[1, 1, 1, c],
    );
    for t in [fc, prob, kept] {
        g.output(t);
    }
    let model = g.model();
    let input: Vec<f32> = (0..h * w * c).map(|_| rng.next() * 3.0).collect();
    let got = run_reference(&model, &[&input]).expect("reference");
    let consts = |t: usize| -> Vec<f32> {
        let graph = model.graph();
        bytemuck::pod_collect_to_vec(&graph.buffers[graph.tensors[t].buffer])
    };
    let (wv, bv, w1v, b1v) = (consts(wt), consts(b), consts(w1), consts(b1));
    let m: Vec<f32> = (0..c)
        .map(|k| (0..h * w).map(|p| input[p * c + k]).sum::<f32>() / (h * w) as f32)
        .collect();
    let dot = |row: &[f32]| row.iter().zip(&m).map(|(a, b)| a * b).sum::<f32>();
    let want_fc: Vec<f32> = (0..o)
        .map(|j| (dot(&wv[j * c..(j + 1) * c]) + bv[j]).max(0.0))
        .collect();
    let want_prob = 1.0 / (1.0 + (-(dot(&w1v) + b1v[0])).exp());
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
    assert!(
        got[0].iter().zip(&want_fc).all(|(a, b)| close(*a, *b)),
        "{:?} vs {want_fc:?}",
        got[0]
    );
    assert!(close(got[1][0], want_prob), "{} vs {want_prob}", got[1][0]);
    assert!(got[2].iter().zip(&m).all(|(a, b)| close(*a, *b)));
    assert!(
        want_fc.iter().any(|v| *v > 0.0),
        "the test exercises a non-zero output"
    );
    assert_eq!(check(&model, 901), o + 1 + c);
}

#[test]
fn mean_over_channels_is_refused() {
    let mut g = G::new();
    let x = g.input(&[1, 3, 3, 4]);
    let axes = g.const_i32(&[1], &[3]);
    let y = g.op(OpKind::Mean { keep_dims: false }, &[x, axes], &[1, 3, 3]);
    g.output(y);
    let err = Executor::new(ctx(), &g.model()).unwrap_err();
    assert!(
        matches!(&err, TfliteError::Unsupported(m) if m.contains("MEAN")),
        "{err}"
    );
}

#[test]
fn executors_sharing_a_plan_keep_their_own_buffers() {
    let mut rng = Rng(21);
    let mut g = G::new();
    let x = g.input(&[1, 12, 10, 4]);
    let w = g.constant(&[8, 3, 3, 4], &mut rng);
    let c = g.op(
        OpKind::Conv2d(conv_opts(Padding::Same, 1, 1, Activation::Relu)),
        &[x, w],
        &[1, 12, 10, 8],
    );
    let dw = g.constant(&[1, 3, 3, 8], &mut rng);
    let d = g.op(
        OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 1, 1, Activation::None)),
        &[c, dw],
        &[1, 12, 10, 8],
    );
    g.output(d);
    let model = g.model();
    let plan = CpuPlan::new(&model).expect("plan");
    let (mut a, mut b) = (CpuExecutor::from_plan(&plan), CpuExecutor::from_plan(&plan));
    let mut own = CpuExecutor::new(&model).expect("executor");
    let x1: Vec<f32> = (0..480).map(|i| (i % 7) as f32 * 0.3 - 1.0).collect();
    let x2: Vec<f32> = (0..480).map(|i| (i % 5) as f32 * 0.5 - 0.7).collect();
    let first = a.run(&[&x1]).expect("run");
    let other = b.run(&[&x2]).expect("run");
    // `b`'s run did not touch `a`'s buffers, and both agree with an executor of their own.
    assert_eq!(a.run(&[&x1]).expect("run"), first);
    assert_eq!(own.run(&[&x2]).expect("run"), other);
    assert_ne!(first, other);
    assert!(a.weight_bytes() > 0);
    assert_eq!(a.weight_bytes(), own.weight_bytes());
    // One profile entry per kernel, each named after its operator.
    let profile = a.profile(&[&x1]).expect("profile");
    assert_eq!(profile.len(), a.kernel_count());
    assert!(profile[0].0.starts_with("conv"), "{:?}", profile[0]);
    assert!(profile.iter().all(|(_, ms)| *ms >= 0.0));
}

#[test]
fn executors_of_different_models_share_one_arena() {
    let mut rng = Rng(22);
    let model = |rng: &mut Rng, h: usize, c: usize| {
        let mut g = G::new();
        let x = g.input(&[1, h, h, 3]);
        let w = g.constant(&[c, 3, 3, 3], rng);
        let y = g.op(
            OpKind::Conv2d(conv_opts(Padding::Same, 1, 1, Activation::Relu)),
            &[x, w],
            &[1, h, h, c],
        );
        let dw = g.constant(&[1, 3, 3, c], rng);
        let d = g.op(
            OpKind::DepthwiseConv2d(conv_opts(Padding::Same, 2, 1, Activation::None)),
            &[y, dw],
            &[1, h.div_ceil(2), h.div_ceil(2), c],
        );
        g.output(d);
        g.model()
    };
    let (small, big) = (model(&mut rng, 6, 4), model(&mut rng, 14, 16));
    let arena = std::sync::Arc::new(std::sync::Mutex::new(CpuArena::default()));
    let mut a = CpuExecutor::with_arena(&CpuPlan::new(&small).expect("plan"), arena.clone());
    let mut b = CpuExecutor::with_arena(&CpuPlan::new(&big).expect("plan"), arena.clone());
    let mut own_a = CpuExecutor::new(&small).expect("executor");
    let mut own_b = CpuExecutor::new(&big).expect("executor");
    let xa: Vec<f32> = (0..6 * 6 * 3)
        .map(|i| (i % 11) as f32 * 0.2 - 1.0)
        .collect();
    let xb: Vec<f32> = (0..14 * 14 * 3)
        .map(|i| (i % 13) as f32 * 0.1 - 0.6)
        .collect();
    // Alternating runs in the same buffers, the smaller model first (the arena grows).
    for _ in 0..2 {
        assert_eq!(a.run(&[&xa]).expect("run"), own_a.run(&[&xa]).expect("run"));
        assert_eq!(b.run(&[&xb]).expect("run"), own_b.run(&[&xb]).expect("run"));
    }
    let held = arena.lock().expect("arena").bytes();
    assert!(held > 0);
    assert!(held < own_a.activation_bytes() + own_b.activation_bytes());
}
