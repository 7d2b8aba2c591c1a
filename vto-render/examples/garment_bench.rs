//! Speed of one garment try-on at 1024×768, warm, split by stage.
//!
//! `cargo run -p vto-render --release --example garment_bench -- [PHOTO] [RUNS]` (default
//! `<models dir>/test-photos/astronaut.png` resized to 1024×768, 5 runs after one warm-up, for
//! each of tshirt, shirt and jacket with a sample garment). Models from `VTO_MODELS_DIR`.

use std::time::Instant;

use vto_render::engine::{default_models_dir, encode_png, Renderer};
use vto_render::samples::garment::SampleGarment;
use vto_render::tryon::UpperGarment;

fn main() {
    let mut args = std::env::args().skip(1);
    let photo = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| default_models_dir().join("test-photos/astronaut.png"));
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let img = image::open(&photo).unwrap_or_else(|e| panic!("{}: {e}", photo.display()));
    let img = img
        .resize_to_fill(1024, 768, image::imageops::FilterType::Triangle)
        .to_rgba8();
    let person = encode_png(&img).expect("encode the photo");
    let t0 = Instant::now();
    let renderer = Renderer::new(&default_models_dir()).unwrap_or_else(|e| panic!("{e}"));
    renderer.warm_up().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "renderer built and warmed in {:.0} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );
    for (tryon, garment) in [
        (UpperGarment::Tshirt, SampleGarment::PlainTee),
        (UpperGarment::Shirt, SampleGarment::LongShirt),
        (UpperGarment::Jacket, SampleGarment::Jacket),
    ] {
        let product = garment.png();
        // One warm-up run (first-use pipelines, allocations).
        renderer
            .try_on(&tryon, &person, &product)
            .unwrap_or_else(|e| panic!("{e}"));
        let keys = ["garment", "fit", "warp", "compose"];
        let mut sums = [0.0f64; 9];
        for _ in 0..runs {
            let t = Instant::now();
            let out = renderer
                .try_on(&tryon, &person, &product)
                .unwrap_or_else(|e| panic!("{e}"));
            let total = t.elapsed().as_secs_f64() * 1e3;
            let tm = out.timings;
            let stage = |k: &str| out.metadata["stages_ms"][k].as_f64().unwrap_or(0.0);
            let v = [
                total,
                tm.decode.as_secs_f64() * 1e3,
                tm.vision.as_secs_f64() * 1e3,
                tm.raster.as_secs_f64() * 1e3,
                tm.encode.as_secs_f64() * 1e3,
                stage(keys[0]),
                stage(keys[1]),
                stage(keys[2]),
                stage(keys[3]),
            ];
            for (s, x) in sums.iter_mut().zip(v) {
                *s += x;
            }
        }
        let m: Vec<f64> = sums.iter().map(|s| s / runs as f64).collect();
        println!(
            "{:?} ({}) 1024x768, mean of {runs}: total {:.0} ms = decode {:.0} + vision {:.0} + garment render {:.0} \
             [product photo {:.0}, fit {:.1}, GPU warp {:.0}, compose {:.0}] + encode {:.0}",
            tryon, garment.name(), m[0], m[1], m[2], m[3], m[5], m[6], m[7], m[8], m[4]
        );
    }
}
