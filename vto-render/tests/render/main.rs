//! vto-render's tests, one binary: each module is one subject (a category, the vision
//! networks, the TFLite goldens, the CG subjects). One binary links wgpu, naga and the rest
//! once instead of once per file, and its tests share the two cores.
//!
//! Run one subject with a filter: `cargo test -p vto-render --all-features --test render --
//! garments_lower::`.
//!
//! Needs the models and the test photos (`VTO_MODELS_DIR`, default `<workspace>/models`;
//! `scripts/fetch-models.sh --test-photos`).

mod support;

mod faces;
mod fuzz_regressions;
mod garments;
mod garments_fit;
mod garments_lower;
mod glasses;
mod hair_arms;
mod hats;
mod jewelry;
mod looks;
mod materials;
mod on_model;
mod own_eyewear;
mod own_hat;
mod people;
mod product_photos;
mod product_pose;
mod products;
mod rings;
mod shoes;
mod skirts;
mod subjects;
mod tflite_golden;
mod thin_parts;
mod turned_heads;
mod vertex_colours;
mod vision;
