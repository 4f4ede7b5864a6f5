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
    _access_key_id: Option<tempfile::NamedTempFile>,
}

impl Setup {
    /// The file the provider's key (or token, or secret access key) is read from.
    pub fn key_path(&self) -> &std::path::Path {
        self._key.path()
    }
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
        ProviderKind::Azure => "azure",
        ProviderKind::VertexGemini => "vertex",
        ProviderKind::VertexAnthropic => "vertex-anthropic",
        ProviderKind::Bedrock => "bedrock",
    }
}

/// The access key id the Bedrock doubles are configured with; the secret access key is
/// [`TEST_KEY`], which must never travel, only sign.
pub const TEST_ACCESS_KEY_ID: &str = "AKIDTESTEXAMPLE";

/// The Vertex AI project and location the doubles are configured with.
pub const TEST_PROJECT: &str = "test-project";
pub const TEST_LOCATION: &str = "us-east5";

/// The credential settings of a provider, with the key read from `path`.
pub fn credential_settings(name: &str, path: &str, access_key_id_path: &str) -> String {
    match name {
        "vertex" | "vertex-anthropic" => format!(
            "access_token = {{ file = {path:?} }}\nproject = {TEST_PROJECT:?}\nlocation = {TEST_LOCATION:?}\n"
        ),
        "bedrock" | "bedrock-anthropic" => format!(
            "access_key_id = {{ file = {access_key_id_path:?} }}\nsecret_access_key = {{ file = {path:?} }}\nregion = \"us-east-1\"\n"
        ),
        _ => format!("api_key = {{ file = {path:?} }}\n"),
    }
}

/// Providers with one configured provider of `kind`, on a fresh double, under `models`.
pub async fn setup_with(kind: ProviderKind, models: &str) -> Setup {
    setup_named(kind, provider_name(kind), "", models).await
}

/// Providers with the provider `name` on a fresh double of `kind`, with `extra` settings.
pub async fn setup_named(kind: ProviderKind, name: &str, extra: &str, models: &str) -> Setup {
    let double = ProviderDouble::start(kind).await;
    let key = key_file();
    let mut access_key_id = tempfile::NamedTempFile::new().expect("a temporary key file");
    writeln!(access_key_id, "{TEST_ACCESS_KEY_ID}").expect("the key id written");
    let config = format!(
        "[providers.{name}]\n{credentials}base_url = {url:?}\n{extra}\n[models]\n{models}\n",
        credentials = credential_settings(
            name,
            &key.path().display().to_string(),
            &access_key_id.path().display().to_string()
        ),
        url = double.base_url(),
    );
    Setup {
        providers: providers(&config),
        double,
        _key: key,
        _access_key_id: Some(access_key_id),
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
        _access_key_id: None,
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
