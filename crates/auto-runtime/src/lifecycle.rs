//! The data's lifecycle: how long ended runs are kept (`[limits] retain_runs_days` and a
//! playbook's own `[playbooks."org/pb"] retain_runs_days`), the retention sweep that purges
//! them, the purge operation, and deleting a playbook or an org.
//!
//! What a purge may remove, and in what batches, is the store's ([`Store::purge_runs`]); this
//! module decides when, checks the operations' callers and input, and forgets what this
//! server kept of a deleted playbook.

use std::collections::HashMap;
use std::time::Duration;

use auto_store::{Deleted, PlaybookRef, Purged, Store, StoreError};
use chrono::{DateTime, Utc};

use crate::api::{DeletedOut, PurgeOut, PurgeRuns};
use crate::auth::{Caller, Permission};
use crate::problem::{Problem, ProblemIssue};
use crate::service::{Service, store_problem};

/// The fewest days a retention keeps ended runs.
pub const RETAIN_RUNS_DAYS_MIN: u32 = 1;
/// The most days a retention may name (100 years).
pub const RETAIN_RUNS_DAYS_MAX: u32 = 36_500;
/// Runs a purge removes in one transaction: a large purge is many short transactions, so
/// it never holds the store (SQLite's one writer, PostgreSQL's locks) for long.
pub const PURGE_BATCH_RUNS: u32 = 100;
/// How often the retention sweep runs by default (`[scheduler] retention_ms`): hourly.
pub const RETENTION_SWEEP_MS_DEFAULT: u64 = 3_600_000;
/// The shortest interval of the retention sweep the configuration takes.
pub const RETENTION_SWEEP_MS_MIN: u64 = 10;

/// How long ended runs are kept: the deployment's default (none: forever) and the playbooks
/// that say otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retention {
    /// `[limits] retain_runs_days`.
    pub default_days: Option<u32>,
    /// `[playbooks."org/pb"] retain_runs_days`, over the default.
    pub playbooks: HashMap<PlaybookRef, u32>,
    /// `[scheduler] retention_ms`: the interval of the sweep.
    pub sweep_ms: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            default_days: None,
            playbooks: HashMap::new(),
            sweep_ms: RETENTION_SWEEP_MS_DEFAULT,
        }
    }
}

impl Retention {
    /// The days a playbook keeps its ended runs; `None`: forever.
    pub fn days_for(&self, pb: &PlaybookRef) -> Option<u32> {
        self.playbooks.get(pb).copied().or(self.default_days)
    }

    fn any(&self) -> bool {
        self.default_days.is_some() || !self.playbooks.is_empty()
    }
}

/// Checks a number of days a retention names, from `source` (the configuration's key).
pub fn check_retain_days(source: &str, value: i64) -> Result<u32, String> {
    u32::try_from(value)
        .ok()
        .filter(|days| (RETAIN_RUNS_DAYS_MIN..=RETAIN_RUNS_DAYS_MAX).contains(days))
        .ok_or_else(|| {
            format!(
                "{source}: expected a whole number of days from {RETAIN_RUNS_DAYS_MIN} to \
                 {RETAIN_RUNS_DAYS_MAX}; got {value} (leave it out to keep ended runs forever)"
            )
        })
}

/// Purges the runs of `pb` that ended before `ended_before`, a batch at a time, until a batch
/// finds fewer than [`PURGE_BATCH_RUNS`], or `stop` says to.
async fn purge_all(
    store: &dyn Store,
    pb: &PlaybookRef,
    ended_before: DateTime<Utc>,
    stop: impl Fn() -> bool,
) -> Result<Purged, StoreError> {
    let mut purged = Purged::default();
    loop {
        let batch = store.purge_runs(pb, ended_before, PURGE_BATCH_RUNS).await?;
        purged.add(&batch);
        if batch.runs < i64::from(PURGE_BATCH_RUNS) || stop() {
            return Ok(purged);
        }
        // Lets the runs' own changes in between two batches.
        tokio::task::yield_now().await;
    }
}

fn deleted_out(deleted: Deleted) -> DeletedOut {
    DeletedOut {
        playbooks: deleted.playbooks,
        definitions: deleted.definitions,
        runs: deleted.runs,
        started_runs: deleted.started_runs,
        events: deleted.events,
    }
}

/// The refusal of a delete while runs are going.
fn runs_going(what: &str, detail: &str) -> Problem {
    Problem::conflict(
        "Runs are still going",
        format!(
            "{}. Cancel them and wait for them to end, or delete the {what} with \
             ?force=true, which removes them as they are.",
            capitalised(detail)
        ),
    )
}

/// The store's words as the start of a sentence.
fn capitalised(detail: &str) -> String {
    let mut chars = detail.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Service {
    /// `POST .../purge`: removes the playbook's runs that ended before `ended_before`, with
    /// their events, in batches. Admins only; a time in the future is refused.
    pub async fn purge_runs(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        body: PurgeRuns,
    ) -> Result<PurgeOut, Problem> {
        caller.require(&pb.org, Permission::Administer)?;
        let ended_before = DateTime::parse_from_rfc3339(body.ended_before.trim())
            .map(|time| time.with_timezone(&Utc))
            .map_err(|_| {
                Problem::invalid_request(vec![ProblemIssue::field(
                    "/ended_before",
                    format!(
                        "{:?} is not an RFC 3339 time; give one such as 2025-01-31T00:00:00Z.",
                        body.ended_before
                    ),
                )])
            })?;
        let now = self.store.now().await.map_err(store_problem)?;
        if ended_before > now {
            return Err(Problem::invalid_request(vec![ProblemIssue::field(
                "/ended_before",
                format!(
                    "{} is in the future (the server's time is {}); a purge removes runs that \
                     ended before a time that has passed.",
                    ended_before.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                ),
            )]));
        }
        let purged = purge_all(self.store.as_ref(), pb, ended_before, || false)
            .await
            .map_err(store_problem)?;
        tracing::info!(runs = purged.runs, events = purged.events, %ended_before, "purged runs");
        Ok(PurgeOut {
            ended_before,
            runs: purged.runs,
            events: purged.events,
        })
    }

    /// `DELETE /v1/orgs/{org}/playbooks/{pb}`: admins only; refused while runs are started,
    /// unless `force`.
    pub async fn delete_playbook(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        force: bool,
    ) -> Result<DeletedOut, Problem> {
        caller.require(&pb.org, Permission::Administer)?;
        let deleted = self
            .store
            .delete_playbook(pb, force)
            .await
            .map_err(|error| match error {
                StoreError::Conflict(detail) => runs_going("playbook", &detail),
                StoreError::NotFound(_) => Problem::not_found(format!(
                    "The org {} has no playbook {}.",
                    pb.org, pb.playbook
                )),
                other => store_problem(other),
            })?;
        self.documents.forget(|kept| kept == pb);
        tracing::info!(
            runs = deleted.runs,
            started_runs = deleted.started_runs,
            "deleted the playbook"
        );
        Ok(deleted_out(deleted))
    }

    /// `DELETE /v1/orgs/{org}`: admins only; refused while runs of its playbooks are started,
    /// unless `force`.
    pub async fn delete_org(
        &self,
        caller: &Caller,
        org: &str,
        force: bool,
    ) -> Result<DeletedOut, Problem> {
        caller.require(org, Permission::Administer)?;
        let deleted = self
            .store
            .delete_org(org, force)
            .await
            .map_err(|error| match error {
                StoreError::Conflict(detail) => runs_going("org", &detail),
                StoreError::NotFound(_) => Problem::not_found(format!("There is no org {org}.")),
                other => store_problem(other),
            })?;
        self.documents.forget(|kept| kept.org == org);
        tracing::info!(%org, playbooks = deleted.playbooks, runs = deleted.runs, "deleted the org");
        Ok(deleted_out(deleted))
    }

    /// The service with how long ended runs are kept.
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = std::sync::Arc::new(retention);
        self
    }

    /// One pass of the retention sweep: each playbook with a retention loses the runs that
    /// ended more than its days ago (by the store's clock, shifted by `[scheduler]
    /// clock_offset_ms` in tests). Returns what it removed.
    pub async fn sweep_retention(&self) -> Result<Purged, Problem> {
        let mut total = Purged::default();
        if !self.retention.any() {
            return Ok(total);
        }
        let now = self.store.now().await.map_err(store_problem)?
            + chrono::Duration::milliseconds(self.limits.clock_offset_ms);
        for org in self.store.list_orgs().await.map_err(store_problem)? {
            let playbooks = match self.store.list_playbooks(&org.id).await {
                Ok(playbooks) => playbooks,
                // Deleted meanwhile.
                Err(StoreError::NotFound(_)) => continue,
                Err(other) => return Err(store_problem(other)),
            };
            for playbook in playbooks {
                let pb = PlaybookRef::new(playbook.org, playbook.id);
                let Some(days) = self.retention.days_for(&pb) else {
                    continue;
                };
                let ended_before = now - chrono::Duration::days(i64::from(days));
                let stop = || self.triggers.is_stopping();
                match purge_all(self.store.as_ref(), &pb, ended_before, stop).await {
                    Ok(purged) => {
                        if purged.runs > 0 {
                            tracing::info!(org = %pb.org, playbook = %pb.playbook,
                                runs = purged.runs, events = purged.events, days,
                                "retention purged ended runs");
                        }
                        total.add(&purged);
                    }
                    Err(StoreError::NotFound(_)) => {}
                    Err(other) => return Err(store_problem(other)),
                }
                if self.triggers.is_stopping() {
                    return Ok(total);
                }
            }
        }
        Ok(total)
    }
}

/// The retention sweep: a pass every `[scheduler] retention_ms`, the first one interval after
/// the server starts; nothing when no retention is configured.
pub fn spawn_retention(service: Service) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if !service.retention.any() {
            return;
        }
        let every = Duration::from_millis(service.retention.sweep_ms);
        // The stop is looked at at least every second, so a stopping server is not held.
        let tick = every.min(Duration::from_secs(1));
        let mut last = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(tick).await;
            if service.triggers.is_stopping() {
                break;
            }
            if last.elapsed() < every {
                continue;
            }
            last = tokio::time::Instant::now();
            if let Err(problem) = service.sweep_retention().await {
                tracing::warn!(detail = ?problem.detail, "the retention sweep failed");
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_days_are_bounded_at_both_edges() {
        assert_eq!(check_retain_days("limits.retain_runs_days", 1), Ok(1));
        assert_eq!(
            check_retain_days("limits.retain_runs_days", 36_500),
            Ok(36_500)
        );
        assert_eq!(
            check_retain_days("limits.retain_runs_days", 0).unwrap_err(),
            "limits.retain_runs_days: expected a whole number of days from 1 to 36500; got 0 \
             (leave it out to keep ended runs forever)"
        );
        assert!(check_retain_days("x", 36_501).is_err());
        assert!(check_retain_days("x", -1).is_err());
    }

    #[test]
    fn a_playbooks_retention_is_over_the_default() {
        let pb = PlaybookRef::new("acme", "main");
        let other = PlaybookRef::new("acme", "other");
        let mut retention = Retention::default();
        assert_eq!(retention.days_for(&pb), None, "forever by default");
        assert!(!retention.any());
        retention.playbooks.insert(pb.clone(), 7);
        assert_eq!(retention.days_for(&pb), Some(7));
        assert_eq!(retention.days_for(&other), None);
        retention.default_days = Some(30);
        assert_eq!(retention.days_for(&other), Some(30));
        assert_eq!(retention.days_for(&pb), Some(7));
    }
}
