//! The try-on gallery: an HTML page with the input and the output side by side, for every
//! sample frame on every test photo, for a person to look at.
//!
//! `cargo run -p vto-render --release --example gallery -- [OUT_DIR] [PHOTO...]`
//! (default `target/gallery`, photos `target/testdata/astronaut.png` and
//! `target/testdata/camera.png`; see `scripts/fetch-testdata.sh`). Models from
//! `VTO_MODELS_DIR` (default `./models`). Open `OUT_DIR/index.html`.

use std::fmt::Write as _;
use std::path::PathBuf;

use vto_render::engine::{default_models_dir, Renderer};
use vto_render::samples::product::eyewear::SampleFrame;
use vto_render::tryon::Eyewear;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/gallery"));
    let mut photos: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if photos.is_empty() {
        photos = vec![
            PathBuf::from("target/testdata/astronaut.png"),
            PathBuf::from("target/testdata/camera.png"),
        ];
    }
    std::fs::create_dir_all(&out).expect("create the output directory");
    let renderer = Renderer::new(&default_models_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut html = String::from(
        "<!doctype html><meta charset=utf-8><title>vto glasses gallery</title>\
         <style>body{font-family:sans-serif;background:#222;color:#eee}\
         img{max-width:480px;margin:4px}td{vertical-align:top;padding:6px}\
         pre{font-size:11px;max-width:480px;white-space:pre-wrap}</style>\
         <h1>vto: glasses and sunglasses</h1><table>",
    );
    for photo in &photos {
        let Ok(person) = std::fs::read(photo) else {
            eprintln!("skipping {}: unreadable", photo.display());
            continue;
        };
        let stem = photo
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let input_name = format!("{stem}.png");
        std::fs::write(out.join(&input_name), &person).expect("write the input");
        for frame in SampleFrame::ALL {
            for kind in [Eyewear::Glasses, Eyewear::Sunglasses] {
                if kind == Eyewear::Sunglasses
                    && !frame.tinted()
                    && frame != SampleFrame::RoundBlack
                {
                    continue;
                }
                let label = format!("{stem} · {} · {}", frame.name(), kind.name());
                let cell = match renderer.try_on(&kind, &person, &frame.glb()) {
                    Ok(r) => {
                        let name = format!("{stem}_{}_{}.png", frame.name(), kind.name());
                        std::fs::write(out.join(&name), &r.png).expect("write the output");
                        let meta = serde_json::to_string_pretty(&r.metadata).unwrap_or_default();
                        format!("<img src=\"{name}\"><pre>{}</pre>", escape(&meta))
                    }
                    Err(e) => format!("<p>{}</p>", escape(&e.to_string())),
                };
                let _ = write!(
                    html,
                    "<tr><td colspan=2><h3>{}</h3></td></tr><tr><td><img src=\"{input_name}\"></td><td>{cell}</td></tr>",
                    escape(&label)
                );
                println!("{label}");
            }
        }
    }
    html.push_str("</table>");
    std::fs::write(out.join("index.html"), html).expect("write index.html");
    println!("{}", out.join("index.html").display());
}
