//! What the render tests share: where the models and the workspace are, and the face cases.

pub mod face_cases;

use std::path::PathBuf;

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
