//! Categories: one module each, over the shared stages.
//!
//! A category implements [`TryOn`]: it says what it needs to see in the photo ([`Needs`]) and
//! what kind of product it takes ([`ProductInput`]), and turns the person ([`Person`], from [`crate::vision`]:
//! the photo and what the vision stage found) and the product into the finished image, using the
//! shared stages ([`Stages`]: the rasterizer and the options; [`crate::scene`] for cameras,
//! light and occluders). The generic engine ([`crate::engine`]) does everything around it:
//! decoding, vision (only what [`TryOn::needs`] asks for), encoding, errors and metadata.
//!
//! A 3D category implements only [`Placer`] (where its product goes, its occluders, its
//! metadata); [`placer`] makes every `Placer` a `TryOn` the same way. The head-worn ones
//! build their scene on [`crate::scene::head_scene::HeadScene`].
//!
//! Categories today: [`eyewear`] (`glasses`, `sunglasses`), [`hats`], [`jewelry`], [`shoes`],
//! [`garments`] (tops: `shirt`, `tshirt`, `jacket` in [`garments::upper`]; `pants`, `dress`,
//! `full_outfit` in [`garments::lower`]).

pub mod eyewear;
pub mod garments;
pub mod hats;
pub mod jewelry;
pub mod own_eyewear;
pub mod placer;
pub mod shoes;

use image::RgbaImage;
use vto_core::Category;

use crate::garment::GarmentError;
use crate::product::{Product, ProductError};
use crate::raster::{RasterError, Rasterizer};
use crate::scene::camera::NoHeadPose;
use crate::scene::SceneError;

pub use eyewear::Eyewear;
pub use garments::{Dress, FullOutfit, Pants, UpperGarment};
pub use hats::Hats;
pub use jewelry::Jewelry;
pub use placer::{Placed, Placer};
pub use shoes::Shoes;

/// The person and the face choice belong to the vision stage; categories take them from here.
pub use crate::vision::{BodyChoice, FaceChoice, Person};
/// The form a category's product comes in (the request field that carries it).
pub use vto_core::ProductInput;

/// What a category needs the vision stage to find in the photo.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// One face with its 468 landmarks and head pose (the largest that yields a mesh).
    pub face: bool,
    /// The face is used when the photo shows one, but a photo without one is not refused
    /// (the garments: they need the body, the face only gives skin tone and light; a jewel
    /// whose shape may be a ring or an earring: ears and no hand make it an earring).
    pub face_optional: bool,
    /// The body: 33 pose keypoints and the pose model's person mask.
    pub body: bool,
    /// The selfie-segmentation person mask.
    pub person_mask: bool,
    /// The hands (palm detection, then 21 landmarks per hand): rings and bracelets.
    pub hands: bool,
    /// The face must be the body's own ([`crate::vision::face_belongs_to`]): another
    /// person's face is set aside ([`Person::face_set_aside`]) rather than shaping what the
    /// body wears (the garments: a neckline, skin tone and light).
    pub face_of_body: bool,
}

/// A decoded product.
#[derive(Debug, Clone)]
pub enum LoadedProduct {
    /// A loaded 3D model.
    Model(Product),
    /// A decoded product photo (RGBA, orientation applied).
    Image(RgbaImage),
}

/// The shared stages a category renders with.
#[derive(Debug, Clone, Copy)]
pub struct Stages<'a> {
    /// The product rasterizer.
    pub raster: &'a Rasterizer,
    /// Rendering options.
    pub options: &'a Options,
    /// The faces the face detector found on the product photo (boxes `[x0, y0, x1, y1]`,
    /// the photo's pixels; empty for a 3D model): a garment photographed on a person with
    /// the head in the frame is told by them
    /// ([`crate::garment::cutout::on_model::head_on_top`]).
    pub product_faces: &'a [[f32; 4]],
}

/// Rendering options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Supersampling per axis (1–4; 2 = 4 samples per pixel).
    pub supersampling: u32,
    /// Contact shadow strength (0 disables it).
    pub shadow_strength: f32,
    /// What an arm becomes where a new top's sleeve is shorter than the old one
    /// (`auto`, `bare` or `layered`; see [`crate::garment::shade::arm`]).
    pub arms: crate::garment::shade::arm::ArmsMode,
    /// What to do with the person's own glasses before an eyewear try-on (`auto`: remove
    /// them when detected; see [`own_eyewear`]). Per request.
    pub remove_own_eyewear: own_eyewear::RemoveOwnEyewear,
    /// What to do with the person's own hat before a hats try-on (`auto`: remove it when
    /// detected; see [`hats::own_hat`]). Per request.
    pub remove_own_hat: vto_core::RemoveOwnHat,
    /// What the product is, when the request says (`product_kind`; jewelry, hats and
    /// dress): overrides the file's `extras.vto.kind`, its names and the shape. Per request.
    pub product_kind: Option<vto_core::ProductKind>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            supersampling: 2,
            shadow_strength: 0.35,
            arms: crate::garment::shade::arm::ArmsMode::Auto,
            remove_own_eyewear: own_eyewear::RemoveOwnEyewear::Auto,
            remove_own_hat: vto_core::RemoveOwnHat::Auto,
            product_kind: None,
        }
    }
}

/// A finished look: the image (the photo's size) and what the category says about it.
#[derive(Debug, Clone)]
pub struct Look {
    /// The result.
    pub image: RgbaImage,
    /// Category-specific metadata (placement, fit, light, counts).
    pub metadata: serde_json::Value,
}

/// Why a category could not dress the person.
#[derive(Debug, thiserror::Error)]
pub enum TryOnError {
    /// The photo lacks what the category needs (a face, a body, a hand): said to the client.
    #[error("{0}")]
    NotFound(String),
    /// The face's head pose could not be measured.
    #[error(transparent)]
    NoHeadPose(#[from] NoHeadPose),
    /// The product cannot be used for this category.
    #[error("the product cannot be used: {0}")]
    BadProduct(String),
    /// The product could not be loaded.
    #[error(transparent)]
    Product(#[from] ProductError),
    /// The scene could not be built.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The rasterizer failed.
    #[error(transparent)]
    Raster(#[from] RasterError),
    /// The garment stage failed inside (its GPU kernel); what a photo or a product lacks is
    /// [`TryOnError::NotFound`] or [`TryOnError::BadProduct`] instead.
    #[error(transparent)]
    Garment(GarmentError),
}

/// One category's renderer (see the module docs).
pub trait TryOn: Send + Sync + std::fmt::Debug {
    /// The category it renders.
    fn category(&self) -> Category;
    /// The engine name reported in metadata and metrics.
    fn engine_name(&self) -> &'static str;
    /// What the photo must show.
    fn needs(&self) -> Needs;
    /// What the photo must show for this product with these options (a category whose
    /// products differ in what they need, such as jewelry on the ears or on a hand, narrows
    /// [`TryOn::needs`] here; the request's `product_kind` may decide which).
    fn needs_for(&self, product: &LoadedProduct, options: &Options) -> Needs {
        let _ = (product, options);
        self.needs()
    }
    /// The product's form.
    fn product_input(&self) -> ProductInput;
    /// Dresses `person` in `product`.
    fn try_on(
        &self,
        stages: Stages<'_>,
        person: &Person,
        product: &LoadedProduct,
    ) -> Result<Look, TryOnError>;
}
