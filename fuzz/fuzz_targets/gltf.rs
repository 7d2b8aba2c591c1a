//! Fuzz target `gltf`: see [`vto_fuzz::gltf`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::gltf(data));
