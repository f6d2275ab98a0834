//! Loader tests.
