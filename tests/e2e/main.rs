//! End-to-end tests of the real `vto` binary over HTTP (see the `vto_tests` crate docs for
//! how the binary is found). One test binary, five parts.

mod api;
mod cdp;
mod crash;
mod doubles;
mod playground;
mod quickstart;
mod scale;
