//! What the process asks of the operating system at start.

/// Descriptors kept for everything but SDK streams: the listener, database connections, other
/// requests, files.
pub const RESERVED_DESCRIPTORS: u64 = 256;

/// Raises this process's limit on open files to the most it may have (its hard limit), since
/// every connection, each SDK stream included, holds one; returns the limit now in force, or
/// `None` where it cannot be read.
pub fn raise_open_files() -> Option<u64> {
    #[cfg(unix)]
    #[expect(
        unsafe_code,
        reason = "getrlimit and setrlimit have no safe wrapper in the standard library"
    )]
    // SAFETY: both calls only read or write the `rlimit` struct passed by reference, which lives
    // on this stack frame for the duration of the call.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
        Some(limit.rlim_cur)
    }
    #[cfg(not(unix))]
    None
}

/// The most streams `open_files` descriptors allow, keeping [`RESERVED_DESCRIPTORS`] for the
/// rest.
pub fn streams_allowed(open_files: u64) -> usize {
    usize::try_from(open_files.saturating_sub(RESERVED_DESCRIPTORS)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_raised_to_the_hard_limit_and_streams_fit_under_it() {
        let limit = raise_open_files();
        #[cfg(unix)]
        assert!(limit.is_some_and(|limit| limit >= 256), "{limit:?}");
        assert_eq!(streams_allowed(20_000), 19_744);
        assert_eq!(streams_allowed(100), 0);
    }
}
