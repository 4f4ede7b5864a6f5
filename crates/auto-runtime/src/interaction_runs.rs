//! Interaction runs that ask a person (supplement §7): a run checks its input, renders `to` and
//! the body, and leaves a request in the playbook's inbox, all recorded in one transaction with
//! the work item that expires it. The run stays `started` until one of three endings closes the
//! request and ends the run together, in one store transaction through the store's own run
//! ending:
//!
//! - `answer_interaction` with an answer that matches the output contract: `succeeded`, the
//!   answer as output;
//! - the expiry, a work item due at `expires_at` that any server's scheduler takes: rejected
//!   `unanswered`, kind `expired`;
//! - `cancel_run` (or a workflow that stops waiting): rejected `cancelled`.
//!
//! Nothing is held in memory while a request is open, so a request outlasts a restart, and
//! several servers on one database share the inbox.

use auto_engine::definitions::DefinitionType;
use auto_engine::interaction::{
    Asks, InteractionDocument, RenderClock, RenderedPart, check_interaction, render_request,
};
use auto_engine::workflow::RUN_DURATION_MS_MAX;
use auto_schema::{CompiledSchema, check_shape, json_bytes};
use auto_store::{
    DefinitionKey, DefinitionVersion, NewRequest, PlaybookRef, Request, RequestClose,
    RequestFilter, RequestStatus, Run, RunEnding, RunStatus, StoreError, Work,
};
use serde_json::{Value, json};

use crate::api::{AnswerInteraction, RequestDefinition, RequestList, RequestOut};
use crate::auth::{Caller, Permission};
use crate::documents::Checked;
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::reasoning_runs::CancelOrder;
use crate::runner::Runner;
use crate::runs::{
    Ask, OUTPUT_BYTES_MAX, RunAnswer, answer_of, ending_fact, fact, new_run, rejection, run_fact,
    started_fact, taken,
};
use crate::service::{Service, store_problem};
use crate::work::{Expiry, Order, WorkItem};

pub(crate) mod core;

use self::core::{Happening, RequestStep, after_lost_close, close_event, request_step};

/// The key of a request's expiry among its run's work.
pub const EXPIRE_KEY: &str = "expire";
/// The requests a listing returns unless `limit` says otherwise.
pub const REQUESTS_PAGE_DEFAULT: u32 = 50;
/// How often a close is tried again when another change of the run took its number first.
const CLOSE_TRIES: usize = 4;

/// How `value` misses an interaction's output contract (its schema, then its shape's rules),
/// each issue under `/{what}` (`answer` for a person's answer, `output` for a tool's result).
pub(crate) fn contract_issues(
    schema: Option<&Value>,
    shape: Option<&str>,
    value: &Value,
    what: &str,
) -> Result<Vec<ProblemIssue>, Problem> {
    let mut found = Vec::new();
    // A shape's schema is checked by `check_shape`, which lets an optional field be left out.
    if let Some(schema) = schema.filter(|_| shape.is_none()) {
        let compiled = CompiledSchema::compile(schema).map_err(|e| Problem::internal(&e))?;
        found = compiled.validate(value);
    }
    if found.is_empty()
        && let Some(shape) = shape
    {
        found = check_shape(shape, value);
    }
    let found = found
        .iter()
        .map(|issue| {
            let message = if issue.pointer.is_empty() {
                format!("{what}: {}", issue.answer_message())
            } else {
                issue.input_message()
            };
            (format!("/{what}{}", issue.pointer), message)
        })
        .collect();
    // At most 20 issues, then one line that counts the rest, as an input's.
    Ok(auto_schema::shown_issues(found, &format!("/{what}"))
        .into_iter()
        .map(|(pointer, message)| ProblemIssue::field(pointer, message))
        .collect())
}

/// A request as the API shows it.
pub fn request_out(request: &Request) -> RequestOut {
    RequestOut {
        request_id: request.request_id.clone(),
        run_id: request.run_id.clone(),
        definition: RequestDefinition {
            def_type: request.key.def_type.clone(),
            name: request.key.name.clone(),
            version: request.definition_version,
        },
        to: request.to.clone(),
        message: request.message.clone(),
        input: request.input.clone(),
        output_schema: request.output_schema.clone(),
        status: request.status.as_str().into(),
        created_at: request.created_at,
        expires_at: request.expires_at,
        answered_by: request.answered_by.clone(),
        answer: request.answer.clone(),
    }
}

/// Reads a saved interaction document again. A save checked `expires` against the limit of
/// its day; a run reads it under the widest limit a deployment may set, so a document saved
/// under a longer `WORKFLOW_MAX_DURATION` still runs.
pub fn saved_interaction(source: &str) -> Option<InteractionDocument> {
    check_interaction(source, RUN_DURATION_MS_MAX).ok()
}

pub(crate) fn title(name: &str, what: &str) -> String {
    format!("The interaction function {name} {what}")
}

/// The title of a problem of `run`, which waits on a request: an interaction's, or a
/// prediction's whose series a person uploads.
fn run_title(run: &Run, what: &str) -> String {
    format!("The {} function {} {what}", run.key.def_type, run.key.name)
}

/// The words of a refusal to act on a request that is no longer open.
fn closed_words(request: &Request) -> String {
    let id = &request.request_id;
    match request.status {
        RequestStatus::Answered => format!(
            "The request {id} was already answered by {}; a request takes one answer.",
            request.answered_by.as_deref().unwrap_or("someone")
        ),
        RequestStatus::Expired => format!(
            "The request {id} expired unanswered at {}; it takes no answer now.",
            request
                .expires_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        RequestStatus::Cancelled => {
            format!("The request {id} was cancelled with its run; it takes no answer now.")
        }
        RequestStatus::Undelivered => format!(
            "The request {id} could not be delivered and its run ended; it takes no answer now."
        ),
        RequestStatus::Open => format!("The request {id} is open."),
    }
}

pub(crate) fn not_open(request: &Request) -> Problem {
    Problem::conflict("The request is not open", closed_words(request))
}

/// The refusal of an answer that misses what the request asks for; the request stays open.
pub(crate) fn answer_refused(request_id: &str, issues: Vec<ProblemIssue>) -> Problem {
    let detail = issues
        .iter()
        .map(|i| i.message.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    Problem::invalid_input(
        "The answer does not match what the request asks for",
        format!("The request {request_id} stays open; answer again: {detail}"),
    )
    .with_issues(issues)
}

/// How a request closes: its run's ending, the data of the request's event, and the answer
/// with who gave it.
pub(crate) struct Closing {
    pub(crate) ending: RunEnding,
    pub(crate) data: Value,
    pub(crate) answer: Option<Value>,
    pub(crate) answered_by: Option<String>,
    /// The run's facts between the request's event and its ending (a prediction's build).
    pub(crate) facts: Vec<(&'static str, Value)>,
}

impl Closing {
    pub(crate) fn without_answer(ending: RunEnding, data: Value) -> Self {
        Self {
            ending,
            data,
            answer: None,
            answered_by: None,
            facts: Vec::new(),
        }
    }
}

/// A person's request, rendered and ready to open.
pub(crate) struct Prepared {
    pub(crate) to: String,
    pub(crate) message: String,
    pub(crate) expires_ms: u64,
    /// The webhook `notify` names, which the operator configured.
    pub(crate) webhook: Option<String>,
}

/// The refusal of a run whose `notify` names a webhook the operator did not configure, naming
/// those configured.
fn webhook_not_configured(
    name: &str,
    webhook: &str,
    webhooks: &crate::webhooks::Webhooks,
) -> Problem {
    let configured = match webhooks.names().as_slice() {
        [] => "No webhook is configured.".to_owned(),
        names => format!("The webhooks configured: {}.", names.join(", ")),
    };
    Problem::new(
        Reason::Unavailable,
        title(name, "cannot notify"),
        format!(
            "The webhook {webhook} that notify names is not configured, so nobody was asked; ask the operator to configure it under [webhooks.{webhook}]. {configured}"
        ),
    )
    .with_kind("webhook_not_configured")
}

/// The runner of interaction functions. "A workflow runs once for each run id", and so does an
/// interaction: its request was asked once, and asking again is a new run; a request under
/// the id of a recorded run gets the run as it stands.
pub(crate) struct Interactions;

impl Runner for Interactions {
    async fn begin(
        &self,
        service: &Service,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Result<RunAnswer, Problem> {
        service
            .begin_interaction(caller, pb, key, ask, definition)
            .await
    }

    async fn again(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        _: &DefinitionKey,
        run: Run,
    ) -> Result<RunAnswer, Problem> {
        // A tool interaction whose attempt stopped with its server goes on from what it
        // recorded; a person's request waits on its own.
        if run.status == RunStatus::Started
            && let Some(answer) = service.resume_tool_interaction(pb, &run).await?
        {
            return Ok(answer);
        }
        Ok(answer_of(&run))
    }

    async fn cancel(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        service
            .cancel_interaction(pb, run, words, kind.unwrap_or("requested"))
            .await
            .map_err(|mut problem| {
                problem.run_id = Some(run.run_id.clone());
                problem
            })
    }
}

impl Service {
    /// A new interaction run: a tool interaction calls its tool; a person's request is
    /// recorded, delivered and waited for.
    async fn begin_interaction(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Result<RunAnswer, Problem> {
        let checked = self.checked(pb, key, definition.version, &definition.source);
        let Some(document) = checked.as_deref().and_then(Checked::interaction) else {
            let ending = Problem::conflict(
                title(&key.name, "no longer parses"),
                "Its document no longer passes the checks of this runtime; save a new version.",
            );
            return self
                .start_and_end(caller, pb, key, definition.version, ask, ending)
                .await;
        };
        if let Asks::Tool { .. } = &document.asks {
            return self
                .tool_interaction(caller, pb, key, definition.version, ask, document)
                .await;
        }
        match self.prepare_request(key, document, &ask.input).await {
            Ok(prepared) => {
                let schema = document.output_schema.clone();
                self.ask_person(caller, pb, key, ask, definition.version, schema, prepared)
                    .await
            }
            Err(problem) => {
                self.start_and_end(caller, pb, key, definition.version, ask, problem)
                    .await
            }
        }
    }

    /// Records a new run with its request to a person (whose answer `output_schema` checks),
    /// the request's expiry and its first delivery, in one transaction.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn ask_person(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        version: i64,
        output_schema: Option<Value>,
        prepared: Prepared,
    ) -> Result<RunAnswer, Problem> {
        let Ask {
            run_id,
            input,
            lineage,
            origin: _,
            fresh: _,
        } = ask;
        let run_id = run_id.as_str();
        let Prepared {
            to,
            message,
            expires_ms,
            webhook,
        } = prepared;
        let now = self.store.now().await.map_err(store_problem)?;
        let expires_at =
            now + chrono::Duration::milliseconds(i64::try_from(expires_ms).unwrap_or(i64::MAX / 2));
        let request_id = uuid::Uuid::now_v7().to_string();
        let new = new_run(run_id, key, version, input.clone(), caller, lineage, None);
        let started = started_fact(&new, 1);
        let mut opened = fact(run_id, 2, "request_opened", key, &caller.id, version);
        opened.data = Some(json!({
            "request_id": request_id, "to": to,
            "expires_at": expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        }));
        let request = NewRequest {
            request_id: request_id.clone(),
            to,
            message,
            input,
            output_schema,
            expires_at,
        };
        let expiry = Order::ExpireRequest(Expiry {
            request_id: request_id.clone(),
        });
        let mut work = vec![WorkItem::from(expiry).to_work(EXPIRE_KEY, Some(expires_at))];
        if let Some(webhook) = &webhook {
            work.push(crate::interaction_delivery::delivery_work(
                &request_id,
                webhook,
                1,
                None,
            ));
        }
        let counted = crate::telemetry::tally(std::slice::from_ref(&started));
        let (run, _) = self
            .store
            .start_interaction(pb, new, vec![started, opened], request, work)
            .await
            .map_err(taken)?;
        self.telemetry.count(counted, None);
        self.scheduler.wake();
        Ok(answer_of(&run))
    }

    /// The input checked, and `to` and the body rendered: who is asked, the message, how
    /// long the request waits and the webhook told of it; or the problem the run ends with.
    ///
    /// A `notify` that names a webhook the operator did not configure is refused here, when a
    /// run starts, and not when the document is saved: which webhooks exist is the operator's
    /// to know and may change without the document changing, as with a tool server that is not
    /// configured (reasoning page, "Before the model is called"). The run ends `unavailable`,
    /// kind `webhook_not_configured`, before anyone is asked.
    async fn prepare_request(
        &self,
        key: &DefinitionKey,
        document: &InteractionDocument,
        input: &Value,
    ) -> Result<Prepared, Problem> {
        let Asks::Person {
            expires_ms, notify, ..
        } = &document.asks
        else {
            return Err(Problem::internal(&"a tool interaction has no request"));
        };
        let expires_ms = *expires_ms;
        if let Some(webhook) = notify
            && self.models.webhooks.get(webhook).is_none()
        {
            return Err(webhook_not_configured(
                &key.name,
                webhook,
                &self.models.webhooks,
            ));
        }
        let rendered = render_with_input(key, document, input, render_request).await?;
        match rendered {
            Ok(rendered) => Ok(Prepared {
                to: rendered.to,
                message: rendered.message,
                expires_ms,
                webhook: notify.clone(),
            }),
            Err(error) => {
                let line = error.line;
                let message = format!("Line {line}: {}", error.text);
                let issue = ProblemIssue {
                    pointer: error.field_pointer.unwrap_or_else(|| "/input".into()),
                    line: Some(line),
                    column: None,
                    path: (error.part == RenderedPart::To).then(|| "/to".into()),
                    message: message.clone(),
                };
                Err(
                    Problem::invalid_input(title(&key.name, "cannot render its request"), message)
                        .with_issues(vec![issue]),
                )
            }
        }
    }

    /// Records a run that ends before it asks anyone: refused input, a template that cannot
    /// render, a way of asking this runtime cannot take.
    pub(crate) async fn start_and_end(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
        ask: Ask,
        problem: Problem,
    ) -> Result<RunAnswer, Problem> {
        let run = self.start(caller, pb, key, version, ask).await?;
        let ending = rejection(problem, &run.run_id);
        let ended = self.end(pb, &run, run.last_run_seq + 1, ending).await?;
        Ok(answer_of(&ended))
    }

    /// `list_requests`: the inbox, newest first.
    pub async fn list_requests(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        query: RequestQuery,
    ) -> Result<RequestList, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let filter = query.into_filter()?;
        let limit = filter.limit as usize;
        let requests = self
            .store
            .list_requests(pb, &filter)
            .await
            .map_err(store_problem)?;
        let next = crate::service::next_cursor(&requests, limit, |r| r.request_id.clone());
        Ok(RequestList {
            requests: requests.iter().map(request_out).collect(),
            next,
        })
    }

    /// `answer_interaction`: an answer that matches the output contract ends the run
    /// `succeeded` with the answer as its output, together with the request.
    pub async fn answer_interaction(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        request_id: &str,
        body: AnswerInteraction,
    ) -> Result<RequestOut, Problem> {
        caller.require(&pb.org, Permission::Run)?;
        self.require_playbook(pb).await?;
        let request = self.request(pb, request_id).await?;
        let (issues, shape) = self.answer_issues(pb, &request, &body.answer).await?;
        let now = self.store.now().await.map_err(store_problem)?;
        let happening = Happening::Answer {
            matches: issues.is_empty(),
        };
        match request_step(request.status, request.expires_at, now, happening) {
            RequestStep::Close(_) => {}
            RequestStep::ExpireThenRefuse => {
                let expired = self.expire(pb, &request).await?;
                return Err(not_open(&expired));
            }
            RequestStep::RefuseClosed | RequestStep::Nothing => return Err(not_open(&request)),
            RequestStep::RefuseAnswer => return Err(answer_refused(request_id, issues)),
        }
        if request.key.def_type == DefinitionType::Prediction.as_str() {
            // The series a prediction asked for: its build ends the run.
            let closed = self.answer_with_series(caller, pb, &request, body).await?;
            return Ok(request_out(&closed));
        }
        // The request keeps the answer as written; the run's output reads a shape's optional
        // field given as null as absent, as every run's output does.
        let output = auto_schema::shape_output(shape.as_deref(), body.answer.clone());
        let answered_by = caller.id.clone();
        let closed = self
            .close(pb, &request, RequestStatus::Answered, |_run| {
                let ending = RunEnding {
                    status: RunStatus::Succeeded,
                    output: Some(output.clone()),
                    record: Some(json!({ "request_id": request_id, "answered_by": answered_by })),
                    problem: None,
                };
                Closing {
                    ending,
                    data: json!({ "request_id": request_id, "answered_by": answered_by }),
                    answer: Some(body.answer.clone()),
                    answered_by: Some(answered_by.clone()),
                    facts: Vec::new(),
                }
            })
            .await?;
        Ok(request_out(&closed))
    }

    /// The request `request_id` of the playbook, whatever its status.
    async fn request(&self, pb: &PlaybookRef, request_id: &str) -> Result<Request, Problem> {
        self.store
            .get_request(pb, request_id)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| {
                Problem::not_found(format!(
                    "The playbook {} has no request {request_id}.",
                    pb.playbook
                ))
            })
    }

    /// How the answer misses the output contract (its size, its schema, its shape's rules),
    /// and the shape the contract names.
    async fn answer_issues(
        &self,
        pb: &PlaybookRef,
        request: &Request,
        answer: &Value,
    ) -> Result<(Vec<ProblemIssue>, Option<String>), Problem> {
        let bytes = json_bytes(answer).unwrap_or(usize::MAX);
        if bytes > OUTPUT_BYTES_MAX {
            return Ok((
                vec![ProblemIssue::field(
                    "/answer",
                    format!(
                        "answer: holds {bytes} bytes as JSON, more than the 1,048,574 a run's output keeps"
                    ),
                )],
                None,
            ));
        }
        let checked = self
            .checked_version(pb, &request.key, request.definition_version)
            .await?;
        let shape = match checked.as_deref() {
            Some(Checked::Interaction(document)) => document.output_shape.clone(),
            // A prediction asks for the series it is built on.
            Some(Checked::Prediction(_)) => Some("series".to_owned()),
            _ => None,
        };
        let issues = contract_issues(
            request.output_schema.as_ref(),
            shape.as_deref(),
            answer,
            "answer",
        )?;
        Ok((issues, shape))
    }

    /// Closes an open request with `status` and ends its run with what `ending_of` makes of
    /// the run (its ending, the data of the request's event, the answer), in one transaction.
    /// A request closed meanwhile (an answer and the expiry at once) is refused in the words of
    /// how it closed.
    pub(crate) async fn close(
        &self,
        pb: &PlaybookRef,
        request: &Request,
        status: RequestStatus,
        ending_of: impl Fn(&Run) -> Closing,
    ) -> Result<Request, Problem> {
        let event_type = close_event(status);
        // The expiry and every delivery attempt left go with the request.
        let mut done_work = vec![EXPIRE_KEY.to_owned()];
        done_work.extend(crate::interaction_delivery::deliver_keys());
        for _ in 0..CLOSE_TRIES {
            let run = self
                .store
                .get_run(pb, &request.run_id)
                .await
                .map_err(store_problem)?
                .ok_or_else(|| Problem::internal(&"a request's run is missing"))?;
            let Closing {
                ending,
                data,
                answer,
                answered_by,
                facts,
            } = ending_of(&run);
            let close = RequestClose {
                status,
                answered_by,
                answer,
            };
            let mut events = vec![run_fact(&run, run.last_run_seq + 1, event_type, data)];
            for (fact_type, fact_data) in facts {
                let seq = run.last_run_seq + 1 + events.len() as i64;
                events.push(run_fact(&run, seq, fact_type, fact_data));
            }
            let seq = run.last_run_seq + 1 + events.len() as i64;
            events.push(ending_fact(&run, seq, &ending));
            let counted = crate::telemetry::tally(&events);
            match self
                .store
                .close_request(
                    pb,
                    &request.request_id,
                    close,
                    ending,
                    events,
                    done_work.clone(),
                )
                .await
            {
                Ok((closed, ended)) => {
                    self.telemetry.count(counted, Some(&ended));
                    return Ok(closed);
                }
                Err(StoreError::Conflict(_)) => {
                    let now = self
                        .store
                        .get_request(pb, &request.request_id)
                        .await
                        .map_err(store_problem)?
                        .ok_or_else(|| Problem::internal(&"a request vanished"))?;
                    if after_lost_close(now.status) == RequestStep::RefuseClosed {
                        return Err(not_open(&now));
                    }
                    // Still open: another change of the run took the number; try after it.
                }
                Err(other) => return Err(store_problem(other)),
            }
        }
        Err(Problem::internal(&"a request's close kept conflicting"))
    }

    /// Ends an open request's run rejected `unanswered`, kind `expired`.
    async fn expire(&self, pb: &PlaybookRef, request: &Request) -> Result<Request, Problem> {
        let result = self
            .close(pb, request, RequestStatus::Expired, |run| {
                let problem = Problem::new(
                    Reason::Unanswered,
                    run_title(run, "was not answered"),
                    format!(
                        "The request {} to {} expired at {} without an answer.",
                        request.request_id,
                        request.to,
                        request
                            .expires_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ),
                )
                .with_kind("expired");
                Closing::without_answer(
                    rejection(problem, &run.run_id),
                    json!({ "request_id": request.request_id }),
                )
            })
            .await;
        match result {
            Ok(closed) => Ok(closed),
            Err(problem) if problem.reason == Reason::Conflict => {
                // Closed meanwhile: it stands as it closed.
                self.store
                    .get_request(pb, &request.request_id)
                    .await
                    .map_err(store_problem)?
                    .ok_or(problem)
            }
            Err(problem) => Err(problem),
        }
    }

    /// The scheduler's expiry of a request: its work item fell due.
    pub(crate) async fn expire_request(
        &self,
        item: &Work,
        request_id: &str,
    ) -> Result<(), Problem> {
        let pb = &item.playbook;
        let request = self
            .store
            .get_request(pb, request_id)
            .await
            .map_err(store_problem)?;
        // Due by the queue's clock; the request's own time is not read again.
        if let Some(request) = request
            && request_step(
                request.status,
                request.expires_at,
                chrono::Utc::now(),
                Happening::ExpiryDue,
            ) == RequestStep::Close(RequestStatus::Expired)
        {
            self.expire(pb, &request).await?;
        }
        self.store.finish_work(item.id).await.map_err(store_problem)
    }

    /// Cancels an interaction run whose request waits: the request is `cancelled` and the run
    /// rejected `cancelled` with `kind` (requested by `cancel_run`, or deadline and
    /// parent_ended from a workflow that stopped waiting), in `words`.
    pub(crate) async fn cancel_interaction(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: &str,
    ) -> Result<(), Problem> {
        let order = CancelOrder::new(words, Some(kind));
        let request = self
            .store
            .get_request_of_run(pb, &run.run_id)
            .await
            .map_err(store_problem)?;
        match request {
            Some(request) => {
                let step = request_step(
                    request.status,
                    request.expires_at,
                    chrono::Utc::now(),
                    Happening::Cancel,
                );
                if step == RequestStep::RefuseClosed {
                    return Err(not_open(&request));
                }
                self.close(pb, &request, RequestStatus::Cancelled, |run| {
                    let data = json!({ "request_id": request.request_id, "detail": words });
                    Closing::without_answer(cancelled(run, &order), data)
                })
                .await?;
            }
            // A tool interaction's call going on in this server ends at once, and its attempt
            // ends the run cancelled.
            None if self.cancels.cancel(pb, &run.run_id, order.clone()) => {
                self.wait_in_flight(pb, &run.run_id).await;
            }
            // Invariant: a started interaction that asks a person has its request (both are
            // recorded in one transaction); a run without one (a tool interaction whose attempt
            // stopped with its server) ends as any other run does.
            None => {
                self.end(pb, run, run.last_run_seq + 1, cancelled(run, &order))
                    .await?;
            }
        }
        Ok(())
    }
}

/// An interaction run's ending when it is cancelled: rejected `cancelled` with the order's
/// words and kind.
pub(crate) fn cancelled(run: &Run, order: &CancelOrder) -> RunEnding {
    let problem = Problem::new(
        Reason::Cancelled,
        run_title(run, "was cancelled"),
        &order.words,
    )
    .with_kind(&order.kind);
    rejection(problem, &run.run_id)
}

/// Checks an interaction's input against its contract, then renders one of its templates with
/// the input, today and now, off the async threads and within the page's render time: the
/// request a person reads, or a tool's arguments. `Err` is the run's `invalid_input`.
pub(crate) async fn render_with_input<T: Send + 'static>(
    key: &DefinitionKey,
    document: &InteractionDocument,
    input: &Value,
    render: fn(&InteractionDocument, &Value, RenderClock<'_>) -> T,
) -> Result<T, Problem> {
    let input = crate::runs::prepared_input(
        input,
        document.input_schema.as_ref(),
        document.input_default.as_ref(),
        &title(&key.name, "refused its input"),
    )?;
    let document = document.clone();
    render_clocked(move |clock| render(&document, &input, clock)).await
}

/// Runs `render` off the async threads with a clock of today and now that stops it past the
/// reasoning page's render time.
pub(crate) async fn render_clocked<T: Send + 'static>(
    render: impl FnOnce(RenderClock<'_>) -> T + Send + 'static,
) -> Result<T, Problem> {
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let limit = std::time::Duration::from_millis(auto_template::RENDER_TIME_MS_MAX);
        let expired = move || started.elapsed() >= limit;
        let clock = RenderClock {
            today: &today,
            now: &now,
            expired: &expired,
        };
        render(clock)
    })
    .await
    .map_err(|e| Problem::internal(&e))
}

/// The query of `list_requests`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct RequestQuery {
    pub status: Option<String>,
    pub after: Option<String>,
    pub limit: Option<String>,
}

impl RequestQuery {
    fn into_filter(self) -> Result<RequestFilter, Problem> {
        let mut issues = Vec::new();
        let status = self
            .status
            .as_deref()
            .filter(|s| !s.is_empty())
            .and_then(|text| {
                let parsed = RequestStatus::parse(text);
                if parsed.is_none() {
                    issues.push(ProblemIssue::field(
                        "/query/status",
                        format!(
                            "status {text:?} is not one of open, answered, expired, undelivered or cancelled."
                        ),
                    ));
                }
                parsed
            });
        let limit = crate::runs::page_limit(
            self.limit.as_deref(),
            (REQUESTS_PAGE_DEFAULT, auto_store::REQUESTS_PAGE_MAX),
            &mut issues,
        );
        if !issues.is_empty() {
            return Err(Problem::invalid_request(issues));
        }
        Ok(RequestFilter {
            status,
            after_request_id: self.after.filter(|a| !a.is_empty()),
            limit,
        })
    }
}
