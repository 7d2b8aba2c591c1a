//! vto-render: the vision stack and the renderers of vto, as wgpu compute kernels.
//!
//! This crate is being built; see the crate README section in the workspace README.
