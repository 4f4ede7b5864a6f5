//! `GET .../events/stream`: the playbook's log as server-sent events, for the Studio, `auto
//! runs follow` and any client that would otherwise poll `list_playbook_events`.
//!
//! Each event is one message: `id` its `seq`, `event` its type, `data` the event as a listing
//! shows it. A client resumes after a drop by sending the last `id` it read as `Last-Event-ID`
//! (which takes the place of `after`; `after=end` starts with what is recorded next), and misses
//! nothing: the follower reads the log by cursor,
//! and an event not visible yet can only have a greater `seq` than every event visible.
//!
//! The stream reads the store when it has shown everything it found, every
//! [`STREAM_POLL_MS`]: events written by another server on the same database arrive the same
//! way as this one's. It ends when the server stops.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use tokio::sync::watch;

use crate::events::EventQuery;
use crate::http::{AppState, Authed, ProblemAnswer, pb_ref, query_problem};
use crate::problem::{Problem, ProblemIssue};
use crate::service::EventFollower;

/// How long the stream waits, once it has shown every event it found, before it reads again.
pub const STREAM_POLL_MS: u64 = 200;
/// How often a quiet stream sends a comment, so proxies and clients keep the connection.
pub const STREAM_KEEP_ALIVE_MS: u64 = 15_000;

/// `Last-Event-ID`: the `seq` of the last event the client read.
fn last_event_id(headers: &HeaderMap) -> Result<Option<String>, Problem> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or_default().trim();
    match text.parse::<i64>() {
        Ok(seq) if seq >= 0 => Ok(Some(seq.to_string())),
        _ => Err(Problem::invalid_request(vec![ProblemIssue::field(
            "/headers/last-event-id",
            format!(
                "Last-Event-ID {text:?} is not the id of an event of this stream: send the \
                 id of the last message read, a seq."
            ),
        )])),
    }
}

pub(crate) async fn stream_events(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    headers: HeaderMap,
    query: Result<Query<EventQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ProblemAnswer> {
    let Query(mut query) = query.map_err(query_problem)?;
    if let Some(after) = last_event_id(&headers)? {
        query.after = Some(after);
    }
    let follower = s
        .service
        .open_event_follower(&c, &pb_ref(org, pb), query)
        .await?;
    let following = Following {
        follower,
        shown: VecDeque::new(),
        stopping: s.stopping.clone(),
        ended: false,
    };
    let stream = futures::stream::unfold(following, |mut f| async move {
        f.next().await.map(|event| (Ok(event), f))
    });
    Ok(Sse::new(stream).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_millis(STREAM_KEEP_ALIVE_MS))
            .text("keep-alive"),
    ))
}

struct Following {
    follower: EventFollower,
    shown: VecDeque<Event>,
    stopping: watch::Receiver<bool>,
    ended: bool,
}

impl Following {
    /// The next message, or `None` when the stream ends: the server stops, or the store
    /// failed (told as an `error` message first; the client resumes from its last id).
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.shown.pop_front() {
                return Some(event);
            }
            if self.ended || *self.stopping.borrow() {
                return None;
            }
            match self.follower.next_page().await {
                Ok(page) if page.is_empty() => {
                    let stopped = async {
                        // A server without a stop signal (the stdio MCP server's) never stops.
                        if self.stopping.wait_for(|&s| s).await.is_err() {
                            std::future::pending::<()>().await;
                        }
                    };
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(STREAM_POLL_MS)) => {}
                        () = stopped => return None,
                    }
                }
                Ok(page) => {
                    self.shown.extend(page.into_iter().map(|(seq, event)| {
                        let event_type = event
                            .0
                            .get("type")
                            .and_then(|t| t.as_str())
                            .unwrap_or("event")
                            .to_owned();
                        Event::default()
                            .id(seq.to_string())
                            .event(event_type)
                            .json_data(&event.0)
                            .unwrap_or_else(|_| Event::default().comment("unencodable event"))
                    }));
                }
                Err(problem) => {
                    self.ended = true;
                    tracing::warn!(detail = %problem.detail, "the events stream could not read the log");
                    let body = serde_json::to_string(&problem).unwrap_or_default();
                    return Some(Event::default().event("error").data(body));
                }
            }
        }
    }
}
