//! The names tools reach the model under (reasoning page, "What the model sees"): `server__tool`,
//! other characters as underscores, an 8-character hash past 64 characters or on a clash, then
//! a numeric suffix for any clash that remains.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::limits::{MODEL_TOOL_NAME_CHARS_MAX, NAME_HASH_CHARS};

/// The model's names for `(server, tool)` pairs, in the same order, each unique.
pub fn model_names(pairs: &[(&str, &str)]) -> Vec<String> {
    let plain: Vec<String> = pairs
        .iter()
        .map(|(server, tool)| sanitize(&format!("{server}__{tool}")))
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for name in &plain {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let hashed: Vec<String> = pairs
        .iter()
        .zip(&plain)
        .map(|((server, tool), name)| {
            if name.chars().count() > MODEL_TOOL_NAME_CHARS_MAX || counts[name.as_str()] > 1 {
                with_hash(name, server, tool)
            } else {
                name.clone()
            }
        })
        .collect();
    let mut taken = HashSet::new();
    hashed
        .into_iter()
        .map(|name| {
            let mut candidate = name.clone();
            let mut suffix = 2;
            while !taken.insert(candidate.clone()) {
                let tail = format!("_{suffix}");
                candidate = format!(
                    "{}{tail}",
                    cut(&name, MODEL_TOOL_NAME_CHARS_MAX - tail.len())
                );
                suffix += 1;
            }
            candidate
        })
        .collect()
}

/// Letters, digits and underscores stay; every other character becomes an underscore.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name cut to leave room for `_` and the hash of the original server and tool.
fn with_hash(name: &str, server: &str, tool: &str) -> String {
    let digest = hex::encode(Sha256::digest(format!("{server}/{tool}").as_bytes()));
    let hash = &digest[..NAME_HASH_CHARS];
    let room = MODEL_TOOL_NAME_CHARS_MAX - NAME_HASH_CHARS - 1;
    format!("{}_{hash}", cut(name, room))
}

/// The first `chars` characters (the name is ASCII after [`sanitize`]).
fn cut(name: &str, chars: usize) -> &str {
    &name[..name.len().min(chars)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_join_server_and_tool() {
        assert_eq!(
            model_names(&[("graph", "search"), ("notes", "get.page")]),
            ["graph__search", "notes__get_page"]
        );
    }

    /// "A name longer than 64 characters ... gets an 8-character hash": at 64 kept, at 65 hashed.
    #[test]
    fn a_name_past_64_characters_gets_a_hash() {
        let at_limit = "t".repeat(MODEL_TOOL_NAME_CHARS_MAX - "graph__".len());
        let names = model_names(&[("graph", &at_limit)]);
        assert_eq!(names[0].len(), MODEL_TOOL_NAME_CHARS_MAX);
        assert_eq!(names[0], format!("graph__{at_limit}"));
        let past = format!("{at_limit}t");
        let names = model_names(&[("graph", &past)]);
        assert_eq!(names[0].len(), MODEL_TOOL_NAME_CHARS_MAX);
        assert!(names[0].starts_with("graph__ttt"), "{}", names[0]);
        let hash = &names[0][MODEL_TOOL_NAME_CHARS_MAX - NAME_HASH_CHARS..];
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()), "{hash}");
        assert_eq!(
            names[0].as_bytes()[MODEL_TOOL_NAME_CHARS_MAX - NAME_HASH_CHARS - 1],
            b'_'
        );
    }

    #[test]
    fn names_that_clash_after_the_change_get_hashes() {
        let names = model_names(&[("graph", "a.b"), ("graph", "a-b"), ("graph", "c")]);
        assert!(names[0].starts_with("graph__a_b_"), "{names:?}");
        assert!(names[1].starts_with("graph__a_b_"), "{names:?}");
        assert_ne!(names[0], names[1]);
        assert_eq!(names[0].len(), "graph__a_b_".len() + NAME_HASH_CHARS);
        assert_eq!(names[2], "graph__c");
    }

    #[test]
    fn a_clash_that_remains_gets_a_numeric_suffix() {
        // The same pair twice hashes alike: only the suffix tells them apart.
        let names = model_names(&[("g", "x"), ("g", "x"), ("g", "x")]);
        assert_eq!(names[1], format!("{}_2", names[0]));
        assert_eq!(names[2], format!("{}_3", names[0]));
    }
}
