//! Provider options at run time: which namespaces the called endpoint reads, how each offered
//! option maps onto the wire, and the gateway rule ("a field outside the list rejects the run as
//! conflict with the kind unworkable ... The gateway is not called").

use serde_json::{Map, Value, json};

use crate::config::{Endpoint, Providers, is_gateway_shaped};
use crate::failure::{FailureBecause, ModelFailure};

/// The namespaces the reasoning page names for providers.
const PROVIDER_NAMESPACES: &[&str] = &[
    "anthropic",
    "openai",
    "azure",
    "google",
    "vertex",
    "googleVertex",
    "amazonBedrock",
    "bedrock",
    "openaiCompatible",
];

/// What the options add to one request.
#[derive(Debug, Default)]
pub(crate) struct ProviderExtras {
    /// Fields at the top of the body.
    pub(crate) top_level: Map<String, Value>,
    /// Gemini's `generationConfig` fields.
    pub(crate) generation_config: Map<String, Value>,
    /// Bedrock Converse's `additionalModelRequestFields`.
    pub(crate) additional_model_request_fields: Map<String, Value>,
    pub(crate) warnings: Vec<String>,
}

/// Checks the namespaces and maps the options the endpoint reads.
pub(crate) fn provider_extras(
    providers: &Providers,
    endpoint: &Endpoint,
    options: &Map<String, Value>,
) -> Result<ProviderExtras, ModelFailure> {
    let gateway_namespaces = providers.gateway_namespaces();
    for namespace in options.keys() {
        let read_by_gateway = gateway_namespaces.iter().any(|(name, _)| name == namespace);
        if !PROVIDER_NAMESPACES.contains(&namespace.as_str())
            && !read_by_gateway
            && is_gateway_shaped(namespace)
        {
            return Err(refused(
                endpoint,
                format!(
                    "provider_options.{namespace}: no configured provider or gateway reads this namespace"
                ),
            ));
        }
    }
    let mut extras = ProviderExtras::default();
    if endpoint.gateway.is_some() {
        gateway_fields(endpoint, &gateway_namespaces, options, &mut extras)?;
        return Ok(extras);
    }
    match endpoint.name.as_str() {
        "anthropic" => anthropic_options(options, &mut extras),
        "openai" => openai_options("openai", options, &mut extras),
        // "azure: azure"; "openai: openai, and azure when there are no azure options".
        "azure" => {
            let namespace = if options.contains_key("azure") {
                "azure"
            } else {
                "openai"
            };
            openai_options(namespace, options, &mut extras);
        }
        "google" => google_options(&["google"], options, &mut extras),
        // "vertex: vertex"; "googleVertex: vertex, vertex-anthropic"; "google: google, and
        // vertex when there are no googleVertex or vertex options".
        "vertex" => {
            let own: Vec<&str> = ["vertex", "googleVertex"]
                .into_iter()
                .filter(|namespace| options.contains_key(*namespace))
                .collect();
            let namespaces = if own.is_empty() { vec!["google"] } else { own };
            google_options(&namespaces, options, &mut extras);
        }
        "vertex-anthropic" => {
            anthropic_options(options, &mut extras);
            vertex_anthropic_options(options, &mut extras);
        }
        // "amazonBedrock: bedrock"; "bedrock: bedrock when there are no amazonBedrock options,
        // and bedrock-anthropic"; "anthropic: anthropic, bedrock-anthropic, vertex-anthropic".
        "bedrock" => {
            let namespace = if options.contains_key("amazonBedrock") {
                "amazonBedrock"
            } else {
                "bedrock"
            };
            bedrock_options(namespace, options, &mut extras);
        }
        "bedrock-anthropic" => {
            bedrock_anthropic_options(options, &mut extras);
        }
        _ => {}
    }
    Ok(extras)
}

fn refused(endpoint: &Endpoint, detail: String) -> ModelFailure {
    ModelFailure::new(
        FailureBecause::DefinitionInvalid,
        &endpoint.name,
        None,
        detail,
    )
}

fn gateway_fields(
    endpoint: &Endpoint,
    gateway_namespaces: &[(String, &Endpoint)],
    options: &Map<String, Value>,
    extras: &mut ProviderExtras,
) -> Result<(), ModelFailure> {
    let allowed = endpoint
        .gateway
        .as_ref()
        .map(|gateway| gateway.allowed_provider_options.as_slice())
        .unwrap_or_default();
    for (namespace, fields) in options {
        let own = gateway_namespaces
            .iter()
            .any(|(name, owner)| name == namespace && owner.name == endpoint.name);
        let compatible = namespace == "openaiCompatible";
        if !own && !compatible {
            continue;
        }
        let Some(fields) = fields.as_object() else {
            continue;
        };
        for (field, value) in fields {
            // "user is read from openaiCompatible"; nothing else is.
            if compatible && field != "user" {
                continue;
            }
            if !allowed.iter().any(|allowed_field| allowed_field == field) {
                return Err(refused(
                    endpoint,
                    format!(
                        "provider_options.{namespace}.{field}: the gateway {} does not allow {field}; its operator lists the fields a function may set in allowed_provider_options",
                        endpoint.name
                    ),
                ));
            }
            extras.top_level.insert(field.clone(), value.clone());
        }
    }
    Ok(())
}

/// `thinking`, with "only type, budgetTokens and display", in Anthropic's wire names.
fn thinking_wire(thinking: &Map<String, Value>) -> Value {
    let mut wire = Map::new();
    for (name, value) in thinking {
        let wire_name = match name.as_str() {
            "budgetTokens" => "budget_tokens",
            other => other,
        };
        wire.insert(wire_name.to_owned(), value.clone());
    }
    Value::Object(wire)
}

fn anthropic_options(options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let Some(namespace) = options.get("anthropic").and_then(Value::as_object) else {
        return;
    };
    if let Some(thinking) = namespace.get("thinking").and_then(Value::as_object) {
        extras
            .top_level
            .insert("thinking".to_owned(), thinking_wire(thinking));
    }
}

/// Claude on Vertex AI: `googleVertex.thinking` "as for anthropic", over `anthropic.thinking`;
/// Gemini's options do not apply to Claude.
fn vertex_anthropic_options(options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let Some(namespace) = options.get("googleVertex").and_then(Value::as_object) else {
        return;
    };
    for (name, value) in namespace {
        match (name.as_str(), value.as_object()) {
            ("thinking", Some(thinking)) => {
                extras
                    .top_level
                    .insert("thinking".to_owned(), thinking_wire(thinking));
            }
            (other, _) => extras.warnings.push(format!(
                "provider_options.googleVertex.{other} is not sent: it applies to Gemini models, not to Anthropic models on Vertex AI"
            )),
        }
    }
}

fn openai_options(namespace_name: &str, options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let Some(namespace) = options.get(namespace_name).and_then(Value::as_object) else {
        return;
    };
    for (name, value) in namespace {
        match name.as_str() {
            "textVerbosity" => {
                extras
                    .top_level
                    .insert("verbosity".to_owned(), value.clone());
            }
            "logitBias" => {
                extras
                    .top_level
                    .insert("logit_bias".to_owned(), value.clone());
            }
            other => extras.warnings.push(format!(
                "provider_options.{namespace_name}.{other} is not sent: Chat Completions has no such field"
            )),
        }
    }
}

/// Gemini's options, from each of `namespaces` in turn (a later one overrides an earlier).
fn google_options(namespaces: &[&str], options: &Map<String, Value>, extras: &mut ProviderExtras) {
    for namespace_name in namespaces {
        let Some(namespace) = options.get(*namespace_name).and_then(Value::as_object) else {
            continue;
        };
        for (name, value) in namespace {
            match name.as_str() {
                "thinkingConfig" => {
                    extras
                        .generation_config
                        .insert("thinkingConfig".to_owned(), value.clone());
                }
                "safetySettings" => {
                    extras
                        .top_level
                        .insert("safetySettings".to_owned(), value.clone());
                }
                "thinking" => extras.warnings.push(format!(
                    "provider_options.{namespace_name}.thinking is not sent: it applies to Anthropic models; thinkingConfig sets a Gemini model's thinking"
                )),
                other => extras.warnings.push(format!(
                    "provider_options.{namespace_name}.{other} is not sent: generateContent has no such field"
                )),
            }
        }
    }
}

/// `reasoningConfig` for Bedrock's own and other non-Anthropic models (Amazon Nova and the
/// like): `additionalModelRequestFields.reasoningConfig` with `type` and `maxReasoningEffort`.
fn bedrock_options(
    namespace_name: &str,
    options: &Map<String, Value>,
    extras: &mut ProviderExtras,
) {
    let Some(config) = options
        .get(namespace_name)
        .and_then(|namespace| namespace.get("reasoningConfig"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let mut wire = Map::new();
    for (name, value) in config {
        match name.as_str() {
            "type" | "maxReasoningEffort" => {
                wire.insert(name.clone(), value.clone());
            }
            other => extras.warnings.push(format!(
                "provider_options.{namespace_name}.reasoningConfig.{other} is not sent: it applies only to Anthropic models, which bedrock-anthropic serves"
            )),
        }
    }
    extras
        .additional_model_request_fields
        .insert("reasoningConfig".to_owned(), Value::Object(wire));
}

/// Claude on Bedrock: `bedrock.reasoningConfig` (type and budgetTokens become `thinking`,
/// maxReasoningEffort becomes `output_config.effort`), then `anthropic.thinking` over it, all in
/// `additionalModelRequestFields`, where Bedrock passes them to the model as Anthropic's fields.
fn bedrock_anthropic_options(options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let fields = &mut extras.additional_model_request_fields;
    if let Some(config) = options
        .get("bedrock")
        .and_then(|namespace| namespace.get("reasoningConfig"))
        .and_then(Value::as_object)
    {
        let mut thinking = Map::new();
        for (name, value) in config {
            match name.as_str() {
                "type" => {
                    thinking.insert("type".to_owned(), value.clone());
                }
                "budgetTokens" => {
                    thinking.insert("budget_tokens".to_owned(), value.clone());
                }
                "display" => {
                    thinking.insert("display".to_owned(), value.clone());
                }
                "maxReasoningEffort" => {
                    fields.insert("output_config".to_owned(), json!({ "effort": value }));
                }
                other => extras.warnings.push(format!(
                    "provider_options.bedrock.reasoningConfig.{other} is not sent: Anthropic models on Bedrock take no such field"
                )),
            }
        }
        if !thinking.is_empty() {
            fields.insert("thinking".to_owned(), Value::Object(thinking));
        }
    }
    if let Some(thinking) = options
        .get("anthropic")
        .and_then(|namespace| namespace.get("thinking"))
        .and_then(Value::as_object)
    {
        fields.insert("thinking".to_owned(), thinking_wire(thinking));
    }
}
