//! `/metrics` in the Prometheus text format: the requests this server answered, the runtime's
//! runs, steps, model and tool calls and trigger starts (`auto_runtime::telemetry`), the work
//! queue as the store holds it, and the process (`metrics-process` reads it for the platform;
//! the names are Prometheus's own `process_*`).

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use auto_store::WorkBacklog;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Every metric of ours is named `auto_...`; the process's keep Prometheus's own names.
const PREFIX: &str = "auto";

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
    work_items: Gauge,
    work_due: Gauge,
    work_due_lag: Gauge<f64, AtomicU64>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(ProcessCollector));
        let ours = registry.sub_registry_with_prefix(PREFIX);
        let requests = Family::<RequestLabels, Counter>::default();
        ours.register("http_requests", "HTTP requests answered", requests.clone());
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            // 0.5 ms to ~16 s.
            Histogram::new(exponential_buckets(0.0005, 2.0, 16))
        });
        ours.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request",
            latency.clone(),
        );
        let work_items = Gauge::default();
        ours.register(
            "work_items",
            "Items in the work queue of every playbook, timers due later included (the same on every server of a store)",
            work_items.clone(),
        );
        let work_due = Gauge::default();
        ours.register(
            "work_due_items",
            "Work items due now that no server holds",
            work_due.clone(),
        );
        let work_due_lag = Gauge::<f64, AtomicU64>::default();
        ours.register(
            "work_due_lag_seconds",
            "How long the oldest work item due and not held has waited to be claimed",
            work_due_lag.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            work_items,
            work_due,
            work_due_lag,
        }
    }

    /// Adds a counter another part of the server keeps, under `auto_<name>`.
    pub fn register_counter(&mut self, name: &str, help: &str, counter: Counter) {
        self.registry
            .sub_registry_with_prefix(PREFIX)
            .register(name, help, counter);
    }

    /// Adds the runtime's families (runs, steps, model and tool calls, trigger starts).
    pub fn register_runtime(&mut self, telemetry: &auto_runtime::telemetry::Telemetry) {
        telemetry.register(self.registry.sub_registry_with_prefix(PREFIX));
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

    /// The work queue as the store read it for this scrape.
    pub fn observe_backlog(&self, backlog: &WorkBacklog) {
        self.work_items.set(backlog.items);
        self.work_due.set(backlog.due);
        self.work_due_lag.set(backlog.oldest_due_ms as f64 / 1000.0);
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

/// The process's own figures, read at each scrape.
#[derive(Debug)]
struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let read = metrics_process::collector::collect();
        if let Some(seconds) = read.cpu_seconds_total {
            let metric = ConstCounter::new(seconds);
            metric.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                MetricType::Counter,
            )?)?;
        }
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                read.resident_memory_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                read.virtual_memory_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors",
                read.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                read.max_fds,
            ),
            (
                "process_threads",
                "Number of OS threads in the process",
                read.threads,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch in seconds",
                read.start_time_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let metric = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
                metric.encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)?;
            }
        }
        Ok(())
    }
}
