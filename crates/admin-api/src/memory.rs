//! Giving freed memory back to the system after a cache entry is built.

/// Returns to the system the pages the allocator holds free, in every arena.
///
/// A compiled environment or a client-API answer is built from database rows and buffers that
/// are freed once it is done. glibc keeps the pages they took for later allocations, and since
/// they lie between what the cache keeps, it cannot give them back by itself: at 10,000 flags
/// one rebuild would leave tens of MiB resident that nothing uses. Called once per built entry
/// (so once per revision and question), never per request; it takes a few milliseconds.
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
