//! Posting an interaction's request to the webhook its `notify` names (supplement §7): "the
//! request is posted there; a delivery that fails three times ends the run `unanswered`, kind
//! `undelivered`".
//!
//! Each attempt is a work item of the run (`deliver-1`, `deliver-2`, `deliver-3`), so a
//! delivery outlasts a restart and any server may carry it out. The first is recorded with the
//! request itself, in the transaction that opens it. An attempt posts, records how it went in
//! the run's history (`request_delivered` or `request_delivery_failed`), adds the next attempt
//! after its delay, and removes its own item, in that order: a server that stops between two of
//! those steps leaves an item that is claimed again, finds its attempt recorded, and only
//! finishes what was left. So a request is posted at least once per attempt and at most once
//! more when a server stops between posting and recording; the `Idempotency-Key` header (the
//! request id) lets the receiver fold that one.
//!
//! An answer does not wait for the delivery: a request answered (or expired, or cancelled)
//! before an attempt is due closes with its run, and the close removes the attempts left.

use auto_store::{EventFilter, NewWork, PlaybookRef, Request, RequestStatus, Run, Work};
use serde_json::{Value, json};

use crate::interaction_runs::{Closing, request_out, title};
use crate::problem::{Problem, Reason};
use crate::reasoning_runs::Recorder;
use crate::runs::rejection;
use crate::service::{Service, store_problem};
use crate::webhooks::{Attempt, DELIVERY_ATTEMPTS_MAX};
use crate::work::{Delivery, Order, WorkItem};

/// The key of a delivery attempt among its run's work.
pub fn deliver_key(attempt: u32) -> String {
    format!("deliver-{attempt}")
}

/// The keys of every attempt a run may have waiting, which a close of its request removes.
pub fn deliver_keys() -> Vec<String> {
    (1..=DELIVERY_ATTEMPTS_MAX).map(deliver_key).collect()
}

/// The work of attempt `attempt` to post `request_id` to `webhook`, due at `due_at` (at once
/// when `None`).
pub fn delivery_work(
    request_id: &str,
    webhook: &str,
    attempt: u32,
    due_at: Option<chrono::DateTime<chrono::Utc>>,
) -> NewWork {
    let delivery = Order::DeliverRequest(Delivery {
        request_id: request_id.to_owned(),
        webhook: webhook.to_owned(),
        attempt,
    });
    WorkItem::from(delivery).to_work(deliver_key(attempt), due_at)
}

/// What the webhook receives: the request as the inbox shows it, with the org and playbook it
/// belongs to and how to answer it (`answer_interaction`, over HTTP or MCP).
pub fn delivery_body(pb: &PlaybookRef, request: &Request) -> Value {
    let mut body = serde_json::to_value(request_out(request)).unwrap_or_else(|_| json!({}));
    body["org"] = json!(pb.org);
    body["playbook"] = json!(pb.playbook);
    body["how_to_answer"] = json!({
        "operation": "answer_interaction",
        "method": "POST",
        "path": format!(
            "/v1/orgs/{}/playbooks/{}/requests/{}/answer",
            pb.org, pb.playbook, request.request_id
        ),
        "body": { "answer": "a JSON value that matches output_schema" },
    });
    body
}

impl Service {
    /// The scheduler's delivery attempt of a request: its work item fell due.
    pub(crate) async fn deliver_request(
        &self,
        item: &Work,
        order: &Delivery,
    ) -> Result<(), Problem> {
        let pb = &item.playbook;
        let (request_id, webhook) = (order.request_id.as_str(), order.webhook.as_str());
        let attempt = order.attempt;
        let request = self
            .store
            .get_request(pb, request_id)
            .await
            .map_err(store_problem)?;
        let open = request.filter(|r| r.status == RequestStatus::Open);
        let run = match &open {
            Some(request) => self
                .store
                .get_run(pb, &request.run_id)
                .await
                .map_err(store_problem)?,
            None => None,
        };
        let (Some(request), Some(run)) = (open, run) else {
            // Closed meanwhile: nobody needs to be told any more.
            return self.store.finish_work(item.id).await.map_err(store_problem);
        };
        let outcome = match self.recorded_attempt(pb, &run, attempt).await? {
            Some(recorded) => recorded,
            None => {
                let attempt_of = self.post_once(pb, &request, webhook).await;
                let recorded = self
                    .record_attempt(pb, &run, &request, webhook, attempt, &attempt_of)
                    .await;
                if let Err(problem) = recorded {
                    // The run ended meanwhile (an answer came first): the attempt is spent.
                    if problem.kind.as_deref() == Some("taken") {
                        return self.store.finish_work(item.id).await.map_err(store_problem);
                    }
                    return Err(problem);
                }
                attempt_of.failure
            }
        };
        if let Some(failure) = outcome {
            if attempt >= DELIVERY_ATTEMPTS_MAX {
                self.undelivered(pb, &request, webhook, &failure).await?;
            } else {
                let delay = self
                    .models
                    .webhooks
                    .get(webhook)
                    .map(|hook| hook.delay_before(attempt + 1))
                    .unwrap_or_else(|| {
                        std::time::Duration::from_millis(
                            crate::webhooks::WEBHOOK_RETRY_DELAY_MS_DEFAULT,
                        )
                    });
                let due = self.store.now().await.map_err(store_problem)?
                    + chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::zero());
                let next = delivery_work(request_id, webhook, attempt + 1, Some(due));
                self.store
                    .add_work(pb, &run.run_id, vec![next])
                    .await
                    .map_err(store_problem)?;
                self.scheduler.wake();
            }
        }
        self.store.finish_work(item.id).await.map_err(store_problem)
    }

    /// How attempt `attempt` went when the run recorded it already (a server stopped after
    /// recording it): `Some(None)` delivered, `Some(Some(why))` failed, `None` not recorded.
    async fn recorded_attempt(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        attempt: u32,
    ) -> Result<Option<Option<String>>, Problem> {
        let filter = EventFilter {
            run_id: Some(run.run_id.clone()),
            ..EventFilter::default()
        };
        let events = self
            .store
            .list_events(pb, &filter)
            .await
            .map_err(store_problem)?;
        Ok(events.iter().find_map(|event| {
            let data = event.data.as_ref()?;
            (data["attempt"] == json!(attempt)).then_some(())?;
            match event.event_type.as_str() {
                "request_delivered" => Some(None),
                "request_delivery_failed" => Some(Some(
                    data["message"].as_str().unwrap_or_default().to_owned(),
                )),
                _ => None,
            }
        }))
    }

    /// Posts the request once to the webhook, or fails without posting when the operator no
    /// longer configures it.
    async fn post_once(&self, pb: &PlaybookRef, request: &Request, webhook: &str) -> Attempt {
        match self.models.webhooks.get(webhook) {
            Some(hook) => {
                let body = delivery_body(pb, request);
                let timestamp = chrono::Utc::now().timestamp();
                hook.post(
                    &self.models.webhook_client,
                    &body,
                    &request.request_id,
                    timestamp,
                )
                .await
            }
            None => Attempt {
                status: None,
                failure: Some(format!("the webhook {webhook} is no longer configured")),
                duration_ms: 0,
            },
        }
    }

    /// Records one attempt in the run's history. `taken` when the run has ended.
    async fn record_attempt(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        request: &Request,
        webhook: &str,
        attempt: u32,
        outcome: &Attempt,
    ) -> Result<(), Problem> {
        let mut data = json!({
            "request_id": request.request_id,
            "webhook": webhook,
            "attempt": attempt,
            "status": outcome.status,
            "duration_ms": outcome.duration_ms,
        });
        let event_type = match &outcome.failure {
            None => "request_delivered",
            Some(failure) => {
                data["message"] = json!(failure);
                "request_delivery_failed"
            }
        };
        let mut recorder = Recorder::new(self.store.as_ref(), pb, run);
        recorder.record_following(event_type, data, None).await
    }

    /// The third failure: the request `undelivered`, its run rejected `unanswered`, kind
    /// `undelivered`. A request closed meanwhile stands as it closed.
    async fn undelivered(
        &self,
        pb: &PlaybookRef,
        request: &Request,
        webhook: &str,
        failure: &str,
    ) -> Result<(), Problem> {
        let closed = self
            .close(pb, request, RequestStatus::Undelivered, |run| {
                let problem = Problem::new(
                    Reason::Unanswered,
                    title(&run.key.name, "was not answered"),
                    format!(
                        "The request {} to {} could not be delivered to the webhook {webhook}: its {DELIVERY_ATTEMPTS_MAX} attempts failed, the last because {failure}.",
                        request.request_id, request.to
                    ),
                )
                .with_kind("undelivered");
                Closing::without_answer(
                    rejection(problem, &run.run_id),
                    json!({ "request_id": request.request_id, "webhook": webhook }),
                )
            })
            .await;
        match closed {
            Ok(_) => Ok(()),
            Err(problem) if problem.reason == Reason::Conflict => Ok(()),
            Err(problem) => Err(problem),
        }
    }
}
