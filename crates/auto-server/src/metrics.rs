//! `/metrics`: request counts and latencies in the Prometheus text format.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("auto");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            // 0.5 ms to ~16 s.
            Histogram::new(exponential_buckets(0.0005, 2.0, 16))
        });
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request",
            latency.clone(),
        );
        Self {
            registry,
            requests,
            latency,
        }
    }

    /// Adds a counter another part of the server keeps, under `auto_<name>`.
    pub fn register_counter(&mut self, name: &str, help: &str, counter: Counter) {
        self.registry.register(name, help, counter);
    }

    pub fn observe_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let labels = RequestLabels {
            method: method.into(),
            route: route.into(),
            status,
        };
        self.requests.get_or_create(&labels).inc();
        let route = RouteLabels {
            method: method.into(),
            route: route.into(),
        };
        self.latency
            .get_or_create(&route)
            .observe(elapsed.as_secs_f64());
    }

    pub fn render(&self) -> String {
        let mut text = String::new();
        // Invariant: encoding into a String cannot fail; an error would mean a bug in the
        // metric types, and an empty page is the safe answer.
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}
