//! Which JSON Schema draft a schema is read as: 2020-12 unless `$schema` names draft-07 or the
//! document uses `definitions` without `$defs`.

use serde::Serialize;
use serde_json::Value;

use crate::walk::schema_nodes;

/// The two drafts the reasoning page accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Draft {
    #[serde(rename = "draft-07")]
    Draft7,
    #[serde(rename = "2020-12")]
    Draft202012,
}

impl Draft {
    /// The `$schema` URI a prepared schema carries.
    pub fn uri(self) -> &'static str {
        match self {
            Draft::Draft7 => "http://json-schema.org/draft-07/schema#",
            Draft::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        }
    }

    pub(crate) fn to_jsonschema(self) -> jsonschema::Draft {
        match self {
            Draft::Draft7 => jsonschema::Draft::Draft7,
            Draft::Draft202012 => jsonschema::Draft::Draft202012,
        }
    }
}

/// The draft named by a `$schema` value, or `None` when it names neither accepted draft.
pub(crate) fn draft_of_uri(uri: &str) -> Option<Draft> {
    let bare = uri.trim_end_matches('#');
    let bare = bare
        .strip_prefix("https://")
        .or_else(|| bare.strip_prefix("http://"))?;
    match bare {
        "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
        "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
        _ => None,
    }
}

/// "It is read as draft-07 when $schema says so, or when the document uses definitions
/// without $defs." Returns `Err` with the `$schema` value when it names another draft.
pub(crate) fn choose_draft(schema: &Value) -> Result<Draft, String> {
    if let Some(declared) = schema.get("$schema") {
        return match declared.as_str().and_then(draft_of_uri) {
            Some(draft) => Ok(draft),
            None => Err(declared.to_string()),
        };
    }
    let (mut definitions, mut defs) = (false, false);
    for node in schema_nodes(schema) {
        if let Value::Object(map) = node.value {
            definitions |= map.contains_key("definitions");
            defs |= map.contains_key("$defs");
        }
    }
    Ok(if definitions && !defs {
        Draft::Draft7
    } else {
        Draft::Draft202012
    })
}
