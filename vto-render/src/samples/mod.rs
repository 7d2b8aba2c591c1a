//! Procedural sample products and drawn test figures (feature `samples`).
//!
//! Nothing in the library's loading or rendering code imports from here: these generators
//! exist for the playground (the `vto` binary turns the feature on), the examples, the
//! benches and the tests. [`product`] holds the 3D sample products (eyewear, hats, jewelry,
//! shoes, and the catalog the playground lists); [`garment`] holds the sample garment photos
//! and the drawn full-body figures.

pub mod garment;
pub mod product;
