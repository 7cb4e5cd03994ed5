//! `embed_migrations!` reads `migrations/` at compile time; this makes a new or changed
//! migration rebuild the crate, as Diesel's documentation advises.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
