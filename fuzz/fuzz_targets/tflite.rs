//! Fuzz target `tflite`: see [`vto_fuzz::tflite`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::tflite(data));
