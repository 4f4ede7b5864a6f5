//! `provider_options`: the namespaces and options the reasoning page's table offers, and the
//! reasons the others are refused ("Provider options").
//!
//! The names are those of the Vercel AI SDK's providers, which the page follows.

use serde_json::Value;

/// "a lowercase letter, then up to 31 letters, digits and hyphens": a gateway's name.
pub const GATEWAY_NAME_CHARS_MAX: usize = 32;

/// One refused option, at a pointer relative to its namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub pointer: String,
    pub text: String,
    /// Whether the issue sits at the option's key rather than its value.
    pub at_key: bool,
}

/// The options each provider namespace offers (the page's table).
pub const NAMESPACES: &[(&str, &[&str])] = &[
    ("anthropic", &["thinking"]),
    ("openai", &["textVerbosity", "reasoningMode", "logitBias"]),
    ("azure", &["textVerbosity", "reasoningMode", "logitBias"]),
    ("google", &["thinkingConfig", "safetySettings", "threshold"]),
    ("vertex", &["thinkingConfig", "safetySettings", "threshold"]),
    (
        "googleVertex",
        &["thinkingConfig", "safetySettings", "threshold", "thinking"],
    ),
    ("amazonBedrock", &["reasoningConfig"]),
    ("bedrock", &["reasoningConfig"]),
];

/// "thinking, with only type, budgetTokens and display".
pub const THINKING_KEYS: [&str; 3] = ["type", "budgetTokens", "display"];

/// Options never offered, for any provider, each with the page's reason.
const NEVER_OFFERED: &[(&[&str], &str)] = &[
    (
        &[
            "effort",
            "reasoningEffort",
            "maxTokens",
            "maxOutputTokens",
            "maxCompletionTokens",
            "temperature",
            "topP",
            "topK",
            "seed",
            "stopSequences",
            "structuredOutputs",
            "strictJsonSchema",
            "strictSchemas",
            "responseFormat",
            "responseMimeType",
            "responseSchema",
            "responseJsonSchema",
            "jsonResponseFormat",
        ],
        "the front matter sets it",
    ),
    (
        &[
            "apiKey",
            "credentials",
            "user",
            "metadata",
            "labels",
            "safetyIdentifier",
            "endUserId",
        ],
        "credentials and attribution are the operator's",
    ),
    (
        &[
            "store",
            "previousResponseId",
            "conversation",
            "container",
            "cacheControl",
            "cachedContent",
            "promptCacheKey",
            "promptCacheRetention",
            "cachePoint",
        ],
        "it is stored or reused on the operator's account",
    ),
    (
        &[
            "serviceTier",
            "fallbacks",
            "models",
            "route",
            "provider",
            "order",
            "priority",
            "region",
        ],
        "routing, fallbacks, capacity and service tiers are the operator's",
    ),
    (
        &["headers", "anthropicBeta", "betas", "extraHeaders"],
        "request headers and betas are not offered",
    ),
    (
        &[
            "mcpServers",
            "tools",
            "toolChoice",
            "parallelToolCalls",
            "toolStreaming",
            "webSearchOptions",
            "useSearchGrounding",
            "googleSearch",
            "codeExecution",
        ],
        "tools and servers come from the function's tools list",
    ),
    (
        &[
            "additionalModelRequestFields",
            "prediction",
            "extraBody",
            "body",
            "rawRequest",
        ],
        "raw request fields are not offered",
    ),
    (
        &["instructions", "truncation", "include", "previousMessages"],
        "the runtime manages the run's conversation",
    ),
    (
        &[
            "logprobs",
            "topLogprobs",
            "reasoningSummary",
            "audioTimestamp",
            "responseModalities",
            "includeRawChunks",
        ],
        "the runtime does not read that output",
    ),
    (
        &[
            "systemMessageMode",
            "forceReasoning",
            "sendReasoning",
            "sendThinking",
        ],
        "it changes how the runtime sends the prompt",
    ),
];

/// Why an option is never offered, when it is one of those.
pub fn never_offered(option: &str) -> Option<&'static str> {
    NEVER_OFFERED
        .iter()
        .find(|(names, _)| names.contains(&option))
        .map(|(_, reason)| *reason)
}

/// Whether a namespace is shaped like a gateway's name.
pub fn is_gateway_shaped(namespace: &str) -> bool {
    let mut chars = namespace.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && namespace.len() <= GATEWAY_NAME_CHARS_MAX
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// "a, b and c": how the page lists names in a sentence.
pub(crate) fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Checks one namespace of `provider_options` and its options.
pub fn check_namespace(namespace: &str, value: &Value) -> Vec<Refusal> {
    let offered = NAMESPACES
        .iter()
        .find(|(name, _)| *name == namespace)
        .map(|(_, options)| *options);
    if offered.is_none() && !is_gateway_shaped(namespace) {
        return vec![Refusal {
            pointer: String::new(),
            text: format!(
                "{namespace} is not offered: it is neither a provider's namespace nor a gateway's \
                 name (a lowercase letter, then up to 31 letters, digits and hyphens)."
            ),
            at_key: true,
        }];
    }
    let Some(options) = value.as_object() else {
        return vec![Refusal {
            pointer: String::new(),
            text: "Expected object.".into(),
            at_key: false,
        }];
    };
    // A gateway's fields are checked against its allowed_provider_options when a run calls it.
    let Some(offered) = offered else {
        return Vec::new();
    };
    let mut refusals = Vec::new();
    for (option, option_value) in options {
        let pointer = format!("/{}", escape(option));
        if let Some(reason) = never_offered(option) {
            refusals.push(Refusal {
                pointer,
                text: format!("{option} is not offered: {reason}."),
                at_key: true,
            });
        } else if !offered.contains(&option.as_str()) {
            refusals.push(Refusal {
                pointer,
                text: format!(
                    "{option} is not offered: {namespace} offers only {}.",
                    and_list(offered)
                ),
                at_key: true,
            });
        } else if option == "thinking" {
            refusals.extend(check_thinking(&pointer, option_value));
        }
    }
    refusals
}

fn check_thinking(pointer: &str, value: &Value) -> Vec<Refusal> {
    let Some(map) = value.as_object() else {
        return vec![Refusal {
            pointer: pointer.into(),
            text: "Expected object.".into(),
            at_key: false,
        }];
    };
    map.keys()
        .filter(|key| !THINKING_KEYS.contains(&key.as_str()))
        .map(|key| Refusal {
            pointer: format!("{pointer}/{}", escape(key)),
            text: format!(
                "{key} is not offered: thinking takes only type, budgetTokens and display."
            ),
            at_key: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_page_examples() {
        assert!(
            check_namespace(
                "anthropic",
                &json!({"thinking": {"type": "enabled", "budgetTokens": 2000}})
            )
            .is_empty()
        );
        let refused = check_namespace("anthropic", &json!({"effort": "high"}));
        assert_eq!(
            refused[0].text,
            "effort is not offered: the front matter sets it."
        );
        assert_eq!(refused[0].pointer, "/effort");
    }

    #[test]
    fn thinking_takes_three_names() {
        let refused = check_namespace(
            "googleVertex",
            &json!({"thinking": {"type": "enabled", "budget": 1}}),
        );
        assert_eq!(refused[0].pointer, "/thinking/budget");
        assert!(
            check_namespace("openai", &json!({"thinking": {}}))[0]
                .text
                .contains("openai offers only")
        );
    }

    #[test]
    fn namespaces_are_providers_or_gateway_shaped() {
        assert!(check_namespace("my-gateway", &json!({"anything": 1})).is_empty());
        assert!(check_namespace("myGateway", &json!({})).is_empty());
        assert!(check_namespace(&format!("g{}", "a".repeat(31)), &json!({})).is_empty());
        assert!(!check_namespace(&format!("g{}", "a".repeat(32)), &json!({})).is_empty());
        assert!(!check_namespace("My_Gateway", &json!({})).is_empty());
        assert!(!check_namespace("1gw", &json!({})).is_empty());
        assert_eq!(
            check_namespace("openai", &json!(3))[0].text,
            "Expected object."
        );
    }

    #[test]
    fn every_never_offered_group_has_its_reason() {
        for (option, reason) in [
            ("user", "credentials and attribution are the operator's"),
            ("store", "it is stored or reused on the operator's account"),
            (
                "serviceTier",
                "routing, fallbacks, capacity and service tiers are the operator's",
            ),
            ("anthropicBeta", "request headers and betas are not offered"),
            (
                "mcpServers",
                "tools and servers come from the function's tools list",
            ),
            (
                "additionalModelRequestFields",
                "raw request fields are not offered",
            ),
            ("logprobs", "the runtime does not read that output"),
            (
                "systemMessageMode",
                "it changes how the runtime sends the prompt",
            ),
        ] {
            assert_eq!(never_offered(option), Some(reason), "{option}");
        }
    }
}
