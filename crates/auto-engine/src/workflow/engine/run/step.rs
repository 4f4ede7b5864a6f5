//! The run: starting it, applying an input to its snapshot, going on until it waits or ends,
//! and its ending (output.as, the output's size and shape) with what stops under it.

use auto_schema::json_bytes;

use super::*;

pub(in crate::workflow::engine) fn start(
    wf: &Workflow,
    info: &RunInfo,
    input: Value,
    now_ms: i64,
) -> Step {
    let mut state = RunState {
        root: Frame::new("/do", Value::Null, Vec::new()),
        context: json!({}),
        workflow_input: input.clone(),
        run_input: Value::Null,
        counters: BTreeMap::new(),
        functions_ms: info.functions_ms.clone(),
        function_default_ms: info.function_default_ms,
        run_deadline_ms: info
            .started_at_ms
            .saturating_add(i64::try_from(info.run_duration_ms).unwrap_or(i64::MAX)),
        run_timeout_due_ms: None,
        run_timer: None,
        inputs: 1,
        history_bytes: 0,
        events: EventBook::default(),
        ended: false,
    };
    let mut engine = Engine::new(wf, info, &state, now_ms);
    let vars = Vars {
        data: Some(&input),
        ..Vars::default()
    };
    let prepared = (|| -> Result<(Value, Option<i64>), WorkflowError> {
        let run_input = match wf.raw("/input/from") {
            Some(from) => engine.shaping(from, &vars)?,
            None => input.clone(),
        };
        let due = match wf.raw("/timeout") {
            None => None,
            Some(timeout) => {
                let after = match timeout {
                    Value::String(name) => wf
                        .raw(&format!("/use/timeouts/{}/after", pointer_escape(name)))
                        .cloned()
                        .unwrap_or(Value::Null),
                    other => other.get("after").cloned().unwrap_or(Value::Null),
                };
                let ms = engine.duration(&after, &Vars::default())?;
                Some(now_ms.saturating_add(ms as i64))
            }
        };
        Ok((run_input, due))
    })();
    match prepared {
        Ok((run_input, due)) => {
            state.root.data = run_input.clone();
            state.run_input = run_input;
            state.run_timeout_due_ms = due;
            // "It was still running at the longest a run may last": a timer from the start.
            engine.commands.push(Command::SetTimer {
                timer_id: OVERRUN_TIMER_ID.to_owned(),
                due_ms: state.run_deadline_ms,
            });
            go_on(engine, state, None)
        }
        Err(error) => {
            let ending = Ending::Rejected {
                problem: rejection(&error, &workflow_name(wf, info)),
            };
            state.ended = true;
            finish(engine, state, Some(ending))
        }
    }
}

pub(in crate::workflow::engine) fn apply(
    wf: &Workflow,
    info: &RunInfo,
    mut state: RunState,
    input: Input,
    now_ms: i64,
) -> Step {
    let unchanged = |state| Step {
        state,
        commands: Vec::new(),
        events: Vec::new(),
        ending: None,
    };
    if state.ended {
        return unchanged(state);
    }
    let mut foreign = false;
    find_run(&mut state.root, &mut |run: &mut TaskRun| {
        foreign = !wf.index.tasks.contains_key(&run.pointer);
        foreign
    });
    if foreign {
        // A snapshot of another version of the workflow: stop rather than guess.
        let engine = Engine::new(wf, info, &state, now_ms);
        let error = WorkflowError::runtime(
            "The run's snapshot names a task this version of the workflow does not have.",
        );
        let ending = Ending::Rejected {
            problem: rejection(&error, &workflow_name(wf, info)),
        };
        return end_run(engine, state, ending, "parent_ended");
    }
    match input {
        Input::Start { .. } => unchanged(state),
        Input::Cancel { detail, kind } => {
            let engine = Engine::new(wf, info, &state, now_ms);
            let name = workflow_name(wf, info);
            let problem = problem(
                Reason::Cancelled,
                Some(kind.as_deref().unwrap_or("requested")),
                None,
                &format!("The workflow {name} was cancelled"),
                &detail,
            );
            end_run(engine, state, Ending::Rejected { problem }, "parent_ended")
        }
        Input::TimerFired { timer_id } if timer_id == OVERRUN_TIMER_ID => {
            let engine = Engine::new(wf, info, &state, now_ms);
            let name = workflow_name(wf, info);
            let problem = problem(
                Reason::Cancelled,
                Some("overrun"),
                None,
                &format!("The workflow {name} ran out of time"),
                &format!(
                    "The run was still running at the longest a run may last, {}.",
                    crate::workflow::in_words(info.run_duration_ms)
                ),
            );
            end_run(engine, state, Ending::Rejected { problem }, "parent_ended")
        }
        Input::TimerFired { timer_id } => {
            if state.run_timer.as_deref() == Some(timer_id.as_str()) {
                state.run_timer = None;
                let engine = Engine::new(wf, info, &state, now_ms);
                let error = WorkflowError::short(
                    "timeout",
                    408,
                    "The run ran out of time",
                    "The run ran past the timeout of its document.",
                );
                let ending = Ending::Rejected {
                    problem: rejection(&error, &workflow_name(wf, info)),
                };
                return end_run(engine, state, ending, "deadline");
            }
            if !mark_timer(&mut state.root, &timer_id) {
                return unchanged(state);
            }
            taken(wf, info, state, now_ms, None)
        }
        Input::CallEnded { call_id, outcome } => {
            if !mark_call(&mut state.root, &call_id, &outcome) {
                return unchanged(state);
            }
            taken(wf, info, state, now_ms, None)
        }
        Input::EventReceived { event } => received(wf, info, state, event, now_ms, false),
        Input::EventHeard { event } => received(wf, info, state, event, now_ms, true),
    }
}

/// An event sent to the run: ignored when its id was received before; otherwise counted as an
/// input, kept, and offered to the listening tasks as the tree is driven. One more than a run
/// takes over its life ends it. An event of the playbook `heard` for a listening task is let
/// pass when no task takes it, so the playbook's traffic never piles up in the run.
pub(super) fn received(
    wf: &Workflow,
    info: &RunInfo,
    mut state: RunState,
    event: Value,
    now_ms: i64,
    heard: bool,
) -> Step {
    let id = event.get("id").and_then(Value::as_str).map(str::to_owned);
    let summary = json!({
        "id": event.get("id"),
        "type": event.get("type"),
        "source": event.get("source"),
    });
    let receipt = state.events.receive(event);
    let mut step = match receipt {
        Receipt::Duplicate => {
            return Step {
                state,
                commands: Vec::new(),
                events: Vec::new(),
                ending: None,
            };
        }
        Receipt::Kept => taken(wf, info, state, now_ms, id.filter(|_| heard)),
        // "One event more than the event limits allow ends the run at once, rejected".
        Receipt::Refused(error) => {
            state.inputs = state.inputs.saturating_add(1);
            let engine = Engine::new(wf, info, &state, now_ms);
            let ending = Ending::Rejected {
                problem: rejection(&error, &workflow_name(wf, info)),
            };
            end_run(engine, state, ending, "parent_ended")
        }
    };
    let mut data = json!({ "event": summary });
    if heard {
        // Let pass: no longer among the run's received ids.
        let passed = step.ending.is_none()
            && !step
                .state
                .events
                .has_received(summary["id"].as_str().unwrap_or_default());
        data["heard"] = json!(true);
        data["taken"] = json!(!passed);
    }
    let received = StepEvent {
        event_type: "event_received".to_owned(),
        data,
    };
    step.events.insert(0, received);
    step
}

/// Counts an input the run waited for, then goes on, or ends the run past [`INPUTS_MAX`];
/// `heard` is the id of a playbook's event the step lets pass when no task takes it.
pub(super) fn taken(
    wf: &Workflow,
    info: &RunInfo,
    mut state: RunState,
    now_ms: i64,
    heard: Option<String>,
) -> Step {
    state.inputs = state.inputs.saturating_add(1);
    let mut engine = Engine::new(wf, info, &state, now_ms);
    engine.heard = heard;
    if state.inputs > INPUTS_MAX {
        let error = WorkflowError::runtime("The run took 100,000 inputs, the most a run may take.");
        let ending = Ending::Rejected {
            problem: rejection(&error, &workflow_name(wf, info)),
        };
        return end_run(engine, state, ending, "parent_ended");
    }
    go_on(engine, state, None)
}

/// Drives the tree from its root until every branch waits or the run ends.
pub(super) fn go_on(mut engine: Engine<'_>, mut state: RunState, _: Option<()>) -> Step {
    let wf = engine.wf;
    let info = engine.info;
    let mut root = std::mem::replace(&mut state.root, Frame::new("/do", Value::Null, Vec::new()));
    let flow = engine.drive_list(&mut root);
    state.root = root;
    let ending = match flow {
        Flow::Waiting => None,
        Flow::Finished(output) | Flow::Exited(output) | Flow::End(output) => {
            Some(run_output(&mut engine, &state, output))
        }
        Flow::Raised(error) | Flow::Abort(error) => Some(Ending::Rejected {
            problem: rejection(&error, &workflow_name(wf, info)),
        }),
    };
    match ending {
        Some(ending) => end_run(engine, state, ending, "parent_ended"),
        None => {
            if let Some(id) = engine.heard.take() {
                engine.book.let_pass(&id);
            }
            if let Some(error) = engine.book.waiting_past_limits() {
                let ending = Ending::Rejected {
                    problem: rejection(&error, &workflow_name(wf, info)),
                };
                return end_run(engine, state, ending, "parent_ended");
            }
            // Measured as the step will record it.
            let recorded = events_bytes(&engine.events);
            state.history_bytes = state.history_bytes.saturating_add(recorded as u64);
            state.context = engine.context.clone();
            state.counters = engine.counters.clone();
            state.events = engine.book.clone();
            let history = state.history_bytes;
            let (held, kept) = held_bytes(wf, &mut state);
            let overflow = if held > DATA_HELD_BYTES_MAX {
                Some(format!(
                    "The run holds {held} bytes at once, as JSON with its document and 4 KiB a task under way: at most 4 MiB."
                ))
            } else if kept.saturating_add(recorded) > KEPT_ACROSS_WAIT_BYTES_MAX {
                Some(format!(
                    "The run keeps {kept} bytes across its wait, as JSON, beside {recorded} bytes of the rest of the step's record: at most 1,572,864 in all."
                ))
            } else if history > HISTORY_BYTES_MAX {
                Some(format!(
                    "The run's recorded history would hold {history} bytes as JSON: at most 512 MiB."
                ))
            } else {
                None
            };
            if let Some(words) = overflow {
                let error = WorkflowError::runtime(words);
                let ending = Ending::Rejected {
                    problem: rejection(&error, &workflow_name(wf, info)),
                };
                return end_run(engine, state, ending, "parent_ended");
            }
            if state.run_timer.is_none()
                && let Some(due) = state.run_timeout_due_ms
            {
                state.run_timer = Some(RUN_TIMER.to_owned());
                engine.commands.push(Command::SetTimer {
                    timer_id: RUN_TIMER.to_owned(),
                    due_ms: due,
                });
            }
            finish(engine, state, None)
        }
    }
}

/// What a step's events record, as JSON: each one's type and data.
pub(in crate::workflow::engine) fn events_bytes(events: &[StepEvent]) -> usize {
    events
        .iter()
        .map(|e| e.event_type.len() + json_bytes(&e.data).unwrap_or(usize::MAX / 2))
        .fold(0usize, usize::saturating_add)
}

/// What a waiting run holds: its snapshot as JSON (its values and positions), its document,
/// and 4 KiB for each task under way; and the snapshot alone, which the step keeps across
/// the wait.
pub(super) fn held_bytes(wf: &Workflow, state: &mut RunState) -> (usize, usize) {
    let mut under_way = 0usize;
    find_run(&mut state.root, &mut |_: &mut TaskRun| {
        under_way += 1;
        false
    });
    let snapshot = json_bytes(&*state).unwrap_or(usize::MAX);
    let held = snapshot
        .saturating_add(wf.source_bytes)
        .saturating_add(under_way.saturating_mul(TASK_HELD_BYTES));
    (held, snapshot)
}

/// The document's output.as, then the output's bounds: its size and its shape.
pub(super) fn run_output(engine: &mut Engine<'_>, state: &RunState, output: Value) -> Ending {
    let wf = engine.wf;
    let name = workflow_name(wf, engine.info);
    let output = match wf.raw("/output/as") {
        None => output,
        Some(shape) => {
            let vars = Vars {
                data: Some(&output),
                input: Some(&state.run_input),
                ..Vars::default()
            };
            match engine.shaping(shape, &vars) {
                Ok(output) => output,
                Err(error) => {
                    return Ending::Rejected {
                        problem: rejection(&error, &name),
                    };
                }
            }
        }
    };
    let bytes = json_bytes(&output).unwrap_or(usize::MAX);
    if bytes > OUTPUT_BYTES_MAX {
        return Ending::Rejected {
            problem: problem(
                Reason::Conflict,
                Some("oversized"),
                None,
                &format!("The workflow {name} gave an output too large"),
                &format!("The output holds {bytes} bytes as JSON; a run keeps at most 1,048,574."),
            ),
        };
    }
    if let Some(shape) = &wf.document.output_shape {
        let issues = auto_schema::check_shape(shape, &output);
        if !issues.is_empty() {
            let messages: Vec<String> = auto_schema::render_answer_issues(&issues);
            let listed = messages
                .iter()
                .map(|m| ProblemIssue::field("/output", m))
                .collect();
            return Ending::Rejected {
                problem: problem(
                    Reason::Conflict,
                    Some("unworkable"),
                    None,
                    &format!("The workflow {name} could not give an output"),
                    &format!(
                        "The output does not match the shape {shape}: {}",
                        messages.join("; ")
                    ),
                )
                .with_issues(listed),
            };
        }
    }
    Ending::Succeeded { output }
}

/// Ends the run: cancels what it still waits for with `kind`, and its own timer.
pub(super) fn end_run(
    mut engine: Engine<'_>,
    mut state: RunState,
    ending: Ending,
    kind: &str,
) -> Step {
    // An ended run waits for nothing: no timer it set in this step outlives it (the overrun
    // timer of a run that ends in its first step, among others).
    engine
        .commands
        .retain(|c| !matches!(c, Command::SetTimer { .. }));
    let mut commands = Vec::new();
    cancel_frame(&state.root, kind, &mut commands);
    engine.commands.extend(commands);
    if let Some(timer) = state.run_timer.take() {
        engine.cancel_timer(&timer);
    }
    state.ended = true;
    finish(engine, state, Some(ending))
}

pub(super) fn finish(engine: Engine<'_>, mut state: RunState, ending: Option<Ending>) -> Step {
    state.context = engine.context;
    state.counters = engine.counters;
    state.events = engine.book;
    Step {
        state,
        commands: engine.commands,
        events: engine.events,
        ending,
    }
}
