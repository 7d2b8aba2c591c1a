//! Fuzz target `photo`: see [`vto_fuzz::photo`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::photo(data));
