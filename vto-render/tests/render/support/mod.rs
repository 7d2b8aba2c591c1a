//! What the render tests share: where the models and the workspace are, and the face cases.

pub mod face_cases;
pub mod gltf_encode;

use std::path::PathBuf;
use std::sync::Arc;

use vto_core::{Category, Engine, EngineError, Fetched, RenderInput, Rendered, RequestId};
use vto_render::engine::{BuiltinEngine, Renderer};
use vto_render::tryon::TryOn;

/// The workspace root (the parent of `vto-render/`).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The models directory: `VTO_MODELS_DIR` when set, else `<workspace>/models`, where
/// `scripts/fetch-models.sh` puts them.
pub fn models_dir() -> PathBuf {
    match std::env::var_os("VTO_MODELS_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => workspace().join("models"),
    }
}

/// The renderer every test shares (one per models directory; see [`Renderer::shared`]).
pub fn renderer() -> Arc<Renderer> {
    Renderer::shared(&models_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// Bytes as the service fetched them, with no declared type (the engine sniffs it).
pub fn fetched(bytes: Vec<u8>) -> Fetched {
    Fetched {
        bytes,
        declared_type: None,
    }
}

/// `tryon` through the engine, as the service runs it: decode, render, encode.
pub fn render_with(
    tryon: Arc<dyn TryOn>,
    category: Category,
    person: Vec<u8>,
    product: Vec<u8>,
) -> Result<Rendered, EngineError> {
    let engine = BuiltinEngine::new(renderer(), tryon);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (person, product) = (fetched(person), fetched(product));
    rt.block_on(
        engine.render(RenderInput {
            request_id: "00000000-0000-0000-0000-000000000001"
                .parse::<RequestId>()
                .unwrap(),
            category,
            person: &person,
            product: &product,
            options: Default::default(),
        }),
    )
}

/// The kept-back real inputs' folder `kind` (`people`, `products`, `garments`): under
/// `VTO_TESTDATA` when set, else `../shared/testdata` beside the workspace (CI has it; tests
/// that read it say why they skip when it is missing).
pub fn testdata(kind: &str) -> PathBuf {
    match std::env::var_os("VTO_TESTDATA") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join(kind),
        _ => workspace().join("../shared/testdata").join(kind),
    }
}

/// The RGB of `img` at `p` (rounded to the nearest pixel), or `None` outside the image.
pub fn px(img: &image::RgbaImage, p: glam::Vec2) -> Option<[f32; 3]> {
    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
    if x < 0 || y < 0 || x >= i64::from(img.width()) || y >= i64::from(img.height()) {
        return None;
    }
    let c = img.get_pixel(x as u32, y as u32).0;
    Some([f32::from(c[0]), f32::from(c[1]), f32::from(c[2])])
}

/// Chromaticity (r, g shares) and lightness distance: transferred shading is not a
/// different colour.
pub fn colour_distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    let sa = a[0] + a[1] + a[2] + 1.0;
    let sb = b[0] + b[1] + b[2] + 1.0;
    let chroma = ((a[0] / sa - b[0] / sb).powi(2) + (a[1] / sa - b[1] / sb).powi(2)).sqrt();
    chroma * 4.0 + ((sa - sb) / 765.0).abs()
}

/// The light of the synthetic raster scenes: ambient 0.4, a key light of 0.8 from above
/// and in front of the camera.
pub fn studio_light() -> vto_render::raster::Lighting {
    vto_render::raster::Lighting {
        ambient: [0.4; 3],
        key_dir: [0.0, -0.6, -0.8],
        key_color: [0.8; 3],
    }
}
