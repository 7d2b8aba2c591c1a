//! Fuzz target `render_reply`: see [`vto_fuzz::render_reply`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vto_fuzz::render_reply(data));
