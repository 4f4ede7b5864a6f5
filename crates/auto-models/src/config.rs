//! The operator's configuration of models: `[providers.X]`, `[gateways.NAME]` and `[models]`
//! (allowed globs and aliases), read once into [`Providers`]. Secrets come from the environment
//! or a file, never from the configuration text: `{ env = "NAME" }` or `{ file = "PATH" }`.
//!
//! | provider | settings |
//! |---|---|
//! | `anthropic`, `openai`, `google` | `api_key` (secret), `base_url` |
//! | `azure` | `api_key` (secret); `resource` (the Azure OpenAI resource's name, for `https://{resource}.openai.azure.com`) or `base_url`; `api_version` only for a resource that still needs a dated version |
//! | `vertex`, `vertex-anthropic` | `project`, `location` (`global` or a region), `access_token` (secret: an OAuth access token), `base_url` (default `https://{location}-aiplatform.googleapis.com`, or `https://aiplatform.googleapis.com` for `global`) |
//! | `bedrock`, `bedrock-anthropic` | `region`, `access_key_id`, `secret_access_key`, `session_token` (secrets; the last optional), `base_url` (default `https://bedrock-runtime.{region}.amazonaws.com`) |
//!
//! Vertex AI takes a ready access token rather than a service account's key: exchanging a key
//! for a token means signing an RS256 JWT, calling Google's token endpoint and renewing the token
//! before its hour runs out, which would bring an RSA signer and a token cache into this crate for
//! something `gcloud auth print-access-token`, the metadata server or a sidecar already does. A
//! secret read from a file is read again before every request, so such a helper renews the token
//! by rewriting the file. AWS credentials likewise come as keys; the SDK's credential chain
//! (profiles, instance roles, SSO) is left out for the same reason, and a helper can rewrite
//! temporary keys and their session token in their files.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A model reference in `provider/model` form, such as `anthropic/claude-sonnet-4-5`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ModelRef {
    pub provider: String,
    pub model: String,
}

impl FromStr for ModelRef {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<ModelRef, ConfigError> {
        match text.split_once('/') {
            Some((provider, model)) if !provider.is_empty() && !model.is_empty() => Ok(ModelRef {
                provider: provider.to_owned(),
                model: model.to_owned(),
            }),
            _ => Err(ConfigError::ModelRef(text.to_owned())),
        }
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}/{}", self.provider, self.model)
    }
}

/// The wire protocol an endpoint speaks; one adapter each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireProtocol {
    AnthropicMessages,
    OpenAiChat,
    GeminiGenerateContent,
    /// Azure OpenAI's v1 Chat Completions (`[providers.azure]`).
    AzureOpenAiChat,
    /// Gemini `generateContent` on Vertex AI (`[providers.vertex]`).
    VertexGenerateContent,
    /// Anthropic Messages through Vertex AI's `rawPredict` (`[providers.vertex-anthropic]`).
    VertexAnthropic,
    /// Amazon Bedrock Converse, signed with SigV4 (`[providers.bedrock]`,
    /// `[providers.bedrock-anthropic]`).
    BedrockConverse,
}

/// A configuration the runtime cannot start with. The messages name settings and environment
/// variables, never a secret's value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0:?} is not a model reference in provider/model form")]
    ModelRef(String),
    #[error(
        "providers.{0} is not a provider this runtime speaks to; it speaks to anthropic, openai, google, azure, vertex, vertex-anthropic, bedrock, bedrock-anthropic and gateways"
    )]
    ProviderNotSupported(String),
    #[error(
        "{0} must be read from the environment or a file: write {{ env = \"NAME\" }} or {{ file = \"PATH\" }}"
    )]
    SecretInline(String),
    #[error("{setting}: the environment variable {variable} is not set")]
    SecretEnvMissing { setting: String, variable: String },
    #[error("{setting}: the file {path} cannot be read: {error}")]
    SecretFile {
        setting: String,
        path: String,
        error: String,
    },
    #[error("{setting}: {problem}")]
    Invalid { setting: String, problem: String },
}

/// A credential read from the environment or a file. Its `Debug` never shows it.
///
/// A secret read from a file is read again before every request, so a short-lived credential
/// (a Vertex AI access token lives an hour, AWS session credentials a few) can be renewed by
/// rewriting the file; when the file cannot be read then, the value read last is used.
#[derive(Clone)]
pub(crate) struct Secret {
    value: String,
    file: Option<std::path::PathBuf>,
}

impl Secret {
    #[cfg(test)]
    pub(crate) fn inline_for_tests(value: &str) -> Secret {
        Secret {
            value: value.to_owned(),
            file: None,
        }
    }

    /// The secret as it is now.
    pub(crate) fn current(&self) -> String {
        self.file
            .as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty())
            .unwrap_or_else(|| self.value.clone())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Secret(..)")
    }
}

/// The AWS credentials and region a Bedrock endpoint signs its requests with.
#[derive(Debug, Clone)]
pub(crate) struct AwsSigning {
    pub(crate) region: String,
    pub(crate) access_key_id: Secret,
    pub(crate) secret_access_key: Secret,
    pub(crate) session_token: Option<Secret>,
}

/// Where on the provider's side an endpoint's models live, for the protocols whose paths name
/// more than the model.
#[derive(Debug, Clone, Default)]
pub(crate) struct Placement {
    /// Vertex AI: the Google Cloud project.
    pub(crate) project: Option<String>,
    /// Vertex AI: the location, such as `us-east5` or `global`.
    pub(crate) location: Option<String>,
    /// Azure OpenAI: a dated `api-version`, which selects the older deployments path.
    pub(crate) api_version: Option<String>,
}

/// What a gateway adds to an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub(crate) struct GatewayFacts {
    pub(crate) allowed_provider_options: Vec<String>,
    pub(crate) cost_header: Option<String>,
}

/// One configured provider or gateway.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) name: String,
    pub(crate) protocol: WireProtocol,
    pub(crate) base_url: String,
    /// The credential sent in the protocol's header: an API key, or Vertex AI's access token.
    pub(crate) api_key: Option<Secret>,
    pub(crate) gateway: Option<GatewayFacts>,
    pub(crate) placement: Placement,
    /// Bedrock: the request is signed with SigV4 instead of carrying a key.
    pub(crate) aws: Option<AwsSigning>,
}

/// The configured providers and gateways, the allowed models and the aliases, with one HTTP
/// client for every call.
#[derive(Debug, Clone)]
pub struct Providers {
    pub(crate) endpoints: BTreeMap<String, Endpoint>,
    /// `None` when the operator left `allowed` out: every model of a configured provider.
    pub(crate) allowed: Option<Vec<String>>,
    pub(crate) aliases: BTreeMap<String, ModelRef>,
    pub(crate) client: reqwest::Client,
}

/// Fields the runtime itself sets in an OpenAI-compatible body: "The operator cannot allow a
/// field the runtime sets, such as temperature."
const RUNTIME_SET_FIELDS: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "tools",
    "tool_choice",
    "response_format",
    "reasoning_effort",
    "stream",
    "n",
];

impl Providers {
    /// Reads `[providers]`, `[gateways]` and `[models]`.
    pub fn from_config(
        providers: &toml::Table,
        gateways: &toml::Table,
        models: &toml::Table,
    ) -> Result<Providers, ConfigError> {
        let mut endpoints = BTreeMap::new();
        for (name, value) in providers {
            let endpoint = read_provider(name, value)?;
            endpoints.insert(name.clone(), endpoint);
        }
        for (name, value) in gateways {
            let endpoint = read_gateway(name, value)?;
            endpoints.insert(name.clone(), endpoint);
        }
        let allowed = match models.get("allowed") {
            None => None,
            Some(value) => Some(string_list("models.allowed", value)?),
        };
        let mut aliases = BTreeMap::new();
        if let Some(value) = models.get("aliases") {
            let table = value
                .as_table()
                .ok_or_else(|| invalid("models.aliases", "expected a table"))?;
            for (from, to) in table {
                from.parse::<ModelRef>()?;
                let to = to
                    .as_str()
                    .ok_or_else(|| invalid("models.aliases", "expected model references"))?;
                aliases.insert(from.clone(), to.parse::<ModelRef>()?);
            }
        }
        let client = reqwest::Client::builder().build().map_err(|error| {
            invalid(
                "providers",
                &format!("the HTTP client cannot start: {error}"),
            )
        })?;
        Ok(Providers {
            endpoints,
            allowed,
            aliases,
            client,
        })
    }

    /// The names of the configured providers and gateways.
    pub fn configured(&self) -> Vec<&str> {
        self.endpoints.keys().map(String::as_str).collect()
    }

    /// Whether the operator allows this model, as the definition names it.
    pub fn is_allowed(&self, model: &ModelRef) -> bool {
        let text = model.to_string();
        match &self.allowed {
            None => true,
            Some(globs) => globs.iter().any(|glob| glob_matches(glob, &text)),
        }
    }

    /// The model after the aliases.
    pub fn resolve(&self, model: &ModelRef) -> ModelRef {
        self.aliases
            .get(&model.to_string())
            .cloned()
            .unwrap_or_else(|| model.clone())
    }

    /// The operator's allowed patterns; `None` when every model of a configured provider is
    /// allowed.
    pub fn allowed_patterns(&self) -> Option<&[String]> {
        self.allowed.as_deref()
    }

    /// The aliases: the reference a definition writes, and the model it resolves to.
    pub fn aliases(&self) -> impl Iterator<Item = (&String, &ModelRef)> {
        self.aliases.iter()
    }

    /// The aliases, as `from -> to` lines for a rejection.
    pub(crate) fn alias_list(&self) -> Vec<String> {
        self.aliases
            .iter()
            .map(|(from, to)| format!("{from} -> {to}"))
            .collect()
    }

    /// The gateway names a provider option namespace may take: each name and its camel case.
    pub(crate) fn gateway_namespaces(&self) -> Vec<(String, &Endpoint)> {
        let mut names = Vec::new();
        for endpoint in self
            .endpoints
            .values()
            .filter(|endpoint| endpoint.gateway.is_some())
        {
            names.push((endpoint.name.clone(), endpoint));
            names.push((camel_case(&endpoint.name), endpoint));
        }
        names
    }
}

/// `my-gateway` -> `myGateway`.
pub(crate) fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for character in name.chars() {
        if character == '-' {
            upper = true;
        } else if upper {
            out.extend(character.to_uppercase());
            upper = false;
        } else {
            out.push(character);
        }
    }
    out
}

/// "a lowercase letter, then up to 31 letters, digits and hyphens".
pub(crate) fn is_gateway_shaped(name: &str) -> bool {
    let mut characters = name.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_lowercase())
        && name.len() <= 32
        && characters.all(|character| character.is_ascii_alphanumeric() || character == '-')
}

/// `*` matches any run of characters, `/` included; everything else matches itself.
pub(crate) fn glob_matches(glob: &str, text: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

fn read_provider(name: &str, value: &toml::Value) -> Result<Endpoint, ConfigError> {
    let setting = format!("providers.{name}");
    let table = value
        .as_table()
        .ok_or_else(|| invalid(&setting, "expected a table"))?;
    let base_url = base_url(&setting, table)?;
    let mut endpoint = Endpoint {
        name: name.to_owned(),
        protocol: WireProtocol::AnthropicMessages,
        base_url: String::new(),
        api_key: None,
        gateway: None,
        placement: Placement::default(),
        aws: None,
    };
    match name {
        "anthropic" | "openai" | "google" => {
            let (protocol, default_base_url) = match name {
                "anthropic" => (WireProtocol::AnthropicMessages, "https://api.anthropic.com"),
                "openai" => (WireProtocol::OpenAiChat, "https://api.openai.com/v1"),
                _ => (
                    WireProtocol::GeminiGenerateContent,
                    "https://generativelanguage.googleapis.com/v1beta",
                ),
            };
            endpoint.protocol = protocol;
            endpoint.base_url = base_url.unwrap_or_else(|| default_base_url.to_owned());
            endpoint.api_key = read_secret(&format!("{setting}.api_key"), table.get("api_key"))?;
        }
        "azure" => {
            endpoint.protocol = WireProtocol::AzureOpenAiChat;
            let resource = optional_name(&setting, table, "resource")?;
            endpoint.base_url = match (base_url, resource) {
                (Some(url), None) => url,
                (None, Some(resource)) => format!("https://{resource}.openai.azure.com"),
                _ => {
                    return Err(invalid(
                        &setting,
                        "set one of resource (the Azure OpenAI resource's name) and base_url",
                    ));
                }
            };
            endpoint.placement.api_version = optional_name(&setting, table, "api_version")?;
            endpoint.api_key = read_secret(&format!("{setting}.api_key"), table.get("api_key"))?;
        }
        "vertex" | "vertex-anthropic" => {
            endpoint.protocol = if name == "vertex" {
                WireProtocol::VertexGenerateContent
            } else {
                WireProtocol::VertexAnthropic
            };
            let project = required_name(&setting, table, "project")?;
            let location = required_name(&setting, table, "location")?;
            endpoint.base_url = base_url.unwrap_or_else(|| {
                if location == "global" {
                    "https://aiplatform.googleapis.com".to_owned()
                } else {
                    format!("https://{location}-aiplatform.googleapis.com")
                }
            });
            endpoint.placement.project = Some(project);
            endpoint.placement.location = Some(location);
            endpoint.api_key = read_secret(
                &format!("{setting}.access_token"),
                table.get("access_token"),
            )?;
        }
        "bedrock" | "bedrock-anthropic" => {
            endpoint.protocol = WireProtocol::BedrockConverse;
            let region = required_name(&setting, table, "region")?;
            endpoint.base_url = base_url
                .unwrap_or_else(|| format!("https://bedrock-runtime.{region}.amazonaws.com"));
            let required_secret = |key: &str| -> Result<Secret, ConfigError> {
                read_secret(&format!("{setting}.{key}"), table.get(key))?
                    .ok_or_else(|| invalid(&setting, &format!("{key} is required")))
            };
            endpoint.aws = Some(AwsSigning {
                region,
                access_key_id: required_secret("access_key_id")?,
                secret_access_key: required_secret("secret_access_key")?,
                session_token: read_secret(
                    &format!("{setting}.session_token"),
                    table.get("session_token"),
                )?,
            });
        }
        _ => return Err(ConfigError::ProviderNotSupported(name.to_owned())),
    }
    Ok(endpoint)
}

/// A plain name setting, such as a project, a location or a region: letters, digits, `-`,
/// `_` and `.`, since it becomes part of a host name or a path.
fn optional_name(
    setting: &str,
    table: &toml::Table,
    key: &str,
) -> Result<Option<String>, ConfigError> {
    let Some(value) = table.get(key) else {
        return Ok(None);
    };
    value
        .as_str()
        .filter(|text| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
        .map(|text| Some(text.to_owned()))
        .ok_or_else(|| {
            invalid(
                &format!("{setting}.{key}"),
                "expected a name of letters, digits, '-', '_' and '.'",
            )
        })
}

fn required_name(setting: &str, table: &toml::Table, key: &str) -> Result<String, ConfigError> {
    optional_name(setting, table, key)?
        .ok_or_else(|| invalid(setting, &format!("{key} is required")))
}

fn read_gateway(name: &str, value: &toml::Value) -> Result<Endpoint, ConfigError> {
    let setting = format!("gateways.{name}");
    if !is_gateway_shaped(name) {
        return Err(invalid(
            &setting,
            "a gateway's name is a lowercase letter, then up to 31 letters, digits and hyphens",
        ));
    }
    let table = value
        .as_table()
        .ok_or_else(|| invalid(&setting, "expected a table"))?;
    let base_url = base_url(&setting, table)?
        .ok_or_else(|| invalid(&setting, "base_url is required for a gateway"))?;
    let allowed_provider_options = match table.get("allowed_provider_options") {
        None => Vec::new(),
        Some(value) => string_list(&format!("{setting}.allowed_provider_options"), value)?,
    };
    if let Some(field) = allowed_provider_options
        .iter()
        .find(|field| RUNTIME_SET_FIELDS.contains(&field.as_str()))
    {
        return Err(invalid(
            &format!("{setting}.allowed_provider_options"),
            &format!("{field} is set by the runtime and cannot be allowed"),
        ));
    }
    let cost_header = match table.get("cost_header") {
        None => None,
        Some(value) => Some(
            value
                .as_str()
                .ok_or_else(|| {
                    invalid(&format!("{setting}.cost_header"), "expected a header name")
                })?
                .to_ascii_lowercase(),
        ),
    };
    Ok(Endpoint {
        name: name.to_owned(),
        protocol: WireProtocol::OpenAiChat,
        base_url,
        api_key: read_secret(&format!("{setting}.api_key"), table.get("api_key"))?,
        gateway: Some(GatewayFacts {
            allowed_provider_options,
            cost_header,
        }),
        placement: Placement::default(),
        aws: None,
    })
}

fn base_url(setting: &str, table: &toml::Table) -> Result<Option<String>, ConfigError> {
    match table.get("base_url") {
        None => Ok(None),
        Some(value) => value
            .as_str()
            .filter(|url| url.starts_with("http://") || url.starts_with("https://"))
            .map(|url| Some(url.trim_end_matches('/').to_owned()))
            .ok_or_else(|| {
                invalid(
                    &format!("{setting}.base_url"),
                    "expected an http or https URL",
                )
            }),
    }
}

/// A secret setting, `{ env = "NAME" }` or `{ file = "PATH" }`; `setting` is its full name.
fn read_secret(setting: &str, value: Option<&toml::Value>) -> Result<Option<Secret>, ConfigError> {
    let Some(value) = value else { return Ok(None) };
    let setting = setting.to_owned();
    let table = value
        .as_table()
        .ok_or_else(|| ConfigError::SecretInline(setting.clone()))?;
    if let Some(variable) = table.get("env").and_then(toml::Value::as_str) {
        return std::env::var(variable)
            .map(|secret| {
                Some(Secret {
                    value: secret.trim().to_owned(),
                    file: None,
                })
            })
            .map_err(|_| ConfigError::SecretEnvMissing {
                setting,
                variable: variable.to_owned(),
            });
    }
    if let Some(path) = table.get("file").and_then(toml::Value::as_str) {
        return std::fs::read_to_string(path)
            .map(|secret| {
                Some(Secret {
                    value: secret.trim().to_owned(),
                    file: Some(std::path::PathBuf::from(path)),
                })
            })
            .map_err(|error| ConfigError::SecretFile {
                setting,
                path: path.to_owned(),
                error: error.kind().to_string(),
            });
    }
    Err(ConfigError::SecretInline(setting))
}

fn string_list(setting: &str, value: &toml::Value) -> Result<Vec<String>, ConfigError> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| invalid(setting, "expected a list of strings"))
}

fn invalid(setting: &str, problem: &str) -> ConfigError {
    ConfigError::Invalid {
        setting: setting.to_owned(),
        problem: problem.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_the_configuration_writes_them() {
        assert!(glob_matches("anthropic/*", "anthropic/claude-sonnet-4-5"));
        assert!(glob_matches("openai/gpt-5*", "openai/gpt-5-mini"));
        assert!(!glob_matches("openai/gpt-5*", "openai/gpt-4o"));
        assert!(glob_matches("*/m*x", "a/mid-x"));
        assert!(!glob_matches("a/*b*b", "a/b"));
        assert!(glob_matches("exact/model", "exact/model"));
    }

    #[test]
    fn gateway_names_take_their_camel_case_form() {
        assert_eq!(camel_case("my-gateway"), "myGateway");
        assert!(is_gateway_shaped("my-gateway"));
        assert!(!is_gateway_shaped("MyGateway"));
    }
}

#[cfg(test)]
mod cloud_tests {
    use super::*;

    fn endpoint(name: &str, settings: &str) -> Endpoint {
        let value: toml::Value = toml::from_str(settings).unwrap();
        read_provider(name, &toml::Value::Table(value.as_table().unwrap().clone())).unwrap()
    }

    #[test]
    fn cloud_providers_take_their_documented_hosts_by_default() {
        let azure = endpoint("azure", "resource = \"my-resource\"");
        assert_eq!(azure.base_url, "https://my-resource.openai.azure.com");
        assert_eq!(azure.protocol, WireProtocol::AzureOpenAiChat);
        let vertex = endpoint("vertex", "project = \"p\"\nlocation = \"us-east5\"");
        assert_eq!(
            vertex.base_url,
            "https://us-east5-aiplatform.googleapis.com"
        );
        let global = endpoint("vertex-anthropic", "project = \"p\"\nlocation = \"global\"");
        assert_eq!(global.base_url, "https://aiplatform.googleapis.com");
        assert_eq!(global.protocol, WireProtocol::VertexAnthropic);
        let key = std::env::temp_dir().join("auto-models-config-test-key");
        std::fs::write(&key, "secret-value\n").unwrap();
        let bedrock = endpoint(
            "bedrock-anthropic",
            &format!(
                "region = \"eu-west-1\"\naccess_key_id = {{ file = {key:?} }}\nsecret_access_key = {{ file = {key:?} }}"
            ),
        );
        assert_eq!(
            bedrock.base_url,
            "https://bedrock-runtime.eu-west-1.amazonaws.com"
        );
        let aws = bedrock.aws.as_ref().unwrap();
        assert_eq!(aws.region, "eu-west-1");
        assert_eq!(aws.secret_access_key.current(), "secret-value");
        assert!(!format!("{bedrock:?}").contains("secret-value"));
    }
}

#[cfg(test)]
mod model_ref_tests {
    use super::*;

    #[test]
    fn a_model_reference_is_provider_slash_model() {
        let model: ModelRef = "bedrock-anthropic/anthropic.claude-sonnet-4-5"
            .parse()
            .unwrap();
        assert_eq!(model.provider, "bedrock-anthropic");
        assert_eq!(model.model, "anthropic.claude-sonnet-4-5");
        assert_eq!(
            model.to_string(),
            "bedrock-anthropic/anthropic.claude-sonnet-4-5"
        );
        assert!("no-slash".parse::<ModelRef>().is_err());
        assert!("/model".parse::<ModelRef>().is_err());
    }

    #[test]
    fn a_missing_environment_variable_is_named_and_no_value_is_shown() {
        let table: toml::Table =
            toml::from_str("[openai]\napi_key = { env = \"AUTO_TEST_SURELY_UNSET_KEY\" }").unwrap();
        let error =
            Providers::from_config(&table, &toml::Table::new(), &toml::Table::new()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "providers.openai.api_key: the environment variable AUTO_TEST_SURELY_UNSET_KEY is not set"
        );
    }
}
