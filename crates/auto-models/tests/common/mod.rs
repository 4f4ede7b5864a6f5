//! Helpers shared by the provider tests: a configuration pointing at a testkit double, with the
//! key read from a file, and a small text request.

#![allow(
    dead_code,
    reason = "each test binary uses its own part of the helpers"
)]

use std::io::Write;
use std::time::Duration;

use auto_models::{CallOptions, Message, ModelRequest, OutputContract, Providers, Settings};
use auto_testkit::{ProviderDouble, ProviderKind};
use serde_json::Map;

/// The key every double is configured with; tests assert it travels only in its header.
pub const TEST_KEY: &str = "test-key-0123456789";

pub struct Setup {
    pub providers: Providers,
    pub double: ProviderDouble,
    _key: tempfile::NamedTempFile,
}

pub fn key_file() -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary key file");
    writeln!(file, "{TEST_KEY}").expect("the key written");
    file
}

pub fn provider_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::OpenAiChat => "openai",
        ProviderKind::Gemini => "google",
    }
}

/// Providers with one configured provider of `kind`, on a fresh double, under `models`.
pub async fn setup_with(kind: ProviderKind, models: &str) -> Setup {
    let double = ProviderDouble::start(kind).await;
    let key = key_file();
    let config = format!(
        "[providers.{name}]\napi_key = {{ file = {path:?} }}\nbase_url = {url:?}\n[models]\n{models}\n",
        name = provider_name(kind),
        path = key.path().display().to_string(),
        url = double.base_url(),
    );
    Setup {
        providers: providers(&config),
        double,
        _key: key,
    }
}

pub async fn setup(kind: ProviderKind) -> Setup {
    setup_with(kind, "").await
}

/// Providers with one gateway on an OpenAI-compatible double.
pub async fn gateway(name: &str, gateway_settings: &str) -> Setup {
    let double = ProviderDouble::start(ProviderKind::OpenAiChat).await;
    let key = key_file();
    let config = format!(
        "[gateways.{name}]\napi_key = {{ file = {path:?} }}\nbase_url = {url:?}\n{gateway_settings}\n",
        path = key.path().display().to_string(),
        url = double.base_url(),
    );
    Setup {
        providers: providers(&config),
        double,
        _key: key,
    }
}

pub fn providers(config: &str) -> Providers {
    let table: toml::Table = toml::from_str(config).expect("test configuration parses");
    let section = |name: &str| {
        table
            .get(name)
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default()
    };
    Providers::from_config(
        &section("providers"),
        &section("gateways"),
        &section("models"),
    )
    .expect("test configuration accepted")
}

pub fn request(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.parse().expect("a model reference"),
        system: Some("Be brief.".to_owned()),
        messages: vec![Message::User("Say hello.".to_owned())],
        settings: Settings::default(),
        output: OutputContract::Text,
        tools: Vec::new(),
        provider_options: Map::new(),
    }
}

/// Call options whose retries wait 1 ms when the provider gives no hint.
pub fn fast() -> CallOptions {
    CallOptions {
        retry_backoff: Duration::from_millis(1),
        ..CallOptions::default()
    }
}
