//! Warm per-inference time of the wgpu executor on MediaPipe's eight models.
//!
//! `cargo bench -p vto-render --bench models`. Models come from `VTO_MODELS_DIR` (default
//! `<workspace>/models`; run `scripts/fetch-models.sh`). `scripts/bench_litert.py` measures
//! LiteRT (XNNPACK, 2 threads) on the same models for comparison.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use vto_render::gpu::GpuContext;
use vto_render::tflite::{Executor, Model};

const MODELS: [&str; 8] = [
    "face_detection_short_range",
    "face_detection_full_range_sparse",
    "face_landmark",
    "pose_detection",
    "pose_landmark_full",
    "selfie_segmentation",
    "palm_detection_full",
    "hand_landmark_full",
];

fn models_dir() -> PathBuf {
    match std::env::var_os("VTO_MODELS_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models"),
    }
}

fn bench(c: &mut Criterion) {
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    eprintln!("adapter: {}", ctx.describe());
    let mut group = c.benchmark_group("tflite");
    group
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(5));
    for name in MODELS {
        let path = models_dir().join(format!("{name}.tflite"));
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run scripts/fetch-models.sh", path.display()));
        let model = Model::parse(&bytes).expect("parse");
        let mut exec = Executor::new(ctx.clone(), &model).expect("executor");
        let n: usize = model.inputs()[0].shape.iter().product();
        let input: Vec<f32> = (0..n).map(|i| ((i % 255) as f32) / 127.5 - 1.0).collect();
        // Warm up pipelines and caches.
        for _ in 0..3 {
            exec.run(&[&input]).expect("run");
        }
        group.bench_function(name, |b| {
            b.iter(|| exec.run(&[&input]).expect("run"));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
