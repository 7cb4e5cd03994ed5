//! Prometheus metrics: requests by method, route pattern and status, password verifications,
//! dropped SDK usage and the SDK usage rows evicted past the store's caps. Labels never carry a
//! raw path, so a secret in a path cannot reach them and unmatched paths share one label.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts, Registry, TextEncoder,
};

/// The server's metrics.
#[derive(Debug, Clone)]
pub struct Metrics {
    registry: Registry,
    /// `None` only if the histogram could not be registered, which its constant options rule out.
    requests: Option<HistogramVec>,
    /// Likewise `None` only if it could not be registered.
    verifications: Option<IntCounter>,
    /// Likewise.
    dropped_reports: Option<IntCounter>,
    /// Likewise; by `kind`: `unknown_flags`, `applications`, `instances`.
    evicted_usage: Option<IntCounterVec>,
}

impl Default for Metrics {
    fn default() -> Self {
        let registry = Registry::new();
        let requests = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP request duration in seconds",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route", "status"],
        )
        .ok()
        .filter(|requests| registry.register(Box::new(requests.clone())).is_ok());
        let verifications = IntCounter::new(
            "password_verifications_total",
            "Argon2 password verifications run by logins, for unknown users too",
        )
        .ok()
        .filter(|counter| registry.register(Box::new(counter.clone())).is_ok());
        let dropped_reports = IntCounter::new(
            "sdk_usage_dropped_total",
            "SDK usage entries dropped: past the in-memory bounds, or refused by the database",
        )
        .ok()
        .filter(|counter| registry.register(Box::new(counter.clone())).is_ok());
        let evicted_usage = IntCounterVec::new(
            Opts::new(
                "sdk_usage_evicted_total",
                "SDK usage rows evicted from the database past its caps, least recently seen first",
            ),
            &["kind"],
        )
        .ok()
        .filter(|counter| registry.register(Box::new(counter.clone())).is_ok());
        Self {
            registry,
            requests,
            verifications,
            dropped_reports,
            evicted_usage,
        }
    }
}

impl Metrics {
    /// Records one request.
    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        if let Some(requests) = &self.requests {
            requests
                .with_label_values(&[method, route, &status.to_string()])
                .observe(seconds);
        }
    }

    /// The text exposition format, with the application's counts: password verifications,
    /// dropped SDK usage and evicted SDK usage rows.
    pub fn render(&self, app: &flag_admin::Ctx) -> String {
        for (counter, total) in [
            (&self.verifications, app.identity().passwords_verified()),
            (&self.dropped_reports, app.delivery().usage().dropped()),
        ] {
            if let Some(counter) = counter {
                counter.inc_by(total.saturating_sub(counter.get()));
            }
        }
        if let Some(evicted_usage) = &self.evicted_usage {
            let evicted = app.delivery().usage().evicted();
            for (kind, total) in [
                ("unknown_flags", evicted.unknown_flags),
                ("applications", evicted.applications),
                ("instances", evicted.instances),
            ] {
                let counter = evicted_usage.with_label_values(&[kind]);
                counter.inc_by(total.saturating_sub(counter.get()));
            }
        }
        let mut buffer = Vec::new();
        // Encoding gathered metrics into a Vec cannot fail.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buffer);
        String::from_utf8(buffer).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_exported_by_route() {
        let metrics = Metrics::default();
        metrics.observe("GET", "/invite/{token}/validate", 200, 0.002);
        let mut buffer = Vec::new();
        let _ = TextEncoder::new().encode(&metrics.registry.gather(), &mut buffer);
        let text = String::from_utf8(buffer).unwrap_or_default();
        assert!(text.contains("http_request_duration_seconds_count{method=\"GET\",route=\"/invite/{token}/validate\",status=\"200\"} 1"), "{text}");
    }
}
