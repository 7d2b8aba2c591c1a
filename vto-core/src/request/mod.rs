//! The create-request body and its validation: raw JSON fields → a [`ValidatedRequest`].
//!
//! Every problem is reported, each with a stable code and the field at fault (`param`), so a
//! client fixes all of them in one round trip. `webhook_url` on a synchronous category is
//! ignored, as the spec says.

mod inputs;
mod options;

use inputs::{parse_input, parse_webhook};
pub use options::{
    ProductKind, Removal, RemoveOwnEyewear, RemoveOwnHat, RenderOptions, UnknownProductKind,
    UnknownRemoval,
};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::category::{Category, ProductInput};

/// The POST body as sent: every field optional and untyped, so validation can name each problem.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateRequest {
    /// One of the eleven category values.
    #[serde(default)]
    pub category: Option<serde_json::Value>,
    /// URL of the person photo.
    #[serde(default)]
    pub person_image: Option<serde_json::Value>,
    /// URL of a 3D model (glasses, sunglasses, hats, jewelry, shoes).
    #[serde(default)]
    pub product_model: Option<serde_json::Value>,
    /// URL of a product photo (shirt, tshirt, dress, jacket, pants, full_outfit).
    #[serde(default)]
    pub product_image: Option<serde_json::Value>,
    /// Completion webhook for asynchronous categories.
    #[serde(default)]
    pub webhook_url: Option<serde_json::Value>,
    /// `auto` (default), `never` or `always`: whether to take off the person's own glasses
    /// before a glasses or sunglasses try-on (accepted, and ignored, for other categories).
    #[serde(default)]
    pub remove_own_eyewear: Option<serde_json::Value>,
    /// `auto` (default), `never` or `always`: whether to take off the hat the person already
    /// wears before a hats try-on (accepted, and ignored, for other categories).
    #[serde(default)]
    pub remove_own_hat: Option<serde_json::Value>,
    /// What the product is, overriding what the model file says or its shape suggests
    /// (optional; [`ProductKind`]: `jewelry` takes `ring`, `earrings`, `stud`, `hoop`, `drop`,
    /// `necklace`, `bracelet`, `watch`; `hats` takes `cap`, `brimmed`, `beanie`; the other
    /// categories take none).
    #[serde(default)]
    pub product_kind: Option<serde_json::Value>,
}

/// Size bounds applied during validation. Documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLimits {
    /// Longest accepted http(s) URL, in bytes (default 2048).
    pub max_url_len: usize,
    /// Largest decoded `data:` URL payload, in bytes (default 10 MiB).
    pub max_data_bytes: usize,
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self {
            max_url_len: 2048,
            max_data_bytes: 10 * 1024 * 1024,
        }
    }
}

/// Where an input comes from.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputRef {
    /// An `http` or `https` URL, fetched by the worker.
    Url {
        /// The URL as given.
        url: String,
    },
    /// A `data:` URL, already decoded.
    Data {
        /// The declared media type (sniffed again before use; never trusted).
        media_type: String,
        /// The decoded bytes.
        #[serde(with = "b64")]
        bytes: Vec<u8>,
    },
}

impl fmt::Debug for InputRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputRef::Url { url } => write!(f, "Url({url})"),
            InputRef::Data { media_type, bytes } => {
                write!(f, "Data({media_type}, {} bytes)", bytes.len())
            }
        }
    }
}

mod b64 {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(serde::de::Error::custom)
    }
}

/// A create request that passed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidatedRequest {
    /// The category.
    pub category: Category,
    /// The person photo.
    pub person_image: InputRef,
    /// The product: a model or an image, as the category requires.
    pub product: InputRef,
    /// The completion webhook: `None` for synchronous categories even when one was sent.
    pub webhook_url: Option<String>,
    /// The rendering options (defaults for a job stored before they existed).
    #[serde(default)]
    pub options: RenderOptions,
}

/// Stable codes for validation problems (the `details[].code` of a 400 reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationCode {
    /// A required field is absent or null.
    MissingField,
    /// A field has the wrong JSON type (e.g. a number where a string belongs).
    InvalidType,
    /// `category` is not one of the eleven values.
    UnknownCategory,
    /// A product field that this category does not take.
    FieldNotAllowed,
    /// Not a URL, or malformed.
    InvalidUrl,
    /// A URL scheme other than https, http or data.
    UnsupportedScheme,
    /// Over a size bound.
    TooLarge,
    /// A field's value is not one of those it accepts (e.g. `remove_own_eyewear`).
    InvalidValue,
    /// A `product_kind` that exists but not in the request's category (a `cap` sent as
    /// `jewelry`, any kind sent with `glasses`).
    UnsupportedProductKind,
}

impl ValidationCode {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationCode::MissingField => "missing_field",
            ValidationCode::InvalidType => "invalid_type",
            ValidationCode::UnknownCategory => "unknown_category",
            ValidationCode::FieldNotAllowed => "field_not_allowed",
            ValidationCode::InvalidUrl => "invalid_url",
            ValidationCode::UnsupportedScheme => "unsupported_scheme",
            ValidationCode::TooLarge => "too_large",
            ValidationCode::InvalidValue => "invalid_value",
            ValidationCode::UnsupportedProductKind => "unsupported_product_kind",
        }
    }
}

/// One validation problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// What is wrong.
    pub code: ValidationCode,
    /// The field at fault, e.g. `product_model`.
    pub param: String,
    /// A sentence for a person.
    pub message: String,
}

impl FieldError {
    fn new(code: ValidationCode, param: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            param: param.to_string(),
            message: message.into(),
        }
    }
}

/// Every problem found in one request, in field order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{}", .errors.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
pub struct ValidationErrors {
    /// The problems; never empty.
    pub errors: Vec<FieldError>,
}

impl CreateRequest {
    /// Validates the request against the limits.
    pub fn validate(&self, limits: &RequestLimits) -> Result<ValidatedRequest, ValidationErrors> {
        let mut errors = Vec::new();

        let category = match string_field(&self.category, "category", &mut errors) {
            Some(s) => match s.parse::<Category>() {
                Ok(c) => Some(c),
                Err(_) => {
                    errors.push(FieldError::new(
                        ValidationCode::UnknownCategory,
                        "category",
                        format!(
                            "unknown category {s:?}; expected one of: {}",
                            Category::ALL.map(Category::as_str).join(", ")
                        ),
                    ));
                    None
                }
            },
            None => None,
        };

        let person = string_field(&self.person_image, "person_image", &mut errors)
            .and_then(|s| parse_input(s, "person_image", limits, &mut errors));

        let model = present(&self.product_model);
        let image = present(&self.product_image);
        let product = match category.map(Category::product_input) {
            Some(wanted) => {
                let (given, other) = match wanted {
                    ProductInput::Model => (model, image),
                    ProductInput::Image => (image, model),
                };
                if other.is_some() {
                    errors.push(FieldError::new(
                        ValidationCode::FieldNotAllowed,
                        wanted.other().field(),
                        format!(
                            "{} is not accepted for category {}; send {}",
                            wanted.other().field(),
                            category.map(Category::as_str).unwrap_or_default(),
                            wanted.field()
                        ),
                    ));
                }
                let field = match wanted {
                    ProductInput::Model => &self.product_model,
                    ProductInput::Image => &self.product_image,
                };
                if given.is_none() {
                    errors.push(FieldError::new(
                        ValidationCode::MissingField,
                        wanted.field(),
                        format!(
                            "{} is required for category {}",
                            wanted.field(),
                            category.map(Category::as_str).unwrap_or_default()
                        ),
                    ));
                    None
                } else {
                    string_field(field, wanted.field(), &mut errors)
                        .and_then(|s| parse_input(s, wanted.field(), limits, &mut errors))
                }
            }
            // Without a valid category we cannot say which product field is right; still
            // check the URLs that were given so every other problem shows in this reply.
            None => {
                for (field, name) in [
                    (&self.product_model, "product_model"),
                    (&self.product_image, "product_image"),
                ] {
                    if present(field).is_some() {
                        if let Some(s) = string_field(field, name, &mut errors) {
                            parse_input(s, name, limits, &mut errors);
                        }
                    }
                }
                None
            }
        };

        let webhook = match present(&self.webhook_url) {
            Some(_) if category.is_some_and(Category::is_sync) => None, // ignored, per spec
            Some(_) => string_field(&self.webhook_url, "webhook_url", &mut errors)
                .and_then(|s| parse_webhook(s, limits, &mut errors)),
            None => None,
        };

        let remove_own_eyewear =
            removal_field(&self.remove_own_eyewear, "remove_own_eyewear", &mut errors);
        let remove_own_hat = removal_field(&self.remove_own_hat, "remove_own_hat", &mut errors);

        let product_kind = match present(&self.product_kind) {
            None => None,
            Some(_) => {
                string_field(&self.product_kind, "product_kind", &mut errors).and_then(|s| {
                    match s.parse::<ProductKind>() {
                        Ok(k) => Some(k),
                        Err(e) => {
                            errors.push(FieldError::new(
                                ValidationCode::InvalidValue,
                                "product_kind",
                                e.to_string(),
                            ));
                            None
                        }
                    }
                })
            }
        };
        if let (Some(kind), Some(category)) = (product_kind, category) {
            if kind.category() != category {
                let takes = ProductKind::of(category);
                let takes = if takes.is_empty() {
                    "none".to_string()
                } else {
                    takes
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                errors.push(FieldError::new(
                    ValidationCode::UnsupportedProductKind,
                    "product_kind",
                    format!(
                        "product_kind {kind} is a {} kind; category {category} takes: {takes}",
                        kind.category()
                    ),
                ));
            }
        }

        match (category, person, product) {
            (Some(category), Some(person_image), Some(product)) if errors.is_empty() => {
                Ok(ValidatedRequest {
                    category,
                    person_image,
                    product,
                    webhook_url: webhook,
                    options: RenderOptions {
                        remove_own_eyewear,
                        remove_own_hat,
                        product_kind,
                    },
                })
            }
            _ => Err(ValidationErrors { errors }),
        }
    }
}

/// `Some` when the field is present and not JSON null.
fn present(v: &Option<serde_json::Value>) -> Option<&serde_json::Value> {
    v.as_ref().filter(|v| !v.is_null())
}

fn string_field<'a>(
    v: &'a Option<serde_json::Value>,
    name: &str,
    errors: &mut Vec<FieldError>,
) -> Option<&'a str> {
    match present(v) {
        None => {
            errors.push(FieldError::new(
                ValidationCode::MissingField,
                name,
                format!("{name} is required"),
            ));
            None
        }
        Some(serde_json::Value::String(s)) => Some(s.as_str()),
        Some(_) => {
            errors.push(FieldError::new(
                ValidationCode::InvalidType,
                name,
                format!("{name} must be a string"),
            ));
            None
        }
    }
}

/// An optional [`Removal`] field: its default when absent or null, else the value named (an
/// unknown value or a non-string is an error on the field, and the default stands in).
fn removal_field(
    v: &Option<serde_json::Value>,
    name: &str,
    errors: &mut Vec<FieldError>,
) -> Removal {
    if present(v).is_none() {
        return Removal::default();
    }
    string_field(v, name, errors)
        .and_then(|s| match s.parse::<Removal>() {
            Ok(r) => Some(r),
            Err(e) => {
                errors.push(FieldError::new(
                    ValidationCode::InvalidValue,
                    name,
                    format!("{name}: {e}"),
                ));
                None
            }
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
