//! Output shapes (supplement §6): placeholder until the shapes commit.
use crate::validate::ValidationIssue;
use serde_json::Value;
pub const SHAPE_NAMES: &[&str] = &[];
pub fn shape_schema(_name: &str) -> Option<Value> {
    None
}
pub fn check_shape(_name: &str, _answer: &Value) -> Vec<ValidationIssue> {
    Vec::new()
}
