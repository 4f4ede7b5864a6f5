//! The store's test suite: every case runs on SQLite (a file in a temporary directory) and on
//! PostgreSQL when `AUTO_TEST_POSTGRES` holds a URL (each case in a schema of its own).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use auto_store::{
    DefinitionKey, DefinitionStatus, EndedChild, EventFilter, LISTENERS_MAX, NewDefinitionVersion,
    NewEvent, NewRequest, NewRun, NewWork, PlaybookRef, RecallView, RequestClose, RequestFilter,
    RequestStatus, Result, Run, RunEnding, RunFilter, RunStatus, StepCommitted, Store, StoreError,
    WorkflowStep,
};
use chrono::{TimeZone, Utc};
use serde_json::{Map, json};

/// Runs each named case, an `async fn(Arc<dyn Store>) -> Result<()>`, once per store.
macro_rules! store_suite {
    ($($case:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let (store, _directory) = super::sqlite_store().await;
                    super::$case(store).await.unwrap_or_else(|error| panic!("{error}"));
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let Some(store) = super::postgres_store().await else { return };
                    super::$case(store).await.unwrap_or_else(|error| panic!("{error}"));
                }
            )*
        }
    };
}

store_suite!(
    orgs_and_playbooks,
    definitions_are_versioned_and_retired,
    definition_changes_refused_append_nothing,
    definitions_list_by_type_then_name,
    events_append_single_and_batched,
    the_log_ends_at_its_last_seq,
    large_events_append_in_order_and_whole,
    seq_is_per_playbook,
    duplicate_event_id_appends_nothing,
    run_number_taken_appends_nothing,
    list_events_filters,
    missing_playbook_is_not_found,
    database_time_goes_forward,
    followers_never_see_a_gap,
    concurrent_updates_one_wins,
    concurrent_run_numbers_one_wins,
    run_start_and_get_round_trip,
    run_ids_are_unique_per_playbook,
    run_events_take_their_numbers,
    runs_end_once,
    runs_restart_under_their_id,
    run_last_event_at_follows_the_database_clock,
    runs_list_newest_first,
    views_are_kept_by_revision_and_replaced_by_a_newer_version,
    views_are_listed_and_held_by_one_server_at_a_time,
    concurrent_run_events_one_wins,
    workflow_steps_are_compare_and_set,
    a_step_records_the_children_it_began_and_ended,
    a_step_its_caller_keeps_is_committed_as_given,
    a_first_step_records_its_run_with_it,
    a_run_that_ends_in_its_first_step_is_recorded_whole,
    workflow_steps_add_and_remove_work,
    listening_tasks_stop_at_4096_a_playbook,
    child_endings_reach_their_parent,
    work_is_claimed_once_until_its_lease_ends,
    a_runs_inputs_go_to_one_claimer_at_a_time_in_order,
    a_runs_next_input_is_told_but_the_one_applied,
    claimers_at_once_apply_a_runs_inputs_in_order,
    run_events_are_kept_once_in_the_order_received,
    run_events_go_only_to_started_runs,
    concurrent_run_events_are_numbered_without_a_gap,
    concurrent_changes_stand_or_fall_each_alone,
    concurrent_events_refused_part_way_leave_nothing,
    concurrent_whole_runs_stand_or_fall_each_alone,
    requests_open_with_their_run_and_close_with_its_ending,
    a_request_closes_once,
    requests_list_newest_first_by_status,
    purges_remove_ended_runs_in_batches_and_keep_what_is_needed,
    a_purge_waits_for_the_followers_of_the_log,
    deleting_a_playbook_removes_everything_and_frees_its_id,
    deleting_an_org_removes_its_playbooks,
    a_purge_during_activity_keeps_the_log_consistent,
);

async fn sqlite_store() -> (Arc<dyn Store>, tempfile::TempDir) {
    let directory =
        tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary directory: {error}"));
    let url = format!("sqlite://{}", directory.path().join("auto.db").display());
    let store = auto_store::open(&url)
        .await
        .unwrap_or_else(|error| panic!("open {url}: {error}"));
    (store, directory)
}

async fn postgres_store() -> Option<Arc<dyn Store>> {
    let Ok(url) = std::env::var("AUTO_TEST_POSTGRES") else {
        eprintln!("skipped on PostgreSQL: AUTO_TEST_POSTGRES holds no database URL");
        return None;
    };
    let store = auto_store::open_postgres_isolated(&url)
        .await
        .unwrap_or_else(|error| panic!("open an isolated PostgreSQL store: {error}"));
    Some(store)
}

fn playbook_ref() -> PlaybookRef {
    PlaybookRef::new("acme", "support")
}

/// A store with the org `acme` and its playbook `support`.
async fn with_playbook(store: &dyn Store) -> Result<PlaybookRef> {
    store.create_org("acme", Some("Acme")).await?;
    store.create_playbook("acme", "support", None).await?;
    Ok(playbook_ref())
}

fn definition(def_type: &str, name: &str, source: &str) -> NewDefinitionVersion {
    NewDefinitionVersion {
        key: DefinitionKey::new(def_type, name),
        source: source.into(),
        overview: Some(format!("overview of {name}")),
        diagram: "none".into(),
        description: Some(format!("{name} does things")),
        derived: json!({"warnings": [], "input_schema": {"type": "object", "b": 1, "a": 0.1}}),
        triggers: Vec::new(),
    }
}

fn event(id: &str, event_type: &str) -> NewEvent {
    NewEvent::new(id, event_type, "/test")
}

fn run_event(id: &str, run_id: &str, run_seq: i64) -> NewEvent {
    NewEvent {
        run_id: Some(run_id.into()),
        run_seq: Some(run_seq),
        ..event(id, "step_started")
    }
}

fn is_conflict<T>(result: &Result<T>) -> bool {
    matches!(result, Err(StoreError::Conflict(_)))
}

/// The message of a `Conflict`, or a panic.
fn conflict_message<T: std::fmt::Debug>(result: Result<T>) -> String {
    match result {
        Err(StoreError::Conflict(message)) => message,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

fn is_not_found<T>(result: &Result<T>) -> bool {
    matches!(result, Err(StoreError::NotFound(_)))
}

async fn all_events(store: &dyn Store, playbook: &PlaybookRef) -> Result<Vec<auto_store::Event>> {
    store.list_events(playbook, &EventFilter::default()).await
}

async fn orgs_and_playbooks(store: Arc<dyn Store>) -> Result<()> {
    let before = store.now().await?;
    let org = store.create_org("acme", Some("Acme")).await?;
    assert_eq!(
        (org.id.as_str(), org.title.as_deref()),
        ("acme", Some("Acme"))
    );
    assert!(org.created_at >= before && org.created_at <= store.now().await?);
    store.create_org("beta", None).await?;
    assert!(is_conflict(&store.create_org("acme", None).await));
    assert_eq!(store.get_org("acme").await?, Some(org.clone()));
    assert_eq!(store.get_org("nobody").await?, None);
    let ids: Vec<_> = store
        .list_orgs()
        .await?
        .into_iter()
        .map(|org| org.id)
        .collect();
    assert_eq!(ids, ["acme", "beta"]);

    let support = store
        .create_playbook("acme", "support", Some("Support"))
        .await?;
    assert_eq!(
        (support.org.as_str(), support.id.as_str()),
        ("acme", "support")
    );
    store.create_playbook("acme", "billing", None).await?;
    store.create_playbook("beta", "support", None).await?;
    assert!(is_conflict(
        &store.create_playbook("acme", "support", None).await
    ));
    assert!(is_not_found(
        &store.create_playbook("nobody", "support", None).await
    ));
    assert_eq!(store.get_playbook(&playbook_ref()).await?, Some(support));
    assert_eq!(
        store
            .get_playbook(&PlaybookRef::new("acme", "none"))
            .await?,
        None
    );
    let ids: Vec<_> = store
        .list_playbooks("acme")
        .await?
        .into_iter()
        .map(|pb| pb.id)
        .collect();
    assert_eq!(ids, ["billing", "support"]);
    assert!(is_not_found(&store.list_playbooks("nobody").await));
    Ok(())
}

async fn definitions_are_versioned_and_retired(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let key = DefinitionKey::new("reasoning", "review-brief");
    let (v1, created) = store
        .create_definition(
            &playbook,
            definition("reasoning", "review-brief", "one"),
            event("e1", "definition_created"),
        )
        .await?;
    assert_eq!(
        (v1.version, v1.status, v1.saved_seq, created.seq),
        (1, DefinitionStatus::Active, 1, 1)
    );
    assert_eq!(
        (v1.created_at, v1.updated_at),
        (created.recorded_at, created.recorded_at)
    );
    assert_eq!(
        store.get_definition(&playbook, &key).await?,
        Some(v1.clone())
    );

    // An update without an overview keeps the one before.
    let update = NewDefinitionVersion {
        overview: None,
        ..definition("reasoning", "review-brief", "two")
    };
    let (v2, updated) = store
        .update_definition(&playbook, 1, update, event("e2", "definition_updated"))
        .await?;
    assert_eq!((v2.version, v2.saved_seq, updated.seq), (2, 2, 2));
    assert_eq!(v2.overview.as_deref(), Some("overview of review-brief"));
    assert_eq!(
        (v2.created_at, v2.updated_at),
        (v1.created_at, updated.recorded_at)
    );
    assert_eq!(
        store.get_definition(&playbook, &key).await?,
        Some(v2.clone())
    );
    assert_eq!(
        store.get_definition_version(&playbook, &key, 1).await?,
        Some(v1.clone())
    );
    assert_eq!(
        store.get_definition_version(&playbook, &key, 3).await?,
        None
    );

    let (retired, retired_event) = store
        .retire_definition(&playbook, &key, event("e3", "definition_retired"))
        .await?;
    assert_eq!(
        (retired.version, retired.status, retired.source.as_str()),
        (2, DefinitionStatus::Retired, "two")
    );
    assert_eq!(
        (retired.saved_seq, retired.updated_at),
        (2, retired_event.recorded_at)
    );
    assert_eq!(retired_event.seq, 3);
    assert_eq!(store.get_definition(&playbook, &key).await?, Some(retired));
    // Every version stays, with the definition's status.
    let kept = store.get_definition_version(&playbook, &key, 1).await?;
    assert_eq!(
        kept.map(|v| (v.source, v.status)),
        Some(("one".into(), DefinitionStatus::Retired))
    );
    let ids: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, ["e1", "e2", "e3"]);
    Ok(())
}

async fn definition_changes_refused_append_nothing(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let key = DefinitionKey::new("workflow", "onboard");
    let new = || definition("workflow", "onboard", "one");
    store
        .create_definition(&playbook, new(), event("e1", "definition_created"))
        .await?;
    // Each refused change leaves the log as it was.
    let refusals = [
        store
            .create_definition(&playbook, new(), event("x1", "definition_created"))
            .await,
        store
            .update_definition(&playbook, 2, new(), event("x2", "definition_updated"))
            .await,
        store
            .update_definition(&playbook, 0, new(), event("x3", "definition_updated"))
            .await,
    ];
    assert!(refusals.iter().all(is_conflict), "{refusals:?}");
    let missing = definition("workflow", "missing", "one");
    assert!(is_not_found(
        &store
            .update_definition(&playbook, 1, missing, event("x4", "u"))
            .await
    ));
    let missing_key = DefinitionKey::new("workflow", "missing");
    assert!(is_not_found(
        &store
            .retire_definition(&playbook, &missing_key, event("x5", "r"))
            .await
    ));
    // The same name under another type is another definition.
    store
        .create_definition(
            &playbook,
            definition("reasoning", "onboard", "r"),
            event("e2", "c"),
        )
        .await?;

    store
        .retire_definition(&playbook, &key, event("e3", "definition_retired"))
        .await?;
    let retired_refusals = [
        store
            .retire_definition(&playbook, &key, event("y1", "r"))
            .await,
        store
            .update_definition(&playbook, 1, new(), event("y2", "u"))
            .await,
        store
            .create_definition(&playbook, new(), event("y3", "c"))
            .await,
    ];
    assert!(
        retired_refusals.iter().all(is_conflict),
        "{retired_refusals:?}"
    );
    let seqs: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    // An event id already taken refuses the whole change, the definition's version too.
    let taken = store
        .create_definition(
            &playbook,
            definition("computation", "sum", "s"),
            event("e1", "c"),
        )
        .await;
    assert!(is_conflict(&taken), "{taken:?}");
    assert_eq!(
        store
            .get_definition(&playbook, &DefinitionKey::new("computation", "sum"))
            .await?,
        None
    );
    Ok(())
}

async fn definitions_list_by_type_then_name(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    for (n, (def_type, name)) in [
        ("workflow", "b"),
        ("reasoning", "z"),
        ("workflow", "a-b"),
        ("workflow", "ab"),
        ("reasoning", "a"),
    ]
    .into_iter()
    .enumerate()
    {
        store
            .create_definition(
                &playbook,
                definition(def_type, name, "s"),
                event(&format!("e{n}"), "c"),
            )
            .await?;
    }
    store
        .update_definition(
            &playbook,
            1,
            definition("workflow", "b", "s2"),
            event("u", "u"),
        )
        .await?;
    let listed: Vec<_> = store
        .list_definitions(&playbook, None)
        .await?
        .into_iter()
        .map(|d| (d.key.def_type, d.key.name, d.version))
        .collect();
    let expected = [
        ("reasoning", "a", 1),
        ("reasoning", "z", 1),
        ("workflow", "a-b", 1),
        ("workflow", "ab", 1),
        ("workflow", "b", 2),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(t, n, v)| (t.to_string(), n.to_string(), *v))
        .collect();
    assert_eq!(listed, expected);
    let workflows = store.list_definitions(&playbook, Some("workflow")).await?;
    assert_eq!(workflows.len(), 3);
    assert!(
        store
            .list_definitions(&playbook, Some("recall"))
            .await?
            .is_empty()
    );
    Ok(())
}

/// A batch holding an event of megabytes (a tool's result) is stored in order and whole, and
/// refused whole on a taken id, like any batch.
async fn large_events_append_in_order_and_whole(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let large = NewEvent {
        data: Some(json!({"text": "\"quoted\" ".repeat(150_000), "rows": [1, 2, 3]})),
        ..event("large", "tool_call_answered")
    };
    let appended = store
        .append_events(
            &playbook,
            vec![event("before", "x"), large.clone(), event("after", "x")],
        )
        .await?;
    let seqs: Vec<_> = appended.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    let stored = all_events(&*store, &playbook).await?;
    assert_eq!(stored, appended);
    let kept = store.get_event(&playbook, "large").await?.expect("kept");
    assert_eq!(kept.data, large.data);
    // A taken id refuses the whole batch, the large event with it.
    let refused = store
        .append_events(
            &playbook,
            vec![
                event("large-2", "tool_call_answered"),
                NewEvent {
                    data: large.data.clone(),
                    ..event("large-3", "tool_call_answered")
                },
                event("before", "x"),
            ],
        )
        .await;
    assert!(is_conflict(&refused), "{refused:?}");
    assert_eq!(all_events(&*store, &playbook).await?.len(), 3);
    Ok(())
}

async fn the_log_ends_at_its_last_seq(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    assert_eq!(store.log_end(&playbook).await?, 0);
    store
        .append_events(
            &playbook,
            vec![event("a", "published"), event("b", "published")],
        )
        .await?;
    assert_eq!(store.log_end(&playbook).await?, 2);
    let missing = PlaybookRef::new(playbook.org.clone(), "nope");
    assert!(matches!(
        store.log_end(&missing).await,
        Err(StoreError::NotFound(_))
    ));
    Ok(())
}

async fn events_append_single_and_batched(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let first = store
        .append_events(&playbook, vec![event("a", "published")])
        .await?;
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].seq, first[0].time), (1, first[0].recorded_at));

    // Microseconds, which both stores keep exactly.
    let sent_at = Utc
        .with_ymd_and_hms(2026, 10, 1, 12, 30, 0)
        .single()
        .map(|t| t + chrono::Duration::microseconds(123_456));
    let mut extensions = Map::new();
    extensions.insert("caller".into(), json!("local"));
    extensions.insert("depth".into(), json!(2));
    let full = NewEvent {
        subject: Some("order/7".into()),
        time: sent_at,
        datacontenttype: Some("application/json".into()),
        data: Some(
            json!({"z": [1, 2.5, "x"], "a": {"nested": null}, "big": 9_007_199_254_740_993_i64}),
        ),
        extensions,
        ..run_event("b", "run-1", 1)
    };
    let null_data = NewEvent {
        data: Some(json!(null)),
        ..event("c", "published")
    };
    let batch: Vec<_> = (0..100)
        .map(|n| event(&format!("batch-{n}"), "published"))
        .collect();
    let mut events = vec![full.clone(), null_data];
    events.extend(batch);
    let appended = store.append_events(&playbook, events).await?;
    let seqs: Vec<_> = appended.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (2..=103).collect::<Vec<_>>());
    assert!(
        appended
            .iter()
            .all(|e| e.recorded_at == appended[0].recorded_at)
    );
    assert!(appended[0].recorded_at >= first[0].recorded_at);

    // What append returned is what is stored.
    let stored = all_events(&*store, &playbook).await?;
    assert_eq!(stored[0], first[0]);
    assert_eq!(stored[1..], appended[..]);
    let b = store.get_event(&playbook, "b").await?;
    assert_eq!(b.as_ref(), Some(&appended[0]));
    let b = b.map(|b| (b.time, b.data, b.extensions, b.subject, b.run_id, b.run_seq));
    assert_eq!(
        b,
        Some((
            sent_at.unwrap_or_default(),
            full.data,
            full.extensions,
            full.subject,
            full.run_id,
            full.run_seq
        ))
    );
    let c = store.get_event(&playbook, "c").await?;
    assert_eq!(c.map(|c| c.data), Some(Some(json!(null))));
    assert_eq!(
        store.get_event(&playbook, "a").await?.map(|a| a.data),
        Some(None)
    );
    assert_eq!(store.get_event(&playbook, "nope").await?, None);

    // 63 events, each different in every field: on SQLite's file one insert of each batch
    // size (32, 16, 8, 4, 2 and 1 rows), each row's values where they belong.
    let varied: Vec<NewEvent> = (0..63)
        .map(|n| NewEvent {
            subject: (n % 2 == 0).then(|| format!("subject-{n}")),
            data: Some(json!({"n": n})),
            ..run_event(&format!("varied-{n}"), &format!("run-{}", n % 5), 100 + n)
        })
        .collect();
    let appended = store.append_events(&playbook, varied.clone()).await?;
    let stored = all_events(&*store, &playbook).await?;
    assert_eq!(stored[stored.len() - 63..], appended[..]);
    for (event, sent) in appended.iter().zip(&varied) {
        assert_eq!(
            (
                &event.id,
                &event.subject,
                &event.data,
                &event.run_id,
                event.run_seq
            ),
            (
                &sent.id,
                &sent.subject,
                &sent.data,
                &sent.run_id,
                sent.run_seq
            )
        );
    }
    assert_eq!(appended.first().map(|e| e.seq), Some(104));
    assert_eq!(appended.last().map(|e| e.seq), Some(166));
    Ok(())
}

async fn seq_is_per_playbook(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let other = PlaybookRef::new("acme", "other");
    store.create_playbook("acme", "other", None).await?;
    store
        .append_events(&playbook, vec![event("a", "t"), event("b", "t")])
        .await?;
    // The same id in another playbook is another event.
    let appended = store.append_events(&other, vec![event("a", "t")]).await?;
    assert_eq!(appended[0].seq, 1);
    let appended = store
        .append_events(&playbook, vec![event("c", "t")])
        .await?;
    assert_eq!(appended[0].seq, 3);
    assert_eq!(store.get_event(&other, "b").await?, None);
    Ok(())
}

async fn duplicate_event_id_appends_nothing(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .append_events(&playbook, vec![event("a", "t")])
        .await?;
    let taken = store
        .append_events(&playbook, vec![event("b", "t"), event("a", "t")])
        .await;
    let expected = "an event with the same id is already recorded in playbook acme/support";
    assert_eq!(conflict_message(taken), expected);
    let twice = store
        .append_events(&playbook, vec![event("c", "t"), event("c", "t")])
        .await;
    assert_eq!(conflict_message(twice), expected);
    assert_eq!(store.get_event(&playbook, "b").await?, None);
    // No seq was spent: the next append goes on without a gap.
    let next = store
        .append_events(&playbook, vec![event("b", "t")])
        .await?;
    assert_eq!(next[0].seq, 2);
    let seqs: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2]);
    Ok(())
}

async fn run_number_taken_appends_nothing(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .append_events(
            &playbook,
            vec![run_event("a", "run-1", 1), run_event("b", "run-1", 2)],
        )
        .await?;
    let taken = store
        .append_events(&playbook, vec![event("c", "t"), run_event("d", "run-1", 2)])
        .await;
    let expected = "an event of the same run with the same number is already recorded in \
                    playbook acme/support";
    assert_eq!(conflict_message(taken), expected);
    assert_eq!(store.get_event(&playbook, "c").await?, None);
    // Another run, or the same run id in another playbook, has its own numbers; events without
    // a run number do not compete.
    store
        .append_events(&playbook, vec![run_event("e", "run-2", 2)])
        .await?;
    store.create_playbook("acme", "other", None).await?;
    store
        .append_events(
            &PlaybookRef::new("acme", "other"),
            vec![run_event("a", "run-1", 1)],
        )
        .await?;
    let unnumbered = NewEvent {
        run_id: Some("run-1".into()),
        ..event("f", "t")
    };
    let also_unnumbered = NewEvent {
        run_id: Some("run-1".into()),
        ..event("g", "t")
    };
    store
        .append_events(&playbook, vec![unnumbered, also_unnumbered])
        .await?;
    let seqs: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    Ok(())
}

async fn list_events_filters(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let events = (1..=10)
        .map(|n| {
            let run = if n % 2 == 0 { "even" } else { "odd" };
            // "step_started" is a type every run records, which the type index leaves out:
            // listed alike all the same.
            let event_type = match n % 3 {
                0 => "tick",
                1 => "step_started",
                _ => "tock",
            };
            NewEvent {
                event_type: event_type.into(),
                ..run_event(&format!("e{n}"), run, n)
            }
        })
        .collect();
    store.append_events(&playbook, events).await?;
    let seqs = |filter: EventFilter| {
        let store = store.clone();
        let playbook = playbook.clone();
        async move {
            let events = store.list_events(&playbook, &filter).await?;
            Ok::<_, StoreError>(events.into_iter().map(|e| e.seq).collect::<Vec<_>>())
        }
    };
    let run = |run: &str| Some(run.to_string());
    let tick = Some("tick".to_string());
    assert_eq!(
        seqs(EventFilter::default()).await?,
        (1..=10).collect::<Vec<_>>()
    );
    assert_eq!(
        seqs(EventFilter {
            limit: 3,
            ..Default::default()
        })
        .await?,
        [1, 2, 3]
    );
    assert_eq!(
        seqs(EventFilter {
            after_seq: Some(7),
            ..Default::default()
        })
        .await?,
        [8, 9, 10]
    );
    assert_eq!(
        seqs(EventFilter {
            run_id: run("even"),
            ..Default::default()
        })
        .await?,
        [2, 4, 6, 8, 10]
    );
    assert_eq!(
        seqs(EventFilter {
            event_type: tick.clone(),
            ..Default::default()
        })
        .await?,
        [3, 6, 9]
    );
    let dense = EventFilter {
        event_type: Some("step_started".into()),
        after_seq: Some(1),
        ..Default::default()
    };
    assert_eq!(seqs(dense).await?, [4, 7, 10]);
    let both = EventFilter {
        run_id: run("odd"),
        event_type: tick.clone(),
        ..Default::default()
    };
    assert_eq!(seqs(both).await?, [3, 9]);
    let paged = EventFilter {
        run_id: run("even"),
        after_seq: Some(2),
        limit: 2,
        ..Default::default()
    };
    assert_eq!(seqs(paged).await?, [4, 6]);
    assert!(
        seqs(EventFilter {
            run_id: run("none"),
            ..Default::default()
        })
        .await?
        .is_empty()
    );
    assert!(
        seqs(EventFilter {
            after_seq: Some(10),
            ..Default::default()
        })
        .await?
        .is_empty()
    );
    Ok(())
}

async fn missing_playbook_is_not_found(store: Arc<dyn Store>) -> Result<()> {
    with_playbook(&*store).await?;
    let missing = PlaybookRef::new("acme", "missing");
    assert!(is_not_found(
        &store.append_events(&missing, vec![event("a", "t")]).await
    ));
    assert!(is_not_found(
        &store.append_events(&missing, Vec::new()).await
    ));
    assert!(
        store
            .append_events(&playbook_ref(), Vec::new())
            .await?
            .is_empty()
    );
    assert!(is_not_found(
        &store.list_events(&missing, &EventFilter::default()).await
    ));
    assert!(is_not_found(&store.list_definitions(&missing, None).await));
    let created = store
        .create_definition(&missing, definition("workflow", "a", "s"), event("a", "c"))
        .await;
    assert!(is_not_found(&created));
    assert_eq!(store.get_event(&missing, "a").await?, None);
    assert_eq!(
        store
            .get_definition(&missing, &DefinitionKey::new("workflow", "a"))
            .await?,
        None
    );
    Ok(())
}

async fn database_time_goes_forward(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let machine_before = Utc::now();
    let before = store.now().await?;
    let mut recorded = Vec::new();
    for n in 0..5 {
        let appended = store
            .append_events(&playbook, vec![event(&format!("e{n}"), "t")])
            .await?;
        recorded.push(appended[0].recorded_at);
    }
    let after = store.now().await?;
    assert!(
        recorded.windows(2).all(|pair| pair[0] <= pair[1]),
        "{recorded:?}"
    );
    assert!(
        before <= recorded[0] && recorded[4] <= after,
        "{before} {recorded:?} {after}"
    );
    // The database runs on this machine here: its clock agrees with ours, to the millisecond
    // SQLite keeps.
    let skew = (before - machine_before).num_milliseconds().abs();
    assert!(
        skew < 1_000,
        "the database's clock is {skew} ms off the machine's"
    );
    Ok(())
}

/// How many tasks race in the `concurrent_*` cases.
const RACERS: usize = 6;

async fn concurrent_updates_one_wins(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let new = |source: &str| definition("workflow", "onboard", source);
    store
        .create_definition(&playbook, new("v1"), event("created", "c"))
        .await?;
    let racers: Vec<_> = (0..RACERS)
        .map(|n| {
            let (store, playbook) = (store.clone(), playbook.clone());
            tokio::spawn(async move {
                let update = new(&format!("from {n}"));
                store
                    .update_definition(&playbook, 1, update, event(&format!("u{n}"), "u"))
                    .await
            })
        })
        .collect();
    let mut won = Vec::new();
    for racer in racers {
        match racer
            .await
            .unwrap_or_else(|error| panic!("a racer: {error}"))
        {
            Ok((version, _)) => won.push(version),
            Err(StoreError::Conflict(_)) => {}
            Err(error) => return Err(error),
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    let key = DefinitionKey::new("workflow", "onboard");
    assert_eq!(
        store.get_definition(&playbook, &key).await?.as_ref(),
        won.first()
    );
    assert_eq!(all_events(&*store, &playbook).await?.len(), 2);
    Ok(())
}

/// "An event is recorded only under the next number": of attempts that go on at once, one
/// records it and the others fail.
async fn concurrent_run_numbers_one_wins(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let racers: Vec<_> = (0..RACERS)
        .map(|n| {
            let (store, playbook) = (store.clone(), playbook.clone());
            tokio::spawn(async move {
                let events = vec![run_event(&format!("attempt-{n}"), "run-1", 1)];
                store.append_events(&playbook, events).await
            })
        })
        .collect();
    let mut recorded = 0;
    for racer in racers {
        match racer
            .await
            .unwrap_or_else(|error| panic!("a racer: {error}"))
        {
            Ok(_) => recorded += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(error) => return Err(error),
        }
    }
    assert_eq!(recorded, 1);
    let seqs: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1]);
    Ok(())
}

/// How many tasks append at once in `followers_never_see_a_gap`, and how many appends each
/// makes.
const WRITERS: usize = 4;
const APPENDS_PER_WRITER: usize = 40;

async fn followers_never_see_a_gap(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let mut writers = Vec::new();
    let mut total = 0;
    for writer in 0..WRITERS {
        let batch_sizes: Vec<usize> = (0..APPENDS_PER_WRITER)
            .map(|n| 1 + (n + writer) % 3)
            .collect();
        total += batch_sizes.iter().sum::<usize>();
        let (store, playbook) = (store.clone(), playbook.clone());
        writers.push(tokio::spawn(async move {
            for (append, size) in batch_sizes.into_iter().enumerate() {
                let events = (0..size)
                    .map(|n| event(&format!("w{writer}-{append}-{n}"), "t"))
                    .collect();
                store.append_events(&playbook, events).await?;
            }
            Ok::<_, StoreError>(())
        }));
    }
    // The follower reads by cursor while the writers go on: every seq it sees must be the one
    // after the last it saw, or a later read would find one it skipped.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last_seq = 0_i64;
    let mut seen = HashSet::new();
    while last_seq < i64::try_from(total).unwrap_or(i64::MAX) {
        assert!(
            Instant::now() < deadline,
            "the follower saw {last_seq} of {total} events"
        );
        let filter = EventFilter {
            after_seq: Some(last_seq),
            limit: 7,
            ..Default::default()
        };
        let page = store.list_events(&playbook, &filter).await?;
        for event in &page {
            assert_eq!(
                event.seq,
                last_seq + 1,
                "the follower found a gap after {last_seq}"
            );
            assert!(seen.insert(event.id.clone()));
            last_seq = event.seq;
        }
        if page.is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    for writer in writers {
        writer
            .await
            .unwrap_or_else(|error| panic!("a writer: {error}"))?;
    }
    assert_eq!(all_events(&*store, &playbook).await?.len(), total);
    Ok(())
}

// Cases for SQLite alone, and for `open`.

#[tokio::test]
async fn a_second_server_on_the_same_file_is_refused() -> Result<()> {
    let directory =
        tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary directory: {error}"));
    let path = directory.path().join("auto.db");
    let url = format!("sqlite://{}", path.display());
    let store = auto_store::open(&url).await?;
    assert_eq!(store.kind(), "sqlite");
    with_playbook(&*store).await?;
    let Err(StoreError::Locked(message)) = auto_store::open(&url).await else {
        panic!("a second open of {url} was not refused");
    };
    let expected = format!(
        "the database file {} is in use by another auto server (it is locked)",
        path.display()
    );
    assert_eq!(message, expected);
    drop(store);
    let store = auto_store::open(&url).await?;
    assert!(store.get_playbook(&playbook_ref()).await?.is_some());
    Ok(())
}

#[tokio::test]
async fn sqlite_in_memory_is_one_database_per_store() -> Result<()> {
    for url in ["sqlite::memory:", "sqlite://:memory:"] {
        let first = auto_store::open(url).await?;
        let second = auto_store::open(url).await?;
        with_playbook(&*first).await?;
        first
            .append_events(&playbook_ref(), vec![event("a", "t")])
            .await?;
        assert_eq!(all_events(&*first, &playbook_ref()).await?.len(), 1);
        assert!(second.list_orgs().await?.is_empty());
    }
    Ok(())
}

#[tokio::test]
async fn unknown_urls_are_refused() {
    for url in ["mysql://localhost/auto", "auto.db", ""] {
        let result = auto_store::open(url).await;
        assert!(
            matches!(result, Err(StoreError::BadUrl(_))),
            "{url}: {:?}",
            result.err()
        );
    }
}

#[tokio::test]
async fn a_missing_directory_is_an_error_naming_the_lock_file() {
    let directory =
        tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary directory: {error}"));
    let path = directory.path().join("missing").join("auto.db");
    let result = auto_store::open(&format!("sqlite://{}", path.display())).await;
    let Err(StoreError::Database(error)) = result else {
        panic!("opening {} did not fail as it should", path.display());
    };
    let lock_path = format!("{}.lock", path.display());
    assert!(error.to_string().contains(&lock_path), "{error}");
}

// Runs.

fn new_run(run_id: &str, def_type: &str, name: &str) -> NewRun {
    NewRun::new(
        run_id,
        DefinitionKey::new(def_type, name),
        1,
        json!({"n": 1}),
        "local",
    )
}

/// An event numbered for the run it is recorded with, which gives it its `run_id`.
fn numbered(id: &str, run_seq: i64) -> NewEvent {
    NewEvent {
        run_seq: Some(run_seq),
        ..event(id, "step_started")
    }
}

fn succeeded(output: serde_json::Value) -> RunEnding {
    RunEnding {
        status: RunStatus::Succeeded,
        output: Some(output),
        record: Some(json!({"calls": 1})),
        problem: None,
    }
}

fn failed() -> RunEnding {
    RunEnding {
        status: RunStatus::Failed,
        output: None,
        record: Some(json!({"calls": 2})),
        problem: Some(json!({"reason": "unavailable", "status": 503})),
    }
}

async fn run_of(store: &dyn Store, playbook: &PlaybookRef, run_id: &str) -> Result<Run> {
    let run = store.get_run(playbook, run_id).await?;
    Ok(run.unwrap_or_else(|| panic!("the run {run_id} is not stored")))
}

async fn run_start_and_get_round_trip(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let before = store.now().await?;
    let new = NewRun {
        run_id: "run-1".into(),
        key: DefinitionKey::new("reasoning", "review-brief"),
        definition_version: 3,
        input: json!({"z": [1, 2.5, "x"], "a": {"nested": null}, "big": 9_007_199_254_740_993_i64}),
        started_by: "playbook:billing".into(),
        parent_run_id: Some("parent-7".into()),
        task_reference: Some("/do/0/review".into()),
        depth: Some(2),
        call_depth: Some(1),
        trigger: Some(json!({"kind": "schedule", "cron": "0 9 * * 1"})),
        parent_call_id: Some("call:/do/0/review#1".into()),
        ending_work: None,
        root_run_id: Some("parent-7".into()),
        open_calls_max: None,
        started_at: None,
    };
    let (run, events) = store
        .start_run(&playbook, new.clone(), vec![numbered("started", 1)])
        .await?;
    // Its events carry the run's id, and the number its writer gave.
    assert_eq!(events.len(), 1);
    let started = &events[0];
    assert_eq!(
        (started.seq, started.run_id.as_deref(), started.run_seq),
        (1, Some("run-1"), Some(1))
    );
    let expected = Run {
        run_id: new.run_id,
        key: new.key,
        definition_version: 3,
        status: RunStatus::Started,
        input: new.input,
        output: None,
        record: None,
        problem: None,
        started_by: new.started_by,
        parent_run_id: new.parent_run_id,
        task_reference: new.task_reference,
        depth: Some(2),
        call_depth: Some(1),
        trigger: new.trigger,
        parent_call_id: new.parent_call_id,
        root_run_id: new.root_run_id,
        attempt: 1,
        last_run_seq: 1,
        last_event_at: started.recorded_at,
        started_at: started.recorded_at,
        ended_at: None,
    };
    assert_eq!(run, expected);
    assert!(before <= run.started_at && run.started_at <= store.now().await?);
    assert_eq!(store.get_run(&playbook, "run-1").await?, Some(expected));
    assert_eq!(
        store.get_event(&playbook, "started").await?.as_ref(),
        Some(started)
    );
    // The fields a run may leave out stay out.
    let (bare, events) = store
        .start_run(
            &playbook,
            new_run("run-2", "workflow", "onboard"),
            Vec::new(),
        )
        .await?;
    assert!(events.is_empty());
    assert_eq!(
        (
            bare.parent_run_id,
            bare.task_reference,
            bare.depth,
            bare.call_depth,
            bare.trigger
        ),
        (None, None, None, None, None)
    );
    assert_eq!(
        (bare.last_run_seq, bare.last_event_at),
        (0, bare.started_at)
    );
    assert_eq!(
        store.get_run(&playbook, "run-2").await?.map(|r| r.input),
        Some(json!({"n": 1}))
    );
    assert_eq!(store.get_run(&playbook, "none").await?, None);
    assert_eq!(
        store
            .get_run(&PlaybookRef::new("acme", "missing"), "run-1")
            .await?,
        None
    );
    Ok(())
}

async fn run_ids_are_unique_per_playbook(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "a"),
            vec![numbered("s1", 1)],
        )
        .await?;
    let again = store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "b"),
            vec![numbered("s2", 1)],
        )
        .await;
    assert_eq!(
        conflict_message(again),
        "the playbook acme/support has a run run-1"
    );
    // Nothing of the refused start is kept: no event, no seq spent, the run as it was.
    assert_eq!(store.get_event(&playbook, "s2").await?, None);
    assert_eq!(
        run_of(&*store, &playbook, "run-1").await?.key,
        DefinitionKey::new("reasoning", "a")
    );
    // An event id taken refuses the start, the run too.
    let taken = store
        .start_run(
            &playbook,
            new_run("run-3", "reasoning", "a"),
            vec![numbered("s1", 1)],
        )
        .await;
    assert!(is_conflict(&taken), "{taken:?}");
    assert_eq!(store.get_run(&playbook, "run-3").await?, None);
    // An event that names another run is refused.
    let other = store
        .start_run(
            &playbook,
            new_run("run-4", "reasoning", "a"),
            vec![run_event("s4", "run-9", 1)],
        )
        .await;
    assert!(is_conflict(&other), "{other:?}");
    assert_eq!(store.get_run(&playbook, "run-4").await?, None);
    // Another playbook has its own run ids.
    store.create_playbook("acme", "other", None).await?;
    store
        .start_run(
            &PlaybookRef::new("acme", "other"),
            new_run("run-1", "reasoning", "a"),
            vec![numbered("s1", 1)],
        )
        .await?;
    let missing = store
        .start_run(
            &PlaybookRef::new("acme", "missing"),
            new_run("run-1", "reasoning", "a"),
            Vec::new(),
        )
        .await;
    assert!(is_not_found(&missing), "{missing:?}");
    let seqs: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1]);
    Ok(())
}

async fn run_events_take_their_numbers(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "a"),
            vec![numbered("started", 1)],
        )
        .await?;
    store
        .append_events(&playbook, vec![event("elsewhere", "published")])
        .await?;
    let recorded = store
        .record_run_events(
            &playbook,
            "run-1",
            vec![numbered("call-2", 2), run_event("call-3", "run-1", 3)],
        )
        .await?;
    let numbers: Vec<_> = recorded
        .iter()
        .map(|e| (e.seq, e.run_id.as_deref(), e.run_seq))
        .collect();
    assert_eq!(
        numbers,
        [(3, Some("run-1"), Some(2)), (4, Some("run-1"), Some(3))]
    );
    let run = run_of(&*store, &playbook, "run-1").await?;
    assert_eq!(
        (run.last_run_seq, run.last_event_at),
        (3, recorded[0].recorded_at)
    );

    // A number taken refuses the whole change: nothing is appended, the run is as it was.
    let taken = store
        .record_run_events(
            &playbook,
            "run-1",
            vec![numbered("call-4", 4), numbered("again-3", 3)],
        )
        .await;
    let expected = "an event of the same run with the same number is already recorded in \
                    playbook acme/support";
    assert_eq!(conflict_message(taken), expected);
    assert_eq!(store.get_event(&playbook, "call-4").await?, None);
    assert_eq!(run_of(&*store, &playbook, "run-1").await?, run);

    // An event without a number (the end of a call still open) is recorded beside them.
    let unnumbered = store
        .record_run_events(&playbook, "run-1", vec![event("answered", "t")])
        .await?;
    assert_eq!(
        (
            unnumbered[0].seq,
            unnumbered[0].run_id.as_deref(),
            unnumbered[0].run_seq
        ),
        (5, Some("run-1"), None)
    );
    let after = run_of(&*store, &playbook, "run-1").await?;
    assert_eq!(
        (after.last_run_seq, after.last_event_at),
        (3, unnumbered[0].recorded_at)
    );
    let next = store
        .record_run_events(&playbook, "run-1", vec![numbered("call-4", 4)])
        .await?;
    assert_eq!(next[0].seq, 6);

    // The run's history, from list_events by its id.
    let history: Vec<_> = store
        .list_events(
            &playbook,
            &EventFilter {
                run_id: Some("run-1".into()),
                ..Default::default()
            },
        )
        .await?
        .into_iter()
        .map(|e| (e.id, e.run_seq))
        .collect();
    let expected_history = [
        ("started", Some(1)),
        ("call-2", Some(2)),
        ("call-3", Some(3)),
        ("answered", None),
        ("call-4", Some(4)),
    ];
    let expected_history: Vec<_> = expected_history
        .iter()
        .map(|(id, n)| (id.to_string(), *n))
        .collect();
    assert_eq!(history, expected_history);

    let other_run = store
        .record_run_events(&playbook, "run-1", vec![run_event("x", "run-2", 1)])
        .await;
    assert!(is_conflict(&other_run), "{other_run:?}");
    let missing = store
        .record_run_events(&playbook, "none", vec![numbered("y", 1)])
        .await;
    assert!(is_not_found(&missing), "{missing:?}");
    let missing_playbook = store
        .record_run_events(&PlaybookRef::new("acme", "missing"), "run-1", Vec::new())
        .await;
    assert!(is_not_found(&missing_playbook), "{missing_playbook:?}");
    assert_eq!(all_events(&*store, &playbook).await?.len(), 6);
    Ok(())
}

async fn runs_end_once(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "a"),
            vec![numbered("started", 1)],
        )
        .await?;
    // An ending that is no ending is refused, and changes nothing.
    let not_an_ending = RunEnding {
        status: RunStatus::Started,
        ..succeeded(json!(null))
    };
    let refused = store
        .end_run(&playbook, "run-1", not_an_ending, vec![numbered("x", 2)])
        .await;
    assert!(is_conflict(&refused), "{refused:?}");
    assert_eq!(store.get_event(&playbook, "x").await?, None);

    let output = json!({"verdict": "approve", "score": 0.75});
    let (ended, events) = store
        .end_run(
            &playbook,
            "run-1",
            succeeded(output.clone()),
            vec![numbered("succeeded", 2)],
        )
        .await?;
    let at = events[0].recorded_at;
    assert_eq!(
        (ended.status, ended.output.as_ref(), ended.record.as_ref()),
        (
            RunStatus::Succeeded,
            Some(&output),
            Some(&json!({"calls": 1}))
        )
    );
    assert_eq!(
        (
            ended.problem.as_ref(),
            ended.ended_at,
            ended.last_event_at,
            ended.last_run_seq
        ),
        (None, Some(at), at, 2)
    );
    assert_eq!(run_of(&*store, &playbook, "run-1").await?, ended);

    let twice = store
        .end_run(&playbook, "run-1", failed(), vec![numbered("failed", 3)])
        .await;
    assert_eq!(
        conflict_message(twice),
        "the run run-1 has ended (succeeded)"
    );
    let after_end = store
        .record_run_events(&playbook, "run-1", vec![numbered("late", 3)])
        .await;
    assert_eq!(
        conflict_message(after_end),
        "the run run-1 has ended (succeeded)"
    );
    assert_eq!(run_of(&*store, &playbook, "run-1").await?, ended);
    let missing = store.end_run(&playbook, "none", failed(), Vec::new()).await;
    assert!(is_not_found(&missing), "{missing:?}");
    let ids: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, ["started", "succeeded"]);

    // A JSON null is kept as one, apart from no value.
    store
        .start_run(&playbook, new_run("run-2", "reasoning", "a"), Vec::new())
        .await?;
    let (null_output, _) = store
        .end_run(&playbook, "run-2", succeeded(json!(null)), Vec::new())
        .await?;
    assert_eq!(null_output.output, Some(json!(null)));
    assert_eq!(run_of(&*store, &playbook, "run-2").await?, null_output);
    Ok(())
}

async fn runs_restart_under_their_id(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let (first, _) = store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "a"),
            vec![numbered("started", 1)],
        )
        .await?;
    // A run still started is not started again.
    let running = store
        .restart_run(&playbook, "run-1", 1, 2, vec![numbered("again", 2)])
        .await;
    assert_eq!(
        conflict_message(running),
        "the run run-1 is still started (attempt 1)"
    );
    store
        .end_run(&playbook, "run-1", failed(), vec![numbered("failed", 2)])
        .await?;
    let stale = store
        .restart_run(&playbook, "run-1", 2, 2, vec![numbered("again", 3)])
        .await;
    assert_eq!(
        conflict_message(stale),
        "the run run-1 is at attempt 1, not 2: it changed since it was read"
    );
    // A number taken refuses the restart: the run stays ended.
    let taken = store
        .restart_run(&playbook, "run-1", 1, 2, vec![numbered("again", 2)])
        .await;
    assert!(is_conflict(&taken), "{taken:?}");
    assert_eq!(
        run_of(&*store, &playbook, "run-1").await?.status,
        RunStatus::Failed
    );

    let (second, events) = store
        .restart_run(&playbook, "run-1", 1, 2, vec![numbered("again", 3)])
        .await?;
    let at = events[0].recorded_at;
    // The attempt runs the definition's version it is given, and starts now.
    let expected = Run {
        status: RunStatus::Started,
        attempt: 2,
        definition_version: 2,
        last_run_seq: 3,
        last_event_at: at,
        started_at: at,
        ..first.clone()
    };
    assert_eq!(second, expected);
    assert_eq!(
        (
            second.output,
            second.record,
            second.problem,
            second.ended_at
        ),
        (None, None, None, None)
    );
    assert!(second.started_at >= first.started_at);
    assert_eq!(run_of(&*store, &playbook, "run-1").await?, expected);
    // The second attempt goes on under the next numbers, and ends.
    store
        .record_run_events(&playbook, "run-1", vec![numbered("call", 4)])
        .await?;
    let (ended, _) = store
        .end_run(
            &playbook,
            "run-1",
            succeeded(json!(1)),
            vec![numbered("done", 5)],
        )
        .await?;
    assert_eq!((ended.attempt, ended.last_run_seq), (2, 5));
    // The attempt read before the second one no longer applies.
    let stale = store
        .restart_run(&playbook, "run-1", 1, 2, Vec::new())
        .await;
    assert!(is_conflict(&stale), "{stale:?}");
    let (third, _) = store
        .restart_run(&playbook, "run-1", 2, 2, Vec::new())
        .await?;
    assert_eq!((third.attempt, third.status), (3, RunStatus::Started));
    let missing = store.restart_run(&playbook, "none", 1, 1, Vec::new()).await;
    assert!(is_not_found(&missing), "{missing:?}");
    Ok(())
}

async fn run_last_event_at_follows_the_database_clock(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let before = store.now().await?;
    let (started, _) = store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "a"),
            vec![numbered("started", 1)],
        )
        .await?;
    assert!(before <= started.last_event_at);
    let mut last = started.last_event_at;
    for n in 2..=4 {
        // More than SQLite's millisecond apart.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let recorded = store
            .record_run_events(&playbook, "run-1", vec![numbered(&format!("e{n}"), n)])
            .await?;
        let run = run_of(&*store, &playbook, "run-1").await?;
        assert_eq!(run.last_event_at, recorded[0].recorded_at);
        assert!(last < run.last_event_at, "{last} {}", run.last_event_at);
        assert!(run.last_event_at <= store.now().await?);
        assert_eq!(run.started_at, started.started_at);
        last = run.last_event_at;
    }
    // The age of the last event, on the database's clock.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let age = store.now().await? - last;
    assert!(age >= chrono::Duration::milliseconds(20), "{age}");
    Ok(())
}

async fn runs_list_newest_first(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    // Started in order of their ids: newest first is the ids' reverse order, whether two
    // starts share a time (then the greater id is first) or not.
    let runs = [
        ("r01", "reasoning", "a"),
        ("r02", "workflow", "a"),
        ("r03", "reasoning", "b"),
        ("r04", "reasoning", "a"),
        ("r05", "workflow", "a"),
        ("r06", "reasoning", "a"),
        ("r07", "reasoning", "b"),
    ];
    for (run_id, def_type, name) in runs {
        store
            .start_run(&playbook, new_run(run_id, def_type, name), Vec::new())
            .await?;
    }
    for run_id in ["r02", "r04"] {
        store
            .end_run(&playbook, run_id, succeeded(json!(1)), Vec::new())
            .await?;
    }
    store
        .end_run(&playbook, "r06", failed(), Vec::new())
        .await?;
    let list = |filter: RunFilter| {
        let (store, playbook) = (store.clone(), playbook.clone());
        async move {
            let runs = store.list_runs(&playbook, &filter).await?;
            Ok::<_, StoreError>(runs.into_iter().map(|r| r.run_id).collect::<Vec<_>>())
        }
    };
    let text = |s: &str| Some(s.to_string());
    assert_eq!(
        list(RunFilter::default()).await?,
        ["r07", "r06", "r05", "r04", "r03", "r02", "r01"]
    );
    let listed = store.list_runs(&playbook, &RunFilter::default()).await?;
    assert_eq!(listed[1], run_of(&*store, &playbook, "r06").await?);
    assert_eq!(
        list(RunFilter {
            def_type: text("reasoning"),
            ..Default::default()
        })
        .await?,
        ["r07", "r06", "r04", "r03", "r01"]
    );
    assert_eq!(
        list(RunFilter {
            def_type: text("reasoning"),
            name: text("a"),
            ..Default::default()
        })
        .await?,
        ["r06", "r04", "r01"]
    );
    assert_eq!(
        list(RunFilter {
            name: text("a"),
            ..Default::default()
        })
        .await?,
        ["r06", "r05", "r04", "r02", "r01"]
    );
    assert_eq!(
        list(RunFilter {
            status: Some(RunStatus::Succeeded),
            ..Default::default()
        })
        .await?,
        ["r04", "r02"]
    );
    assert_eq!(
        list(RunFilter {
            def_type: text("reasoning"),
            status: Some(RunStatus::Started),
            ..Default::default()
        })
        .await?,
        ["r07", "r03", "r01"]
    );
    assert!(
        list(RunFilter {
            def_type: text("recall"),
            ..Default::default()
        })
        .await?
        .is_empty()
    );
    // By the problem's reason, alone and with the status.
    store
        .end_run(
            &playbook,
            "r05",
            RunEnding {
                status: RunStatus::Rejected,
                output: None,
                record: None,
                problem: Some(json!({"reason": "conflict", "kind": "unworkable", "status": 409})),
            },
            Vec::new(),
        )
        .await?;
    let by_reason = |reason: &str, status: Option<RunStatus>| RunFilter {
        reason: text(reason),
        status,
        ..Default::default()
    };
    assert_eq!(list(by_reason("unavailable", None)).await?, ["r06"]);
    assert_eq!(list(by_reason("conflict", None)).await?, ["r05"]);
    assert_eq!(
        list(by_reason("conflict", Some(RunStatus::Rejected))).await?,
        ["r05"]
    );
    assert!(
        list(by_reason("conflict", Some(RunStatus::Failed)))
            .await?
            .is_empty()
    );
    assert!(list(by_reason("cancelled", None)).await?.is_empty());
    // By the time each started: since inclusive, until exclusive, alone, together and with
    // other filters; the expected lists are the full list's, filtered here.
    let all = store.list_runs(&playbook, &RunFilter::default()).await?;
    let started: Vec<_> = all
        .iter()
        .map(|r| (r.run_id.clone(), r.started_at))
        .collect();
    let within = |since: Option<chrono::DateTime<chrono::Utc>>,
                  until: Option<chrono::DateTime<chrono::Utc>>| {
        started
            .iter()
            .filter(|(_, at)| since.is_none_or(|s| *at >= s) && until.is_none_or(|u| *at < u))
            .map(|(id, _)| id.clone())
            .collect::<Vec<_>>()
    };
    for (since, until) in [
        (Some(started[3].1), None),
        (None, Some(started[3].1)),
        (Some(started[5].1), Some(started[1].1)),
        (Some(started[0].1), None),
        (None, Some(started[6].1)),
        (Some(started[0].1 + chrono::Duration::milliseconds(1)), None),
    ] {
        let listed = list(RunFilter {
            since,
            until,
            ..Default::default()
        })
        .await?;
        assert_eq!(listed, within(since, until), "{since:?} {until:?}");
    }
    assert_eq!(
        list(RunFilter {
            since: Some(started[6].1),
            name: text("b"),
            ..Default::default()
        })
        .await?,
        ["r07", "r03"]
    );

    // Pages by cursor: each starts after the last run of the page before.
    let mut paged = Vec::new();
    let mut after_run_id = None;
    loop {
        let page = list(RunFilter {
            after_run_id: after_run_id.clone(),
            limit: 3,
            ..Default::default()
        })
        .await?;
        assert!(page.len() <= 3);
        let Some(last) = page.last().cloned() else {
            break;
        };
        paged.extend(page);
        after_run_id = Some(last);
    }
    assert_eq!(paged, ["r07", "r06", "r05", "r04", "r03", "r02", "r01"]);
    let filtered_page = RunFilter {
        def_type: text("reasoning"),
        after_run_id: text("r06"),
        limit: 2,
        ..Default::default()
    };
    assert_eq!(list(filtered_page).await?, ["r04", "r03"]);
    // A cursor run that no longer matches the filter still marks its place.
    let started_after = RunFilter {
        status: Some(RunStatus::Started),
        after_run_id: text("r04"),
        ..Default::default()
    };
    assert_eq!(list(started_after).await?, ["r03", "r01"]);
    // A cursor that names no run gives an empty page.
    let unknown = RunFilter {
        after_run_id: text("nope"),
        ..Default::default()
    };
    assert!(list(unknown).await?.is_empty());
    // A restart starts the run again: it is listed by its new start, the newest, the ties
    // broken by the greater id as ever.
    let (restarted, _) = store
        .restart_run(&playbook, "r04", 1, 1, Vec::new())
        .await?;
    let listed = store.list_runs(&playbook, &RunFilter::default()).await?;
    assert_eq!(listed.len(), 7);
    assert!(
        listed.iter().all(|r| r.started_at <= restarted.started_at),
        "{listed:?}"
    );
    assert!(
        listed
            .windows(2)
            .all(|w| (w[0].started_at, &w[0].run_id) > (w[1].started_at, &w[1].run_id)),
        "{listed:?}"
    );
    let missing = store
        .list_runs(&PlaybookRef::new("acme", "missing"), &RunFilter::default())
        .await;
    assert!(is_not_found(&missing), "{missing:?}");
    Ok(())
}

/// Two attempts of one run that go on at once: of those that number the same event, one
/// records it and the others stop.
async fn concurrent_run_events_one_wins(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("run-1", "reasoning", "a"),
            vec![numbered("started", 1)],
        )
        .await?;
    let racers: Vec<_> = (0..RACERS)
        .map(|n| {
            let (store, playbook) = (store.clone(), playbook.clone());
            tokio::spawn(async move {
                let events = vec![numbered(&format!("attempt-{n}"), 2)];
                store.record_run_events(&playbook, "run-1", events).await
            })
        })
        .collect();
    let mut recorded = Vec::new();
    for racer in racers {
        match racer
            .await
            .unwrap_or_else(|error| panic!("a racer: {error}"))
        {
            Ok(events) => recorded.extend(events),
            Err(StoreError::Conflict(_)) => {}
            Err(error) => return Err(error),
        }
    }
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let run = run_of(&*store, &playbook, "run-1").await?;
    assert_eq!(
        (run.last_run_seq, run.last_event_at),
        (2, recorded[0].recorded_at)
    );
    let seqs: Vec<_> = all_events(&*store, &playbook)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2]);
    Ok(())
}

fn step(expected_version: Option<i64>, state: serde_json::Value) -> WorkflowStep {
    WorkflowStep {
        expected_version,
        state,
        events: Vec::new(),
        add_work: Vec::new(),
        done_work: None,
        cancel_work: Vec::new(),
        listen: Vec::new(),
        unlisten: Vec::new(),
        ending: None,
        children: Vec::new(),
        start: None,
    }
}

/// The claimer of the tests that need only one.
const CLAIMER: &str = "claimer-a";

/// An input of its run, due now.
fn input(key: &str) -> NewWork {
    NewWork {
        ordered: true,
        ..work(key, None)
    }
}

fn keys_of(claimed: &[auto_store::Work]) -> Vec<&str> {
    claimed.iter().map(|w| w.key.as_str()).collect()
}

fn work(key: &str, due_in_ms: Option<i64>) -> NewWork {
    NewWork {
        key: key.into(),
        due_at: due_in_ms.map(|ms| Utc::now() + chrono::Duration::milliseconds(ms)),
        // Opaque to the store: any bytes, JSON or not, come back as given.
        payload: [b"\x00work ", key.as_bytes()].concat(),
        ordered: false,
    }
}

/// A store with the playbook of [`with_playbook`] and its workflow run `top`, started with its
/// event `top-1`.
async fn with_top_run(store: &dyn Store) -> Result<PlaybookRef> {
    let playbook = with_playbook(store).await?;
    store
        .start_run(
            &playbook,
            new_run("top", "workflow", "flow"),
            vec![numbered("top-1", 1)],
        )
        .await?;
    Ok(playbook)
}

/// A computation run `run_id` that `parent` called in a tree under `top`, begun and ended with
/// its caller's step.
fn ended_child(run_id: &str, parent: &str, call_depth: i64) -> EndedChild {
    EndedChild {
        run: NewRun {
            parent_run_id: Some(parent.into()),
            parent_call_id: Some(format!("call:/do/0/{run_id}#1")),
            root_run_id: Some("top".into()),
            call_depth: Some(call_depth),
            ..new_run(run_id, "computation", "add")
        },
        ending: succeeded(json!({"x": 1})),
    }
}

/// A step its caller keeps (to commit it again after a fault) is committed as a step given
/// away is: its events without a run id are the run's, and what the caller keeps is unchanged.
async fn a_step_its_caller_keeps_is_committed_as_given(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_top_run(&*store).await?;
    let mut first = step(None, json!({"at": 1}));
    first.events = vec![numbered("top-2", 2), numbered("top-3", 3)];
    let kept = Arc::new(first);
    store
        .commit_workflow_step(&playbook, "top", Arc::clone(&kept))
        .await?;
    assert!(kept.events.iter().all(|event| event.run_id.is_none()));
    let events = store
        .list_events(&playbook, &EventFilter::default())
        .await?;
    let recorded: Vec<(&str, Option<&str>, Option<i64>)> = events
        .iter()
        .map(|e| (e.id.as_str(), e.run_id.as_deref(), e.run_seq))
        .collect();
    assert_eq!(
        recorded,
        [
            ("top-1", Some("top"), Some(1)),
            ("top-2", Some("top"), Some(2)),
            ("top-3", Some("top"), Some(3)),
        ]
    );
    assert_eq!(
        store.get_run(&playbook, "top").await?.unwrap().last_run_seq,
        3
    );
    // The same step again is another step's version: refused, and nothing changes.
    assert!(matches!(
        store.commit_workflow_step(&playbook, "top", kept).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.get_workflow_state(&playbook, "top").await?,
        Some((1, json!({"at": 1})))
    );
    Ok(())
}

/// A call performed within its step: the child run is recorded and ended with the step, its
/// events among the step's in the order given; a child whose id is taken refuses the whole
/// step, which changes nothing.
async fn a_step_records_the_children_it_began_and_ended(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_top_run(&*store).await?;
    let child = |run_id: &str| ended_child(run_id, "top", 1);
    let of = |run_id: &str, id: &str, run_seq: i64| NewEvent {
        run_id: Some(run_id.into()),
        ..numbered(id, run_seq)
    };
    let mut first = step(None, json!({"at": 1}));
    first.children = vec![child("a")];
    first.events = vec![
        numbered("top-2", 2),
        of("a", "a-1", 1),
        of("a", "a-2", 2),
        numbered("top-3", 3),
    ];
    store
        .commit_workflow_step(&playbook, "top", first.into())
        .await?;
    let a = store.get_run(&playbook, "a").await?.expect("the child");
    assert_eq!(a.status, RunStatus::Succeeded);
    assert_eq!(a.output, Some(json!({"x": 1})));
    assert_eq!(a.parent_run_id.as_deref(), Some("top"));
    assert_eq!(a.last_run_seq, 2);
    assert_eq!(a.record, Some(json!({"calls": 1})));
    assert_eq!(a.ended_at, Some(a.started_at));
    assert_eq!(
        store.get_run(&playbook, "top").await?.unwrap().last_run_seq,
        3
    );
    let ids: Vec<String> = store
        .list_events(&playbook, &EventFilter::default())
        .await?
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, ["top-1", "top-2", "a-1", "a-2", "top-3"]);
    // The child's id is taken: the step is refused whole.
    let mut again = step(Some(1), json!({"at": 2}));
    again.children = vec![child("a")];
    again.events = vec![numbered("top-4", 4), of("a", "a-3", 1)];
    assert!(matches!(
        store
            .commit_workflow_step(&playbook, "top", again.into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.get_workflow_state(&playbook, "top").await?,
        Some((1, json!({"at": 1})))
    );
    // An event of a run that is neither the step's nor one of its children is refused.
    let mut stray = step(Some(1), json!({"at": 2}));
    stray.events = vec![of("elsewhere", "x-1", 1)];
    assert!(matches!(
        store
            .commit_workflow_step(&playbook, "top", stray.into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    Ok(())
}

/// A run's first step taken with its start: the run is recorded with the step, at the time its
/// starter settled; a run id taken refuses the whole step; a run that ends in its first step
/// is recorded ended.
async fn a_first_step_records_its_run_with_it(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 30, 0).unwrap();
    let first = |run_id: &str| {
        let mut step = step(None, json!({"at": 1}));
        step.start = Some(NewRun {
            started_at: Some(at),
            ..new_run(run_id, "workflow", "flow")
        });
        step.events = vec![
            numbered(&format!("{run_id}-1"), 1),
            numbered(&format!("{run_id}-2"), 2),
        ];
        step
    };
    let committed = store
        .commit_workflow_step(&playbook, "s1", first("s1").into())
        .await?;
    assert_eq!(committed.version, 1);
    let run = store.get_run(&playbook, "s1").await?.expect("the run");
    // The step gives the run it recorded as a read of it gives it.
    assert_eq!(committed.run.as_ref(), Some(&run));
    assert_eq!(run.status, RunStatus::Started);
    assert_eq!(run.started_at, at);
    assert_eq!(run.last_run_seq, 2);
    assert_eq!(
        store.get_workflow_state(&playbook, "s1").await?,
        Some((1, json!({"at": 1})))
    );
    // The id is taken: nothing of the second step is recorded.
    let mut again = first("s1");
    again.events = vec![numbered("again-1", 1)];
    assert!(matches!(
        store
            .commit_workflow_step(&playbook, "s1", again.into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    let ids: Vec<String> = store
        .list_events(&playbook, &EventFilter::default())
        .await?
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, ["s1-1", "s1-2"]);
    // Ended in its first step: recorded ended, with nothing left to wait for.
    let mut ends = first("s2");
    ends.ending = Some(succeeded(json!({"done": true})));
    let committed = store
        .commit_workflow_step(&playbook, "s2", ends.into())
        .await?;
    let run = store.get_run(&playbook, "s2").await?.expect("the run");
    assert_eq!(committed.run.as_ref(), Some(&run));
    assert_eq!(run.status, RunStatus::Succeeded);
    assert_eq!(run.output, Some(json!({"done": true})));
    assert!(run.ended_at.is_some());
    // A run that never waited keeps no snapshot: only a started run's is ever read.
    assert_eq!(committed.version, 0);
    assert_eq!(store.get_workflow_state(&playbook, "s2").await?, None);
    Ok(())
}

/// A run that begins and ends in its first step, with the runs of the calls it made (on
/// PostgreSQL one statement committed alone): every run as it ended, its events in order under
/// the playbook's next seqs, and its ending's news to its parent; a run's or a child's id taken,
/// or an event's, refuses it whole, naming what is taken, and takes no seq; a playbook that is
/// not there is `NotFound`.
async fn a_run_that_ends_in_its_first_step_is_recorded_whole(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_top_run(&*store).await?;
    let child = |run_id: &str, parent: &str| ended_child(run_id, parent, 2);
    let whole = |run_id: &str, children: &[&str]| {
        let mut first = step(None, json!({"never": "kept"}));
        first.start = Some(NewRun {
            parent_run_id: Some("top".into()),
            parent_call_id: Some("call:/do/1/sub#1".into()),
            root_run_id: Some("top".into()),
            call_depth: Some(1),
            ending_work: Some(NewWork {
                key: format!("ended:{run_id}"),
                due_at: None,
                payload: format!("told {run_id}").into_bytes(),
                ordered: true,
            }),
            ..new_run(run_id, "workflow", "sub")
        });
        first.children = children.iter().map(|id| child(id, run_id)).collect();
        first.events = vec![numbered(&format!("{run_id}-1"), 1)];
        for id in children {
            first.events.push(NewEvent {
                run_id: Some((*id).into()),
                ..numbered(&format!("{id}-1"), 1)
            });
        }
        first.events.push(numbered(&format!("{run_id}-2"), 2));
        first.ending = Some(succeeded(json!({"sum": 3})));
        first
    };
    let committed = store
        .commit_workflow_step(&playbook, "sub", whole("sub", &["c1", "c2"]).into())
        .await?;
    let sub = run_of(&*store, &playbook, "sub").await?;
    assert_eq!(
        committed,
        StepCommitted {
            version: 0,
            run: Some(sub.clone())
        }
    );
    assert_eq!(sub.status, RunStatus::Succeeded);
    assert_eq!(sub.output, Some(json!({"sum": 3})));
    assert_eq!(sub.last_run_seq, 2);
    assert_eq!(sub.ended_at, Some(sub.started_at));
    assert_eq!(sub.last_event_at, sub.started_at);
    for id in ["c1", "c2"] {
        let run = run_of(&*store, &playbook, id).await?;
        assert_eq!(run.status, RunStatus::Succeeded);
        assert_eq!(run.output, Some(json!({"x": 1})));
        assert_eq!(run.parent_run_id.as_deref(), Some("sub"));
        assert_eq!(run.root_run_id.as_deref(), Some("top"));
        assert_eq!((run.last_run_seq, run.call_depth), (1, Some(2)));
        assert_eq!(run.ended_at, Some(sub.started_at));
    }
    assert_eq!(store.get_workflow_state(&playbook, "sub").await?, None);
    let events = all_events(&*store, &playbook).await?;
    let seen: Vec<(i64, &str, Option<&str>)> = events
        .iter()
        .map(|e| (e.seq, e.id.as_str(), e.run_id.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, "top-1", Some("top")),
            (2, "sub-1", Some("sub")),
            (3, "c1-1", Some("c1")),
            (4, "c2-1", Some("c2")),
            (5, "sub-2", Some("sub")),
        ]
    );
    assert!(events[1..].iter().all(|e| e.time == sub.started_at));
    assert_eq!(store.log_end(&playbook).await?, 5);
    // Its ending reached its parent, due at once.
    let told = store
        .claim_work(CLAIMER, Duration::from_secs(60), 10)
        .await?;
    assert_eq!(keys_of(&told), ["ended:sub"]);
    assert_eq!(
        (told[0].run_id.as_str(), told[0].payload.as_slice()),
        ("top", &b"told sub"[..])
    );
    store.finish_work(told[0].id).await?;

    // Taken ids refuse the whole run, each named, and take no seq.
    let refused = |result: Result<StepCommitted>, taken: &str| match result {
        Err(StoreError::Conflict(message)) => {
            assert!(message.contains(taken), "{message:?} names {taken:?}")
        }
        other => panic!("{other:?}: not a conflict over {taken}"),
    };
    refused(
        store
            .commit_workflow_step(&playbook, "sub", whole("sub", &["c3"]).into())
            .await,
        "has a run sub",
    );
    refused(
        store
            .commit_workflow_step(&playbook, "sub2", whole("sub2", &["c3", "c2"]).into())
            .await,
        "has a run c2",
    );
    let mut same_event = whole("sub3", &["c4"]);
    same_event.events[1].id = "c1-1".into();
    refused(
        store
            .commit_workflow_step(&playbook, "sub3", same_event.into())
            .await,
        "an event with the same id",
    );
    for id in ["sub2", "sub3", "c3", "c4"] {
        assert_eq!(store.get_run(&playbook, id).await?, None, "{id}");
    }
    assert_eq!(store.log_end(&playbook).await?, 5);
    assert_eq!(
        store
            .claim_work(CLAIMER, Duration::from_secs(60), 10)
            .await?,
        vec![]
    );
    // The next change takes the next seq.
    store
        .commit_workflow_step(&playbook, "sub4", whole("sub4", &[]).into())
        .await?;
    let seqs: Vec<i64> = all_events(&*store, &playbook)
        .await?
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6, 7]);
    assert!(matches!(
        store
            .commit_workflow_step(
                &PlaybookRef::new("acme", "nobody"),
                "sub5",
                whole("sub5", &[]).into()
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    Ok(())
}

async fn workflow_steps_are_compare_and_set(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("w1", "workflow", "flow"),
            vec![numbered("w1-1", 1)],
        )
        .await?;
    assert_eq!(store.get_workflow_state(&playbook, "w1").await?, None);
    let mut first = step(None, json!({"at": 1}));
    first.events = vec![numbered("w1-2", 2)];
    // A step that neither records nor ends the run gives its new version alone.
    let committed = store
        .commit_workflow_step(&playbook, "w1", first.into())
        .await?;
    assert_eq!((committed.version, committed.run), (1, None));
    // A second first step, or a step from a stale version, is another server's: refused.
    assert!(matches!(
        store
            .commit_workflow_step(&playbook, "w1", step(None, json!({"at": "other"})).into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store
            .commit_workflow_step(&playbook, "w1", step(Some(1), json!({"at": 2})).into())
            .await?
            .version,
        2
    );
    let mut stale = step(Some(1), json!({"at": "stale"}));
    stale.events = vec![numbered("w1-stale", 3)];
    assert!(matches!(
        store
            .commit_workflow_step(&playbook, "w1", stale.into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.get_workflow_state(&playbook, "w1").await?,
        Some((2, json!({"at": 2})))
    );
    assert!(
        !all_events(&*store, &playbook)
            .await?
            .iter()
            .any(|e| e.id == "w1-stale")
    );
    // The step that ends the run ends it, with its fact; no step follows.
    let mut last = step(Some(2), json!({"at": "end"}));
    last.events = vec![numbered("w1-3", 3)];
    last.ending = Some(succeeded(json!({"sum": 245})));
    let committed = store
        .commit_workflow_step(&playbook, "w1", last.into())
        .await?;
    assert_eq!(committed.version, 3);
    let run = run_of(&*store, &playbook, "w1").await?;
    // The step that ends the run gives it as ended, as a read of it would.
    assert_eq!(committed.run.as_ref(), Some(&run));
    assert_eq!(run.status, RunStatus::Succeeded);
    assert_eq!(run.output, Some(json!({"sum": 245})));
    assert_eq!(run.last_run_seq, 3);
    assert!(matches!(
        store
            .commit_workflow_step(&playbook, "w1", step(Some(3), json!({})).into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    Ok(())
}

fn listening(references: impl IntoIterator<Item = String>) -> Vec<auto_store::NewListener> {
    references
        .into_iter()
        .map(|reference| auto_store::NewListener {
            reference,
            filters: json!([{"with": {"type": "com.example.go"}}]),
        })
        .collect()
}

/// "A playbook has at most 4,096 tasks listening for its events at once. One more hears only
/// events sent to its run": its step commits, without a listener.
async fn listening_tasks_stop_at_4096_a_playbook(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    for run_id in ["many", "one-more"] {
        store
            .start_run(
                &playbook,
                new_run(run_id, "workflow", "hear"),
                vec![numbered(&format!("{run_id}-1"), 1)],
            )
            .await?;
    }
    let mut first = step(None, json!({}));
    first.listen = listening((0..LISTENERS_MAX).map(|n| format!("/do/0/fork/branches/{n}")));
    store
        .commit_workflow_step(&playbook, "many", first.into())
        .await?;
    let count = |listeners: &[auto_store::Listener], run_id: &str| {
        listeners.iter().filter(|l| l.run_id == run_id).count()
    };
    let listeners = store.list_listeners().await?;
    assert_eq!(count(&listeners, "many"), 4_096);
    // One more: its step commits, and it hears only what is sent to its run.
    let mut more = step(None, json!({}));
    more.listen = listening(["/do/0/hear".to_owned()]);
    store
        .commit_workflow_step(&playbook, "one-more", more.into())
        .await?;
    let listeners = store.list_listeners().await?;
    assert_eq!(listeners.len(), 4_096);
    assert_eq!(count(&listeners, "one-more"), 0);
    // A task that stops listening makes room for the next one that begins.
    let mut fewer = step(Some(1), json!({}));
    fewer.unlisten = vec!["/do/0/fork/branches/0".to_owned()];
    store
        .commit_workflow_step(&playbook, "many", fewer.into())
        .await?;
    let mut again = step(Some(1), json!({}));
    again.listen = listening(["/do/1/hear".to_owned()]);
    store
        .commit_workflow_step(&playbook, "one-more", again.into())
        .await?;
    let listeners = store.list_listeners().await?;
    assert_eq!(listeners.len(), 4_096);
    assert_eq!(count(&listeners, "one-more"), 1);
    // A run's ending stops all of its listening.
    let mut end = step(Some(2), json!({}));
    end.ending = Some(succeeded(json!(null)));
    store
        .commit_workflow_step(&playbook, "many", end.into())
        .await?;
    assert_eq!(store.list_listeners().await?.len(), 1);

    // Two steps that begin listening at once, with one place left: one of them takes it.
    store
        .start_run(
            &playbook,
            new_run("rest", "workflow", "hear"),
            vec![numbered("rest-1", 1)],
        )
        .await?;
    let mut rest = step(None, json!({}));
    rest.listen = listening((0..LISTENERS_MAX - 2).map(|n| format!("/rest/{n}")));
    store
        .commit_workflow_step(&playbook, "rest", rest.into())
        .await?;
    assert_eq!(store.list_listeners().await?.len(), 4_095);
    for run_id in ["left", "right"] {
        store
            .start_run(
                &playbook,
                new_run(run_id, "workflow", "hear"),
                vec![numbered(&format!("{run_id}-1"), 1)],
            )
            .await?;
    }
    let racing = |run_id: &'static str| {
        let store = store.clone();
        let playbook = playbook.clone();
        async move {
            let mut begin = step(None, json!({}));
            begin.listen = listening(["/do/0/hear".to_owned()]);
            store
                .commit_workflow_step(&playbook, run_id, begin.into())
                .await
        }
    };
    let (left, right) = tokio::join!(racing("left"), racing("right"));
    left?;
    right?;
    let listeners = store.list_listeners().await?;
    assert_eq!(listeners.len(), 4_096);
    assert_eq!(count(&listeners, "left") + count(&listeners, "right"), 1);
    Ok(())
}

async fn workflow_steps_add_and_remove_work(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("w2", "workflow", "flow"),
            vec![numbered("w2-1", 1)],
        )
        .await?;
    let mut first = step(None, json!({}));
    first.add_work = vec![
        work("now", None),
        work("later", Some(3_600_000)),
        work("gone", None),
    ];
    store
        .commit_workflow_step(&playbook, "w2", first.into())
        .await?;
    // A key the run has already keeps its item.
    store
        .add_work(&playbook, "w2", vec![work("now", Some(3_600_000))])
        .await?;
    let claimed = store
        .claim_work(CLAIMER, Duration::from_secs(60), 10)
        .await?;
    let keys: Vec<&str> = claimed.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys.contains(&"now") && keys.contains(&"gone"), "{keys:?}");
    assert!(
        claimed
            .iter()
            .all(|w| w.run_id == "w2" && w.playbook == playbook)
    );
    let now_item = claimed.iter().find(|w| w.key == "now").expect("now");
    assert_eq!(now_item.payload, b"\x00work now");
    // The step that applies "now" removes it, and cancels "gone" and "later".
    let mut next = step(Some(1), json!({"n": 2}));
    next.done_work = Some(now_item.id);
    next.cancel_work = vec!["gone".into(), "later".into()];
    next.add_work = vec![work("timer", Some(250))];
    store
        .commit_workflow_step(&playbook, "w2", next.into())
        .await?;
    let due = store.next_work_due().await?.expect("the timer");
    assert!(due > Utc::now() - chrono::Duration::seconds(1));
    assert!(
        store
            .claim_work(CLAIMER, Duration::from_secs(60), 10)
            .await?
            .is_empty()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let claimed = store
        .claim_work(CLAIMER, Duration::from_secs(60), 10)
        .await?;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].key, "timer");
    // Held, it may be claimed again when its lease ends, not at its due time.
    let again = store.next_work_due().await?.expect("the held timer");
    assert!(
        again > Utc::now() + chrono::Duration::seconds(50),
        "{again}"
    );
    store.finish_work(claimed[0].id).await?;
    assert_eq!(store.next_work_due().await?, None);
    Ok(())
}

async fn work_is_claimed_once_until_its_lease_ends(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let items: Vec<NewWork> = (0..40).map(|i| work(&format!("k{i}"), None)).collect();
    store.add_work(&playbook, "w3", items).await?;
    // Four claimers at once never hold one item twice.
    let mut claimers = Vec::new();
    for _ in 0..4 {
        let store = store.clone();
        claimers.push(tokio::spawn(async move {
            store
                .claim_work(CLAIMER, Duration::from_millis(300), 15)
                .await
        }));
    }
    let mut seen = HashSet::new();
    for claimer in claimers {
        for item in claimer.await.expect("a claimer")? {
            assert!(seen.insert(item.id), "item {} claimed twice", item.id);
        }
    }
    assert_eq!(seen.len(), 40);
    assert!(
        store
            .claim_work(CLAIMER, Duration::from_millis(300), 100)
            .await?
            .is_empty()
    );
    // Past its lease an item may be claimed again: its server is gone.
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        store
            .claim_work(CLAIMER, Duration::from_secs(60), 100)
            .await?
            .len(),
        40
    );
    Ok(())
}

/// When a run's next input falls due, whoever holds it: commands beside the run, other runs'
/// inputs and the item being applied do not count.
async fn a_runs_next_input_is_told_but_the_one_applied(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    assert_eq!(store.next_input_due(&playbook, "w6", None).await?, None);
    let timer = NewWork {
        ordered: true,
        ..work("timer", Some(3_600_000))
    };
    store
        .add_work(&playbook, "w6", vec![timer, work("call", None)])
        .await?;
    store.add_work(&playbook, "w7", vec![input("x1")]).await?;
    let in_an_hour = store.next_input_due(&playbook, "w6", None).await?.unwrap();
    let ahead = in_an_hour - Utc::now();
    assert!(ahead > chrono::Duration::minutes(59), "{ahead}");
    store.add_work(&playbook, "w6", vec![input("e1")]).await?;
    let claimed = store
        .claim_work(CLAIMER, Duration::from_secs(60), 10)
        .await?;
    let e1 = claimed.iter().find(|w| w.key == "e1").expect("e1");
    assert_eq!(
        store.next_input_due(&playbook, "w6", None).await?,
        Some(e1.due_at)
    );
    assert_eq!(
        store.next_input_due(&playbook, "w6", Some(e1.id)).await?,
        Some(in_an_hour)
    );
    // Another playbook's run of that id is another run.
    assert!(
        store
            .next_input_due(&PlaybookRef::new("acme", "elsewhere"), "w6", None)
            .await?
            .is_none()
    );
    Ok(())
}

async fn a_runs_inputs_go_to_one_claimer_at_a_time_in_order(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let long = Duration::from_secs(60);
    // A timer not due yet keeps nothing back; a command (not ordered) goes beside the inputs.
    store
        .add_work(
            &playbook,
            "w4",
            vec![
                NewWork {
                    ordered: true,
                    ..work("timer", Some(3_600_000))
                },
                input("e1"),
                work("call", None),
                input("e2"),
                input("e3"),
            ],
        )
        .await?;
    store.add_work(&playbook, "w5", vec![input("x1")]).await?;
    let first = store.claim_work("a", long, 1).await?;
    assert_eq!(keys_of(&first), ["e1"]);
    assert!(first[0].ordered);
    // While a holds e1, b is handed the command and the other run's input, not e2 or e3.
    let other = store.claim_work("b", long, 10).await?;
    assert_eq!(keys_of(&other), ["call", "x1"]);
    assert!(!other[0].ordered);
    // a, which holds e1, is handed the run's next inputs, to apply after it.
    let next = store.claim_work("a", long, 10).await?;
    assert_eq!(keys_of(&next), ["e2", "e3"]);
    // Once e1 is done, the later ones are still a's until their leases end.
    store.finish_work(first[0].id).await?;
    store.add_work(&playbook, "w4", vec![input("e4")]).await?;
    assert_eq!(
        keys_of(&store.claim_work("b", long, 10).await?),
        Vec::<&str>::new()
    );
    for item in &next {
        store.finish_work(item.id).await?;
    }
    assert_eq!(keys_of(&store.claim_work("b", long, 10).await?), ["e4"]);

    // A claimer gone (its leases ended) holds nothing back: another takes its inputs, in order.
    store
        .add_work(&playbook, "w6", vec![input("f1"), input("f2")])
        .await?;
    let short = Duration::from_millis(300);
    assert_eq!(keys_of(&store.claim_work("a", short, 1).await?), ["f1"]);
    assert_eq!(
        keys_of(&store.claim_work("b", long, 10).await?),
        Vec::<&str>::new()
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        keys_of(&store.claim_work("b", long, 10).await?),
        ["f1", "f2"]
    );
    Ok(())
}

async fn claimers_at_once_apply_a_runs_inputs_in_order(store: Arc<dyn Store>) -> Result<()> {
    const INPUTS: usize = 60;
    const CLAIMERS: usize = 4;
    let playbook = with_playbook(&*store).await?;
    for n in 0..INPUTS {
        store
            .add_work(&playbook, "w7", vec![input(&format!("i{n:02}"))])
            .await?;
    }
    // Each claimer notes the run as its own while it applies what it was handed, and lets go
    // before it finishes the items: no other may be handed the run's inputs until then.
    let holder = Arc::new(std::sync::Mutex::new(None::<usize>));
    let applied = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut tasks = tokio::task::JoinSet::new();
    for me in 0..CLAIMERS {
        let (store, holder, applied) = (store.clone(), holder.clone(), applied.clone());
        tasks.spawn(async move {
            let claimer = format!("claimer-{me}");
            let deadline = Instant::now() + Duration::from_secs(30);
            while applied.lock().unwrap().len() < INPUTS {
                assert!(Instant::now() < deadline, "the inputs were not all applied");
                let claimed = store
                    .claim_work(&claimer, Duration::from_secs(60), 3)
                    .await?;
                if claimed.is_empty() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                {
                    let mut held = holder.lock().unwrap();
                    assert!(
                        held.is_none(),
                        "claimer {me} was handed inputs {held:?} holds"
                    );
                    *held = Some(me);
                }
                // Applying takes a while, in which another claimer would be handed more.
                tokio::time::sleep(Duration::from_millis(5)).await;
                applied
                    .lock()
                    .unwrap()
                    .extend(claimed.iter().map(|w| w.key.clone()));
                *holder.lock().unwrap() = None;
                for item in claimed {
                    store.finish_work(item.id).await?;
                }
            }
            Ok::<_, auto_store::StoreError>(())
        });
    }
    for result in tasks.join_all().await {
        result?;
    }
    let expected: Vec<String> = (0..INPUTS).map(|n| format!("i{n:02}")).collect();
    assert_eq!(*applied.lock().unwrap(), expected);
    Ok(())
}

async fn child_endings_reach_their_parent(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(&playbook, new_run("top", "workflow", "flow"), vec![])
        .await?;
    // Each is started with the work its ending adds to its parent, which the store keeps as
    // given.
    let child = |id: &str, def_type: &str, call: &str| NewRun {
        parent_run_id: Some("top".into()),
        parent_call_id: Some(call.into()),
        ending_work: Some(NewWork {
            key: format!("ended:{call}"),
            due_at: Some(Utc::now() + chrono::Duration::days(1)),
            payload: format!("told {id}").into_bytes(),
            ordered: true,
        }),
        root_run_id: Some("top".into()),
        call_depth: Some(1),
        task_reference: Some("/do/0/ask".into()),
        ..new_run(id, def_type, "f")
    };
    store
        .start_run(
            &playbook,
            child("top.a", "computation", "call:/do/0/a#1"),
            vec![],
        )
        .await?;
    store
        .start_run(
            &playbook,
            child("top.b", "workflow", "call:/do/1/b#1"),
            vec![],
        )
        .await?;
    let stored = run_of(&*store, &playbook, "top.a").await?;
    assert_eq!(stored.parent_call_id.as_deref(), Some("call:/do/0/a#1"));
    assert_eq!(stored.root_run_id.as_deref(), Some("top"));
    assert_eq!(store.count_open_calls(&playbook, "top").await?, 2);
    assert_eq!(
        store
            .claim_work(CLAIMER, Duration::from_secs(60), 10)
            .await?,
        vec![]
    );

    // A run ended with end_run adds its ending work to its parent, due at once, in the same
    // transaction.
    store
        .end_run(&playbook, "top.a", succeeded(json!(1)), vec![])
        .await?;
    assert_eq!(store.count_open_calls(&playbook, "top").await?, 1);
    // A workflow child's last step does the same, and takes its own remaining work with it,
    // but keeps the work the step itself adds.
    store
        .commit_workflow_step(
            &playbook,
            "top.b",
            {
                let mut first = step(None, json!({}));
                first.add_work = vec![work("timer", Some(3_600_000))];
                first
            }
            .into(),
        )
        .await?;
    let mut last = step(Some(1), json!({}));
    last.ending = Some(failed());
    last.add_work = vec![work("cancel:child", None)];
    store
        .commit_workflow_step(&playbook, "top.b", last.into())
        .await?;
    assert_eq!(store.count_open_calls(&playbook, "top").await?, 0);
    let mut claimed = store
        .claim_work(CLAIMER, Duration::from_secs(60), 10)
        .await?;
    claimed.sort_by(|a, b| a.key.cmp(&b.key));
    let seen: Vec<(&str, &str, &[u8])> = claimed
        .iter()
        .map(|w| (w.run_id.as_str(), w.key.as_str(), w.payload.as_slice()))
        .collect();
    assert_eq!(
        seen,
        [
            ("top.b", "cancel:child", b"\x00work cancel:child".as_slice()),
            ("top", "ended:call:/do/0/a#1", b"told top.a".as_slice()),
            ("top", "ended:call:/do/1/b#1", b"told top.b".as_slice()),
        ]
    );
    assert!(claimed.iter().all(|w| w.ordered == (w.run_id == "top")));
    Ok(())
}

fn new_request(request_id: &str) -> NewRequest {
    NewRequest {
        request_id: request_id.into(),
        to: "ana@example.com".into(),
        message: "Approve?".into(),
        input: json!({"owner": "ana@example.com"}),
        output_schema: Some(json!({"type": "object"})),
        expires_at: Utc.with_ymd_and_hms(2030, 1, 2, 3, 4, 5).single().unwrap(),
    }
}

fn answered(by: &str) -> RequestClose {
    RequestClose {
        status: RequestStatus::Answered,
        answered_by: Some(by.into()),
        answer: Some(json!({"verdict": "approve"})),
    }
}

async fn requests_open_with_their_run_and_close_with_its_ending(
    store: Arc<dyn Store>,
) -> Result<()> {
    let pb = with_playbook(store.as_ref()).await?;
    let (run, request) = store
        .start_interaction(
            &pb,
            new_run("ask-1", "interaction", "approve"),
            vec![numbered("s1", 1), numbered("s2", 2)],
            new_request("req-1"),
            vec![work("expire", Some(60_000))],
        )
        .await?;
    assert_eq!(run.status, RunStatus::Started);
    assert_eq!(run.last_run_seq, 2);
    assert_eq!(request.status, RequestStatus::Open);
    assert_eq!(request.run_id, "ask-1");
    assert_eq!(request.key, DefinitionKey::new("interaction", "approve"));
    assert_eq!(request.expires_at, new_request("req-1").expires_at);
    assert_eq!(request.created_at, run.started_at);
    assert_eq!(
        store.get_request(&pb, "req-1").await?,
        Some(request.clone())
    );
    assert_eq!(
        store.get_request_of_run(&pb, "ask-1").await?,
        Some(request.clone())
    );
    assert!(store.next_work_due().await?.is_some());

    let (closed, ended) = store
        .close_request(
            &pb,
            "req-1",
            answered("bot"),
            succeeded(json!({"verdict": "approve"})),
            vec![numbered("s3", 3), numbered("s4", 4)],
            vec!["expire".into()],
        )
        .await?;
    assert_eq!(closed.status, RequestStatus::Answered);
    assert_eq!(closed.answered_by.as_deref(), Some("bot"));
    assert_eq!(closed.answer, Some(json!({"verdict": "approve"})));
    assert!(closed.closed_at.is_some());
    assert_eq!(ended.status, RunStatus::Succeeded);
    assert_eq!(ended.output, Some(json!({"verdict": "approve"})));
    assert_eq!(ended.last_run_seq, 4);
    assert_eq!(run_of(store.as_ref(), &pb, "ask-1").await?, ended);
    assert_eq!(
        store.next_work_due().await?,
        None,
        "the expiry went with it"
    );
    let events = store
        .list_events(
            &pb,
            &EventFilter {
                run_id: Some("ask-1".into()),
                ..EventFilter::default()
            },
        )
        .await?;
    assert_eq!(events.len(), 4);
    // A second run or request under a taken id records nothing.
    let taken = store
        .start_interaction(
            &pb,
            new_run("ask-2", "interaction", "approve"),
            vec![numbered("t1", 1)],
            new_request("req-1"),
            Vec::new(),
        )
        .await;
    assert!(is_conflict(&taken), "{taken:?}");
    assert!(store.get_run(&pb, "ask-2").await?.is_none());
    assert_eq!(all_events(store.as_ref(), &pb).await?.len(), 4);
    Ok(())
}

async fn a_request_closes_once(store: Arc<dyn Store>) -> Result<()> {
    let pb = with_playbook(store.as_ref()).await?;
    store
        .start_interaction(
            &pb,
            new_run("ask-1", "interaction", "approve"),
            vec![numbered("s1", 1)],
            new_request("req-1"),
            Vec::new(),
        )
        .await?;
    let expired = RequestClose {
        status: RequestStatus::Expired,
        answered_by: None,
        answer: None,
    };
    store
        .close_request(
            &pb,
            "req-1",
            expired,
            failed(),
            vec![numbered("s2", 2)],
            Vec::new(),
        )
        .await?;
    let again = store
        .close_request(
            &pb,
            "req-1",
            answered("bot"),
            succeeded(json!(1)),
            vec![numbered("s3", 3)],
            Vec::new(),
        )
        .await;
    assert_eq!(
        conflict_message(again),
        "the request req-1 is expired, not open"
    );
    let missing = store
        .close_request(
            &pb,
            "nope",
            answered("bot"),
            succeeded(json!(1)),
            Vec::new(),
            Vec::new(),
        )
        .await;
    assert!(is_not_found(&missing), "{missing:?}");
    let open = RequestClose {
        status: RequestStatus::Open,
        answered_by: None,
        answer: None,
    };
    assert!(is_conflict(
        &store
            .close_request(
                &pb,
                "req-1",
                open,
                succeeded(json!(1)),
                Vec::new(),
                Vec::new()
            )
            .await
    ));
    // Nothing of the refused closes was recorded.
    let request = store.get_request(&pb, "req-1").await?.unwrap();
    assert_eq!(request.status, RequestStatus::Expired);
    assert_eq!(request.answer, None);
    assert_eq!(all_events(store.as_ref(), &pb).await?.len(), 2);
    assert_eq!(
        run_of(store.as_ref(), &pb, "ask-1").await?.status,
        RunStatus::Failed
    );
    Ok(())
}

fn sent(event_id: &str) -> serde_json::Value {
    json!({"id": event_id, "type": "com.example.x", "source": "/callers/local", "data": {"n": event_id}})
}

async fn run_events_are_kept_once_in_the_order_received(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("w4", "workflow", "flow"),
            vec![numbered("w4-1", 1)],
        )
        .await?;
    let first = store
        .receive_run_event(&playbook, "w4", "b", sent("b"), work("event:b", None))
        .await?
        .expect("kept");
    assert_eq!((first.seq, first.event_id.as_str()), (1, "b"));
    assert_eq!(first.event, sent("b"));
    let second = store
        .receive_run_event(&playbook, "w4", "a", sent("a"), work("event:a", None))
        .await?
        .expect("kept");
    assert_eq!(second.seq, 2);
    assert!(second.received_at >= first.received_at);
    // The same id again changes nothing, and adds no work.
    let again = store
        .receive_run_event(&playbook, "w4", "b", sent("other"), work("event:b2", None))
        .await?;
    assert_eq!(again, None);
    let kept = store.list_run_inbox(&playbook, "w4").await?;
    let ids: Vec<(&str, i64)> = kept.iter().map(|e| (e.event_id.as_str(), e.seq)).collect();
    assert_eq!(ids, [("b", 1), ("a", 2)]);
    assert_eq!(kept[0], first);
    let claimed = store
        .claim_work(CLAIMER, Duration::from_secs(60), 10)
        .await?;
    let mut keys: Vec<&str> = claimed.iter().map(|w| w.key.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["event:a", "event:b"]);
    // Another run's inbox is its own.
    store
        .start_run(
            &playbook,
            new_run("w5", "workflow", "flow"),
            vec![numbered("w5-1", 1)],
        )
        .await?;
    let other = store
        .receive_run_event(&playbook, "w5", "b", sent("b"), work("event:b", None))
        .await?
        .expect("kept");
    assert_eq!(other.seq, 1);
    assert!(store.list_run_inbox(&playbook, "nobody").await?.is_empty());
    Ok(())
}

async fn run_events_go_only_to_started_runs(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let missing = store
        .receive_run_event(&playbook, "nobody", "e", sent("e"), work("event:e", None))
        .await;
    assert!(is_not_found(&missing), "{missing:?}");
    store
        .start_run(
            &playbook,
            new_run("w6", "workflow", "flow"),
            vec![numbered("w6-1", 1)],
        )
        .await?;
    store
        .end_run(
            &playbook,
            "w6",
            succeeded(json!(1)),
            vec![numbered("w6-2", 2)],
        )
        .await?;
    let ended = store
        .receive_run_event(&playbook, "w6", "e", sent("e"), work("event:e", None))
        .await;
    assert!(is_not_found(&ended), "{ended:?}");
    let elsewhere = store
        .receive_run_event(
            &PlaybookRef::new("acme", "nothing"),
            "w6",
            "e",
            sent("e"),
            work("event:e", None),
        )
        .await;
    assert!(is_not_found(&elsewhere), "{elsewhere:?}");
    assert!(store.list_run_inbox(&playbook, "w6").await?.is_empty());
    assert_eq!(store.next_work_due().await?, None);
    Ok(())
}

async fn concurrent_run_events_are_numbered_without_a_gap(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store
        .start_run(
            &playbook,
            new_run("w7", "workflow", "flow"),
            vec![numbered("w7-1", 1)],
        )
        .await?;
    let mut senders = Vec::new();
    for i in 0..16 {
        let store = store.clone();
        let playbook = playbook.clone();
        senders.push(tokio::spawn(async move {
            let id = format!("e{}", i % 8);
            store
                .receive_run_event(
                    &playbook,
                    "w7",
                    &id,
                    sent(&id),
                    work(&format!("event:{id}"), None),
                )
                .await
        }));
    }
    let mut kept = 0;
    for sender in senders {
        kept += usize::from(sender.await.expect("a sender")?.is_some());
    }
    assert_eq!(kept, 8);
    let seqs: Vec<i64> = store
        .list_run_inbox(&playbook, "w7")
        .await?
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=8).collect::<Vec<i64>>());
    Ok(())
}

/// Changes made at once (which SQLite commits together) are each kept or refused alone: a start
/// refused for its taken run id leaves nothing, not even the seqs it took, and the others are
/// all kept, numbered without a gap.
async fn concurrent_changes_stand_or_fall_each_alone(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    let mut starts = Vec::new();
    for i in 0..48 {
        let store = store.clone();
        let playbook = playbook.clone();
        starts.push(tokio::spawn(async move {
            // Every third start asks again for a run another start asks for.
            let run_id = format!("r{}", if i % 3 == 2 { i - 2 } else { i });
            let events = vec![
                numbered(&format!("start-{i}"), 1),
                numbered(&format!("step-{i}"), 2),
            ];
            store
                .start_run(&playbook, new_run(&run_id, "workflow", "flow"), events)
                .await
        }));
    }
    let (mut kept, mut refused) = (0, 0);
    for start in starts {
        match start.await.expect("a start") {
            Ok(_) => kept += 1,
            Err(StoreError::Conflict(_)) => refused += 1,
            Err(other) => return Err(other),
        }
    }
    assert_eq!((kept, refused), (32, 16));
    let events = store
        .list_events(&playbook, &EventFilter::default())
        .await?;
    let seqs: Vec<i64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=64).collect::<Vec<i64>>());
    let runs: HashSet<String> = events
        .iter()
        .filter_map(|event| event.run_id.clone())
        .collect();
    assert_eq!(runs.len(), 32);
    for run_id in &runs {
        let run = store.get_run(&playbook, run_id).await?.expect("a kept run");
        assert_eq!(run.last_run_seq, 2, "{run_id}");
    }
    Ok(())
}

/// Events of runs recorded at once (on SQLite a group of changes in one transaction), some
/// refused at their last event, after the events before it went in: a change refused leaves
/// none of its events, and the others stand, their events gapless in `seq`.
async fn concurrent_events_refused_part_way_leave_nothing(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    for i in 0..24 {
        let run_id = format!("r{i}");
        store
            .start_run(
                &playbook,
                new_run(&run_id, "workflow", "flow"),
                vec![numbered(&format!("start-{i}"), 1)],
            )
            .await?;
    }
    let mut records = Vec::new();
    for i in 0..24 {
        let store = store.clone();
        let playbook = playbook.clone();
        records.push(tokio::spawn(async move {
            // Every third asks for its run's first number again, in its last event.
            let last = if i % 3 == 2 { 1 } else { 4 };
            let events = vec![
                numbered(&format!("a-{i}"), 2),
                numbered(&format!("b-{i}"), 3),
                numbered(&format!("c-{i}"), last),
            ];
            store
                .record_run_events(&playbook, &format!("r{i}"), events)
                .await
        }));
    }
    let expected = "an event of the same run with the same number is already recorded in \
                    playbook acme/support";
    for (i, record) in records.into_iter().enumerate() {
        let recorded = record.await.expect("a record");
        if i % 3 == 2 {
            assert_eq!(conflict_message(recorded), expected, "r{i}");
        } else {
            assert_eq!(recorded?.len(), 3, "r{i}");
        }
    }
    let events = all_events(&*store, &playbook).await?;
    let seqs: Vec<i64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=24 + 16 * 3).collect::<Vec<i64>>());
    for i in 0..24 {
        let ids: Vec<&str> = events
            .iter()
            .filter(|event| event.run_id.as_deref() == Some(&format!("r{i}")))
            .map(|event| event.id.as_str())
            .collect();
        let run = run_of(&*store, &playbook, &format!("r{i}")).await?;
        if i % 3 == 2 {
            assert_eq!(ids, [format!("start-{i}")], "r{i}");
            assert_eq!(run.last_run_seq, 1, "r{i}");
        } else {
            let own = ["start", "a", "b", "c"].map(|name| format!("{name}-{i}"));
            assert_eq!(ids, own, "r{i}");
            assert_eq!(run.last_run_seq, 4, "r{i}");
        }
    }
    Ok(())
}

/// Whole runs of one playbook at once (on PostgreSQL those waiting together share a
/// statement and a commit) stand or fall each alone: one whose run's or child's id another
/// took is refused, naming it, and the rest are recorded, their events gapless in `seq`, each
/// run's in its own order, each child's ending under its caller.
async fn concurrent_whole_runs_stand_or_fall_each_alone(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_top_run(&*store).await?;
    let mut kept = HashSet::new();
    // A wave of runs none of which is refused, then a wave where every third is.
    for wave in [48..64, 0..48] {
        kept.extend(whole_runs_at_once(&store, &playbook, wave).await?);
    }
    assert_eq!(kept.len(), 48);
    let events = all_events(&*store, &playbook).await?;
    let seqs: Vec<i64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=1 + 3 * 48).collect::<Vec<i64>>());
    for i in 0..64 {
        let run = store.get_run(&playbook, &format!("w{i}")).await?;
        assert_eq!(run.is_some(), kept.contains(&i), "w{i}");
        let own = [format!("w{i}-1"), format!("c{i}-1"), format!("w{i}-2")];
        let ids: Vec<&str> = events
            .iter()
            .filter(|event| own.contains(&event.id))
            .map(|event| event.id.as_str())
            .collect();
        if kept.contains(&i) {
            assert_eq!(ids, own);
        } else {
            assert!(ids.is_empty(), "{ids:?}");
        }
    }
    // Each child recorded is under a caller that was.
    let mut children = 0;
    for j in 0..64 {
        if let Some(child) = store.get_run(&playbook, &format!("c{j}")).await? {
            let parent = child.parent_run_id.expect("the child's caller");
            assert!(
                run_of(&*store, &playbook, &parent).await.is_ok(),
                "{parent}"
            );
            children += 1;
        }
    }
    assert_eq!(children, 48);
    Ok(())
}

/// Commits the whole runs `w{i}` for `indices` at once, each with a child `c{i}`, but below 48
/// every third asks again for the child two before it; the indices of those recorded.
async fn whole_runs_at_once(
    store: &Arc<dyn Store>,
    playbook: &PlaybookRef,
    indices: std::ops::Range<usize>,
) -> Result<HashSet<usize>> {
    let mut commits = Vec::new();
    for i in indices {
        let store = store.clone();
        let playbook = playbook.clone();
        commits.push(tokio::spawn(async move {
            let child_id = format!("c{}", if i % 3 == 2 && i < 48 { i - 2 } else { i });
            let run_id = format!("w{i}");
            let mut first = step(None, json!({}));
            first.start = Some(new_run(&run_id, "workflow", "flow"));
            first.children = vec![ended_child(&child_id, &run_id, 1)];
            first.events = vec![
                numbered(&format!("w{i}-1"), 1),
                NewEvent {
                    run_id: Some(child_id.clone()),
                    ..numbered(&format!("c{i}-1"), 1)
                },
                numbered(&format!("w{i}-2"), 2),
            ];
            first.ending = Some(succeeded(json!({"i": i})));
            let committed = store
                .commit_workflow_step(&playbook, &run_id, first.into())
                .await;
            (i, child_id, committed)
        }));
    }
    let mut kept = HashSet::new();
    for commit in commits {
        let (i, child_id, committed) = commit.await.expect("a commit");
        match committed {
            Ok(committed) => {
                let run = committed.run.expect("the run as recorded");
                assert_eq!(
                    (run.run_id, run.output),
                    (format!("w{i}"), Some(json!({"i": i})))
                );
                kept.insert(i);
            }
            Err(StoreError::Conflict(message)) => {
                assert!(
                    message.contains(&format!("has a run {child_id}")),
                    "{message}"
                );
            }
            Err(other) => return Err(other),
        }
    }
    Ok(kept)
}

async fn requests_list_newest_first_by_status(store: Arc<dyn Store>) -> Result<()> {
    let pb = with_playbook(store.as_ref()).await?;
    for n in 0..3 {
        store
            .start_interaction(
                &pb,
                new_run(&format!("ask-{n}"), "interaction", "approve"),
                vec![numbered(&format!("s{n}"), 1)],
                new_request(&format!("req-{n}")),
                Vec::new(),
            )
            .await?;
    }
    store
        .close_request(
            &pb,
            "req-1",
            answered("bot"),
            succeeded(json!(1)),
            vec![numbered("a1", 2)],
            Vec::new(),
        )
        .await?;
    let ids = |requests: Vec<auto_store::Request>| {
        requests
            .into_iter()
            .map(|r| r.request_id)
            .collect::<Vec<_>>()
    };
    let all = store.list_requests(&pb, &RequestFilter::default()).await?;
    assert_eq!(ids(all), ["req-2", "req-1", "req-0"]);
    let open = RequestFilter {
        status: Some(RequestStatus::Open),
        ..RequestFilter::default()
    };
    assert_eq!(
        ids(store.list_requests(&pb, &open).await?),
        ["req-2", "req-0"]
    );
    let page = RequestFilter {
        limit: 1,
        after_request_id: Some("req-2".into()),
        ..RequestFilter::default()
    };
    assert_eq!(ids(store.list_requests(&pb, &page).await?), ["req-1"]);
    let unknown = RequestFilter {
        after_request_id: Some("nope".into()),
        ..RequestFilter::default()
    };
    assert!(store.list_requests(&pb, &unknown).await?.is_empty());
    let missing = store
        .list_requests(&PlaybookRef::new("acme", "nope"), &RequestFilter::default())
        .await;
    assert!(is_not_found(&missing), "{missing:?}");
    Ok(())
}

async fn views_are_kept_by_revision_and_replaced_by_a_newer_version(
    store: Arc<dyn Store>,
) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    assert_eq!(store.get_view(&playbook, "orders").await?, None);
    let view = |version: i64, view: serde_json::Value, folded_seq: i64| RecallView {
        name: "orders".into(),
        version,
        revision: 0,
        view,
        folded_seq,
        built: false,
        stalled: None,
        updated_at: chrono::Utc::now(),
    };
    // The first of a version is kept at revision 1; a second of the same version is not.
    let first = store
        .put_view(&playbook, &view(1, json!({}), 0), None)
        .await?
        .expect("kept");
    assert_eq!((first.revision, first.version, first.folded_seq), (1, 1, 0));
    assert_eq!(first.view, json!({}));
    assert!(
        store
            .put_view(&playbook, &view(1, json!([]), 0), None)
            .await?
            .is_none()
    );
    assert_eq!(
        store.get_view(&playbook, "orders").await?,
        Some(first.clone())
    );
    // A change names the revision it read: the first writer's is kept, the second's refused.
    let next = RecallView {
        view: json!({"2026-01": 2}),
        folded_seq: 7,
        built: true,
        ..first.clone()
    };
    let kept = store
        .put_view(&playbook, &next, Some(1))
        .await?
        .expect("kept");
    assert_eq!((kept.revision, kept.folded_seq, kept.built), (2, 7, true));
    assert_eq!(kept.view, json!({"2026-01": 2}));
    assert!(store.put_view(&playbook, &next, Some(1)).await?.is_none());
    // A stall is kept as written.
    let stalled = RecallView {
        stalled: Some(json!({"seq": 9, "error": "bad"})),
        ..kept.clone()
    };
    let kept = store
        .put_view(&playbook, &stalled, Some(2))
        .await?
        .expect("kept");
    assert_eq!(kept.stalled, Some(json!({"seq": 9, "error": "bad"})));
    // A change of another version's row is refused; a newer version replaces the row.
    assert!(
        store
            .put_view(&playbook, &view(2, json!({}), 0), Some(3))
            .await?
            .is_none()
    );
    let replaced = store
        .put_view(&playbook, &view(2, json!({}), 0), None)
        .await?
        .expect("replaced");
    assert_eq!(
        (replaced.version, replaced.folded_seq, replaced.revision),
        (2, 0, 4)
    );
    assert_eq!((replaced.built, replaced.stalled.clone()), (false, None));
    // An older version does not replace a newer one.
    assert!(
        store
            .put_view(&playbook, &view(1, json!({}), 0), None)
            .await?
            .is_none()
    );
    // Views are per playbook.
    store.create_playbook("acme", "other", None).await?;
    let other = PlaybookRef::new("acme", "other");
    assert_eq!(store.get_view(&other, "orders").await?, None);
    Ok(())
}

async fn views_are_listed_and_held_by_one_server_at_a_time(store: Arc<dyn Store>) -> Result<()> {
    let playbook = with_playbook(&*store).await?;
    store.create_playbook("acme", "other", None).await?;
    let other = PlaybookRef::new("acme", "other");
    let view = |name: &str, folded_seq: i64| RecallView {
        name: name.into(),
        version: 1,
        revision: 0,
        view: json!({"big": "not listed"}),
        folded_seq,
        built: folded_seq > 0,
        stalled: None,
        updated_at: chrono::Utc::now(),
    };
    assert!(store.list_views(None).await?.is_empty());
    let kept = store
        .put_view(&playbook, &view("orders", 0), None)
        .await?
        .expect("kept");
    store
        .put_view(&playbook, &view("customers", 4), None)
        .await?;
    let stalled = RecallView {
        stalled: Some(json!({"seq": 3, "error": "bad"})),
        ..view("refunds", 2)
    };
    store.put_view(&other, &stalled, None).await?;
    let heads = store.list_views(None).await?;
    let listed: Vec<_> = heads
        .iter()
        .map(|h| {
            (
                h.playbook.playbook.as_str(),
                h.name.as_str(),
                h.folded_seq,
                h.built,
                h.stalled,
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("other", "refunds", 2, true, true),
            ("support", "customers", 4, true, false),
            ("support", "orders", 0, false, false),
        ]
    );
    assert_eq!(store.list_views(Some(&other)).await?.len(), 1);
    // One holder at a time while its lease lives; the holder renews its own.
    let lease = std::time::Duration::from_secs(30);
    assert!(
        store
            .hold_view(&playbook, "orders", "server-a", lease)
            .await?
    );
    assert!(
        !store
            .hold_view(&playbook, "orders", "server-b", lease)
            .await?
    );
    assert!(
        store
            .hold_view(&playbook, "orders", "server-a", lease)
            .await?
    );
    // Holding leaves the view as it was, revision and all.
    assert_eq!(store.get_view(&playbook, "orders").await?, Some(kept));
    // A lease that ran out is taken over.
    let short = std::time::Duration::from_millis(50);
    assert!(
        store
            .hold_view(&playbook, "customers", "server-a", short)
            .await?
    );
    tokio::time::sleep(std::time::Duration::from_millis(120)).await;
    assert!(
        store
            .hold_view(&playbook, "customers", "server-b", lease)
            .await?
    );
    assert!(
        !store
            .hold_view(&playbook, "customers", "server-a", lease)
            .await?
    );
    // No view, nothing held.
    assert!(
        !store
            .hold_view(&playbook, "nope", "server-a", lease)
            .await?
    );
    assert!(!store.hold_view(&other, "orders", "server-a", lease).await?);
    Ok(())
}

/// An ended run with `events` events of its own.
async fn ended_run(store: &dyn Store, pb: &PlaybookRef, run_id: &str, events: i64) -> Result<()> {
    let numbered_events = (1..=events)
        .map(|n| numbered(&format!("{run_id}-{n}"), n))
        .collect();
    store
        .start_run(pb, new_run(run_id, "computation", "f"), numbered_events)
        .await?;
    store
        .end_run(pb, run_id, succeeded(json!(1)), vec![])
        .await?;
    Ok(())
}

/// A time just after every run ended so far, by the database's clock.
async fn after_now(store: &dyn Store) -> Result<chrono::DateTime<Utc>> {
    Ok(store.now().await? + chrono::Duration::seconds(1))
}

/// A purge removes ended runs with their events, a batch at a time, and leaves runs still
/// started, a child whose parent is started, the playbook's own events and its `last_seq`:
/// the next event is numbered after the highest ever given, and the log reads across holes.
async fn purges_remove_ended_runs_in_batches_and_keep_what_is_needed(
    store: Arc<dyn Store>,
) -> Result<()> {
    let pb = with_playbook(&*store).await?;
    store
        .append_events(&pb, vec![event("own-1", "order.placed")])
        .await?;
    ended_run(&*store, &pb, "old-1", 3).await?;
    ended_run(&*store, &pb, "old-2", 2).await?;
    store
        .start_run(
            &pb,
            new_run("going", "workflow", "flow"),
            vec![numbered("g1", 1)],
        )
        .await?;
    // A child that ended while its parent still runs: the parent may still read it.
    let child = NewRun {
        parent_run_id: Some("going".into()),
        parent_call_id: Some("call:/do/0/a#1".into()),
        root_run_id: Some("going".into()),
        ..new_run("going.a", "computation", "f")
    };
    store.start_run(&pb, child, vec![numbered("c1", 1)]).await?;
    store
        .end_run(&pb, "going.a", succeeded(json!(2)), vec![])
        .await?;
    store
        .append_events(&pb, vec![event("own-2", "order.placed")])
        .await?;
    let end = store.log_end(&pb).await?;
    assert_eq!(end, 9);

    // Nothing ended before the first run started.
    let before_any = chrono::DateTime::<Utc>::from_timestamp(0, 0).expect("a time");
    let none = store.purge_runs(&pb, before_any, 10).await?;
    assert_eq!(none, auto_store::Purged::default());

    let cut = after_now(&*store).await?;
    let first = store.purge_runs(&pb, cut, 1).await?;
    assert_eq!((first.runs, first.events), (1, 3), "the oldest run first");
    assert!(store.get_run(&pb, "old-1").await?.is_none());
    let second = store.purge_runs(&pb, cut, 1).await?;
    assert_eq!((second.runs, second.events), (1, 2));
    // Fewer than the batch: nothing is left to purge.
    assert_eq!(store.purge_runs(&pb, cut, 1).await?.runs, 0);
    assert!(store.get_run(&pb, "going").await?.is_some());
    assert!(store.get_run(&pb, "going.a").await?.is_some());

    let left: Vec<i64> = all_events(&*store, &pb)
        .await?
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(left, vec![1, 7, 8, 9], "holes where the purged events were");
    let after: Vec<i64> = store
        .list_events(
            &pb,
            &EventFilter {
                after_seq: Some(2),
                limit: 2,
                ..EventFilter::default()
            },
        )
        .await?
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(after, vec![7, 8], "a cursor inside a hole reads on");
    assert_eq!(store.log_end(&pb).await?, end, "last_seq stays");
    let next = store
        .append_events(&pb, vec![event("own-3", "order.placed")])
        .await?;
    assert_eq!(next[0].seq, end + 1, "a seq is never given twice");
    // An id of a purged run may start a new run.
    ended_run(&*store, &pb, "old-1", 1).await?;

    // Once the parent ended, its child goes with it.
    store
        .end_run(&pb, "going", succeeded(json!(3)), vec![])
        .await?;
    let last = store
        .purge_runs(&pb, after_now(&*store).await?, 100)
        .await?;
    assert_eq!((last.runs, last.events), (3, 3));
    assert!(is_not_found(
        &store
            .purge_runs(&PlaybookRef::new("acme", "nope"), cut, 1)
            .await
    ));
    Ok(())
}

/// A run with an event that a follower of the log has not read is kept: the view of an
/// active recall function (stalled or not), an event trigger's cursor, a listening task's.
async fn a_purge_waits_for_the_followers_of_the_log(store: Arc<dyn Store>) -> Result<()> {
    let pb = with_playbook(&*store).await?;
    let (recall, _) = store
        .create_definition(
            &pb,
            definition("recall", "orders", "src"),
            event("d1", "definition_created"),
        )
        .await?;
    assert_eq!(recall.key.name, "orders");
    ended_run(&*store, &pb, "a", 1).await?; // seq 2
    ended_run(&*store, &pb, "b", 1).await?; // seq 3
    let view = |folded_seq: i64, stalled: Option<serde_json::Value>| RecallView {
        name: "orders".into(),
        version: 1,
        revision: 0,
        view: json!({}),
        folded_seq,
        built: true,
        stalled,
        updated_at: Utc::now(),
    };
    // A stalled view that folded up to seq 2 holds back the run of seq 3.
    let kept = store
        .put_view(
            &pb,
            &view(2, Some(json!({"seq": 3, "error": "threw"}))),
            None,
        )
        .await?
        .expect("kept");
    let cut = after_now(&*store).await?;
    let purged = store.purge_runs(&pb, cut, 10).await?;
    assert_eq!(purged.runs, 1);
    assert!(store.get_run(&pb, "a").await?.is_none());
    assert!(store.get_run(&pb, "b").await?.is_some());
    // Once it folded on, the run goes.
    store
        .put_view(&pb, &view(3, None), Some(kept.revision))
        .await?
        .expect("kept");
    assert_eq!(store.purge_runs(&pb, cut, 10).await?.runs, 1);

    // A retired recall function's view holds nothing back.
    ended_run(&*store, &pb, "c", 1).await?; // seq 4
    store
        .retire_definition(
            &pb,
            &DefinitionKey::new("recall", "orders"),
            event("d2", "definition_retired"),
        )
        .await?;
    let purged = store.purge_runs(&pb, after_now(&*store).await?, 10).await?;
    assert_eq!(purged.runs, 1);
    Ok(())
}

/// Deleting a playbook is refused while a run of it is started, unless forced; then its
/// definitions, runs, log, requests and work are gone, no work item is left for the
/// scheduler, other playbooks keep theirs, and the id starts again empty.
async fn deleting_a_playbook_removes_everything_and_frees_its_id(
    store: Arc<dyn Store>,
) -> Result<()> {
    let pb = with_playbook(&*store).await?;
    store.create_playbook("acme", "other", None).await?;
    let other = PlaybookRef::new("acme", "other");
    store
        .create_definition(
            &pb,
            definition("workflow", "flow", "src"),
            event("d1", "definition_created"),
        )
        .await?;
    ended_run(&*store, &pb, "done", 2).await?;
    ended_run(&*store, &other, "kept", 1).await?;
    store
        .start_run(
            &pb,
            new_run("waits", "workflow", "flow"),
            vec![numbered("w1", 1)],
        )
        .await?;
    store
        .add_work(&pb, "waits", vec![work("timer:1", Some(3_600_000))])
        .await?;
    store
        .start_interaction(
            &pb,
            new_run("ask", "interaction", "approve"),
            vec![numbered("a1", 1)],
            new_request("req-1"),
            vec![work("expire", Some(60_000))],
        )
        .await?;
    assert_eq!(store.work_backlog().await?.items, 2);

    let refused = store.delete_playbook(&pb, false).await;
    assert!(conflict_message(refused).contains("2 runs still started"));
    assert!(
        store.get_run(&pb, "done").await?.is_some(),
        "nothing changed"
    );

    let deleted = store.delete_playbook(&pb, true).await?;
    assert_eq!(
        deleted,
        auto_store::Deleted {
            playbooks: 1,
            definitions: 1,
            runs: 3,
            started_runs: 2,
            events: 5,
        }
    );
    assert_eq!(store.work_backlog().await?.items, 0, "no work is left");
    assert_eq!(store.next_work_due().await?, None);
    assert!(store.get_playbook(&pb).await?.is_none());
    assert!(is_not_found(&store.log_end(&pb).await));
    assert!(is_not_found(&store.delete_playbook(&pb, true).await));
    assert!(store.get_run(&other, "kept").await?.is_some());

    // The id starts again empty.
    store.create_playbook("acme", "support", None).await?;
    assert_eq!(store.log_end(&pb).await?, 0);
    assert!(store.list_definitions(&pb, None).await?.is_empty());
    assert!(store.get_run(&pb, "done").await?.is_none());
    assert!(store.get_request(&pb, "req-1").await?.is_none());
    assert!(
        store
            .get_definition(&pb, &DefinitionKey::new("workflow", "flow"))
            .await?
            .is_none()
    );
    store
        .create_definition(
            &pb,
            definition("workflow", "flow", "new"),
            event("d1", "definition_created"),
        )
        .await?;
    ended_run(&*store, &pb, "done", 1).await?;
    assert_eq!(store.log_end(&pb).await?, 2);
    // Without runs going, no force is needed.
    let deleted = store.delete_playbook(&pb, false).await?;
    assert_eq!(
        (deleted.runs, deleted.started_runs, deleted.events),
        (1, 0, 2)
    );
    Ok(())
}

/// Deleting an org deletes each of its playbooks, refused while a run of one is started unless
/// forced; the id may be used again.
async fn deleting_an_org_removes_its_playbooks(store: Arc<dyn Store>) -> Result<()> {
    let pb = with_playbook(&*store).await?;
    store.create_playbook("acme", "other", None).await?;
    store.create_org("globex", None).await?;
    store.create_playbook("globex", "support", None).await?;
    let theirs = PlaybookRef::new("globex", "support");
    ended_run(&*store, &theirs, "kept", 1).await?;
    ended_run(&*store, &pb, "done", 1).await?;
    store
        .start_run(
            &PlaybookRef::new("acme", "other"),
            new_run("going", "workflow", "flow"),
            vec![],
        )
        .await?;
    assert!(is_conflict(&store.delete_org("acme", false).await));
    assert!(store.get_playbook(&pb).await?.is_some(), "nothing changed");
    let deleted = store.delete_org("acme", true).await?;
    assert_eq!(
        (deleted.playbooks, deleted.runs, deleted.started_runs),
        (2, 2, 1)
    );
    assert!(store.get_org("acme").await?.is_none());
    assert!(is_not_found(&store.list_playbooks("acme").await));
    assert!(is_not_found(&store.delete_org("acme", true).await));
    assert!(store.get_run(&theirs, "kept").await?.is_some());
    store.create_org("acme", None).await?;
    assert!(store.list_playbooks("acme").await?.is_empty());
    Ok(())
}

/// Purges in batches while runs start, record and end beside them: every change stands, the
/// runs left are whole (their events all there), and the log's seqs only grow.
async fn a_purge_during_activity_keeps_the_log_consistent(store: Arc<dyn Store>) -> Result<()> {
    let pb = with_playbook(&*store).await?;
    for n in 0..40 {
        ended_run(&*store, &pb, &format!("old-{n}"), 3).await?;
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
    let cut = store.now().await?;
    let writer = {
        let store = store.clone();
        let pb = pb.clone();
        tokio::spawn(async move {
            for n in 0..40 {
                ended_run(&*store, &pb, &format!("new-{n}"), 3).await?;
            }
            Result::<()>::Ok(())
        })
    };
    let mut purged = auto_store::Purged::default();
    loop {
        let batch = store.purge_runs(&pb, cut, 7).await?;
        purged.add(&batch);
        if batch.runs < 7 {
            break;
        }
    }
    writer.await.expect("the writer")?;
    assert_eq!((purged.runs, purged.events), (40, 120));
    let events = all_events(&*store, &pb).await?;
    assert_eq!(events.len(), 120);
    assert!(events.windows(2).all(|w| w[0].seq < w[1].seq));
    for n in 0..40 {
        let run_id = format!("new-{n}");
        let of_run = events
            .iter()
            .filter(|e| e.run_id.as_deref() == Some(&run_id))
            .count();
        assert_eq!(of_run, 3, "{run_id} is whole");
    }
    assert_eq!(store.log_end(&pb).await?, 240);
    Ok(())
}
