//! The eight MediaPipe models vto uses, their pinned SHA-256, and where they live on disk.
//!
//! The models come from the PyPI wheel `mediapipe==0.10.14` (Apache-2.0) and are never
//! committed: `scripts/fetch-models.sh` (or `vto models fetch`) downloads the wheel with pip and
//! extracts them. [`ModelStore::open`] verifies every file's hash before anything runs on it.
//!
//! Directory: `VTO_MODELS_DIR` when set, else `<data dir>/models` ([`models_dir`]).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The command that fetches the models, named in error messages.
pub const FETCH_HINT: &str =
    "run `scripts/fetch-models.sh <dir>` (or `vto models fetch`) to download them";

/// One of the eight models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModelId {
    /// BlazeFace short range, 128×128 input: faces within ~2 m.
    FaceDetectionShortRange,
    /// BlazeFace full range (sparse), 192×192 input: small and far faces.
    FaceDetectionFullRange,
    /// Face mesh, 192×192 input: 468 landmarks and a face flag.
    FaceLandmark,
    /// BlazePose detector, 224×224 input.
    PoseDetection,
    /// BlazePose GHUM full, 256×256 input: 39 landmarks, segmentation, heatmap, world landmarks.
    PoseLandmarkFull,
    /// Selfie segmentation (general), 256×256 input.
    SelfieSegmentation,
    /// Palm detection (full), 192×192 input: palms with 7 keypoints.
    PalmDetectionFull,
    /// Hand landmarks (full), 224×224 input: 21 landmarks, a hand flag and the handedness.
    HandLandmarkFull,
}

impl ModelId {
    /// All eight, in a stable order.
    pub const ALL: [ModelId; 8] = [
        ModelId::FaceDetectionShortRange,
        ModelId::FaceDetectionFullRange,
        ModelId::FaceLandmark,
        ModelId::PoseDetection,
        ModelId::PoseLandmarkFull,
        ModelId::SelfieSegmentation,
        ModelId::PalmDetectionFull,
        ModelId::HandLandmarkFull,
    ];

    /// The file name (as in the wheel).
    pub fn file_name(self) -> &'static str {
        match self {
            ModelId::FaceDetectionShortRange => "face_detection_short_range.tflite",
            ModelId::FaceDetectionFullRange => "face_detection_full_range_sparse.tflite",
            ModelId::FaceLandmark => "face_landmark.tflite",
            ModelId::PoseDetection => "pose_detection.tflite",
            ModelId::PoseLandmarkFull => "pose_landmark_full.tflite",
            ModelId::SelfieSegmentation => "selfie_segmentation.tflite",
            ModelId::PalmDetectionFull => "palm_detection_full.tflite",
            ModelId::HandLandmarkFull => "hand_landmark_full.tflite",
        }
    }

    /// The path inside the mediapipe 0.10.14 wheel.
    pub fn wheel_path(self) -> &'static str {
        match self {
            ModelId::FaceDetectionShortRange => {
                "mediapipe/modules/face_detection/face_detection_short_range.tflite"
            }
            ModelId::FaceDetectionFullRange => {
                "mediapipe/modules/face_detection/face_detection_full_range_sparse.tflite"
            }
            ModelId::FaceLandmark => "mediapipe/modules/face_landmark/face_landmark.tflite",
            ModelId::PoseDetection => "mediapipe/modules/pose_detection/pose_detection.tflite",
            ModelId::PoseLandmarkFull => {
                "mediapipe/modules/pose_landmark/pose_landmark_full.tflite"
            }
            ModelId::SelfieSegmentation => {
                "mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite"
            }
            ModelId::PalmDetectionFull => {
                "mediapipe/modules/palm_detection/palm_detection_full.tflite"
            }
            ModelId::HandLandmarkFull => {
                "mediapipe/modules/hand_landmark/hand_landmark_full.tflite"
            }
        }
    }

    /// The pinned SHA-256 (lowercase hex) of the file in mediapipe 0.10.14.
    pub fn sha256(self) -> &'static str {
        match self {
            ModelId::FaceDetectionShortRange => {
                "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"
            }
            ModelId::FaceDetectionFullRange => {
                "2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1"
            }
            ModelId::FaceLandmark => {
                "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814"
            }
            ModelId::PoseDetection => {
                "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c"
            }
            ModelId::PoseLandmarkFull => {
                "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f"
            }
            ModelId::SelfieSegmentation => {
                "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c"
            }
            ModelId::PalmDetectionFull => {
                "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54"
            }
            ModelId::HandLandmarkFull => {
                "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3"
            }
        }
    }
}

/// Errors from locating and verifying models.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The models directory does not exist.
    #[error("models directory {dir} does not exist; {hint}", hint = FETCH_HINT)]
    NoDir {
        /// The directory looked in.
        dir: PathBuf,
    },
    /// A model file is missing.
    #[error("model {file} is missing from {dir}; {hint}", hint = FETCH_HINT)]
    Missing {
        /// The directory looked in.
        dir: PathBuf,
        /// The missing file's name.
        file: &'static str,
    },
    /// A model file's hash does not match the pinned one.
    #[error(
        "model {path} has SHA-256 {actual}, expected {expected} (mediapipe 0.10.14); delete it and {hint}",
        hint = FETCH_HINT
    )]
    HashMismatch {
        /// The file.
        path: PathBuf,
        /// Its hash.
        actual: String,
        /// The pinned hash.
        expected: &'static str,
    },
    /// The file could not be read.
    #[error("could not read model {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// The models directory: `VTO_MODELS_DIR` when set and not empty, else `<data_dir>/models`.
pub fn models_dir(data_dir: &Path) -> PathBuf {
    match std::env::var_os("VTO_MODELS_DIR") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => data_dir.join("models"),
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The eight models' bytes, each verified against its pinned hash.
#[derive(Debug, Clone)]
pub struct ModelStore {
    dir: PathBuf,
    bytes: Vec<(ModelId, Vec<u8>)>,
}

impl ModelStore {
    /// Reads and verifies all eight models in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<ModelStore, ModelError> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.is_dir() {
            return Err(ModelError::NoDir { dir });
        }
        let mut bytes = Vec::with_capacity(ModelId::ALL.len());
        for id in ModelId::ALL {
            bytes.push((id, Self::read_verified(&dir, id)?));
        }
        Ok(ModelStore { dir, bytes })
    }

    /// Reads and verifies one model file in `dir`.
    pub fn read_verified(dir: &Path, id: ModelId) -> Result<Vec<u8>, ModelError> {
        let path = dir.join(id.file_name());
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ModelError::Missing {
                    dir: dir.to_path_buf(),
                    file: id.file_name(),
                })
            }
            Err(source) => return Err(ModelError::Io { path, source }),
        };
        let actual = sha256_hex(&data);
        if actual != id.sha256() {
            return Err(ModelError::HashMismatch {
                path,
                actual,
                expected: id.sha256(),
            });
        }
        Ok(data)
    }

    /// The directory the models were read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A model's verified bytes.
    pub fn bytes(&self, id: ModelId) -> &[u8] {
        self.bytes
            .iter()
            .find(|(m, _)| *m == id)
            .map(|(_, b)| b.as_slice())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_pinned_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for id in ModelId::ALL {
            assert_eq!(id.sha256().len(), 64);
            assert!(id.wheel_path().ends_with(id.file_name()));
            assert!(seen.insert(id.sha256()));
        }
    }

    #[test]
    fn sha256_of_abc_is_the_standard_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn missing_models_name_the_fetch_command() {
        let dir = std::env::temp_dir().join(format!("vto-no-models-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = ModelStore::open(&dir).unwrap_err();
        assert!(matches!(err, ModelError::Missing { .. }), "{err:?}");
        assert!(err.to_string().contains("scripts/fetch-models.sh"), "{err}");
        std::fs::write(dir.join(ModelId::ALL[0].file_name()), b"not a model").unwrap();
        let err = ModelStore::open(&dir).unwrap_err();
        assert!(matches!(err, ModelError::HashMismatch { .. }), "{err:?}");
        std::fs::remove_dir_all(&dir).unwrap();
        let err = ModelStore::open(&dir).unwrap_err();
        assert!(matches!(err, ModelError::NoDir { .. }), "{err:?}");
    }

    #[test]
    fn models_dir_defaults_under_the_data_dir() {
        if std::env::var_os("VTO_MODELS_DIR").is_none() {
            assert_eq!(
                models_dir(Path::new("/data")),
                PathBuf::from("/data/models")
            );
        } else {
            assert_eq!(
                models_dir(Path::new("/data")),
                PathBuf::from(std::env::var_os("VTO_MODELS_DIR").unwrap())
            );
        }
    }
}
