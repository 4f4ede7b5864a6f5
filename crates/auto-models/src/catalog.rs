//! The model catalog: facts about models that no provider API answers the same way (the
//! context window, the most output tokens), and what `list_models` offers from it.
//!
//! The built-in list is `catalog.toml`, compiled in; `[models] catalog = "PATH"` replaces it
//! with the operator's own file in the same form.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, ModelRef, Providers};

const BUILT_IN: &str = include_str!("catalog.toml");

/// What the catalog knows of one model.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFacts {
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u64>,
}

/// Models by their `provider/model` reference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    #[serde(default)]
    models: BTreeMap<String, ModelFacts>,
}

/// One model `list_models` offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OfferedModel {
    /// The reference a definition writes as `model`.
    pub id: String,
    pub provider: String,
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u64>,
    /// For an alias, the model it resolves to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
}

impl Catalog {
    /// The catalog compiled into the runtime.
    pub fn built_in() -> Catalog {
        Catalog::parse(BUILT_IN, "the built-in catalog").expect("the built-in catalog parses")
    }

    /// The operator's catalog file, in the built-in one's form.
    pub fn load(path: &str) -> Result<Catalog, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Invalid {
            setting: "models.catalog".into(),
            problem: format!("the file {path} cannot be read: {}", error.kind()),
        })?;
        Catalog::parse(&text, path)
    }

    fn parse(text: &str, what: &str) -> Result<Catalog, ConfigError> {
        let catalog: Catalog = toml::from_str(text).map_err(|error| ConfigError::Invalid {
            setting: "models.catalog".into(),
            problem: format!("{what} is not a catalog: {}", error.message()),
        })?;
        for id in catalog.models.keys() {
            id.parse::<ModelRef>()?;
        }
        Ok(catalog)
    }

    /// The catalog `[models] catalog` names, or the built-in one.
    pub fn from_config(models: &toml::Table) -> Result<Catalog, ConfigError> {
        match models.get("catalog") {
            None => Ok(Catalog::built_in()),
            Some(toml::Value::String(path)) => Catalog::load(path),
            Some(_) => Err(ConfigError::Invalid {
                setting: "models.catalog".into(),
                problem: "expected the path of a TOML file".into(),
            }),
        }
    }

    /// What the catalog knows of a model, after the aliases.
    pub fn facts(&self, model: &ModelRef) -> Option<&ModelFacts> {
        self.models.get(&model.to_string())
    }

    /// The models a run may use: each catalog model of a configured provider that the
    /// operator allows, and each allowed alias whose target's provider is configured.
    pub fn offered(&self, providers: &Providers) -> Vec<OfferedModel> {
        let configured = providers.configured();
        let mut offered: Vec<OfferedModel> = self
            .models
            .iter()
            .filter_map(|(id, facts)| {
                let model = id.parse::<ModelRef>().ok()?;
                (configured.contains(&model.provider.as_str()) && providers.is_allowed(&model))
                    .then(|| OfferedModel {
                        id: id.clone(),
                        provider: model.provider.clone(),
                        context_window: facts.context_window,
                        max_output_tokens: facts.max_output_tokens,
                        alias_of: None,
                    })
            })
            .collect();
        for (from, to) in providers.aliases() {
            let Ok(model) = from.parse::<ModelRef>() else {
                continue;
            };
            if !providers.is_allowed(&model) || !configured.contains(&to.provider.as_str()) {
                continue;
            }
            let facts = self.facts(to);
            offered.retain(|m| &m.id != from);
            offered.push(OfferedModel {
                id: from.clone(),
                provider: to.provider.clone(),
                context_window: facts.and_then(|f| f.context_window),
                max_output_tokens: facts.and_then(|f| f.max_output_tokens),
                alias_of: Some(to.to_string()),
            });
        }
        offered.sort_by(|a, b| a.id.cmp(&b.id));
        offered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn providers(text: &str) -> Providers {
        let table: toml::Table = toml::from_str(text).unwrap();
        let get = |key: &str| {
            table
                .get(key)
                .and_then(toml::Value::as_table)
                .cloned()
                .unwrap_or_default()
        };
        Providers::from_config(&get("providers"), &get("gateways"), &get("models")).unwrap()
    }

    #[test]
    fn the_built_in_catalog_parses_and_knows_context_windows() {
        let catalog = Catalog::built_in();
        let sonnet = "anthropic/claude-sonnet-4-5".parse().unwrap();
        assert_eq!(
            catalog.facts(&sonnet).and_then(|f| f.context_window),
            Some(200_000)
        );
    }

    #[test]
    fn offered_models_are_those_configured_and_allowed_with_aliases() {
        let providers = providers(
            r#"
[providers.anthropic]
[providers.openai]
[models]
allowed = ["anthropic/claude-sonnet-*", "openai/gpt-5-mini", "team/fast"]
aliases = { "team/fast" = "openai/gpt-5-nano" }
"#,
        );
        let offered = Catalog::built_in().offered(&providers);
        let ids: Vec<&str> = offered.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "anthropic/claude-sonnet-4-5",
                "openai/gpt-5-mini",
                "team/fast"
            ]
        );
        let fast = offered.iter().find(|m| m.id == "team/fast").unwrap();
        assert_eq!(fast.alias_of.as_deref(), Some("openai/gpt-5-nano"));
        assert_eq!(fast.context_window, Some(400_000));
    }

    #[test]
    fn a_catalog_file_that_is_not_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models.toml");
        std::fs::write(&path, "[models.\"no-slash\"]\ncontext_window = 1\n").unwrap();
        let error = Catalog::load(path.to_str().unwrap()).unwrap_err();
        assert!(error.to_string().contains("no-slash"), "{error}");
        std::fs::write(&path, "[models.\"a/b\"]\nwindow = 1\n").unwrap();
        let error = Catalog::load(path.to_str().unwrap()).unwrap_err();
        assert!(error.to_string().starts_with("models.catalog:"), "{error}");
    }
}
