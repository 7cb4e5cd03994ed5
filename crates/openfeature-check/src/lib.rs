//! No code: this crate holds `tests/provider.rs`, which evaluates flags through OpenFeature's
//! own Rust SDK and OFREP provider against the real server. It is a crate of its own so that
//! the provider's HTTP and TLS stack is built only for that test.
