//! Any text, read as a workflow and as a reasoning source: no panic, no overflow, and the
//! promises of the API hold (a root place, issues from line 1, nesting within the limit).

#![no_main]

use auto_doc::{YamlConfig, read_markdown, read_yaml};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    for config in [YamlConfig::workflow(), YamlConfig::front_matter()] {
        let read = read_yaml(text, &config);
        assert!(read.document.positions().get("").is_some());
        assert!(
            read.issues
                .iter()
                .all(|issue| issue.line > config.line_offset)
        );
        assert!(depth(read.document.value()) <= config.depth_max);
    }
    let read = read_markdown(text, &YamlConfig::front_matter());
    assert!(read.issues.iter().all(|issue| issue.line >= 1));
});

/// Mappings and lists nested in `value`, counted without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut open = vec![(value, 0)];
    while let Some((value, above)) = open.pop() {
        let children: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            Value::Object(entries) => entries.values().collect(),
            _ => continue,
        };
        deepest = deepest.max(above + 1);
        open.extend(children.into_iter().map(|child| (child, above + 1)));
    }
    deepest
}
