//! The reader's own rules that the case corpus shows less directly: configuration, the
//! partial value after an error, and the places a checker gets back.

use serde_json::json;

use super::*;

fn messages(read: &YamlRead) -> Vec<String> {
    read.issues.iter().map(Issue::message).collect()
}

#[test]
fn the_line_offset_moves_lines_and_not_columns() {
    let config = YamlConfig {
        line_offset: 10,
        ..YamlConfig::workflow()
    };
    let read = read_yaml("a: &x 1\n", &config);
    assert_eq!(
        messages(&read),
        ["Line 11, column 4: at /a: Anchors are not allowed."]
    );
    assert_eq!(
        read.document.value_position(""),
        Position {
            line: 11,
            column: 1
        }
    );
}

#[test]
fn the_line_form_leaves_columns_out() {
    let read = read_yaml("a: &x 1\n", &YamlConfig::front_matter());
    assert_eq!(messages(&read), ["Line 2, /a: Anchors are not allowed."]);
    assert_eq!(read.document.form(), IssueForm::Line);
}

#[test]
fn a_syntax_error_keeps_what_came_before() {
    let read = read_yaml(
        "a: 1\nb:\n  c: [2, 3]\n  d: e: f\ng: 4\n",
        &YamlConfig::workflow(),
    );
    // The parser gives `d: e` before it sees the second colon.
    assert_eq!(
        read.document.value(),
        &json!({"a": 1, "b": {"c": [2, 3], "d": "e"}})
    );
    assert!(!read.complete);
    assert_eq!(read.issues.len(), 1);
}

#[test]
fn a_checker_reports_at_the_value_or_the_mapping_that_lacks_a_key() {
    let read = read_yaml("do:\n  - step:\n      call: x\n", &YamlConfig::workflow());
    let document = &read.document;
    let call = document.issue_at("/do/0/step/call", "Bad call.");
    assert_eq!(
        call.message(),
        "Line 3, column 13: at /do/0/step/call: Bad call."
    );
    let missing = document.issue_at("/do/0/step/with", "It needs with");
    assert_eq!(
        missing.message(),
        "Line 3, column 7: at /do/0/step/with: It needs with"
    );
    let key = document.issue_at_key("/do/0/step", "Unknown.");
    assert_eq!(key.message(), "Line 2, column 5: at /do/0/step: Unknown.");
}

#[test]
fn keys_with_slashes_and_tildes_are_escaped_in_pointers() {
    let read = read_yaml("a/b:\n  c~d: &x 1\n", &YamlConfig::workflow());
    assert_eq!(
        messages(&read),
        ["Line 2, column 8: at /a~1b/c~0d: Anchors are not allowed."]
    );
    assert!(read.document.positions().get("/a~1b/c~0d").is_some());
}

#[test]
fn columns_count_unicode_scalar_values() {
    // Each of these is one scalar value but two UTF-16 units or several UTF-8 bytes.
    let read = read_yaml("\"🎉é\": &x 1\n", &YamlConfig::workflow());
    assert_eq!(read.issues[0].column, Some(7));
}

#[test]
fn a_byte_order_mark_does_not_shift_the_first_line() {
    let read = read_yaml("\u{feff}a: &x 1\n", &YamlConfig::workflow());
    assert_eq!(
        messages(&read),
        ["Line 1, column 4: at /a: Anchors are not allowed."]
    );
}

#[test]
fn an_empty_text_is_null_at_its_first_line() {
    let read = read_yaml("", &YamlConfig::front_matter());
    assert_eq!(read.document.value(), &Value::Null);
    assert!(read.issues.is_empty() && read.complete);
    assert_eq!(read.document.issue_at("/model", "It needs model.").line, 2);
}

#[test]
fn the_depth_limit_counts_mappings_and_lists() {
    let config = |depth_max| YamlConfig {
        depth_max,
        ..YamlConfig::workflow()
    };
    assert!(read_yaml("a: 1", &config(1)).issues.is_empty());
    assert_eq!(read_yaml("a: [1]", &config(1)).issues.len(), 1);
    assert!(read_yaml("a: [1]", &config(2)).issues.is_empty());
    assert!(read_yaml("scalar", &config(0)).issues.is_empty());
    assert_eq!(read_yaml("a: 1", &config(0)).document.value(), &Value::Null);
}

#[test]
fn a_refused_key_leaves_the_mapping_readable() {
    // The parser refuses an alias to an anchor it has not seen, so `k` defines one.
    let text = "a: &k 1\n? [x]\n: {deep: [1]}\n*k : 2\na: 3\nb: 4\n";
    let read = read_yaml(text, &YamlConfig::workflow());
    assert_eq!(read.document.value(), &json!({"a": 1, "b": 4}));
    let texts: Vec<_> = read
        .issues
        .iter()
        .map(|issue| issue.text.as_str())
        .collect();
    let duplicate = texts::duplicate_key("a");
    assert_eq!(
        texts,
        [texts::ANCHOR, texts::COMPLEX_KEY, texts::ALIAS, &duplicate]
    );
}
