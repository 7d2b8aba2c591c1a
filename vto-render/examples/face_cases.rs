//! Writes the face test cases as PNGs, for `scripts/face_cases_reference.py` to run MediaPipe
//! on: the small, turned and several faces made from the public-domain portraits into
//! `OUT_DIR`, and with a people directory (`../shared/testdata/people`) the small turned faces
//! made from the real photos into `REAL_OUT_DIR`:
//!
//! ```sh
//! cargo run -p vto-render --example face_cases -- OUT_DIR [PEOPLE_DIR REAL_OUT_DIR]
//! ```

#[path = "../tests/render/support/face_cases.rs"]
mod face_cases;

use std::path::{Path, PathBuf};

fn write(out: &Path, cases: Vec<face_cases::FaceCase>) {
    std::fs::create_dir_all(out).expect("create the output dir");
    for case in cases {
        let path = out.join(format!("{}.png", case.name));
        case.photo.save(&path).expect("write a case");
        println!("{}", path.display());
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 1 && args.len() != 3 {
        eprintln!("usage: face_cases OUT_DIR [PEOPLE_DIR REAL_OUT_DIR]");
        std::process::exit(2)
    }
    let photos = vto_render::models::models_dir(Path::new(".")).join("test-photos");
    let open = |name: &str| {
        image::open(photos.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}; run scripts/fetch-models.sh --test-photos"))
            .to_rgba8()
    };
    write(
        Path::new(&args[0]),
        face_cases::face_cases(&open("astronaut.png"), &open("grace_hopper.jpg")),
    );
    if let [_, people, real_out] = args.as_slice() {
        let people = PathBuf::from(people);
        let cases = face_cases::small_real_faces(|name| {
            image::open(people.join(name)).map(|i| i.to_rgba8())
        })
        .unwrap_or_else(|e| panic!("{}: {e}", people.display()));
        write(Path::new(real_out), cases);
    }
}
