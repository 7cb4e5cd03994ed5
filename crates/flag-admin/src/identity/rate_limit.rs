//! A fixed-window request counter per client address, for signups and logins.
//!
//! Counts are kept per server process: with several replicas, each allows the limit on its own.
//! The address is the connection's peer address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::runtime::error::AdminError;

/// A fixed-window request counter per client address. Limits are per server process.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u32,
    windows: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl RateLimiter {
    const WINDOW: Duration = Duration::from_secs(60);

    /// Allows `per_minute` requests per address and minute.
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a request from `address`; over the limit, the seconds until its window ends.
    pub fn check(&self, address: IpAddr) -> Result<(), u64> {
        let now = Instant::now();
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if windows.len() > 10_000 {
            windows.retain(|_, (start, _)| now.duration_since(*start) < Self::WINDOW);
        }
        let (start, count) = windows.entry(address).or_insert((now, 0));
        if now.duration_since(*start) >= Self::WINDOW {
            *start = now;
            *count = 0;
        }
        if *count >= self.per_minute {
            let left = Self::WINDOW.saturating_sub(now.duration_since(*start));
            return Err(left.as_secs().max(1));
        }
        *count += 1;
        Ok(())
    }
}

impl RateLimiter {
    /// Counts a request from `address`; over the limit, [`AdminError::TooManyRequests`].
    pub fn admit(&self, address: IpAddr) -> Result<(), AdminError> {
        self.check(address)
            .map_err(|retry_after| AdminError::TooManyRequests { retry_after })
    }
}
