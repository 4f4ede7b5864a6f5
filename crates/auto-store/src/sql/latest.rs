//! The latest version of each definition read, kept in memory where this store is its
//! database's only writer: SQLite's file, which the store holds a lock on so that no other
//! server opens it, and SQLite's in-memory database, which exists only in this store. A run reads
//! its definition first of all; there, that read costs a lookup instead of a query (a tenth of
//! a millisecond through sqlx's worker on every run).
//!
//! Every change of a definition goes through this store, which empties the cache after the
//! change commits and moves its generation on. A read fills the cache only when no change
//! committed since it began (the generation is the same), so a read that began before a change
//! and ends after it never keeps what the change replaced. On PostgreSQL, where other servers
//! change definitions, there is no cache.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::{DefinitionKey, DefinitionVersion, PlaybookRef};

/// How many definitions the cache holds; past it, it is emptied and fills again.
pub(crate) const LATEST_DEFINITIONS_MAX: usize = 4_096;

type Key = (PlaybookRef, DefinitionKey);

#[derive(Default)]
struct Kept {
    generation: u64,
    latest: HashMap<Key, Option<DefinitionVersion>>,
}

#[derive(Default)]
pub(crate) struct LatestDefinitions {
    kept: Mutex<Kept>,
}

impl LatestDefinitions {
    /// What is kept of the definition, and the generation to fill it under otherwise.
    pub(crate) fn get(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> Result<Option<DefinitionVersion>, u64> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.latest.get(&(playbook.clone(), key.clone())) {
            Some(found) => Ok(found.clone()),
            None => Err(kept.generation),
        }
    }

    /// Keeps what a read that began at `generation` found, unless a change committed since.
    pub(crate) fn fill(
        &self,
        generation: u64,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        found: &Option<DefinitionVersion>,
    ) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.generation != generation {
            return;
        }
        if kept.latest.len() >= LATEST_DEFINITIONS_MAX {
            kept.latest.clear();
        }
        kept.latest
            .insert((playbook.clone(), key.clone()), found.clone());
    }

    /// Forgets everything: called after every change of a definition, committed or not.
    pub(crate) fn changed(&self) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.generation += 1;
        kept.latest.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(n: i64) -> Option<DefinitionVersion> {
        let at = chrono::DateTime::UNIX_EPOCH;
        Some(DefinitionVersion {
            key: DefinitionKey::new("computation", "a"),
            version: n,
            status: crate::DefinitionStatus::Active,
            source: String::new(),
            overview: None,
            diagram: "none".into(),
            description: None,
            derived: serde_json::Value::Null,
            created_at: at,
            updated_at: at,
            saved_seq: n,
        })
    }

    #[test]
    fn a_read_that_began_before_a_change_keeps_nothing() {
        let cache = LatestDefinitions::default();
        let pb = PlaybookRef::new("acme", "main");
        let key = DefinitionKey::new("computation", "a");
        let generation = cache.get(&pb, &key).unwrap_err();
        // A change commits while the read is under way.
        cache.changed();
        cache.fill(generation, &pb, &key, &version(1));
        let generation = cache.get(&pb, &key).expect_err("nothing kept");
        cache.fill(generation, &pb, &key, &version(2));
        assert_eq!(cache.get(&pb, &key).unwrap().unwrap().version, 2);
        cache.changed();
        assert!(cache.get(&pb, &key).is_err());
    }

    #[test]
    fn the_cache_is_emptied_past_its_size() {
        let cache = LatestDefinitions::default();
        let pb = PlaybookRef::new("acme", "main");
        let fill = |n: usize| {
            let key = DefinitionKey::new("computation", format!("d{n}"));
            cache.fill(0, &pb, &key, &None);
        };
        // At the limit: every definition is kept.
        (0..LATEST_DEFINITIONS_MAX).for_each(fill);
        assert_eq!(
            cache.kept.lock().unwrap().latest.len(),
            LATEST_DEFINITIONS_MAX
        );
        // One past: the cache starts again with the newest.
        fill(LATEST_DEFINITIONS_MAX);
        assert_eq!(cache.kept.lock().unwrap().latest.len(), 1);
    }
}
