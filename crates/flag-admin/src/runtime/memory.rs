//! How the server's memory goes back to the system: allocations of answer size always mapped on
//! their own, and the pages freed by a cache build returned once it is done.
//!
//! Both matter at 10,000 flags. glibc raises its threshold for mapping an allocation on its own
//! to the size of the largest one freed, so after one 9 MB playground answer, every later answer
//! would be carved from the heap and its pages kept; and the rows a compiled environment is
//! built from lie between what the cache keeps, so glibc cannot return them by itself.

/// Fixes glibc's mapping threshold at 128 KiB (its starting value), which turns off its growth:
/// every allocation of at least that size is then mapped on its own and unmapped when freed.
/// Called once, first thing in `main`. Elsewhere than on glibc it does nothing.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[expect(
        unsafe_code,
        reason = "glibc's mallopt has no safe wrapper; it is the only way to fix the mapping threshold"
    )]
    // SAFETY: `mallopt` takes two integers and changes a setting under the allocator's own lock.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Returns to the system the pages the allocator holds free, in every arena. Elsewhere than on
/// glibc it does nothing.
///
/// Called when a cache is built, never per request: after a client-API answer is made (once per
/// revision and question), and before and after compiling environments (once per revision and
/// environment), since the rows they are read from are freed by then.
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[expect(
        unsafe_code,
        reason = "glibc's malloc_trim has no safe wrapper; it is the only way to return free pages that lie between live allocations"
    )]
    // SAFETY: `malloc_trim` takes no pointer and only walks the allocator's own free lists, under
    // the allocator's locks; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
