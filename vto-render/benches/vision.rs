//! Vision benchmarks, warm (context, kernels and networks created once):
//! - `image_ops/*`: the GPU image kernels on a 1024×1024 photo.
//! - `post/*`: CPU post-processing (decoding + weighted NMS, head pose).
//! - `pipeline_gpu/*`: face, body and the whole inspect on a 1024×1024 photo, models on vto's
//!   wgpu TFLite executor (the product path).
//! - `pipeline_litert/*`: the same with LiteRT running the models (through
//!   `scripts/vision_reference.py serve`, i.e. plus pipe transfer), for the ratio.
//! - `pipeline_replay/*`: the same with every model's outputs replayed from memory: our own
//!   cost (GPU crops and mask warps, readbacks, decoding) without inference.
//!
//! Needs the models and test photos: `scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR"`,
//! and `VTO_LITERT_PYTHON` naming a Python with `ai-edge-litert`.

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use image::RgbaImage;
use vto_render::gpu::GpuContext;
use vto_render::image_ops::{self, Border, ImageOps, TensorSpec};
use vto_render::models::{ModelId, ModelStore};
use vto_render::vision::anchors::{self, AnchorOptions};
use vto_render::vision::detection::DecodeOptions;
use vto_render::vision::face::decode_detector_outputs;
use vto_render::vision::reference::{self, LiteRtProcess};
use vto_render::vision::{head_pose, Infer, Networks, RotatedRect, Vision, VisionError};

fn models_dir() -> PathBuf {
    match std::env::var_os("VTO_MODELS_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models"),
    }
}

fn photo_1024() -> RgbaImage {
    let path = models_dir().join("test-photos/astronaut.png");
    let img = image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/fetch-models.sh --test-photos",
                path.display()
            )
        })
        .to_rgba8();
    image_ops::cpu_resize(&img, 1024, 1024)
}

fn store() -> ModelStore {
    ModelStore::open(models_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// LiteRT in a subprocess: the speed reference, measured in the same run.
fn networks(store: &ModelStore) -> Networks {
    reference::litert_networks(store, &reference::default_script()).unwrap()
}

/// Runs the real model once per distinct input size, then replays its outputs.
struct Replay {
    inner: LiteRtProcess,
    recorded: HashMap<usize, Vec<Vec<f32>>>,
}

impl Infer for Replay {
    fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, VisionError> {
        let key = inputs.iter().map(|i| i.len()).sum();
        if let Some(out) = self.recorded.get(&key) {
            return Ok(out.clone());
        }
        let out = self.inner.run(inputs)?;
        self.recorded.insert(key, out.clone());
        Ok(out)
    }
}

fn replay_networks(store: &ModelStore) -> Networks {
    let script = reference::default_script();
    Networks::from_fn(|id: ModelId| {
        Ok(Box::new(Replay {
            inner: LiteRtProcess::spawn(&script, &store.dir().join(id.file_name()), id)?,
            recorded: HashMap::new(),
        }))
    })
    .unwrap()
}

fn bench_image_ops(c: &mut Criterion, ctx: &Arc<GpuContext>, photo: &RgbaImage) {
    let ops = ImageOps::new(ctx.clone());
    let gpu = ops.upload(photo).unwrap();
    let mut g = c.benchmark_group("image_ops");
    g.bench_function("upload_1024", |b| b.iter(|| ops.upload(photo).unwrap()));
    let roi = RotatedRect::letterbox(1024, 1024, 1.0);
    let spec = TensorSpec {
        width: 224,
        height: 224,
        range_min: -1.0,
        range_max: 1.0,
        border: Border::Zero,
    };
    g.bench_function("crop_to_tensor_224_from_1024", |b| {
        b.iter(|| {
            ops.crop_to_tensor(&gpu, &roi.tensor_to_image(224, 224), &spec)
                .unwrap()
        })
    });
    let mask = vec![0.5f32; 256 * 256];
    let to_mask = roi.tensor_to_image(256, 256).inverse().unwrap();
    g.bench_function("warp_mask_256_to_1024", |b| {
        b.iter(|| {
            ops.warp_mask(&mask, (256, 256), &to_mask, (1024, 1024))
                .unwrap()
        })
    });
    g.bench_function("resize_1024_to_512", |b| {
        b.iter(|| ops.download(&ops.resize(&gpu, 512, 512).unwrap()).unwrap())
    });
    g.finish();
}

fn bench_post(c: &mut Criterion, ctx: &Arc<GpuContext>, store: &ModelStore, photo: &RgbaImage) {
    // Real raw outputs of the pose detector and a real face mesh, for realistic work.
    let mut vision = Vision::new(ctx.clone(), networks(store));
    let report = vision.inspect(photo).unwrap();
    let landmarks = report.faces.first().expect("a face").landmarks.clone();
    let ops = ImageOps::new(ctx.clone());
    let gpu = ops.upload(photo).unwrap();
    let tensor = ops
        .crop_to_tensor(
            &gpu,
            &RotatedRect::letterbox(1024, 1024, 1.0).tensor_to_image(224, 224),
            &TensorSpec {
                width: 224,
                height: 224,
                range_min: -1.0,
                range_max: 1.0,
                border: Border::Zero,
            },
        )
        .unwrap();
    let mut det = LiteRtProcess::spawn(
        &reference::default_script(),
        &store.dir().join(ModelId::PoseDetection.file_name()),
        ModelId::PoseDetection,
    )
    .unwrap();
    let outputs = det.run(&[&tensor]).unwrap();
    let anchors = anchors::generate(&AnchorOptions::pose());
    let mut g = c.benchmark_group("post");
    g.bench_function("pose_decode_nms_2254", |b| {
        b.iter(|| decode_detector_outputs(&outputs, &anchors, &DecodeOptions::pose()).unwrap())
    });
    g.bench_function("head_pose_468", |b| {
        b.iter(|| head_pose::estimate(&landmarks).unwrap())
    });
    g.finish();
}

fn bench_pipelines(
    c: &mut Criterion,
    group: &str,
    ctx: &Arc<GpuContext>,
    nets: Networks,
    photo: &RgbaImage,
) {
    let mut vision = Vision::new(ctx.clone(), nets);
    let gpu = vision.image_ops().upload(photo).unwrap();
    // Warm up (and record, for replay).
    assert_eq!(vision.inspect(photo).unwrap().faces.len(), 1);
    let mut g = c.benchmark_group(group);
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("face_1024", |b| b.iter(|| vision.faces(&gpu).unwrap()));
    g.bench_function("body_1024", |b| b.iter(|| vision.body(&gpu).unwrap()));
    g.bench_function("inspect_1024", |b| {
        b.iter(|| vision.inspect(photo).unwrap())
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    eprintln!("adapter: {}", ctx.describe());
    let photo = photo_1024();
    let store = store();
    bench_image_ops(c, &ctx, &photo);
    bench_post(c, &ctx, &store, &photo);
    let gpu = Networks::gpu(&ctx, &store).expect("the models load on the executor");
    bench_pipelines(c, "pipeline_gpu", &ctx, gpu, &photo);
    bench_pipelines(c, "pipeline_litert", &ctx, networks(&store), &photo);
    bench_pipelines(c, "pipeline_replay", &ctx, replay_networks(&store), &photo);
}

criterion_group!(vision_benches, benches);
criterion_main!(vision_benches);
