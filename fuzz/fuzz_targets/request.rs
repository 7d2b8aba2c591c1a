//! Fuzz target `request`: see [`vto_fuzz::request`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::request(data));
