//! The render house: one [`Renderer`] per process (the GPU context, the vision networks, the
//! rasterizer) and one generic engine adapter ([`BuiltinEngine`]) that turns any category's
//! [`TryOn`] into a [`vto_core::Engine`]. [`builtin`] returns the engines of every built-in
//! category.
//!
//! A sync try-on, one way through: bytes → [`decode_photo`] (vto-core `media`: sniffed, size
//! limits checked before decoding, EXIF orientation applied — the same path and limits as
//! the HTTP engines) and the product ([`crate::product::load`] or the same image decoder) →
//! [`Renderer::see`] (only what [`TryOn::needs`] asks for) → [`TryOn::try_on`] (placement over
//! [`crate::scene`], the rasterizer) → [`encode_png`], on tokio's blocking pool.
//!
//! # Face policy
//! The face that wears the product is the largest face that yields a face mesh: see
//! [`crate::vision::person`]. The result metadata says how many candidates were seen, which
//! was chosen and whether it was refined (`face`).
//!
//! # Concurrency
//! A [`Renderer`] renders up to [`RendererConfig::concurrency`] try-ons at once: it keeps that
//! many [`Vision`] instances (each with its own networks and scratch buffers) in a pool, and a
//! try-on holds one from decoding to encoding; further requests wait for one to come back
//! (`pool`) — a synchronous one at most [`RendererConfig::sync_wait`], then it is refused
//! with `service_unavailable` (HTTP 503 with `Retry-After`, not billed).
//! The rasterizer and the GPU device are shared (wgpu queues are thread-safe). The limit and
//! the renders in flight are in `/metrics` ([`BuiltinEngine`]'s `vto_builtin_render_*`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use image::RgbaImage;
use serde_json::json;
use vto_core::media::{self, ImageLimits, MediaError};
use vto_core::{
    Category, Engine, EngineError, Engines, ErrorCode, RenderInput, RenderOptions, Rendered,
};

mod pool;

use pool::{Lease, Pool, TakeError};

use crate::gpu::{GpuContext, GpuError};
use crate::models::{ModelError, ModelStore};
use crate::product::{self, ProductError};
use crate::raster::Rasterizer;
use crate::tryon::{
    Eyewear, LoadedProduct, Needs, Options, ProductInput, Shoes, Stages, TryOn, TryOnError,
    UpperGarment,
};
use crate::vision::face::FaceDetector;
use crate::vision::{
    face_belongs_to, BodyChoice, Face, FaceChoice, Networks, Person, UnknownVisionBackend, Vision,
    VisionBackend, VisionError,
};

/// Why a try-on failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No GPU.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Models missing or not verifying.
    #[error(transparent)]
    Models(#[from] ModelError),
    /// `VTO_VISION_BACKEND` names no backend.
    #[error(transparent)]
    Backend(#[from] UnknownVisionBackend),
    /// The person photo could not be used.
    #[error("the person photo cannot be used: {0}")]
    Photo(MediaError),
    /// The product photo could not be used.
    #[error("the product photo cannot be used: {0}")]
    ProductImage(MediaError),
    /// The vision pipelines failed.
    #[error(transparent)]
    Vision(#[from] VisionError),
    /// The category could not dress the person.
    #[error(transparent)]
    TryOn(#[from] TryOnError),
    /// PNG encoding failed.
    #[error("encoding the result failed: {0}")]
    Encode(String),
    /// A previous panic poisoned the GPU lock.
    #[error("the renderer is unavailable after an earlier failure")]
    Poisoned,
    /// Every pipeline stayed busy for as long as the try-on may wait to start
    /// ([`RendererConfig::sync_wait`]).
    #[error(
        "all {pipelines} render pipelines stayed busy for {} s; retry later",
        waited.as_secs_f32().round()
    )]
    Busy {
        /// How long the try-on waited.
        waited: Duration,
        /// The renderer's concurrency.
        pipelines: usize,
    },
}

impl From<ProductError> for RenderError {
    fn from(e: ProductError) -> Self {
        RenderError::TryOn(TryOnError::Product(e))
    }
}

/// Where the time went, for the benchmark and the metadata.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Decoding the photo and loading the product.
    pub decode: Duration,
    /// Upload, detection, landmarks, masks: what the category needs.
    pub vision: Duration,
    /// Placement, light estimation and the GPU render (with readback).
    pub raster: Duration,
    /// PNG encoding.
    pub encode: Duration,
}

/// A finished try-on.
#[derive(Debug, Clone)]
pub struct TryOnOutput {
    /// The PNG.
    pub png: Vec<u8>,
    /// The decoded result (same size as the photo as displayed).
    pub image: RgbaImage,
    /// The category's metadata plus `engine`, `face` and `timings_ms`.
    pub metadata: serde_json::Value,
    /// Where the time went.
    pub timings: Timings,
}

/// How a [`Renderer`] is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RendererConfig {
    /// Where the vision networks run.
    pub backend: VisionBackend,
    /// Try-ons rendered at once (at least 1); each holds its own vision networks and scratch.
    pub concurrency: usize,
    /// A person photo whose longer side exceeds this is scaled down to it right after
    /// decoding, before vision and rendering, and the result comes out at that size (0: never).
    /// Bounds each try-on's memory by configuration rather than by what a client sends.
    pub max_photo_side: u32,
    /// How long a synchronous try-on may wait for a free pipeline before it is refused with
    /// [`RenderError::Busy`] (`service_unavailable`: the client retries later) rather than
    /// queue behind a burst for longer than its HTTP client waits (`None`: as long as it
    /// takes). Asynchronous jobs always wait: their deadline bounds them.
    pub sync_wait: Option<Duration>,
}

/// The default [`RendererConfig::sync_wait`]: 30 s, the time many HTTP clients and proxies
/// wait for an answer by default.
pub const DEFAULT_SYNC_WAIT: Duration = Duration::from_secs(30);

/// The default [`RendererConfig::max_photo_side`]: 2048 px, more than any try-on result is shown
/// at and the largest photo the vision and fill stages are measured on.
pub const DEFAULT_MAX_PHOTO_SIDE: u32 = 2048;

impl Default for RendererConfig {
    /// `VisionBackend::Auto` and [`default_concurrency`].
    fn default() -> Self {
        RendererConfig {
            backend: VisionBackend::Auto,
            concurrency: default_concurrency(),
            max_photo_side: DEFAULT_MAX_PHOTO_SIDE,
            sync_wait: Some(DEFAULT_SYNC_WAIT),
        }
    }
}

/// The default number of try-ons a renderer runs at once: half the machine's cores, at least
/// 1 and at most 4. The CPU kernels already spread one inference over every core, and each
/// pooled pipeline holds about 20 MB (one activation arena for its networks and its image
/// buffers; the packed weights are shared across the pool); measured on 2 cores
/// (docs/performance.md), the server's RSS under load is 292 MB with 1 and 310 MB with 2.
pub fn default_concurrency() -> usize {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    (cores / 2).clamp(1, 4)
}

/// The render house: vision + rasterizer on one GPU context (see the module docs).
#[derive(Debug)]
pub struct Renderer {
    vision_on_cpu: bool,
    visions: Pool<Vision>,
    raster: Rasterizer,
    options: Options,
    max_photo_side: u32,
    sync_wait: Option<Duration>,
}

impl Renderer {
    /// Loads and verifies the models in `models_dir` and builds every pipeline, with the
    /// networks on the executor `VTO_VISION_BACKEND` picks (default `auto`: native CPU
    /// kernels on a CPU wgpu device, WGSL on a real GPU; see [`VisionBackend`]) and the
    /// default concurrency.
    pub fn new(models_dir: &Path) -> Result<Renderer, RenderError> {
        Self::with_config(
            models_dir,
            RendererConfig {
                backend: VisionBackend::from_env()?,
                ..RendererConfig::default()
            },
        )
    }

    /// [`Renderer::new`] with an explicit configuration.
    pub fn with_config(models_dir: &Path, config: RendererConfig) -> Result<Renderer, RenderError> {
        let ctx = GpuContext::shared()?;
        let store = ModelStore::open(models_dir)?;
        let nets =
            Networks::pool_for_context(&ctx, &store, config.backend, config.concurrency.max(1))?;
        Ok(Renderer {
            max_photo_side: config.max_photo_side,
            sync_wait: config.sync_wait,
            ..Self::with_pool(ctx, nets)
        })
    }

    /// Builds a renderer on given networks, one try-on at a time (tests may pass a reference
    /// interpreter).
    pub fn with_networks(ctx: Arc<GpuContext>, nets: Networks) -> Renderer {
        Self::with_pool(ctx, vec![nets])
    }

    fn with_pool(ctx: Arc<GpuContext>, nets: Vec<Networks>) -> Renderer {
        Renderer {
            vision_on_cpu: nets.iter().all(Networks::runs_on_cpu),
            raster: Rasterizer::new(ctx.clone()),
            visions: Pool::new(
                nets.into_iter()
                    .map(|n| Vision::new(ctx.clone(), n))
                    .collect(),
            ),
            options: Options::default(),
            max_photo_side: DEFAULT_MAX_PHOTO_SIDE,
            sync_wait: Some(DEFAULT_SYNC_WAIT),
        }
    }

    /// The process-wide renderer, created on first use from `models_dir` (later calls reuse
    /// it whatever directory they pass), configured as [`Renderer::new`].
    /// A failure is not cached: a later call retries.
    pub fn shared(models_dir: &Path) -> Result<Arc<Renderer>, RenderError> {
        Self::shared_with(
            models_dir,
            RendererConfig {
                backend: VisionBackend::from_env()?,
                ..RendererConfig::default()
            },
        )
    }

    /// [`Renderer::shared`] with an explicit configuration for the first creation.
    pub fn shared_with(
        models_dir: &Path,
        config: RendererConfig,
    ) -> Result<Arc<Renderer>, RenderError> {
        static SHARED: OnceLock<Mutex<Option<Arc<Renderer>>>> = OnceLock::new();
        let slot = SHARED.get_or_init(|| Mutex::new(None));
        let mut guard = slot.lock().map_err(|_| RenderError::Poisoned)?;
        if let Some(r) = guard.as_ref() {
            return Ok(r.clone());
        }
        let r = Arc::new(Renderer::with_config(models_dir, config)?);
        *guard = Some(r.clone());
        Ok(r)
    }

    /// Whether the vision networks run on the native CPU executor (else on wgpu).
    pub fn vision_on_cpu(&self) -> bool {
        self.vision_on_cpu
    }

    /// A pipeline, waiting for one at most `limit` (`None`: as long as it takes).
    fn lease(&self, limit: Option<Duration>) -> Result<Lease<'_, Vision>, RenderError> {
        self.visions.take_within(limit).map_err(|e| match e {
            TakeError::Poisoned => RenderError::Poisoned,
            TakeError::Busy { waited } => RenderError::Busy {
                waited,
                pipelines: self.visions.size(),
            },
        })
    }

    /// How long a synchronous try-on may wait for a free pipeline
    /// ([`RendererConfig::sync_wait`]).
    pub fn sync_wait(&self) -> Option<Duration> {
        self.sync_wait
    }

    /// How many try-ons this renderer runs at once.
    pub fn concurrency(&self) -> usize {
        self.visions.size()
    }

    /// Try-ons rendering right now.
    pub fn in_flight(&self) -> usize {
        self.visions.lent()
    }

    /// Runs every network of every pooled [`Vision`] once ([`Vision::warm_up`]) so that the
    /// first requests pay no first-run costs; returns how long it took.
    pub fn warm_up(&self) -> Result<Duration, RenderError> {
        let t0 = Instant::now();
        let mut idle = self.visions.lock().map_err(|_| RenderError::Poisoned)?;
        for vision in idle.iter_mut() {
            vision.warm_up()?;
        }
        drop(idle);
        Ok(t0.elapsed())
    }

    /// The rasterizer.
    pub fn rasterizer(&self) -> &Rasterizer {
        &self.raster
    }

    /// The shared stages a category renders with.
    pub fn stages(&self) -> Stages<'_> {
        Stages {
            raster: &self.raster,
            options: &self.options,
            product_faces: &[],
        }
    }

    /// Runs the face pipeline on a decoded photo: all faces, largest first.
    pub fn faces(&self, photo: &RgbaImage) -> Result<Vec<Face>, RenderError> {
        let mut vision = self.lease(None)?;
        let gpu = vision
            .image_ops()
            .upload(photo)
            .map_err(VisionError::from)?;
        Ok(vision.faces(&gpu)?)
    }

    /// The face that wears the product, by the face policy of the module docs; `None` when no
    /// candidate yields a mesh.
    pub fn choose_face(&self, photo: &RgbaImage) -> Result<Option<FaceChoice>, RenderError> {
        Ok(self
            .see(
                photo,
                Needs {
                    face: true,
                    ..Needs::default()
                },
            )?
            .face)
    }

    /// Runs the vision stage for `needs` on a decoded photo.
    pub fn see(&self, photo: &RgbaImage, needs: Needs) -> Result<Person, RenderError> {
        let mut vision = self.lease(None)?;
        see(&mut vision, photo, needs)
    }

    /// Dresses the person in `person` (PNG / JPEG / WebP bytes) with `product` (a 3D model or
    /// a product photo, per [`TryOn::product_input`]) for the category `tryon` renders.
    pub fn try_on(
        &self,
        tryon: &dyn TryOn,
        person: &[u8],
        product: &[u8],
    ) -> Result<TryOnOutput, RenderError> {
        self.try_on_with(tryon, person, product, &RenderOptions::default())
    }

    /// [`Renderer::try_on`] with a request's rendering options (e.g. `remove_own_eyewear`).
    pub fn try_on_with(
        &self,
        tryon: &dyn TryOn,
        person: &[u8],
        product: &[u8],
        request: &RenderOptions,
    ) -> Result<TryOnOutput, RenderError> {
        self.try_on_within(tryon, person, product, request, None)
    }

    /// [`Renderer::try_on_with`] that waits at most `wait` for a free pipeline (`None`: as
    /// long as it takes) and is refused with [`RenderError::Busy`] after it.
    pub fn try_on_within(
        &self,
        tryon: &dyn TryOn,
        person: &[u8],
        product: &[u8],
        request: &RenderOptions,
        wait: Option<Duration>,
    ) -> Result<TryOnOutput, RenderError> {
        // A kind of another category (the HTTP API refuses it; a library caller may not).
        if let Some(k) = request.product_kind {
            if k.category() != tryon.category() {
                return Err(TryOnError::BadProduct(format!(
                    "product_kind {k} is a {} kind; {} takes: {}",
                    k.category(),
                    tryon.category(),
                    vto_core::ProductKind::of(tryon.category())
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .into());
            }
        }
        let options = Options {
            remove_own_eyewear: request.remove_own_eyewear,
            remove_own_hat: request.remove_own_hat,
            product_kind: request.product_kind,
            ..self.options
        };
        let mut vision = self.lease(wait)?;
        let t0 = Instant::now();
        let received = decode_photo(person)?;
        let received_size = received.dimensions();
        let photo = fit_photo(received, self.max_photo_side);
        let product = match tryon.product_input() {
            ProductInput::Model => LoadedProduct::Model(product::load(product)?),
            ProductInput::Image => LoadedProduct::Image(
                media::decode_image(product, &ImageLimits::default())
                    .map_err(RenderError::ProductImage)?
                    .to_rgba8(),
            ),
        };
        // A garment photographed on a person shows their face (see `garment::cutout::on_model`).
        let product_faces = match &product {
            LoadedProduct::Image(img) => faces_on(&mut vision, img)?,
            LoadedProduct::Model(_) => Vec::new(),
        };
        let stages = Stages {
            raster: &self.raster,
            options: &options,
            product_faces: &product_faces,
        };
        let t1 = Instant::now();
        let needs = tryon.needs_for(&product, &options);
        let seen = see(&mut vision, &photo, needs)?;
        if needs.face && !needs.face_optional && seen.face.is_none() {
            return Err(TryOnError::NotFound(format!(
                "no face was found in the person photo; {} need a visible face",
                tryon.category().as_str()
            ))
            .into());
        }
        let t2 = Instant::now();
        let look = tryon.try_on(stages, &seen, &product)?;
        let t3 = Instant::now();
        let png = encode_png(&look.image)?;
        let t4 = Instant::now();
        let timings = Timings {
            decode: t1 - t0,
            vision: t2 - t1,
            raster: t3 - t2,
            encode: t4 - t3,
        };
        let mut metadata = look.metadata;
        metadata["engine"] = json!(tryon.engine_name());
        if photo.dimensions() != received_size {
            metadata["photo"] = json!({
                "received": [received_size.0, received_size.1],
                "rendered": [photo.width(), photo.height()],
                "why": format!("scaled down to the longer side's limit of {} px", self.max_photo_side),
            });
        }
        if let Some(choice) = &seen.face {
            metadata["face"] = face_metadata(choice);
            metadata["face_candidates"] = json!(choice.candidates);
        }
        if let Some(choice) = &seen.body_choice {
            metadata["person"] = body_metadata(choice);
        }
        if seen.face_set_aside {
            metadata["face"] = json!({
                "used": false,
                "why": "the face found is not this person's (it lies away from the body's head, \
                        another person's); their own face was not found (small, turned or \
                        hidden): skin tone and light come from the body",
            });
        }
        metadata["timings_ms"] = json!({
            "decode": timings.decode.as_secs_f64() * 1e3,
            "vision": timings.vision.as_secs_f64() * 1e3,
            "raster": timings.raster.as_secs_f64() * 1e3,
            "encode": timings.encode.as_secs_f64() * 1e3,
        });
        Ok(TryOnOutput {
            png,
            image: look.image,
            metadata,
            timings,
        })
    }
}

fn face_metadata(c: &FaceChoice) -> serde_json::Value {
    let d = &c.face.detection;
    json!({
        "policy": "the largest face (detection box area) that yields a face mesh",
        "candidates": c.candidates,
        "rank_by_size": c.rank,
        "detector": match c.face.detector {
            FaceDetector::ShortRange => "short_range",
            FaceDetector::FullRange => "full_range",
        },
        "box_px": [d.xmin, d.ymin, d.xmax, d.ymax],
        "score": c.face.score,
        "refined": c.refined,
    })
}

fn body_metadata(c: &BodyChoice) -> serde_json::Value {
    json!({
        "policy": "the largest person (pose detector's body circle) the pose model accepts",
        "people_seen": c.candidates,
        "rank_by_size": c.rank,
        "refined": c.refined,
    })
}

/// Decodes a person photo through vto-core's `media` (format sniffed, the HTTP path's pixel
/// limits checked before decoding, EXIF orientation applied) to RGBA8.
pub fn decode_photo(bytes: &[u8]) -> Result<RgbaImage, RenderError> {
    media::decode_image(bytes, &ImageLimits::default())
        .map(|img| img.to_rgba8())
        .map_err(RenderError::Photo)
}

/// `photo` scaled down (aspect kept, a triangle filter) so its longer side is at most
/// `max_side`; unchanged when it already is or when `max_side` is 0.
pub fn fit_photo(photo: RgbaImage, max_side: u32) -> RgbaImage {
    let (w, h) = photo.dimensions();
    let longest = w.max(h);
    if max_side == 0 || longest <= max_side {
        return photo;
    }
    let scale = f64::from(max_side) / f64::from(longest);
    let size = |v: u32| ((f64::from(v) * scale).round() as u32).clamp(1, max_side);
    image::imageops::resize(
        &photo,
        size(w),
        size(h),
        image::imageops::FilterType::Triangle,
    )
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

/// The built-in categories' renderers.
pub fn builtin_tryons() -> Vec<Arc<dyn TryOn>> {
    vec![
        Arc::new(Eyewear::Glasses),
        Arc::new(Eyewear::Sunglasses),
        Arc::new(crate::tryon::Hats),
        Arc::new(crate::tryon::Jewelry),
        Arc::new(Shoes),
        Arc::new(UpperGarment::Shirt),
        Arc::new(UpperGarment::Tshirt),
        Arc::new(UpperGarment::Jacket),
        Arc::new(crate::tryon::Pants),
        Arc::new(crate::tryon::Dress),
        Arc::new(crate::tryon::FullOutfit),
    ]
}

/// The built-in renderer for `category`, if there is one.
pub fn builtin_tryon(category: Category) -> Option<Arc<dyn TryOn>> {
    builtin_tryons()
        .into_iter()
        .find(|t| t.category() == category)
}

/// The engines of every built-in category, on the process-wide [`Renderer`] built from
/// `models_dir` as [`Renderer::new`] builds it.
pub fn builtin(models_dir: &Path) -> Result<Engines, RenderError> {
    builtin_with(
        models_dir,
        RendererConfig {
            backend: VisionBackend::from_env()?,
            ..RendererConfig::default()
        },
    )
}

/// [`builtin`] with an explicit renderer configuration.
pub fn builtin_with(models_dir: &Path, config: RendererConfig) -> Result<Engines, RenderError> {
    Ok(builtin_on(&Renderer::shared_with(models_dir, config)?))
}

/// The engines of every built-in category on `renderer`.
pub fn builtin_on(renderer: &Arc<Renderer>) -> Engines {
    let mut engines = Engines::new();
    for t in builtin_tryons() {
        engines.register(
            t.category(),
            Arc::new(BuiltinEngine::new(renderer.clone(), t)),
        );
    }
    engines
}

/// A one-off try-on with the process-wide renderer (models from [`default_models_dir`]): the
/// simple library entry, used by `vto try-on`. Returns the PNG and the metadata.
pub fn try_on(
    category: Category,
    person: &[u8],
    product: &[u8],
) -> Result<(Vec<u8>, serde_json::Value), RenderError> {
    let tryon = builtin_tryon(category).ok_or_else(|| {
        RenderError::TryOn(TryOnError::BadProduct(format!(
            "no built-in renderer for {}",
            category.as_str()
        )))
    })?;
    let r = Renderer::shared(&default_models_dir())?;
    let out = r.try_on(tryon.as_ref(), person, product)?;
    Ok((out.png, out.metadata))
}

/// The vision stage for `needs` on a decoded photo, with one pooled [`Vision`].
/// The least score of a face the detector finds on a product photo for it to count.
pub const PRODUCT_FACE_SCORE: f32 = 0.75;

/// The faces the face detector finds on `photo` (boxes `[x0, y0, x1, y1]`, pixels) with a
/// score of at least [`PRODUCT_FACE_SCORE`].
fn faces_on(vision: &mut Vision, photo: &RgbaImage) -> Result<Vec<[f32; 4]>, RenderError> {
    let gpu = vision
        .image_ops()
        .upload(photo)
        .map_err(VisionError::from)?;
    Ok(vision
        .detect_faces(&gpu)?
        .into_iter()
        .filter(|(d, _)| d.score >= PRODUCT_FACE_SCORE)
        .map(|(d, _)| [d.xmin, d.ymin, d.xmax, d.ymax])
        .collect())
}

fn see(vision: &mut Vision, photo: &RgbaImage, needs: Needs) -> Result<Person, RenderError> {
    let mut person = Person {
        photo: photo.clone(),
        face: None,
        body: None,
        body_choice: None,
        mask: None,
        hands: Vec::new(),
        face_set_aside: false,
    };
    if !(needs.face || needs.body || needs.person_mask || needs.hands) {
        return Ok(person);
    }
    let gpu = vision
        .image_ops()
        .upload(photo)
        .map_err(VisionError::from)?;
    if needs.face {
        person.face = vision.choose_face(&gpu)?;
    }
    if needs.body {
        if let Some((body, choice)) = vision.choose_body(&gpu)? {
            person.body = Some(body);
            person.body_choice = Some(choice);
        }
    }
    if let (Some(face), Some(body)) = (&person.face, &person.body) {
        if needs.face_of_body && !face_belongs_to(&face.face, body) {
            person.face = None;
            person.face_set_aside = true;
        }
    }
    if needs.person_mask {
        person.mask = Some(vision.selfie_mask(&gpu)?);
    }
    if needs.hands {
        person.hands = vision.hands(&gpu)?;
    }
    Ok(person)
}

impl RenderError {
    /// The engine error a client sees: input problems are rejections with a specific code,
    /// machine problems are internal.
    pub fn into_engine_error(self) -> EngineError {
        let rejected = |code, message: String| EngineError::Rejected { code, message };
        match self {
            RenderError::Photo(ref e) | RenderError::ProductImage(ref e) => {
                rejected(e.code(), self.to_string())
            }
            RenderError::Busy { .. } => rejected(ErrorCode::ServiceUnavailable, self.to_string()),
            RenderError::TryOn(t) => match t {
                TryOnError::Product(ref p) => match p {
                    ProductError::TooLarge { .. } => {
                        rejected(ErrorCode::InputTooLarge, t.to_string())
                    }
                    ProductError::Empty => EngineError::processing(t.to_string()),
                    _ => rejected(ErrorCode::UnsupportedMedia, format!("{}: {t}", p.code())),
                },
                TryOnError::NotFound(m) => EngineError::processing(m),
                TryOnError::NoHeadPose(_) => {
                    EngineError::processing("the face in the photo could not be measured")
                }
                TryOnError::BadProduct(_) | TryOnError::Scene(_) => {
                    EngineError::processing(t.to_string())
                }
                TryOnError::Raster(e) => EngineError::Internal(e.to_string()),
                TryOnError::Garment(e) => EngineError::Internal(e.to_string()),
            },
            other => EngineError::Internal(other.to_string()),
        }
    }
}

/// The generic engine adapter: any built-in category's [`TryOn`] as a [`vto_core::Engine`],
/// rendering on tokio's blocking pool over a shared [`Renderer`].
#[derive(Debug, Clone)]
pub struct BuiltinEngine {
    renderer: Arc<Renderer>,
    tryon: Arc<dyn TryOn>,
}

impl BuiltinEngine {
    /// The engine of `tryon`'s category on `renderer`.
    pub fn new(renderer: Arc<Renderer>, tryon: Arc<dyn TryOn>) -> Self {
        BuiltinEngine { renderer, tryon }
    }
}

#[async_trait]
impl Engine for BuiltinEngine {
    fn name(&self) -> &str {
        self.tryon.engine_name()
    }

    fn prometheus(&self) -> Option<String> {
        let category = self.tryon.category().as_str();
        Some(format!(
            "vto_builtin_render_concurrency_limit{{category=\"{category}\"}} {}\n\
             vto_builtin_renders_in_flight{{category=\"{category}\"}} {}\n",
            self.renderer.concurrency(),
            self.renderer.in_flight()
        ))
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        if input.category != self.tryon.category() {
            return Err(EngineError::Internal(format!(
                "the {} engine was called for {}",
                self.tryon.category().as_str(),
                input.category.as_str()
            )));
        }
        let renderer = self.renderer.clone();
        let tryon = self.tryon.clone();
        let person = input.person.bytes.clone();
        let product = input.product.bytes.clone();
        let options = input.options;
        // Only a synchronous request has a client waiting on the line.
        let wait = if input.category.is_sync() {
            renderer.sync_wait()
        } else {
            None
        };
        let out = tokio::task::spawn_blocking(move || {
            renderer.try_on_within(tryon.as_ref(), &person, &product, &options, wait)
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_try_on_that_could_not_start_in_time_is_service_unavailable_with_a_reason() {
        let e = RenderError::Busy {
            waited: Duration::from_millis(30_020),
            pipelines: 2,
        };
        let EngineError::Rejected { code, message } = e.into_engine_error() else {
            panic!("a busy renderer is not an internal failure");
        };
        assert_eq!(code, ErrorCode::ServiceUnavailable);
        assert_eq!(
            message,
            "all 2 render pipelines stayed busy for 30 s; retry later"
        );
    }
}
