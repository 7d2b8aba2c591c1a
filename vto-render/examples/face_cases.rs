//! Writes the face test cases (small, turned and several faces, made from the public-domain
//! portraits) as PNGs, for `scripts/face_cases_reference.py` to run MediaPipe on:
//!
//! ```sh
//! cargo run -p vto-render --example face_cases -- OUT_DIR
//! ```

#[path = "../tests/render/support/face_cases.rs"]
mod face_cases;

fn main() {
    let out = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: face_cases OUT_DIR");
        std::process::exit(2)
    }));
    let photos = vto_render::models::models_dir(std::path::Path::new(".")).join("test-photos");
    let open = |name: &str| {
        image::open(photos.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}; run scripts/fetch-models.sh --test-photos"))
            .to_rgba8()
    };
    std::fs::create_dir_all(&out).expect("create the output dir");
    for case in face_cases::face_cases(&open("astronaut.png"), &open("grace_hopper.jpg")) {
        let path = out.join(format!("{}.png", case.name));
        case.photo.save(&path).expect("write a case");
        println!("{}", path.display());
    }
}
