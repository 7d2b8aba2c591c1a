//! Glasses try-on end to end, warm, on a 1024×1024 photo (astronaut.png upscaled), with the
//! split between decode (PNG + GLB), vision (upload, both face detectors, face mesh, head
//! pose), raster (placement, light, the GPU rasterizer and readback) and encode (PNG).
//!
//! A plain bench binary (not criterion) so the stage split is reported directly:
//! `cargo bench -p vto-render --bench glasses` (env: `VTO_MODELS_DIR`, `VTO_ASTRONAUT`,
//! `VTO_BENCH_ITERS`, default 20). The renderer (GPU context, six networks on the wgpu
//! executor, raster kernels) is created once and warmed up with three runs first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vto_render::engine::{encode_png, Renderer};
use vto_render::samples::product::eyewear::SampleFrame;
use vto_render::tryon::eyewear::{self, Eyewear};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e3
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("glasses_end_to_end_1024: bench");
        return;
    }
    let models = match std::env::var_os("VTO_MODELS_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => workspace().join("models"),
    };
    let photo_path = match std::env::var_os("VTO_ASTRONAUT") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => workspace().join("target/testdata/astronaut.png"),
    };
    let photo = image::open(&photo_path)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/fetch-testdata.sh",
                photo_path.display()
            )
        })
        .to_rgba8();
    let photo = image::imageops::resize(&photo, 1024, 1024, image::imageops::FilterType::Triangle);
    let person = encode_png(&photo).expect("encode input");
    let model = SampleFrame::RoundBlack.glb();
    let iters: usize = std::env::var("VTO_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);

    let t = Instant::now();
    let renderer = Renderer::new(&models).unwrap_or_else(|e| panic!("{e}"));
    let setup = t.elapsed();
    for _ in 0..3 {
        renderer
            .try_on(&Eyewear::Glasses, &person, &model)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let (mut total, mut dec, mut vis, mut ras, mut enc) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..iters {
        let t = Instant::now();
        let out = renderer
            .try_on(&Eyewear::Glasses, &person, &model)
            .unwrap_or_else(|e| panic!("{e}"));
        total.push(t.elapsed());
        dec.push(out.timings.decode);
        vis.push(out.timings.vision);
        ras.push(out.timings.raster);
        enc.push(out.timings.encode);
    }
    // The raster stage split: placement + light estimation + scene building on the CPU,
    // then the GPU passes with the ROI readback and paste.
    let face = renderer
        .choose_face(&photo)
        .expect("vision")
        .expect("a face")
        .face;
    let product = vto_render::product::load(&model).expect("product");
    // Knobs for exploring the raster cost: VTO_BENCH_SS (1–4), VTO_BENCH_SHADOW (strength).
    let mut options = vto_render::tryon::Options::default();
    if let Some(v) = std::env::var("VTO_BENCH_SS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.supersampling = v;
    }
    if let Some(v) = std::env::var("VTO_BENCH_SHADOW")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.shadow_strength = v;
    }
    let (mut prep, mut gpu) = (Vec::new(), Vec::new());
    for _ in 0..iters {
        let t = Instant::now();
        let prepared =
            eyewear::prepare(&photo, &face, &product, Eyewear::Glasses, &options).expect("prepare");
        prep.push(t.elapsed());
        let t = Instant::now();
        renderer
            .rasterizer()
            .render(&photo, prepared.scene.as_ref().expect("a scene"))
            .expect("render");
        gpu.push(t.elapsed());
    }
    println!(
        "glasses try-on, 1024×1024, warm, {iters} runs (renderer setup {:.0} ms, once)",
        setup.as_secs_f64() * 1e3
    );
    println!("{:<26} {:>9} {:>9}", "stage", "p50 ms", "p90 ms");
    for (name, v) in [
        ("decode", &mut dec),
        ("vision", &mut vis),
        ("raster", &mut ras),
        ("encode", &mut enc),
        ("total", &mut total),
        ("  raster: prepare (CPU)", &mut prep),
        ("  raster: GPU + readback", &mut gpu),
    ] {
        let p50 = pct(v, 0.5);
        let p90 = pct(v, 0.9);
        println!("{name:<26} {p50:>9.1} {p90:>9.1}");
    }
}
