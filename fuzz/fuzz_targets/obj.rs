//! Fuzz target `obj`: see [`vto_fuzz::obj`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::obj(data));
