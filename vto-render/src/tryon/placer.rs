//! The one adapter between a 3D category and [`TryOn`].
//!
//! A 3D category (eyewear, hats, jewelry, shoes) decides only where its product goes and what
//! hides it: it implements [`Placer`], whose [`Placer::place`] puts the loaded model into
//! camera space with its occluders (a [`Placed`] scene) and whose [`Placer::metadata`] says
//! what was decided. Every `Placer` is a [`TryOn`] through the blanket implementation here,
//! which does the rest the same way for all of them: take the model out of the
//! [`LoadedProduct`], pick the product out of the file's scene ([`pick`]: props, planes and
//! second copies dropped, listed in the metadata as `dropped_parts`), place it, rasterize the scene over the photo (or return the photo as it
//! is when there is nothing to draw), and pair the image with the metadata in a [`Look`].
//!
//! Head-worn categories build their scene with [`crate::scene::head_scene::HeadScene`] on
//! the face [`worn_face`] returns.

use image::RgbaImage;
use vto_core::Category;

use super::{LoadedProduct, Look, Needs, Options, Person, ProductInput, Stages, TryOn, TryOnError};
use crate::product::pick::pick;
use crate::product::Product;
use crate::raster::{RasterStats, Scene};
use crate::vision::Face;

/// A placed product: the scene to rasterize and what the category decided.
#[derive(Debug, Clone)]
pub struct Placed<P> {
    /// The scene; `None` when there is nothing to draw (jewelry: every ear turned away), and
    /// the look is the photo as it is.
    pub scene: Option<Scene>,
    /// The photo to draw on when the category changed it first (shoes: the old feet filled,
    /// the contact shadows drawn); `None`: the person's photo.
    pub photo: Option<RgbaImage>,
    /// What the category decided (where the product went, its fit, its occluders).
    pub placement: P,
}

impl<P> Placed<P> {
    /// The same scene and photo with the placement turned into another type.
    pub fn map<Q>(self, f: impl FnOnce(P) -> Q) -> Placed<Q> {
        Placed {
            scene: self.scene,
            photo: self.photo,
            placement: f(self.placement),
        }
    }
}

/// What a 3D category decides (see the module docs); the rest of [`TryOn`] is the adapter's.
pub trait Placer: Send + Sync + std::fmt::Debug {
    /// What the category records about a placement, for its metadata.
    type Placement;
    /// The category it renders.
    fn category(&self) -> Category;
    /// The engine name reported in metadata and metrics.
    fn engine_name(&self) -> &'static str;
    /// What the photo must show.
    fn needs(&self) -> Needs;
    /// What the photo must show for this model (see [`TryOn::needs_for`]).
    fn needs_for(&self, product: &Product, options: &Options) -> Needs {
        let _ = (product, options);
        self.needs()
    }
    /// Places `product` on `person`: the product and its occluders in camera space, built
    /// into a scene, and what was decided.
    fn place(
        &self,
        person: &Person,
        product: &Product,
        options: &Options,
    ) -> Result<Placed<Self::Placement>, TryOnError>;
    /// The result metadata of a placement rendered with `stats` (an error only when `person`
    /// lacks what [`Placer::place`] already required of it).
    fn metadata(
        &self,
        person: &Person,
        placed: &Placed<Self::Placement>,
        stats: &RasterStats,
    ) -> Result<serde_json::Value, TryOnError>;
}

impl<C: Placer> TryOn for C {
    fn category(&self) -> Category {
        Placer::category(self)
    }

    fn engine_name(&self) -> &'static str {
        Placer::engine_name(self)
    }

    fn needs(&self) -> Needs {
        Placer::needs(self)
    }

    fn needs_for(&self, product: &LoadedProduct, options: &Options) -> Needs {
        match product {
            LoadedProduct::Model(model) => Placer::needs_for(self, &pick(model).product, options),
            LoadedProduct::Image(_) => Placer::needs(self),
        }
    }

    fn product_input(&self) -> ProductInput {
        ProductInput::Model
    }

    fn try_on(
        &self,
        stages: Stages<'_>,
        person: &Person,
        product: &LoadedProduct,
    ) -> Result<Look, TryOnError> {
        let LoadedProduct::Model(product) = product else {
            return Err(TryOnError::BadProduct(format!(
                "{} needs a 3D model",
                Placer::category(self).as_str()
            )));
        };
        let picked = pick(product);
        let placed = self.place(person, &picked.product, stages.options)?;
        let photo = placed.photo.as_ref().unwrap_or(&person.photo);
        let (image, stats) = match &placed.scene {
            Some(scene) => stages.raster.render(photo, scene)?,
            None => (photo.clone(), RasterStats::default()),
        };
        let mut metadata = self.metadata(person, &placed, &stats)?;
        if let (false, Some(object)) = (picked.dropped.is_empty(), metadata.as_object_mut()) {
            let dropped = picked
                .dropped
                .iter()
                .map(|d| serde_json::json!({"part": d.part, "why": d.why}))
                .collect();
            object.insert("dropped_parts".into(), serde_json::Value::Array(dropped));
        }
        Ok(Look { image, metadata })
    }
}

/// The face a head-worn product goes on: the one the engine chose (it fails the job before
/// a category runs when [`Needs::face`] found none; a caller that builds the [`Person`]
/// itself gets the same error here).
pub fn worn_face(person: &Person, category: Category) -> Result<&Face, TryOnError> {
    person
        .face
        .as_ref()
        .map(|choice| &choice.face)
        .ok_or_else(|| {
            TryOnError::NotFound(format!(
                "no face was found in the person photo; {} need a visible face",
                category.as_str()
            ))
        })
}
