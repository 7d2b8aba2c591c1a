//! Writes the procedural sample frames (the products of the tests, the README and the demo):
//! four `.glb` files (round black, rectangular tortoiseshell with a texture, gold aviator with
//! tinted lenses, red cat-eye), the aviator also as `.gltf` with a data-URI buffer, and the
//! round frame as `.obj`.
//!
//! `cargo run -p vto-examples --example make_glasses -- [OUT_DIR]` (default `target/samples`).

use std::path::PathBuf;

use vto_render::product::write::write_obj;
use vto_render::samples::product::eyewear::SampleFrame;

fn main() -> std::io::Result<()> {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/samples"));
    std::fs::create_dir_all(&out)?;
    for frame in SampleFrame::ALL {
        let path = out.join(format!("{}.glb", frame.name()));
        std::fs::write(&path, frame.glb())?;
        println!("{}", path.display());
    }
    let gltf = out.join("aviator_gold_tinted.gltf");
    std::fs::write(&gltf, SampleFrame::AviatorGoldTinted.gltf_embedded())?;
    println!("{}", gltf.display());
    let obj = out.join("round_black.obj");
    std::fs::write(&obj, write_obj(&SampleFrame::RoundBlack.product()))?;
    println!("{}", obj.display());
    Ok(())
}
