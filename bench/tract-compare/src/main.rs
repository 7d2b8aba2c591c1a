//! Loads MediaPipe `.tflite` networks into tract (`tract-tflite`) and times them, warm, per
//! inference, in the same output format as `scripts/bench_litert.py`
//! (`<name> median <ms> ms  min <ms> ms`), or prints why tract cannot load or run one.
//!
//! Usage: `tract-compare <models dir> [runs] [threads]`: `threads` (default 2, as LiteRT in
//! `scripts/bench_litert.py`) is the size of tract's pool for its matrix products
//! (`tract_linalg::multithread`); 1 runs everything on the calling thread.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use tract_tflite::prelude::*;

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

fn load(path: &Path) -> Result<Arc<TypedSimplePlan>> {
    let model = tract_tflite::tflite()
        .model_for_path(path)
        .context("tract-tflite could not read the graph")?;
    let model = model
        .into_optimized()
        .context("tract could not optimise the graph")?;
    model
        .into_runnable()
        .context("tract could not plan the graph")
}

fn inputs(plan: &Arc<TypedSimplePlan>) -> Result<TVec<TValue>> {
    let model = plan.model();
    let mut out = tvec!();
    for (i, outlet) in model.input_outlets()?.iter().enumerate() {
        let fact = model.outlet_fact(*outlet)?;
        let shape: Vec<usize> = fact
            .shape
            .as_concrete()
            .with_context(|| format!("input {i} has a symbolic shape {:?}", fact.shape))?
            .to_vec();
        let len: usize = shape.iter().product();
        // A fixed, non-constant pattern in [0, 1) (the networks take images in [0, 1]).
        let data: Vec<f32> = (0..len)
            .map(|k| ((k * 7919) % 1000) as f32 / 1000.0)
            .collect();
        out.push(
            tract_ndarray::ArrayD::from_shape_vec(shape, data)?
                .into_tensor()
                .into(),
        );
    }
    Ok(out)
}

fn time(plan: &Arc<TypedSimplePlan>, runs: usize) -> Result<(f64, f64)> {
    let input = inputs(plan)?;
    // One state reused across runs (its buffers warm), as our executor reuses its arena.
    let mut state = plan.spawn()?;
    for _ in 0..5 {
        state.run(input.clone())?;
    }
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        state.run(input.clone())?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    Ok((ms[ms.len() / 2], ms[0]))
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .context("usage: tract-compare <models dir> [runs]")?;
    let runs: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(100);
    let threads: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(2);
    if threads > 1 {
        tract_linalg::multithread::set_default_executor(
            tract_linalg::multithread::Executor::multithread(threads),
        );
    }
    for name in MODELS {
        let path = Path::new(&dir).join(format!("{name}.tflite"));
        match load(&path).and_then(|plan| time(&plan, runs)) {
            Ok((median, min)) => println!("{name} median {median:.3} ms  min {min:.3} ms"),
            // The first line of the error chain names the operator (the rest dumps it).
            Err(e) => println!("{name} error {}", first_line(&format!("{e:#}"))),
        }
    }
    Ok(())
}

/// The error message up to its first line break, with the operator code tract names further
/// down when there is one (`builtin_code: X`, `custom_code: Some("Y")`).
fn first_line(e: &str) -> String {
    let head = e
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end_matches(" Operator {");
    let code = e
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("builtin_code:") || l.starts_with("\"") || l.starts_with("}: "))
        .collect::<Vec<_>>()
        .join(" ");
    format!("{head} {code}").trim().to_owned()
}
