//! Procedural 3D sample products: eyewear, hats, jewelry and shoes as GLB, and the catalog of
//! them that the playground lists.
