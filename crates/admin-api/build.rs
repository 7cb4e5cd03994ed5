//! The release binary's layout in memory, on x86_64 Linux with glibc (where rustc links with LLD).
//!
//! - **Code run together, placed together.** `link/halyard.order` lists, in order, the functions
//!   that starting and serving SDKs run (as server and as edge), written by `scripts/link-order`.
//!   LLD places them first in `.text`. Linux maps a file's pages 64 KiB around each page first
//!   run, so code run once at start-up, scattered over the 34 MB of `.text`, made most of it
//!   resident; packed, it maps about what it runs. Functions the list does not name (new, or
//!   renamed since it was written, as ThinLTO renames those it moves between a changed crate's
//!   codegen units) keep the compiler's placement, so an old list costs memory, never
//!   correctness; it is written again before a release. The names do not depend on where the
//!   tree is checked out, because the release profile has no debug information (Cargo.toml).
//! - **Packed relocations** (`-z pack-relative-relocs`, DT_RELR, glibc 2.36 and later): the
//!   dynamic loader otherwise reads 1.4 MB of position-independent relocations at every start.
//!
//! Nothing changes for other targets, other builds (debug, tests), cross builds, or a linker
//! chosen in `RUSTFLAGS`.

use std::path::Path;
use std::process::Command;

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/halyard.order");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-changed=build.rs");
    let laid_out = var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("HOST") == var("TARGET")
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if !laid_out {
        return;
    }
    let arg = |value: String| println!("cargo:rustc-link-arg-bin=halyard={value}");
    if order.exists() {
        arg(format!("-Wl,--symbol-ordering-file={}", order.display()));
        arg("-Wl,--no-warn-symbol-ordering".into());
    }
    if glibc_at_least(2, 36) {
        arg("-Wl,-z,pack-relative-relocs".into());
    }
}

/// Whether this machine's glibc (the one the binary will run on) reads packed relocations.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text.trim().trim_start_matches("glibc ").split('.');
    let mut next = || parts.next().and_then(|part| part.parse::<u32>().ok());
    matches!((next(), next()), (Some(a), Some(b)) if (a, b) >= (major, minor))
}
