//! The words of every issue this crate reports, in one place so that tests and callers match
//! them exactly. Short and plain: the author reads them next to a line number.

/// An anchor (`&name`) on a value.
pub const ANCHOR: &str = "Anchors are not allowed.";

/// An alias (`*name`) in place of a value.
pub const ALIAS: &str = "Aliases are not allowed.";

/// A tag (`!!str`, `!custom`) on a value.
pub const TAG: &str = "Tags are not allowed.";

/// `.inf`, `.nan`, or a number too large for a 64-bit float.
pub const NOT_FINITE: &str = "Numbers must be finite.";

/// A second `---` document in one text.
pub const SEVERAL_DOCUMENTS: &str = "Only one YAML document is allowed.";

/// A list or mapping written as a mapping key (`? [a, b]`, `[a]: 1`).
pub const COMPLEX_KEY: &str = "A key must be text, not a list or a mapping.";

/// Flow collections (`[ ]`, `{ }`) nested past what the parser reads, when the caller's own
/// limit is higher.
pub const FLOW_TOO_DEEP: &str = "Brackets and braces nest at most 255 levels deep.";

/// A Markdown source that does not open with a `---` line.
pub const FRONT_MATTER_MISSING: &str = "The document must start with front matter: a --- line.";

/// Front matter opened with `---` and never closed by another.
pub const FRONT_MATTER_UNCLOSED: &str = "The front matter is not closed by a --- line.";

/// Keys longer than this many characters are cut in messages, so a hostile key cannot make a
/// rejection huge.
pub const KEY_SHOWN_CHARS_MAX: usize = 64;

/// A key written twice in one mapping: `The key temperature appears twice.`
pub fn duplicate_key(key: &str) -> String {
    format!("The key {} appears twice.", shown_key(key))
}

/// A mapping or list nested past the caller's limit: `Nesting is deeper than 72 levels.`
pub fn too_deep(depth_max: usize) -> String {
    format!("Nesting is deeper than {depth_max} levels.")
}

/// A YAML syntax error in the parser's words: `Invalid YAML: did not find expected key.`
pub fn invalid_yaml(parser_words: &str) -> String {
    format!("Invalid YAML: {}.", parser_words.trim_end_matches('.'))
}

fn shown_key(key: &str) -> String {
    if key.is_empty() {
        return "\"\"".to_owned();
    }
    match key.char_indices().nth(KEY_SHOWN_CHARS_MAX) {
        Some((cut, _)) => format!("{}…", &key[..cut]),
        None => key.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_keys_are_cut_and_empty_keys_shown() {
        let long = "é".repeat(KEY_SHOWN_CHARS_MAX + 1);
        let text = duplicate_key(&long);
        assert!(text.contains(&format!("{}…", "é".repeat(KEY_SHOWN_CHARS_MAX))));
        assert_eq!(duplicate_key(""), "The key \"\" appears twice.");
        assert_eq!(
            duplicate_key("temperature"),
            "The key temperature appears twice."
        );
    }
}
