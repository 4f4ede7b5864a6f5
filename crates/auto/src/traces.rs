//! Traces to an OpenTelemetry collector, when `[telemetry] otlp_endpoint` names one: the SDK's
//! tracer provider with a batch exporter over OTLP/HTTP, the W3C trace-context propagator (a
//! request's `traceparent` is continued, and passed on to tool servers over HTTP), and the
//! tracer the `tracing` bridge writes the server's spans through.

use anyhow::{Context, Result};
use auto_server::traces::{OtlpProtocol, TraceExport};
use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, Tracer};

/// The running exporter; [`Traces::shutdown`] sends what it still holds.
pub struct Traces {
    provider: SdkTracerProvider,
}

/// Starts exporting as `export` says; the tracer for the `tracing` bridge.
pub async fn start(export: &TraceExport) -> Result<(Traces, Tracer)> {
    let export = export.clone();
    // The exporter's HTTP client is a blocking one, which must be made (and later dropped)
    // outside the async runtime's threads.
    let provider = tokio::task::spawn_blocking(move || provider(&export))
        .await
        .context("the trace exporter could not start")??;
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let tracer = provider.tracer("auto");
    Ok((Traces { provider }, tracer))
}

fn provider(export: &TraceExport) -> Result<SdkTracerProvider> {
    let protocol = match export.protocol {
        OtlpProtocol::Protobuf => Protocol::HttpBinary,
        OtlpProtocol::Json => Protocol::HttpJson,
    };
    // The exporter's reqwest is the one rmcp's client uses, with rustls on the process's provider.
    auto_tools::install_tls_provider();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(protocol)
        .with_endpoint(&export.traces_url)
        .build()
        .with_context(|| {
            format!(
                "the trace exporter to {} could not be built",
                export.traces_url
            )
        })?;
    let resource = Resource::builder()
        .with_service_name(export.service_name.clone())
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            export.sample_ratio,
        ))))
        .with_resource(resource)
        .build())
}

impl Traces {
    /// Sends the spans not sent yet and stops the exporter.
    pub async fn shutdown(self) {
        let provider = self.provider;
        let stopped = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        if let Ok(Err(error)) = stopped {
            tracing::warn!(%error, "the trace exporter did not stop cleanly");
        }
    }
}
