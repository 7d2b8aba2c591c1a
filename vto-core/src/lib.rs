//! vto-core (stub, being built).
