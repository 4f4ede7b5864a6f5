//! A store that cannot record the start of a run of some definitions, as a database that is
//! down for a moment cannot, and in which another server may hold every recall view: every
//! other operation goes to the store it wraps. What a server answers when it cannot take a
//! start, and what its runs do while another server folds the views, are tested with it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use auto_store::*;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Wraps a store; `start_run` of a definition named in `refused` fails as the database's
/// connection pool does when it has no connection to give.
pub struct FailingStore {
    inner: Arc<dyn Store>,
    refused: Mutex<HashSet<String>>,
    views_held_elsewhere: std::sync::atomic::AtomicBool,
    /// How many more reads of a run's snapshot fail, by run id.
    state_faults: Mutex<std::collections::HashMap<String, usize>>,
}

impl FailingStore {
    pub fn new(inner: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            refused: Mutex::new(HashSet::new()),
            views_held_elsewhere: Default::default(),
            state_faults: Default::default(),
        })
    }

    /// Whether another server (one that stopped, say) holds every recall view from now on.
    pub fn hold_views_elsewhere(&self, held: bool) {
        self.views_held_elsewhere
            .store(held, std::sync::atomic::Ordering::SeqCst);
    }

    /// From now on, a run of a definition of this name cannot be recorded.
    pub fn refuse_starts_of(&self, name: &str) {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_owned());
    }

    /// The next `times` reads of the run's snapshot fail as a row that cannot be decoded
    /// does: a fault no retry outlasts.
    pub fn fail_state_reads_of(&self, run_id: &str, times: usize) {
        self.state_faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(run_id.to_owned(), times);
    }

    /// How many of the reads made to fail are still to come.
    pub fn state_faults_left(&self, run_id: &str) -> usize {
        let faults = self.state_faults.lock().unwrap_or_else(|p| p.into_inner());
        faults.get(run_id).copied().unwrap_or(0)
    }

    fn refuses(&self, name: &str) -> bool {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
    }
}

/// The error of a pool with no connection to give.
fn sqlx_unavailable() -> sqlx::Error {
    sqlx::Error::PoolTimedOut
}

#[async_trait]
impl Store for FailingStore {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    async fn now(&self) -> Result<DateTime<Utc>> {
        self.inner.now().await
    }
    async fn check_writable(&self) -> Result<()> {
        self.inner.check_writable().await
    }
    async fn close(&self) {
        self.inner.close().await;
    }
    async fn create_org(&self, id: &str, title: Option<&str>) -> Result<Org> {
        self.inner.create_org(id, title).await
    }
    async fn get_org(&self, id: &str) -> Result<Option<Org>> {
        self.inner.get_org(id).await
    }
    async fn list_orgs(&self) -> Result<Vec<Org>> {
        self.inner.list_orgs().await
    }
    async fn create_playbook(&self, org: &str, id: &str, title: Option<&str>) -> Result<Playbook> {
        self.inner.create_playbook(org, id, title).await
    }
    async fn get_playbook(&self, playbook: &PlaybookRef) -> Result<Option<Playbook>> {
        self.inner.get_playbook(playbook).await
    }
    async fn log_end(&self, playbook: &PlaybookRef) -> Result<i64> {
        self.inner.log_end(playbook).await
    }
    async fn get_view(&self, playbook: &PlaybookRef, name: &str) -> Result<Option<RecallView>> {
        self.inner.get_view(playbook, name).await
    }
    async fn put_view(
        &self,
        playbook: &PlaybookRef,
        view: &RecallView,
        expected_revision: Option<i64>,
    ) -> Result<Option<RecallView>> {
        self.inner.put_view(playbook, view, expected_revision).await
    }
    async fn list_views(&self, playbook: Option<&PlaybookRef>) -> Result<Vec<ViewHead>> {
        self.inner.list_views(playbook).await
    }
    async fn hold_view(
        &self,
        playbook: &PlaybookRef,
        name: &str,
        holder: &str,
        lease: Duration,
    ) -> Result<bool> {
        if self
            .views_held_elsewhere
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Ok(false);
        }
        self.inner.hold_view(playbook, name, holder, lease).await
    }
    async fn list_playbooks(&self, org: &str) -> Result<Vec<Playbook>> {
        self.inner.list_playbooks(org).await
    }
    async fn create_definition(
        &self,
        playbook: &PlaybookRef,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        self.inner.create_definition(playbook, new, event).await
    }
    async fn update_definition(
        &self,
        playbook: &PlaybookRef,
        expected_version: i64,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        self.inner
            .update_definition(playbook, expected_version, new, event)
            .await
    }
    async fn retire_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        self.inner.retire_definition(playbook, key, event).await
    }
    async fn get_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> Result<Option<DefinitionVersion>> {
        self.inner.get_definition(playbook, key).await
    }
    async fn get_definition_version(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
    ) -> Result<Option<DefinitionVersion>> {
        self.inner
            .get_definition_version(playbook, key, version)
            .await
    }
    async fn list_definitions(
        &self,
        playbook: &PlaybookRef,
        def_type: Option<&str>,
    ) -> Result<Vec<DefinitionVersion>> {
        self.inner.list_definitions(playbook, def_type).await
    }
    async fn append_events(
        &self,
        playbook: &PlaybookRef,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>> {
        self.inner.append_events(playbook, events).await
    }
    async fn list_events(
        &self,
        playbook: &PlaybookRef,
        filter: &EventFilter,
    ) -> Result<Vec<Event>> {
        self.inner.list_events(playbook, filter).await
    }
    async fn get_event(&self, playbook: &PlaybookRef, id: &str) -> Result<Option<Event>> {
        self.inner.get_event(playbook, id).await
    }
    async fn start_run(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        if self.refuses(&new.key.name) {
            return Err(StoreError::Database(sqlx_unavailable()));
        }
        self.inner.start_run(playbook, new, events).await
    }
    async fn restart_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        expected_attempt: i64,
        definition_version: i64,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        self.inner
            .restart_run(
                playbook,
                run_id,
                expected_attempt,
                definition_version,
                events,
            )
            .await
    }
    async fn record_run_events(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>> {
        self.inner.record_run_events(playbook, run_id, events).await
    }
    async fn end_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        ending: RunEnding,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        self.inner.end_run(playbook, run_id, ending, events).await
    }
    async fn get_run(&self, playbook: &PlaybookRef, run_id: &str) -> Result<Option<Run>> {
        self.inner.get_run(playbook, run_id).await
    }
    async fn list_runs(&self, playbook: &PlaybookRef, filter: &RunFilter) -> Result<Vec<Run>> {
        self.inner.list_runs(playbook, filter).await
    }
    async fn commit_workflow_step(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        step: std::sync::Arc<auto_store::WorkflowStep>,
    ) -> Result<auto_store::StepCommitted> {
        // The run a first step starts, and a child performed in a step, are recorded with it:
        // refused as their starts would be.
        let starts = step
            .start
            .iter()
            .chain(step.children.iter().map(|c| &c.run));
        if starts.into_iter().any(|new| self.refuses(&new.key.name)) {
            return Err(StoreError::Database(sqlx_unavailable()));
        }
        self.inner
            .commit_workflow_step(playbook, run_id, step)
            .await
    }
    async fn get_workflow_state(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<(i64, serde_json::Value)>> {
        {
            let mut faults = self.state_faults.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(left) = faults.get_mut(run_id).filter(|left| **left > 0) {
                *left -= 1;
                return Err(StoreError::Corrupt(format!("the snapshot of {run_id}")));
            }
        }
        self.inner.get_workflow_state(playbook, run_id).await
    }
    async fn add_work(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        work: Vec<auto_store::NewWork>,
    ) -> Result<()> {
        self.inner.add_work(playbook, run_id, work).await
    }
    async fn claim_work(
        &self,
        claimer: &str,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<auto_store::Work>> {
        self.inner.claim_work(claimer, lease, limit).await
    }
    async fn finish_work(&self, id: i64) -> Result<()> {
        self.inner.finish_work(id).await
    }
    async fn next_work_due(&self) -> Result<Option<DateTime<Utc>>> {
        self.inner.next_work_due().await
    }
    async fn work_backlog(&self) -> Result<WorkBacklog> {
        self.inner.work_backlog().await
    }
    async fn next_input_due(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        except: Option<i64>,
    ) -> Result<Option<DateTime<Utc>>> {
        self.inner.next_input_due(playbook, run_id, except).await
    }
    async fn receive_run_event(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        event_id: &str,
        event: serde_json::Value,
        work: auto_store::NewWork,
    ) -> Result<Option<auto_store::RunInboxEvent>> {
        self.inner
            .receive_run_event(playbook, run_id, event_id, event, work)
            .await
    }
    async fn list_run_inbox(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Vec<auto_store::RunInboxEvent>> {
        self.inner.list_run_inbox(playbook, run_id).await
    }

    async fn count_open_calls(&self, playbook: &PlaybookRef, root: &str) -> Result<i64> {
        self.inner.count_open_calls(playbook, root).await
    }
    async fn start_interaction(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
        request: auto_store::NewRequest,
        work: Vec<auto_store::NewWork>,
    ) -> Result<(Run, auto_store::Request)> {
        self.inner
            .start_interaction(playbook, new, events, request, work)
            .await
    }
    async fn close_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
        close: auto_store::RequestClose,
        ending: RunEnding,
        events: Vec<NewEvent>,
        done_work: Vec<String>,
    ) -> Result<(auto_store::Request, Run)> {
        self.inner
            .close_request(playbook, request_id, close, ending, events, done_work)
            .await
    }
    async fn get_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
    ) -> Result<Option<auto_store::Request>> {
        self.inner.get_request(playbook, request_id).await
    }
    async fn get_request_of_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<auto_store::Request>> {
        self.inner.get_request_of_run(playbook, run_id).await
    }
    async fn list_requests(
        &self,
        playbook: &PlaybookRef,
        filter: &auto_store::RequestFilter,
    ) -> Result<Vec<auto_store::Request>> {
        self.inner.list_requests(playbook, filter).await
    }
    async fn list_triggers(&self) -> Result<Vec<auto_store::Trigger>> {
        self.inner.list_triggers().await
    }
    async fn queue_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        since_seq: i64,
        cursor_seq: i64,
        starts: Vec<auto_store::TriggerStart>,
        waiting_max: i64,
    ) -> Result<auto_store::Queued> {
        self.inner
            .queue_trigger_starts(
                playbook,
                workflow,
                since_seq,
                cursor_seq,
                starts,
                waiting_max,
            )
            .await
    }
    async fn take_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        per_minute: i64,
    ) -> Result<Vec<auto_store::TriggerStart>> {
        self.inner
            .take_trigger_starts(playbook, workflow, per_minute)
            .await
    }
    async fn settle_trigger_start(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        outcome: auto_store::StartOutcome,
    ) -> Result<()> {
        self.inner
            .settle_trigger_start(playbook, run_id, outcome)
            .await
    }
    async fn move_schedule(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        kind: &str,
        since_seq: i64,
        expected_due_at: Option<DateTime<Utc>>,
        due_at: DateTime<Utc>,
        running_run_id: Option<&str>,
    ) -> Result<bool> {
        self.inner
            .move_schedule(
                playbook,
                workflow,
                kind,
                since_seq,
                expected_due_at,
                due_at,
                running_run_id,
            )
            .await
    }
    async fn list_listeners(&self) -> Result<Vec<auto_store::Listener>> {
        self.inner.list_listeners().await
    }
    async fn advance_listener(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        reference: &str,
        cursor_seq: i64,
    ) -> Result<()> {
        self.inner
            .advance_listener(playbook, run_id, reference, cursor_seq)
            .await
    }

    async fn purge_runs(
        &self,
        playbook: &PlaybookRef,
        ended_before: chrono::DateTime<chrono::Utc>,
        batch: u32,
    ) -> Result<auto_store::Purged> {
        self.inner.purge_runs(playbook, ended_before, batch).await
    }

    async fn delete_playbook(
        &self,
        playbook: &PlaybookRef,
        force: bool,
    ) -> Result<auto_store::Deleted> {
        self.inner.delete_playbook(playbook, force).await
    }

    async fn delete_org(&self, org: &str, force: bool) -> Result<auto_store::Deleted> {
        self.inner.delete_org(org, force).await
    }
}
