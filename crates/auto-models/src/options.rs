//! Provider options at run time: which namespaces the called endpoint reads, how each offered
//! option maps onto the wire, and the gateway rule ("a field outside the list rejects the run as
//! conflict with the kind unworkable ... The gateway is not called").

use serde_json::{Map, Value};

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
        "openai" => openai_options(options, &mut extras),
        "google" => google_options(options, &mut extras),
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

fn anthropic_options(options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let Some(namespace) = options.get("anthropic").and_then(Value::as_object) else {
        return;
    };
    if let Some(thinking) = namespace.get("thinking").and_then(Value::as_object) {
        let mut wire = Map::new();
        for (name, value) in thinking {
            let wire_name = match name.as_str() {
                "budgetTokens" => "budget_tokens",
                other => other,
            };
            wire.insert(wire_name.to_owned(), value.clone());
        }
        extras
            .top_level
            .insert("thinking".to_owned(), Value::Object(wire));
    }
}

fn openai_options(options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let Some(namespace) = options.get("openai").and_then(Value::as_object) else {
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
                "provider_options.openai.{other} is not sent: Chat Completions has no such field"
            )),
        }
    }
}

fn google_options(options: &Map<String, Value>, extras: &mut ProviderExtras) {
    let Some(namespace) = options.get("google").and_then(Value::as_object) else {
        return;
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
            other => extras.warnings.push(format!(
                "provider_options.google.{other} is not sent: generateContent has no such field"
            )),
        }
    }
}
