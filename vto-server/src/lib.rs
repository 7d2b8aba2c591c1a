//! vto-server (stub, being built).
