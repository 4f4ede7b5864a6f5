//! Interaction requests: the run that leaves one in the inbox, its close with the run's ending,
//! and the reads of the inbox.

use sqlx::types::Json;

use super::rows::request_from_row;
use super::runs::{end_run_in, insert_run};
use super::work::{delete_work_keys, insert_work};
use super::{SqlStore, insert_events, reserve_seqs};
use crate::dialect::{Dialect, StoredTime, built_sql, sql};
use crate::shared::{
    check_close_status, check_ending_status, request_change_refused, request_columns, run_events,
};
use crate::{
    NewEvent, NewRequest, NewRun, NewWork, PlaybookRef, Request, RequestClose, Result, Run,
    RunEnding, StoreError,
};

/// The request an interaction's run leaves in the inbox, and the work that goes with it (its
/// expiry).
pub(super) struct LeftRequest {
    pub(super) request: NewRequest,
    pub(super) work: Vec<NewWork>,
}

pub(super) async fn start_interaction<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    new: NewRun,
    events: Vec<NewEvent>,
    left: LeftRequest,
) -> Result<(Run, Request)> {
    let LeftRequest { request, work } = left;
    let (events, last_run_seq) = run_events(&new.run_id, events)?;
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
    let run = insert_run(&mut tx, playbook, &reserved, &new, last_run_seq).await?;
    let row = sql::<D>(concat!(
        "INSERT INTO requests (playbook_pk, request_id, run_id, def_type, name, \
         definition_version, to_whom, message, input, output_schema, status, created_at, \
         expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11, $12) \
         ON CONFLICT DO NOTHING RETURNING ",
        request_columns!()
    ))
    .bind(reserved.playbook_pk)
    .bind(request.request_id.as_str())
    .bind(new.run_id.as_str())
    .bind(new.key.def_type.as_str())
    .bind(new.key.name.as_str())
    .bind(new.definition_version)
    .bind(request.to.as_str())
    .bind(request.message.as_str())
    .bind(Json(&request.input))
    .bind(request.output_schema.as_ref().map(Json))
    .bind(&reserved.now.stored)
    .bind(D::Time::from_time(request.expires_at))
    .fetch_optional(&mut tx)
    .await?;
    let Some(row) = row else {
        return Err(StoreError::Conflict(format!(
            "the playbook {}/{} has a request {}",
            playbook.org, playbook.playbook, request.request_id
        )));
    };
    let request = request_from_row(&row)?;
    insert_events(&mut tx, playbook, &reserved, events).await?;
    insert_work(
        &mut tx,
        reserved.playbook_pk,
        &new.run_id,
        &reserved.now,
        &work,
    )
    .await?;
    tx.commit().await?;
    Ok((run, request))
}

/// How `close_request` closes a request and ends its run.
pub(super) struct Closing {
    pub(super) close: RequestClose,
    pub(super) ending: RunEnding,
    /// The keys of the run's work that goes with the request (its expiry).
    pub(super) done_work: Vec<String>,
}

pub(super) async fn close<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    request_id: &str,
    closing: Closing,
    events: Vec<NewEvent>,
) -> Result<(Request, Run)> {
    let Closing {
        close,
        ending,
        done_work,
    } = closing;
    check_close_status(&close, request_id)?;
    check_ending_status(ending.status, request_id)?;
    let mut tx = store.begin().await?;
    // The playbook's seqs first, as every change takes them: its row is the lock.
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
    let playbook_pk = reserved.playbook_pk;
    let row = sql::<D>(concat!(
        "UPDATE requests SET status = $3, answered_by = $4, answer = $5, closed_at = $6 \
         WHERE playbook_pk = $1 AND request_id = $2 AND status = 'open' RETURNING ",
        request_columns!()
    ))
    .bind(playbook_pk)
    .bind(request_id)
    .bind(close.status.as_str())
    .bind(close.answered_by.as_deref())
    .bind(close.answer.as_ref().map(Json))
    .bind(&reserved.now.stored)
    .fetch_optional(&mut tx)
    .await?;
    let Some(row) = row else {
        let stored: Option<String> =
            sql::<D>("SELECT status FROM requests WHERE playbook_pk = $1 AND request_id = $2")
                .bind(playbook_pk)
                .bind(request_id)
                .scalar_optional(&mut tx)
                .await?;
        return Err(request_change_refused(playbook, request_id, stored));
    };
    let request = request_from_row(&row)?;
    let run_id = request.run_id.as_str();
    let (events, last_run_seq) = run_events(run_id, events)?;
    let run = end_run_in(&mut tx, playbook, &reserved, run_id, &ending, last_run_seq).await?;
    insert_events(&mut tx, playbook, &reserved, events).await?;
    delete_work_keys(&mut tx, playbook_pk, run_id, &done_work).await?;
    tx.commit().await?;
    Ok((request, run))
}

/// The request whose `column` (its id, or its run's) is `value`.
pub(super) async fn request_where<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    column: &'static str,
    value: &str,
) -> Result<Option<Request>> {
    // Invariant: `column` is one of two fixed names, never the caller's text.
    debug_assert!(matches!(column, "request_id" | "run_id"));
    let text = format!(
        concat!(
            "SELECT ",
            request_columns!(),
            " FROM requests WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 \
             AND id = $2) AND {} = $3"
        ),
        column
    );
    built_sql::<D>(text)
        .bind_playbook(playbook)
        .bind(value)
        .fetch_optional_as(&store.reader, request_from_row)
        .await
}
