//! The latest version of each definition read, kept in memory where this store is its
//! database's only writer: SQLite's file, which the store holds a lock on so that no other
//! server opens it, and SQLite's in-memory database, which exists only in this store. A run reads
//! its definition first of all; there, that read costs a lookup instead of a query (a tenth of
//! a millisecond through sqlx's worker on every run).
//!
//! Every change of a definition goes through this store, which empties the cache after the
//! change commits and moves its generation on. A read fills the cache only when no change
//! committed since it began (the generation is the same), so a read that began before a change
//! and ends after it never keeps what the change replaced.
//!
//! On PostgreSQL other servers change definitions, so what is kept ([`StampedDefinitions`]) is
//! given out only once the database says it is still the latest: a read asks first for the
//! definition's stamp (its row's key, its latest version, its status), a row of three numbers,
//! and reads the whole version (its source, overview and derived JSON, parsed) only when the
//! stamp is not the one kept. A stamp never comes back once it has changed: a row's key is
//! never given again, versions only grow, and a retired definition is never active again.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::{DefinitionKey, DefinitionStatus, DefinitionVersion, PlaybookRef};

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

/// How a store keeps the latest versions it read.
pub(crate) enum KeptDefinitions {
    /// Given out until this store changes a definition: it is its database's only writer
    /// (SQLite's file, which it holds a lock on, and SQLite's in-memory database).
    Alone(LatestDefinitions),
    /// Given out while the database's stamp is the same: other servers change definitions
    /// (PostgreSQL).
    Stamped(StampedDefinitions),
}

/// What says which version is a definition's latest on PostgreSQL (see the module's comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DefinitionStamp {
    /// The definition's row: a definition deleted and made again has another.
    pub(crate) pk: i64,
    pub(crate) latest_version: i64,
    pub(crate) status: DefinitionStatus,
}

impl DefinitionStamp {
    /// Whether `version` is what the definition held when it had this stamp.
    fn names(self, version: &DefinitionVersion) -> bool {
        version.version == self.latest_version && version.status == self.status
    }
}

/// The latest version of each definition read, with its stamp, where other servers change
/// definitions: given out while the database's stamp is the same.
#[derive(Default)]
pub(crate) struct StampedDefinitions {
    kept: Mutex<HashMap<Key, (DefinitionStamp, DefinitionVersion)>>,
}

impl StampedDefinitions {
    /// The version kept of the definition, when its stamp is `stamp`.
    pub(crate) fn get(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        stamp: DefinitionStamp,
    ) -> Option<DefinitionVersion> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.get(&(playbook.clone(), key.clone())) {
            Some((kept_stamp, version)) if *kept_stamp == stamp => Some(version.clone()),
            _ => None,
        }
    }

    /// Keeps `found`, read after the database gave `stamp`, when it is the version `stamp`
    /// names (a change between the two reads is not kept, and read again next time).
    pub(crate) fn fill(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        stamp: DefinitionStamp,
        found: &DefinitionVersion,
    ) {
        if !stamp.names(found) {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= LATEST_DEFINITIONS_MAX {
            kept.clear();
        }
        kept.insert((playbook.clone(), key.clone()), (stamp, found.clone()));
    }

    /// Forgets the definition: the database has none of that name.
    pub(crate) fn forget(&self, playbook: &PlaybookRef, key: &DefinitionKey) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.remove(&(playbook.clone(), key.clone()));
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

    fn stamp(latest_version: i64) -> DefinitionStamp {
        DefinitionStamp {
            pk: 7,
            latest_version,
            status: DefinitionStatus::Active,
        }
    }

    /// A version is given out for the stamp it was kept under and no other, and a version read
    /// after a change the stamp does not name is not kept.
    #[test]
    fn a_stamped_version_is_given_out_for_its_stamp_alone() {
        let cache = StampedDefinitions::default();
        let pb = PlaybookRef::new("acme", "main");
        let key = DefinitionKey::new("computation", "a");
        let one = version(1).unwrap();
        // Read after a change made version 2 under the stamp of version 1: not kept.
        cache.fill(&pb, &key, stamp(1), &version(2).unwrap());
        assert_eq!(cache.get(&pb, &key, stamp(1)), None);
        cache.fill(&pb, &key, stamp(1), &one);
        assert_eq!(cache.get(&pb, &key, stamp(1)), Some(one.clone()));
        assert_eq!(cache.get(&pb, &key, stamp(2)), None);
        let made_again = DefinitionStamp { pk: 8, ..stamp(1) };
        assert_eq!(cache.get(&pb, &key, made_again), None);
        let retired = DefinitionStamp {
            status: DefinitionStatus::Retired,
            ..stamp(1)
        };
        assert_eq!(cache.get(&pb, &key, retired), None);
        cache.forget(&pb, &key);
        assert_eq!(cache.get(&pb, &key, stamp(1)), None);
    }

    #[test]
    fn the_stamped_cache_is_emptied_past_its_size() {
        let cache = StampedDefinitions::default();
        let pb = PlaybookRef::new("acme", "main");
        let one = version(1).unwrap();
        let fill = |n: usize| {
            let key = DefinitionKey::new("computation", format!("d{n}"));
            cache.fill(&pb, &key, stamp(1), &one);
        };
        // At the limit: every definition is kept.
        (0..LATEST_DEFINITIONS_MAX).for_each(fill);
        assert_eq!(cache.kept.lock().unwrap().len(), LATEST_DEFINITIONS_MAX);
        // One past: the cache starts again with the newest.
        fill(LATEST_DEFINITIONS_MAX);
        assert_eq!(cache.kept.lock().unwrap().len(), 1);
    }
}
