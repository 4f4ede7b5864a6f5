//! `auto serve`: read the configuration, open the store, check the keys against the address,
//! start the server and stop it cleanly on SIGTERM or ctrl-c.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use auto_server::config::{self, Config};
use clap::Args;

#[derive(Args)]
pub struct ServeArgs {
    /// The configuration file.
    #[arg(long, env = "AUTO_CONFIG")]
    config: Option<PathBuf>,
    /// The address to listen on.
    #[arg(long, env = "AUTO_LISTEN")]
    listen: Option<String>,
    /// The store: sqlite://FILE (one server) or postgres://... (several servers).
    #[arg(long, env = "AUTO_DATABASE")]
    database: Option<String>,
    /// Log as JSON lines instead of text.
    #[arg(long)]
    log_json: bool,
}

/// The log on stderr, as text or JSON lines, and the spans to the trace exporter when one runs.
fn init_logs(json: bool, tracer: Option<opentelemetry_sdk::trace::Tracer>) {
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    let fmt = tracing_subscriber::fmt::layer()
        // Colour codes only for a person at a terminal, never into a file or a collector.
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(crate::logs::ScrubbedStderr);
    let fmt = if json {
        fmt.json().boxed()
    } else {
        fmt.boxed()
    };
    tracing_subscriber::registry()
        .with(fmt)
        .with(tracer.map(|tracer| tracing_opentelemetry::layer().with_tracer(tracer)))
        .with(filter)
        .init();
}

/// How long a stopping server waits for the store's connections to close.
const STORE_CLOSE: std::time::Duration = std::time::Duration::from_secs(10);

pub async fn run(args: ServeArgs) -> Result<ExitCode> {
    let json = args.log_json;
    // The configuration is read before the log starts, since it says where traces go; a
    // problem with it is logged once the log has started.
    let loaded = match load_config(&args) {
        Ok((config, Some(export))) => crate::traces::start(&export)
            .await
            .map(|(traces, tracer)| (config, Some(traces), Some(tracer))),
        Ok((config, None)) => Ok((config, None, None)),
        Err(error) => Err(error),
    };
    let (served, traces) = match loaded {
        Ok((config, traces, tracer)) => {
            init_logs(json, tracer);
            (serve(args, config).await, traces)
        }
        Err(error) => {
            init_logs(json, None);
            (Err(error), None)
        }
    };
    if let Some(traces) = traces {
        traces.shutdown().await;
    }
    match served {
        // `--log-json` writes JSON only: the reason it stopped too.
        Err(error) if json => {
            tracing::error!(error = %format_args!("{error:#}"), "auto could not serve");
            Ok(ExitCode::from(crate::EXIT_LOCAL))
        }
        served => served,
    }
}

/// The configuration file as read, and where its traces go.
fn load_config(args: &ServeArgs) -> Result<(Config, Option<auto_server::traces::TraceExport>)> {
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let export = config.trace_export()?;
    Ok((config, export))
}

async fn serve(args: ServeArgs, config: Config) -> Result<ExitCode> {
    let json = args.log_json;
    let listen_text = args
        .listen
        .or(config.listen.clone())
        .unwrap_or_else(|| config::DEFAULT_LISTEN.into());
    let listen: SocketAddr = listen_text.parse().with_context(|| {
        format!("--listen {listen_text:?} is not an address such as 127.0.0.1:8040")
    })?;
    let database = args
        .database
        .or(config.database.clone())
        .unwrap_or_else(|| config::DEFAULT_DATABASE.into());
    let keys = auto_server::auth::Keys::new(config.key_entries()?);
    config::check_listen(listen, !keys.is_empty())?;
    let models = config.models()?;
    crate::logs::keep_out(models.tools.secrets());
    let limits = config.run_limits(|var| std::env::var(var).ok())?;
    let http = config.http_limits()?;
    let retention = config.retention()?;
    // The store's URL as it is shown: a password in it stays out of the terminal and the log.
    let shown = shown_store(&database);
    let store = match auto_store::open(&database).await {
        Ok(store) => store,
        Err(error) => bail!("cannot open the store {shown}: {error}"),
    };
    let handle = auto_server::start(auto_server::Options {
        listen,
        store: store.clone(),
        keys,
        checkers: auto_server::server_checkers_with(limits.workflow_max_duration_ms),
        models,
        limits,
        http,
        retention,
    })
    .await
    .with_context(|| format!("cannot listen on {listen}"))?;
    if json {
        tracing::info!(url = %handle.url(), %listen, store = %shown, "auto is serving");
    } else {
        eprintln!(
            "auto is serving {} on {} (store: {shown})",
            handle.url(),
            listen
        );
    }
    shutdown_signal().await;
    if json {
        tracing::info!("auto is stopping");
    } else {
        eprintln!("auto is stopping");
    }
    handle.stop().await?;
    // Last, so the SQLite log is written back into the file and the file left whole.
    if tokio::time::timeout(STORE_CLOSE, store.close())
        .await
        .is_err()
    {
        tracing::warn!("the store's connections did not close in time");
    }
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

/// A store URL with its password, in the user part or as a `password` parameter, replaced by
/// `***`: what `auto serve` prints of the store it opened. Read by hand rather than with a URL
/// parser, since a URL the store refuses as malformed (a port that is no number) is printed in
/// that refusal and must lose its password too.
fn shown_store(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let path = match path.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => path.to_owned(),
    };
    format!("{scheme}://{authority}{path}")
}

#[cfg(test)]
mod tests {
    use super::shown_store;

    #[test]
    fn a_store_url_is_shown_without_its_password() {
        assert_eq!(
            shown_store("postgres://app:s3cret@db.example.com:5432/auto"),
            "postgres://app:***@db.example.com:5432/auto"
        );
        assert_eq!(
            shown_store("postgres://app:p@ss@db/auto?sslmode=require&password=x"),
            "postgres://app:***@db/auto?sslmode=require&password=***"
        );
        assert_eq!(
            shown_store("postgres://app@db/auto"),
            "postgres://app@db/auto"
        );
        assert_eq!(shown_store("sqlite://auto.db"), "sqlite://auto.db");
        assert_eq!(shown_store("sqlite:auto.db"), "sqlite:auto.db");
    }
}
