//! vto command line (stub).
fn main() {}
