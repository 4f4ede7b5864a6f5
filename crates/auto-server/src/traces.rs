//! `[telemetry]` of `auto.toml`, where the server's traces go (an OpenTelemetry collector over
//! OTLP/HTTP), and the W3C `traceparent` a request brings, which its spans continue.
//!
//! The spans themselves are `tracing`'s (a request, a run, a step, a model call, a tool call);
//! the binary bridges them to OpenTelemetry with `tracing-opentelemetry` when an endpoint is
//! configured, and without one they cost what any `tracing` span costs.

use axum::http::HeaderMap;
use opentelemetry::propagation::Extractor;

/// The settings `[telemetry]` takes.
pub const TELEMETRY_KEYS: [&str; 4] = ["otlp_endpoint", "protocol", "service_name", "sample_ratio"];
/// The `service.name` of the traces unless the operator names another.
pub const SERVICE_NAME_DEFAULT: &str = "auto";
/// The longest `service_name`, in bytes.
pub const SERVICE_NAME_BYTES_MAX: usize = 255;
/// Where OTLP/HTTP takes traces under the collector's base address.
pub const TRACES_PATH: &str = "/v1/traces";

/// The body OTLP/HTTP sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `http/protobuf`, the collectors' default.
    Protobuf,
    /// `http/json`.
    Json,
}

/// Where and how traces are exported.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceExport {
    /// The collector's traces address: the configured base with [`TRACES_PATH`].
    pub traces_url: String,
    pub protocol: OtlpProtocol,
    pub service_name: String,
    /// The share of traces started here that are kept, 0 to 1; a request that brings a
    /// sampled `traceparent` is kept as its caller decided.
    pub sample_ratio: f64,
}

/// Reads `[telemetry]`: `None` when it names no `otlp_endpoint` (no traces are exported); a
/// problem names the setting, such as `telemetry.sample_ratio: expected a number from 0 to 1`.
pub fn trace_export(table: &toml::Table) -> Result<Option<TraceExport>, String> {
    if let Some(key) = table.keys().find(|k| !TELEMETRY_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "telemetry.{key} is not a setting this runtime reads; it reads {}",
            TELEMETRY_KEYS.join(", ")
        ));
    }
    let text = |key: &str| -> Result<Option<&str>, String> {
        match table.get(key) {
            None => Ok(None),
            Some(value) => value
                .as_str()
                .map(Some)
                .ok_or_else(|| format!("telemetry.{key}: expected a string")),
        }
    };
    let protocol = match text("protocol")? {
        None | Some("http/protobuf") => OtlpProtocol::Protobuf,
        Some("http/json") => OtlpProtocol::Json,
        Some(other) => {
            return Err(format!(
                "telemetry.protocol: {other:?} is not a protocol this runtime speaks; it speaks \"http/protobuf\" (the default) and \"http/json\""
            ));
        }
    };
    let service_name = text("service_name")?.unwrap_or(SERVICE_NAME_DEFAULT);
    if service_name.trim().is_empty() || service_name.len() > SERVICE_NAME_BYTES_MAX {
        return Err(format!(
            "telemetry.service_name: expected a name of 1 to {SERVICE_NAME_BYTES_MAX} bytes"
        ));
    }
    let sample_ratio = match table.get("sample_ratio") {
        None => 1.0,
        Some(value) => value
            .as_float()
            .or_else(|| value.as_integer().map(|i| i as f64))
            .filter(|r| (0.0..=1.0).contains(r))
            .ok_or("telemetry.sample_ratio: expected a number from 0 to 1")?,
    };
    let Some(endpoint) = text("otlp_endpoint")? else {
        if table.is_empty() {
            return Ok(None);
        }
        return Err(
            "telemetry.otlp_endpoint: the collector's address is needed to export traces, such as \"http://127.0.0.1:4318\"".into(),
        );
    };
    let base = endpoint.trim_end_matches('/');
    let url = http_url(base).ok_or_else(|| {
        format!("telemetry.otlp_endpoint: expected an http or https URL, such as \"http://127.0.0.1:4318\", not {endpoint:?}")
    })?;
    Ok(Some(TraceExport {
        traces_url: format!("{url}{TRACES_PATH}"),
        protocol,
        service_name: service_name.to_owned(),
        sample_ratio,
    }))
}

/// The address when it is an absolute http or https URL with a host.
fn http_url(base: &str) -> Option<&str> {
    let uri: axum::http::Uri = base.parse().ok()?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    (scheme_ok && uri.host().is_some_and(|h| !h.is_empty())).then_some(base)
}

/// The trace context a request's headers carry (`traceparent`, `tracestate`), read with the
/// process's propagator: empty when they carry none or no propagator is set.
pub fn request_context(headers: &HeaderMap) -> opentelemetry::Context {
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(headers))
    })
}

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Option<TraceExport>, String> {
        trace_export(&text.parse::<toml::Table>().expect("TOML"))
    }

    #[test]
    fn no_endpoint_exports_nothing_and_an_endpoint_takes_the_traces_path() {
        assert_eq!(read(""), Ok(None));
        let export = read("otlp_endpoint = \"http://127.0.0.1:4318/\"")
            .expect("valid")
            .expect("an export");
        assert_eq!(export.traces_url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(export.protocol, OtlpProtocol::Protobuf);
        assert_eq!(export.service_name, "auto");
        assert_eq!(export.sample_ratio, 1.0);
        let export = read(
            "otlp_endpoint = \"https://otel.example\"\nprotocol = \"http/json\"\nservice_name = \"auto-eu\"\nsample_ratio = 0",
        )
        .expect("valid")
        .expect("an export");
        assert_eq!(export.protocol, OtlpProtocol::Json);
        assert_eq!(export.service_name, "auto-eu");
        assert_eq!(export.sample_ratio, 0.0);
    }

    #[test]
    fn each_setting_is_checked_and_named() {
        assert_eq!(
            read("sample_ratio = 0.5"),
            Err("telemetry.otlp_endpoint: the collector's address is needed to export traces, such as \"http://127.0.0.1:4318\"".into())
        );
        assert_eq!(
            read("otlp_endpoint = \"grpc://x:4317\""),
            Err("telemetry.otlp_endpoint: expected an http or https URL, such as \"http://127.0.0.1:4318\", not \"grpc://x:4317\"".into())
        );
        assert_eq!(
            read("otlp_endpoint = \"http://x\"\nprotocol = \"grpc\""),
            Err("telemetry.protocol: \"grpc\" is not a protocol this runtime speaks; it speaks \"http/protobuf\" (the default) and \"http/json\"".into())
        );
        assert_eq!(
            read("otlp_endpoint = \"http://x\"\nsample_ratio = 1.01"),
            Err("telemetry.sample_ratio: expected a number from 0 to 1".into())
        );
        assert!(read("otlp_endpoint = \"http://x\"\nsample_ratio = 1").is_ok());
        assert_eq!(
            read("endpoint = \"http://x\""),
            Err("telemetry.endpoint is not a setting this runtime reads; it reads otlp_endpoint, protocol, service_name, sample_ratio".into())
        );
        // The name's bound: 255 bytes taken, 256 refused.
        let at = format!(
            "otlp_endpoint = \"http://x\"\nservice_name = \"{}\"",
            "a".repeat(255)
        );
        assert!(read(&at).is_ok());
        let past = format!(
            "otlp_endpoint = \"http://x\"\nservice_name = \"{}\"",
            "a".repeat(256)
        );
        assert_eq!(
            read(&past),
            Err("telemetry.service_name: expected a name of 1 to 255 bytes".into())
        );
    }
}
