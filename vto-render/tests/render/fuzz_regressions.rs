//! The inputs the fuzz targets found (`fuzz/regressions/TARGET/`), replayed through the same
//! readers: each file's name starts with the outcome it must have — an error code
//! (`product_too_large-…`) or `ok-…` — and each must take less than `scripts/fuzz.sh`'s
//! 2 s per input (with a margin for the unoptimised parts of a test build).

use std::time::{Duration, Instant};

use vto_core::testing::{regression_inputs, regression_outcome};
use vto_render::product;
use vto_render::tflite::{CpuPlan, Model};

fn check_products(target: &str) {
    let files = regression_inputs(target);
    for (name, bytes) in &files {
        let t0 = Instant::now();
        let got = match product::load(bytes) {
            Ok(p) => {
                let picked = product::pick::pick(&p);
                assert!(picked.product.triangle_count() > 0, "{name}");
                "ok".to_string()
            }
            Err(e) => e.code().to_string(),
        };
        let took = t0.elapsed();
        assert_eq!(got, regression_outcome(name), "{name}");
        assert!(took < Duration::from_secs(4), "{name} took {took:?}");
    }
}

#[test]
fn gltf_inputs_end_in_their_stated_outcome_quickly() {
    let n = regression_inputs("gltf").len();
    assert!(n >= 1, "the node-DAG input is checked in");
    check_products("gltf");
}

#[test]
fn obj_inputs_end_in_their_stated_outcome_quickly() {
    check_products("obj");
}

#[test]
fn tflite_inputs_end_in_their_stated_outcome_quickly() {
    for (name, bytes) in regression_inputs("tflite") {
        let t0 = Instant::now();
        let got = match Model::parse(&bytes).and_then(|m| CpuPlan::new(&m)) {
            Ok(_) => "ok".to_string(),
            Err(e) => e.code().to_string(),
        };
        let took = t0.elapsed();
        assert_eq!(got, regression_outcome(&name), "{name}");
        assert!(took < Duration::from_secs(4), "{name} took {took:?}");
    }
}
