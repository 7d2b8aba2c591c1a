//! End-to-end tests of the real `vto` binary over HTTP (see the `vto_tests` crate docs for
//! how the binary is found). One test binary, three parts.

mod api;
mod crash;
mod doubles;
mod quickstart;
