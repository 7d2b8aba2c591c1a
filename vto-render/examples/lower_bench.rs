//! Speed of one pants, dress and full-outfit try-on at 1024×768, warm, split by stage.
//!
//! `cargo run -p vto-render --release --example lower_bench -- [RUNS]` (5 runs after one
//! warm-up each). The person is a drawn full-body figure at 1024×768 with given keypoints and
//! masks ([`Figure`]; no permissively licensed full-body photo is available), so the garment
//! stages run on a real full-length body; the vision stage (which the figure skips) is timed
//! separately on the public-domain astronaut photo resized to 1024×768 with the same needs,
//! and so are decoding and encoding. Models from `VTO_MODELS_DIR`.

use std::time::Instant;

use vto_render::engine::{decode_photo, default_models_dir, encode_png, Renderer};
use vto_render::samples::garment::Figure;
use vto_render::samples::garment::SampleLower;
use vto_render::tryon::{Dress, FullOutfit, LoadedProduct, Pants, TryOn};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let renderer = Renderer::new(&default_models_dir()).unwrap_or_else(|e| panic!("{e}"));
    renderer.warm_up().unwrap_or_else(|e| panic!("{e}"));
    let fig = Figure::jeans(1024, 768);
    let person = fig.person();
    let png = encode_png(&person.photo).expect("encode");
    // Decoding and vision, as a real 1024×768 job pays them.
    let astronaut = image::open(default_models_dir().join("test-photos/astronaut.png"))
        .map(|i| {
            i.resize_to_fill(1024, 768, image::imageops::FilterType::Triangle)
                .to_rgba8()
        })
        .ok();
    let (mut decode, mut vision) = (0.0, 0.0);
    for _ in 0..runs {
        let t = Instant::now();
        let _ = decode_photo(&png).expect("decode");
        decode += ms(t);
        if let Some(a) = &astronaut {
            let t = Instant::now();
            let _ = renderer.see(a, Pants.needs());
            vision += ms(t);
        }
    }
    let (decode, vision) = (decode / runs as f64, vision / runs as f64);
    println!("1024x768: decode {decode:.0} ms, vision (face + pose + selfie mask) {vision:.0} ms");
    let cases: [(&dyn TryOn, SampleLower); 6] = [
        (&Pants, SampleLower::Trousers),
        (&Pants, SampleLower::Shorts),
        (&Dress, SampleLower::KneeDress),
        (&Dress, SampleLower::MaxiDress),
        (&FullOutfit, SampleLower::TwoPiece),
        (&FullOutfit, SampleLower::Jumpsuit),
    ];
    for (tryon, sample) in cases {
        let product = LoadedProduct::Image(sample.render());
        let run = || {
            tryon
                .try_on(renderer.stages(), &person, &product)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        run();
        let keys = ["garment", "fit", "warp", "compose"];
        let mut sums = [0.0f64; 6];
        for _ in 0..runs {
            let t = Instant::now();
            let look = run();
            let render = ms(t);
            let t = Instant::now();
            let _ = encode_png(&look.image).expect("encode");
            let encode = ms(t);
            let v = [
                render,
                encode,
                look.metadata["stages_ms"][keys[0]].as_f64().unwrap_or(0.0),
                look.metadata["stages_ms"][keys[1]].as_f64().unwrap_or(0.0),
                look.metadata["stages_ms"][keys[2]].as_f64().unwrap_or(0.0),
                look.metadata["stages_ms"][keys[3]].as_f64().unwrap_or(0.0),
            ];
            for (s, x) in sums.iter_mut().zip(v) {
                *s += x;
            }
        }
        let m: Vec<f64> = sums.iter().map(|s| s / runs as f64).collect();
        println!(
            "{} ({}) 1024x768, mean of {runs}: total {:.0} ms = decode {decode:.0} + vision {vision:.0} + garment render {:.0} \
             [product photo {:.0}, fit {:.1}, GPU warp {:.0}, compose {:.0}] + encode {:.0}",
            tryon.category().as_str(),
            sample.name(),
            decode + vision + m[0] + m[1],
            m[0],
            m[2],
            m[3],
            m[4],
            m[5],
            m[1]
        );
    }
}
