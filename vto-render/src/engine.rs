//! The try-on engines: the six models on the wgpu TFLite executor, the vision pipelines and the
//! rasterizer, loaded once per process ([`Renderer::shared`]), and [`vto_core::Engine`]
//! implementations for `glasses` and `sunglasses` ([`EyewearEngine`]).
//!
//! The simple library entry is [`try_on_glasses`]: person photo bytes and a 3D model's bytes
//! in, PNG bytes and metadata out.
//!
//! Face policy: when the photo holds several faces, the largest (detection box area) wears
//! the product; no face is a `processing_failed` rejection that says so. To save time only
//! the short-range detector runs unless it finds nothing (then the full-range one), and only
//! the chosen face goes through the face mesh ([`Renderer::largest_face`]).
//!
//! Registering both categories on a server (one renderer, created at start-up: ~0.5–3 s on
//! lavapipe for the GPU context, the six networks and the raster kernels):
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use vto_core::{Category, Engines};
//! # use vto_render::engine::{EyewearEngine, Renderer};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let renderer = Renderer::shared(std::path::Path::new("models"))?;
//! let engine = Arc::new(EyewearEngine::new(renderer));
//! let mut engines = Engines::new();
//! engines
//!     .register(Category::Glasses, engine.clone())
//!     .register(Category::Sunglasses, engine);
//! # Ok(())
//! # }
//! ```
//!
//! GPU work is serialised: the vision pipelines sit behind a mutex (one device per process,
//! and lavapipe has two cores to give), and [`EyewearEngine::render`] runs on
//! `tokio::task::spawn_blocking`, never on the async runtime's threads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use image::RgbaImage;
use vto_core::{Category, Engine, EngineError, ErrorCode, RenderInput, Rendered};

use crate::gpu::{GpuContext, GpuError};
use crate::models::{ModelError, ModelStore};
use crate::product::{self, ProductError};
use crate::raster::{RasterError, Rasterizer};
use crate::tryon::{self, Eyewear, Options, TryOnError};
use crate::vision::{Networks, Vision, VisionError};

/// Why a try-on failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No GPU.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Models missing or not verifying.
    #[error(transparent)]
    Models(#[from] ModelError),
    /// The person photo could not be decoded.
    #[error("the person photo could not be decoded: {0}")]
    PersonImage(String),
    /// The person photo is too large.
    #[error("the person photo is {width}×{height}; the limit is {max} pixels per side")]
    PersonTooLarge {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// The limit.
        max: u32,
    },
    /// The 3D model could not be loaded.
    #[error(transparent)]
    Product(#[from] ProductError),
    /// No face in the photo.
    #[error("no face was found in the person photo; glasses need a visible face")]
    NoFace,
    /// The vision pipelines failed.
    #[error(transparent)]
    Vision(#[from] VisionError),
    /// Placement failed.
    #[error(transparent)]
    TryOn(#[from] TryOnError),
    /// The rasterizer failed.
    #[error(transparent)]
    Raster(#[from] RasterError),
    /// PNG encoding failed.
    #[error("encoding the result failed: {0}")]
    Encode(String),
    /// A previous panic poisoned the GPU lock.
    #[error("the renderer is unavailable after an earlier failure")]
    Poisoned,
}

/// Where the time went, for the benchmark and the metadata.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Decoding the photo and loading the product.
    pub decode: Duration,
    /// Upload, face detection, face mesh, head pose.
    pub vision: Duration,
    /// Placement, light estimation and the GPU rasterizer (with readback).
    pub raster: Duration,
    /// PNG encoding.
    pub encode: Duration,
}

/// A finished try-on.
#[derive(Debug, Clone)]
pub struct TryOnOutput {
    /// The PNG.
    pub png: Vec<u8>,
    /// The decoded result (same size as the photo).
    pub image: RgbaImage,
    /// Placement, light, counts, timings (see [`tryon::metadata`]).
    pub metadata: serde_json::Value,
    /// Where the time went.
    pub timings: Timings,
}

/// The largest person photo side accepted.
pub const MAX_PHOTO_SIDE: u32 = 8192;

/// Vision + rasterizer on one GPU context.
#[derive(Debug)]
pub struct Renderer {
    vision: Mutex<Vision>,
    raster: Rasterizer,
    options: Options,
}

impl Renderer {
    /// Loads and verifies the six models in `models_dir` and builds every pipeline.
    pub fn new(models_dir: &Path) -> Result<Renderer, RenderError> {
        let ctx = GpuContext::shared()?;
        let store = ModelStore::open(models_dir)?;
        let nets = Networks::gpu(&ctx, &store)?;
        Ok(Self::with_networks(ctx, nets))
    }

    /// Builds a renderer on given networks (tests may pass a reference interpreter).
    pub fn with_networks(ctx: Arc<GpuContext>, nets: Networks) -> Renderer {
        Renderer {
            raster: Rasterizer::new(ctx.clone()),
            vision: Mutex::new(Vision::new(ctx, nets)),
            options: Options::default(),
        }
    }

    /// The process-wide renderer, created on first use from `models_dir` (later calls reuse
    /// it whatever directory they pass). A failure is not cached: a later call retries.
    pub fn shared(models_dir: &Path) -> Result<Arc<Renderer>, RenderError> {
        static SHARED: OnceLock<Mutex<Option<Arc<Renderer>>>> = OnceLock::new();
        let slot = SHARED.get_or_init(|| Mutex::new(None));
        let mut guard = slot.lock().map_err(|_| RenderError::Poisoned)?;
        if let Some(r) = guard.as_ref() {
            return Ok(r.clone());
        }
        let r = Arc::new(Renderer::new(models_dir)?);
        *guard = Some(r.clone());
        Ok(r)
    }

    /// The rasterizer.
    pub fn rasterizer(&self) -> &Rasterizer {
        &self.raster
    }

    /// Runs the face pipeline on a decoded photo: all faces, largest first.
    pub fn faces(&self, photo: &RgbaImage) -> Result<Vec<crate::vision::Face>, RenderError> {
        let mut vision = self.vision.lock().map_err(|_| RenderError::Poisoned)?;
        let gpu = vision
            .image_ops()
            .upload(photo)
            .map_err(VisionError::from)?;
        Ok(vision.faces(&gpu)?)
    }

    /// The face that wears the product, and how many face candidates the detectors found.
    ///
    /// Cheaper than [`Renderer::faces`]: the short-range detector runs first and the
    /// full-range one only when it finds nothing; the face mesh runs on the largest candidate
    /// (detection box area) and, only when its face flag rejects it, on the next.
    pub fn largest_face(
        &self,
        photo: &RgbaImage,
    ) -> Result<(Option<crate::vision::Face>, usize), RenderError> {
        use crate::vision::face::{DetectorSpec, FaceDetector};
        let mut vision = self.vision.lock().map_err(|_| RenderError::Poisoned)?;
        let gpu = vision
            .image_ops()
            .upload(photo)
            .map_err(VisionError::from)?;
        let mut candidates: Vec<_> = vision
            .detect(&gpu, &DetectorSpec::face_short())?
            .into_iter()
            .map(|d| (d, FaceDetector::ShortRange))
            .collect();
        if candidates.is_empty() {
            candidates = vision
                .detect(&gpu, &DetectorSpec::face_full())?
                .into_iter()
                .map(|d| (d, FaceDetector::FullRange))
                .collect();
        }
        candidates.sort_by(|a, b| b.0.area().total_cmp(&a.0.area()));
        let n = candidates.len();
        for (d, which) in candidates {
            if let Some(face) = vision.face_from_detection(&gpu, d, which)? {
                return Ok((Some(face), n));
            }
        }
        Ok((None, n))
    }

    /// Tries `model` (glTF / GLB / OBJ bytes) on the person in `person` (PNG / JPEG / WebP
    /// bytes).
    pub fn try_on_glasses(
        &self,
        person: &[u8],
        model: &[u8],
        kind: Eyewear,
    ) -> Result<TryOnOutput, RenderError> {
        let t0 = Instant::now();
        let photo = decode_photo(person)?;
        let product = product::load(model)?;
        let t1 = Instant::now();
        let (face, candidates) = self.largest_face(&photo)?;
        let face = face.ok_or(RenderError::NoFace)?;
        let face = &face;
        let t2 = Instant::now();
        let prepared = tryon::prepare(&photo, face, &product, kind, &self.options)?;
        let (image, stats) = self.raster.render(&photo, &prepared.scene)?;
        let t3 = Instant::now();
        let png = encode_png(&image)?;
        let t4 = Instant::now();
        let timings = Timings {
            decode: t1 - t0,
            vision: t2 - t1,
            raster: t3 - t2,
            encode: t4 - t3,
        };
        let mut metadata = tryon::metadata(kind, &prepared, &stats, face, candidates);
        metadata["timings_ms"] = serde_json::json!({
            "decode": timings.decode.as_secs_f64() * 1e3,
            "vision": timings.vision.as_secs_f64() * 1e3,
            "raster": timings.raster.as_secs_f64() * 1e3,
            "encode": timings.encode.as_secs_f64() * 1e3,
        });
        Ok(TryOnOutput {
            png,
            image,
            metadata,
            timings,
        })
    }
}

/// Decodes a person photo (format sniffed) to RGBA8, refusing huge ones before decoding.
pub fn decode_photo(bytes: &[u8]) -> Result<RgbaImage, RenderError> {
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| RenderError::PersonImage(e.to_string()))?;
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| RenderError::PersonImage(e.to_string()))?;
    if w.max(h) > MAX_PHOTO_SIDE {
        return Err(RenderError::PersonTooLarge {
            width: w,
            height: h,
            max: MAX_PHOTO_SIDE,
        });
    }
    Ok(image::load_from_memory(bytes)
        .map_err(|e| RenderError::PersonImage(e.to_string()))?
        .to_rgba8())
}

/// Encodes PNG with fast compression (encoding dominates otherwise).
pub fn encode_png(image: &RgbaImage) -> Result<Vec<u8>, RenderError> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    use image::ImageEncoder;
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Sub)
        .write_image(
            image.as_raw(),
            image.width(),
            image.height(),
            image::ExtendedColorType::Rgba8,
        )
        .map_err(|e| RenderError::Encode(e.to_string()))?;
    Ok(out)
}

/// The models directory for the library entry: `VTO_MODELS_DIR`, else `./models`.
pub fn default_models_dir() -> PathBuf {
    crate::models::models_dir(Path::new("."))
}

/// Tries a 3D frame on a person: the simple library entry (used by `vto try-on`).
///
/// `person`: PNG / JPEG / WebP bytes. `model`: `.glb`, `.gltf` (embedded buffers) or `.obj`
/// bytes. Returns the PNG (same size as the photo) and the metadata (placement, fit, light,
/// counts, timings). Models come from [`default_models_dir`]; the renderer is created once
/// per process.
pub fn try_on_glasses(
    person: &[u8],
    model: &[u8],
    kind: Eyewear,
) -> Result<(Vec<u8>, serde_json::Value), RenderError> {
    let r = Renderer::shared(&default_models_dir())?;
    let out = r.try_on_glasses(person, model, kind)?;
    Ok((out.png, out.metadata))
}

impl RenderError {
    /// The engine error a client sees: input problems are rejections with a specific code,
    /// machine problems are internal.
    pub fn into_engine_error(self) -> EngineError {
        let rejected = |code, message: String| EngineError::Rejected { code, message };
        match self {
            RenderError::NoFace => EngineError::processing(self.to_string()),
            RenderError::PersonImage(_) => rejected(ErrorCode::UnsupportedMedia, self.to_string()),
            RenderError::PersonTooLarge { .. } => {
                rejected(ErrorCode::InputTooLarge, self.to_string())
            }
            RenderError::Product(ref p) => match p {
                ProductError::TooLarge { .. } => {
                    rejected(ErrorCode::InputTooLarge, self.to_string())
                }
                ProductError::Empty => EngineError::processing(self.to_string()),
                _ => rejected(ErrorCode::UnsupportedMedia, self.to_string()),
            },
            RenderError::TryOn(TryOnError::NoHeadPose) => {
                EngineError::processing("the face in the photo could not be measured")
            }
            RenderError::TryOn(TryOnError::BadProduct(_)) => {
                EngineError::processing(self.to_string())
            }
            other => EngineError::Internal(other.to_string()),
        }
    }
}

/// The `glasses` / `sunglasses` engine: a [`vto_core::Engine`] over a shared [`Renderer`].
#[derive(Debug, Clone)]
pub struct EyewearEngine {
    renderer: Arc<Renderer>,
}

impl EyewearEngine {
    /// An engine on `renderer` (one renderer serves both categories).
    pub fn new(renderer: Arc<Renderer>) -> Self {
        EyewearEngine { renderer }
    }
}

#[async_trait]
impl Engine for EyewearEngine {
    fn name(&self) -> &str {
        "glasses-raster"
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        let kind = match input.category {
            Category::Glasses => Eyewear::Glasses,
            Category::Sunglasses => Eyewear::Sunglasses,
            other => {
                return Err(EngineError::Internal(format!(
                    "glasses engine called for {other:?}"
                )))
            }
        };
        let renderer = self.renderer.clone();
        let person = input.person.bytes.clone();
        let product = input.product.bytes.clone();
        let out =
            tokio::task::spawn_blocking(move || renderer.try_on_glasses(&person, &product, kind))
                .await
                .map_err(|e| EngineError::Internal(format!("render task failed: {e}")))?
                .map_err(RenderError::into_engine_error)?;
        Ok(Rendered {
            image: out.png,
            content_type: "image/png".into(),
            metadata: out.metadata,
        })
    }
}
