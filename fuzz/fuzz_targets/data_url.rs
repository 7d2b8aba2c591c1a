//! Fuzz target `data_url`: see [`vto_fuzz::data_url`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::data_url(data));
