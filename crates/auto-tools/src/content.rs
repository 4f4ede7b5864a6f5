//! What the model reads of a tool's result (reasoning page, "What the model sees"): text content
//! as text, structured content only when there is no text, any other content as a one-line
//! placeholder; and the scrubbing of a server's secrets out of what it returns.

use serde_json::Value;

/// What replaces a secret in any text a model or a record receives.
pub const SCRUBBED: &str = "[secret removed]";

/// The text the model reads of a `CallToolResult` as JSON (`content`, `structuredContent`).
pub fn model_text(result: &Value) -> String {
    let blocks = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    let has_text = blocks.iter().any(|b| b["type"] == "text");
    let mut parts: Vec<String> = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => parts.push(block["text"].as_str().unwrap_or_default().to_owned()),
            _ => parts.push(placeholder(block)),
        }
    }
    if !has_text && let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        // Structured content stands for the text the server did not give; the placeholders of
        // other content follow it.
        parts.insert(0, structured.to_string());
    }
    parts.join("\n")
}

/// One line saying what a block that is not text held, without its bytes.
fn placeholder(block: &Value) -> String {
    let kind = block["type"].as_str().unwrap_or("unknown");
    let mime = block["mimeType"]
        .as_str()
        .or_else(|| block["resource"]["mimeType"].as_str());
    let uri = block["uri"]
        .as_str()
        .or_else(|| block["resource"]["uri"].as_str());
    let mut line = format!("[{kind} content");
    if let Some(mime) = mime {
        line.push_str(&format!(" ({mime})"));
    }
    if let Some(uri) = uri {
        line.push_str(&format!(" at {uri}"));
    }
    line.push_str(" is not shown]");
    // One line, whatever the server put in its fields.
    line.replace(['\n', '\r'], " ")
}

/// Whether the server marked the result an error (`isError`).
pub fn is_error(result: &Value) -> bool {
    result["isError"] == Value::Bool(true)
}

/// `text` with every secret replaced by [`SCRUBBED`]. Secrets shorter than 4 bytes are left,
/// since replacing them would mangle ordinary words without protecting anything.
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut text = text.to_owned();
    let mut secrets: Vec<&str> = secrets.iter().copied().filter(|s| s.len() >= 4).collect();
    // The longest first, so `Bearer x` is replaced whole before `x` alone.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in secrets {
        if text.contains(secret) {
            text = text.replace(secret, SCRUBBED);
        }
    }
    text
}

/// A JSON value with every string scrubbed, keys included.
pub fn scrub_value(value: &Value, secrets: &[&str]) -> Value {
    if secrets.is_empty() {
        return value.clone();
    }
    match value {
        Value::String(s) => Value::String(scrub(s, secrets)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| scrub_value(v, secrets)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (scrub(k, secrets), scrub_value(v, secrets)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The value at a dotted path of a result, such as `meta.requestId` (`meta` is `_meta`).
pub fn at_path<'a>(result: &'a Value, path: &str) -> Option<&'a Value> {
    let mut value = result;
    for (i, part) in path.split('.').enumerate() {
        value = match (i, part) {
            (0, "meta") => value.get("_meta").or_else(|| value.get("meta"))?,
            _ => value.get(part)?,
        };
    }
    (!value.is_null()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_reaches_the_model_as_text_and_structured_content_only_without_text() {
        let result = json!({
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
            "structuredContent": {"n": 1}
        });
        assert_eq!(model_text(&result), "one\ntwo");
        let structured = json!({"content": [], "structuredContent": {"n": 1}});
        assert_eq!(model_text(&structured), r#"{"n":1}"#);
    }

    #[test]
    fn other_content_is_a_one_line_placeholder() {
        let result = json!({"content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a\nb", "text": "secret body"}},
        ]});
        assert_eq!(
            model_text(&result),
            "see\n[image content (image/png) is not shown]\n[resource content at file:///a b is not shown]"
        );
    }

    #[test]
    fn secrets_are_scrubbed_longest_first() {
        let secrets = ["Bearer tok-123", "tok-123", "ab"];
        assert_eq!(
            scrub("sent Bearer tok-123 then tok-123 and ab", &secrets),
            "sent [secret removed] then [secret removed] and ab"
        );
        assert_eq!(
            scrub_value(&json!({"k": ["tok-123"]}), &secrets),
            json!({"k": ["[secret removed]"]})
        );
    }

    #[test]
    fn a_request_id_is_read_at_its_path() {
        let result = json!({"_meta": {"requestId": "r-1"}, "content": []});
        assert_eq!(at_path(&result, "meta.requestId"), Some(&json!("r-1")));
        assert_eq!(at_path(&result, "meta.other"), None);
    }
}
