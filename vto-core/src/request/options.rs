//! Per-request rendering options: what a client may ask of the renderer beyond the inputs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What to do with glasses the person already wears, before a `glasses` or `sunglasses`
/// try-on (`remove_own_eyewear` in the request; other categories ignore it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoveOwnEyewear {
    /// Remove them when the detector is confident enough that there are some (the default;
    /// the threshold is documented in `docs/own-eyewear.md`).
    #[default]
    Auto,
    /// Never remove them: the new frame is drawn over the photo as it is.
    Never,
    /// Remove whatever the detector traced, however unsure it is.
    Always,
}

impl RemoveOwnEyewear {
    /// Every value, in the order the documentation lists them.
    pub const ALL: [RemoveOwnEyewear; 3] = [
        RemoveOwnEyewear::Auto,
        RemoveOwnEyewear::Never,
        RemoveOwnEyewear::Always,
    ];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            RemoveOwnEyewear::Auto => "auto",
            RemoveOwnEyewear::Never => "never",
            RemoveOwnEyewear::Always => "always",
        }
    }
}

impl fmt::Display for RemoveOwnEyewear {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value that is not one of [`RemoveOwnEyewear::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown remove_own_eyewear value {0:?}; expected one of: auto, never, always")]
pub struct UnknownRemoveOwnEyewear(pub String);

impl FromStr for RemoveOwnEyewear {
    type Err = UnknownRemoveOwnEyewear;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RemoveOwnEyewear::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownRemoveOwnEyewear(s.to_string()))
    }
}

/// The rendering options of one request (every field has a default, so a job stored before a
/// field existed reads back with it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderOptions {
    /// What to do with the person's own glasses (eyewear categories).
    #[serde(default)]
    pub remove_own_eyewear: RemoveOwnEyewear,
}
