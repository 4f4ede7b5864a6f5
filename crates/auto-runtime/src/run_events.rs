//! `send_run_event`: an event sent to a workflow run, for its `listen` tasks (workflow page,
//! "Waiting for events").
//!
//! The event is checked as `publish_event` checks one (the same limits and words), kept in the
//! run's inbox under its id, and handed to the run as an input through the work queue, in one
//! transaction: so it outlasts a restart, and whichever server claims the work applies it. An
//! id the run has received before is ignored and still answered 202, so a sender can retry.
//! The engine keeps the event in the run's snapshot until a listen task takes it.

use auto_store::{PlaybookRef, RunStatus, StoreError};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::api::{EventIn, RunEventOut};
use crate::auth::{Caller, Permission};
use crate::events;
use crate::problem::Problem;
use crate::service::{Service, store_problem};

/// The event as the run receives it: CloudEvents JSON with `specversion`, `id` (a new one when
/// left out), `type`, `source` (`/callers/<caller>` when left out: "An event sent to the run
/// without a source gets the source /callers/ and the sender's caller id"), `time` (the time
/// it was received when left out), the optional attributes that were sent, and `caller`.
pub fn sent_to_run(
    caller: &Caller,
    body: Map<String, Value>,
    now: DateTime<Utc>,
) -> Result<Value, Problem> {
    let checked = events::published(caller, body)?;
    let mut event = Map::new();
    event.insert("specversion".into(), json!("1.0"));
    event.insert("id".into(), json!(checked.id));
    event.insert("type".into(), json!(checked.event_type));
    event.insert("source".into(), json!(checked.source));
    if let Some(subject) = checked.subject {
        event.insert("subject".into(), json!(subject));
    }
    let time = checked.time.unwrap_or(now);
    event.insert(
        "time".into(),
        json!(time.to_rfc3339_opts(SecondsFormat::Millis, true)),
    );
    if let Some(content_type) = checked.datacontenttype {
        event.insert("datacontenttype".into(), json!(content_type));
    }
    if let Some(data) = checked.data {
        event.insert("data".into(), data);
    }
    for (name, value) in checked.extensions {
        // The depth of a published event counts chains of triggers, which a run's own
        // event does not start.
        if name != "depth" {
            event.insert(name, value);
        }
    }
    Ok(Value::Object(event))
}

fn no_run(pb: &PlaybookRef, run_id: &str) -> Problem {
    Problem::not_found(format!("The playbook {} has no run {run_id}.", pb.playbook))
}

fn ended(run_id: &str) -> Problem {
    let mut problem = Problem::not_found(format!(
        "The run {run_id} has ended; it takes no more events."
    ));
    problem.run_id = Some(run_id.to_owned());
    problem
}

impl Service {
    /// Whether the run received an event of this id, while it was going.
    async fn received_before(
        &self,
        pb: &PlaybookRef,
        run_id: &str,
        id: &str,
    ) -> Result<bool, Problem> {
        let inbox = self
            .store
            .list_run_inbox(pb, run_id)
            .await
            .map_err(store_problem)?;
        Ok(inbox.iter().any(|received| received.event_id == id))
    }

    /// Sends an event to a workflow run that has not ended: 202 with its id, also when the run
    /// received that id before, even if it has ended since (a sender's retry). `not_found` for
    /// an unknown run, a run that ended, or a run of another type, which takes no events.
    pub async fn send_run_event(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        run_id: &str,
        body: EventIn,
    ) -> Result<RunEventOut, Problem> {
        caller.require(&pb.org, Permission::Run)?;
        self.require_playbook(pb).await?;
        let event = sent_to_run(caller, body.0, Utc::now())?;
        let run = self
            .store
            .get_run(pb, run_id)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| no_run(pb, run_id))?;
        if !crate::workflow_runs::is_workflow(&run.key.def_type) {
            return Err(Problem::not_found(format!(
                "The run {run_id} is a run of the {} {}, which takes no events; send events to a workflow run.",
                run.key.def_type, run.key.name
            )));
        }
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        let duplicate = RunEventOut {
            run_id: run_id.to_owned(),
            id: id.clone(),
            duplicate: true,
        };
        if run.status != RunStatus::Started {
            // A retry of an event the run received before it ended is answered as a retry.
            return match self.received_before(pb, run_id, &id).await? {
                true => Ok(duplicate),
                false => Err(ended(run_id)),
            };
        }
        let work = crate::workflow_runs::event_work(&id, event.clone());
        let kept = match self
            .store
            .receive_run_event(pb, run_id, &id, event, work)
            .await
        {
            Ok(kept) => kept,
            // The run ended between the read and the receipt.
            Err(StoreError::NotFound(_)) => {
                return match self.received_before(pb, run_id, &id).await? {
                    true => Ok(duplicate),
                    false => Err(ended(run_id)),
                };
            }
            Err(other) => return Err(store_problem(other)),
        };
        if kept.is_some() {
            self.scheduler.wake();
        }
        Ok(RunEventOut {
            run_id: run_id.to_owned(),
            id,
            duplicate: kept.is_none(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sent_event_gets_its_source_time_and_caller() {
        let now = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc);
        let body = json!({"type": "com.example.x", "id": "e1", "data": {"n": 1}, "region": "eu"});
        let event = sent_to_run(&Caller::local(), body.as_object().unwrap().clone(), now).unwrap();
        assert_eq!(
            event,
            json!({
                "specversion": "1.0", "id": "e1", "type": "com.example.x",
                "source": "/callers/local", "time": "2026-01-02T03:04:05.678Z",
                "data": {"n": 1}, "region": "eu", "caller": "local",
            })
        );
        let body = json!({"type": "com.example.x", "source": "https://example.com", "time": "2026-04-01T09:30:00+02:00"});
        let event = sent_to_run(&Caller::local(), body.as_object().unwrap().clone(), now).unwrap();
        assert_eq!(event["source"], "https://example.com");
        assert_eq!(event["time"], "2026-04-01T07:30:00.000Z");
        assert!(event["id"].as_str().is_some_and(|id| !id.is_empty()));
    }
}
