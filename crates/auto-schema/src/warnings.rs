//! Provider warnings: placeholder until the warnings commit.
use crate::check::SchemaRole;
use crate::walk::SchemaNode;
use serde::Serialize;
use serde_json::Value;
pub const ANTHROPIC_PROVIDERS: &[&str] = &[
    "anthropic",
    "bedrock",
    "bedrock-anthropic",
    "vertex-anthropic",
];
pub const OPENAI_PROVIDERS: &[&str] = &["openai", "azure"];
pub const GOOGLE_PROVIDERS: &[&str] = &["google", "vertex"];
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SchemaWarning {
    pub pointer: String,
    pub text: String,
}
pub(crate) fn schema_warnings(
    _s: &Value,
    _n: &[SchemaNode<'_>],
    _r: SchemaRole,
) -> Vec<SchemaWarning> {
    Vec::new()
}
pub fn tool_schema_warnings(_tool: &str, _schema: &Value) -> Vec<String> {
    Vec::new()
}
