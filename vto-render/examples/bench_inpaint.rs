//! The fill stage's side of `scripts/bench-inpaint.sh`: fills every `<case>-mask.png` in a
//! case directory (the photo is `<n>.png` for a case `<n>-<kind>`), writes
//! `<case>-ours.png` and prints one line `<case> <ms>` per fill, timing only the fill
//! (decoding and encoding excluded; one warm-up fill first, so the thread pool exists).
//!
//! `cargo run --release -p vto-render --example bench_inpaint -- CASE_DIR [DETAIL]`
//! (`DETAIL`: [`vto_render::fill::FillOptions::detail`], default the library's).

use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: bench_inpaint CASE_DIR")?;
    let dir = Path::new(&dir);
    let mut options = vto_render::fill::FillOptions::default();
    if let Some(d) = std::env::args().nth(2) {
        options.detail = d.parse()?;
    }
    let mut cases: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix("-mask.png"))
                .map(str::to_string)
        })
        .collect();
    cases.sort();
    if cases.is_empty() {
        return Err(format!("no *-mask.png in {}", dir.display()).into());
    }
    let mut warm = true;
    for case in &cases {
        let stem = case.split('-').next().unwrap_or(case);
        let photo = image::open(dir.join(format!("{stem}.png")))?.to_rgb8();
        let mask = image::open(dir.join(format!("{case}-mask.png")))?.to_luma8();
        if warm {
            vto_render::fill::fill_with(&photo, &mask, None, &options)?;
            warm = false;
        }
        let t0 = Instant::now();
        let out = vto_render::fill::fill_with(&photo, &mask, None, &options)?;
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        out.save(dir.join(format!("{case}-ours.png")))?;
        println!("{case} {ms:.2}");
    }
    Ok(())
}
