//! Our side of `scripts/bench-vision.sh`: warm per-inference times of the eight models and of
//! the face and full-body vision pipelines, printed as plain lines for the script to set
//! beside LiteRT's (measured right after, on the same machine).
//!
//! `cargo bench -p vto-render --bench anchor [-- --gpu] [--runs N] [--profile [--all]]`: the native
//! CPU executor always; with `--gpu`, the wgpu executor too; with `--profile`, per-kernel
//! times of every model (median over the runs, slowest first; the 15 slowest, or all with
//! `--all`) instead of the lines below. Lines:
//! - `model <name> <executor> <median ms> <min ms>`
//! - `pipeline <face|body|selfie|upload> <executor> <median ms> <min ms>` on astronaut.png
//!   resized to 1024×1024 (face = short- and full-range detectors + face mesh; body = pose
//!   detection + pose landmarks + the person mask at image resolution).

// A plain `main` (harness = false); nothing here is public API.
#![allow(missing_docs)]

use std::path::PathBuf;
use std::time::Instant;

use vto_render::gpu::GpuContext;
use vto_render::image_ops;
use vto_render::models::{ModelId, ModelStore};
use vto_render::tflite::{CpuExecutor, Executor, Model};
use vto_render::vision::{Networks, Vision};

fn models_dir() -> PathBuf {
    match std::env::var_os("VTO_MODELS_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models"),
    }
}

/// (median, min) in milliseconds of `runs` calls after `warm` unmeasured ones.
fn time(warm: usize, runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..warm {
        f();
    }
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], t[0])
}

/// Per-kernel median times of the native executor, for each model, slowest kernels first.
fn profile(runs: usize, all: bool) {
    for id in ModelId::ALL {
        let file = id.file_name();
        let bytes = std::fs::read(models_dir().join(file)).expect("model file");
        let model = Model::parse(&bytes).expect("parse");
        let n: usize = model.inputs()[0].shape.iter().product();
        let input: Vec<f32> = (0..n).map(|i| ((i % 255) as f32) / 127.5 - 1.0).collect();
        let mut exec = CpuExecutor::new(&model).expect("native executor");
        for _ in 0..5 {
            exec.run(&[&input]).expect("run");
        }
        let mut per: Vec<(String, Vec<f64>)> = Vec::new();
        for r in 0..runs {
            for (i, (what, ms)) in exec
                .profile(&[&input])
                .expect("run")
                .into_iter()
                .enumerate()
            {
                if r == 0 {
                    per.push((what, vec![ms]));
                } else {
                    per[i].1.push(ms);
                }
            }
        }
        let mut rows: Vec<(usize, String, f64, f64)> = per
            .into_iter()
            .enumerate()
            .map(|(i, (what, mut t))| {
                t.sort_by(f64::total_cmp);
                (i, what, t[t.len() / 2], t[0])
            })
            .collect();
        let total: f64 = rows.iter().map(|r| r.2).sum();
        let total_min: f64 = rows.iter().map(|r| r.3).sum();
        println!(
            "== {file}: {} kernels, sum of medians {total:.3} ms (of minima {total_min:.3} ms)",
            rows.len()
        );
        let mut by_kind: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
        for (_, what, ms, min) in &rows {
            let kind = what.split_whitespace().next().unwrap_or("?").to_owned();
            let e = by_kind.entry(kind).or_default();
            e.0 += ms;
            e.1 += min;
        }
        for (kind, (ms, min)) in &by_kind {
            println!(
                "  kind {kind:<16} {ms:8.3} ms (min {min:7.3}) {:5.1}%",
                100.0 * ms / total
            );
        }
        rows.sort_by(|a, b| b.2.total_cmp(&a.2));
        for (i, what, ms, min) in rows.iter().take(if all { usize::MAX } else { 15 }) {
            println!("  #{i:<3} {ms:7.3} ms (min {min:7.3})  {what}");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let gpu = args.iter().any(|a| a == "--gpu");
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(50usize);
    if args.iter().any(|a| a == "--profile") {
        profile(runs, args.iter().any(|a| a == "--all"));
        return;
    }
    let ctx = GpuContext::shared().expect("a wgpu adapter");
    println!("adapter {}", ctx.describe());
    println!("threads {}", rayon::current_num_threads());
    for id in ModelId::ALL {
        let file = id.file_name();
        let name = file.trim_end_matches(".tflite");
        let path = models_dir().join(file);
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run scripts/fetch-models.sh", path.display()));
        let model = Model::parse(&bytes).expect("parse");
        let n: usize = model.inputs()[0].shape.iter().product();
        // The input bench_litert.py uses.
        let input: Vec<f32> = (0..n).map(|i| ((i % 255) as f32) / 127.5 - 1.0).collect();
        let mut exec = CpuExecutor::new(&model).expect("native executor");
        let (med, min) = time(5, runs, || {
            exec.run(&[&input]).expect("run");
        });
        println!("model {name} native {med:.3} {min:.3}");
        if gpu {
            let mut exec = Executor::new(ctx.clone(), &model).expect("wgpu executor");
            let (med, min) = time(3, runs.min(10), || {
                exec.run(&[&input]).expect("run");
            });
            println!("model {name} wgpu {med:.3} {min:.3}");
        }
    }
    let photo = models_dir().join("test-photos/astronaut.png");
    let img = image::open(&photo)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/fetch-models.sh --test-photos",
                photo.display()
            )
        })
        .to_rgba8();
    let img = image_ops::cpu_resize(&img, 1024, 1024);
    let store = ModelStore::open(models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut backends = vec![("native", Networks::cpu(&store).expect("networks"))];
    if gpu {
        backends.push(("wgpu", Networks::gpu(&ctx, &store).expect("networks")));
    }
    for (label, nets) in backends {
        let mut vision = Vision::new(ctx.clone(), nets);
        let (med, min) = time(2, runs.min(20), || {
            vision.image_ops().upload(&img).expect("upload");
        });
        println!("pipeline upload {label} {med:.3} {min:.3}");
        let image = vision.image_ops().upload(&img).expect("upload");
        let pipeline_runs = if label == "wgpu" { 5 } else { runs.min(30) };
        let mut faces = 0;
        let (med, min) = time(2, pipeline_runs, || {
            faces = vision.faces(&image).expect("faces").len();
        });
        println!("pipeline face {label} {med:.3} {min:.3}");
        assert!(faces >= 1, "{label}: no face found in astronaut.png");
        let mut body = false;
        let (med, min) = time(2, pipeline_runs, || {
            body = vision.body(&image).expect("body").is_some();
        });
        println!("pipeline body {label} {med:.3} {min:.3}");
        assert!(body, "{label}: no body found in astronaut.png");
        let (med, min) = time(2, pipeline_runs, || {
            vision.selfie_mask(&image).expect("selfie");
        });
        println!("pipeline selfie {label} {med:.3} {min:.3}");
    }
}
