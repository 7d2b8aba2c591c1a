//! Procedural 3D sample products: eyewear, hats, jewelry and shoes as GLB, and the catalog of
//! them that the playground lists.
//!
//! - [`eyewear`]: glasses frames (clear, tinted, textured), the tests' and the gallery's
//!   frames and `examples/make_glasses.rs`'s.
//! - [`shoes`]: a sneaker and a boot.
//! - [`hats`]: a cap, a fedora and a beanie; [`jewelry`]: earrings, a necklace, a ring and a
//!   bangle; both built with [`build`] (a small mesh builder and procedural textures).
//! - [`catalog`]: every generated sample product in one list (the server's playground offers
//!   them).
//!
//! Every sample is written to a file with the library's [`crate::product::write`] and read
//! back with [`crate::product::load`], like any uploaded model.

pub mod build;
pub mod catalog;
pub mod eyewear;
pub mod hats;
pub mod jewelry;
pub mod shoes;
