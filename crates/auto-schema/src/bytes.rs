//! How many bytes a value takes as JSON, counted without writing it out.
//!
//! Every byte limit of the pages (a schema, an input, an answer, a run's output, a waiting
//! run's snapshot) is measured on the compact serialization. Serializing into a `Vec` only to
//! take its length allocates and copies the whole text; the workflow engine measures every
//! step's events and every waiting run's snapshot this way, so the count is made by a writer
//! that only adds up what it is given.

use std::io;

use serde::Serialize;

/// The length of `value` as compact JSON (what `serde_json::to_vec` would give), or `None` when
/// it cannot be serialized (a map whose keys are not strings, say).
pub fn json_bytes<T: Serialize + ?Sized>(value: &T) -> Option<usize> {
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.0)
}

/// A writer that keeps nothing but how many bytes it was given.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    /// The count is the length of the text `to_vec` writes, escapes and all.
    #[test]
    fn counts_what_serializing_writes() {
        for value in [
            json!(null),
            json!({"x": 1, "text": "a \"quoted\" line\nand é, 😀, \u{1}"}),
            json!([1.5, -2, true, {"nested": [[], {}]}]),
        ] {
            let written = serde_json::to_vec(&value).unwrap().len();
            assert_eq!(json_bytes(&value), Some(written), "{value}");
        }
    }

    /// What cannot be JSON is not counted.
    #[test]
    fn what_cannot_be_json_has_no_count() {
        let keys_not_strings = BTreeMap::from([((1, 2), "pair")]);
        assert_eq!(json_bytes(&keys_not_strings), None);
    }
}
