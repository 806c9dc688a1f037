//! The LMDB C API, as bindgen generates it (see `make bindings`).

// Generated: formatting it would make it differ from a fresh generation.
#[rustfmt::skip]
pub mod bindings;
