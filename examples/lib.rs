//! Shared helpers for the examples.
