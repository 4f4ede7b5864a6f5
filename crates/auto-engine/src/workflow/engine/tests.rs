//! Runs driven through `start` and `apply`, one behaviour of the page at a time.

use serde_json::{Value, json};

use super::*;

mod events;

/// The engine's start, without the overrun timer every run sets from its start (which
/// `a_run_past_the_longest_a_run_may_last_is_cancelled_as_overrun` tests), so that each
/// test sees the commands of its own tasks.
fn start(wf: &Workflow, info: &RunInfo, input: Value, now_ms: i64) -> Step {
    let mut step = super::start(wf, info, input, now_ms);
    step.commands.retain(
        |c| !matches!(c, Command::SetTimer { timer_id, .. } if timer_id == OVERRUN_TIMER_ID),
    );
    step
}

const HEADER: &str =
    "document:\n  dsl: '1.0.3'\n  namespace: test\n  name: flow\n  version: '1.0.0'\n";

fn workflow(body: &str) -> Workflow {
    let source = format!("{HEADER}{body}");
    Workflow::from_source(&source).unwrap_or_else(|issues| {
        panic!(
            "{}",
            issues
                .iter()
                .map(|i| i.message())
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

fn info() -> RunInfo {
    RunInfo::new(
        "run-1",
        json!({"type": "workflow", "name": "flow", "version": 1}),
        1_000,
    )
}

fn output(step: &Step) -> Value {
    match &step.ending {
        Some(Ending::Succeeded { output }) => output.clone(),
        other => panic!("not succeeded: {other:?}"),
    }
}

fn problem(step: &Step) -> Value {
    match &step.ending {
        Some(Ending::Rejected { problem }) => serde_json::to_value(problem).unwrap(),
        other => panic!("not rejected: {other:?}"),
    }
}

/// A child's problem document from the fields a test gives.
fn child_problem(given: Value) -> auto_problem::Problem {
    auto_problem::Problem::read(&given).unwrap_or_else(|| panic!("not a problem: {given}"))
}

fn run(body: &str, input: Value) -> Step {
    start(&workflow(body), &info(), input, 5_000)
}

fn timers(step: &Step) -> Vec<(String, i64)> {
    step.commands
        .iter()
        .filter_map(|c| match c {
            Command::SetTimer { timer_id, due_ms } => Some((timer_id.clone(), *due_ms)),
            _ => None,
        })
        .collect()
}

fn calls(step: &Step) -> Vec<(String, String, Value, u64)> {
    step.commands
        .iter()
        .filter_map(|c| match c {
            Command::StartCall {
                call_id,
                name,
                input,
                wait_ms,
                ..
            } => Some((call_id.clone(), name.clone(), input.clone(), *wait_ms)),
            _ => None,
        })
        .collect()
}

fn roundtrip(state: RunState) -> RunState {
    RunState::from_json(&state.to_json()).unwrap()
}

// ---- 1. set, do, switch, if, then, data, variables, for ----

#[test]
fn set_and_data_between_tasks() {
    let step = run(
        "do:\n  - a:\n      set: { n: '${ $data.x + 1 }', k: fixed }\n  - b:\n      set:\n        m: '${ $data.n * 10 }'\n        k: '${ $data.k }'\n",
        json!({"x": 1}),
    );
    assert_eq!(output(&step), json!({"m": 20, "k": "fixed"}));
    let types: Vec<&str> = step.events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        [
            "step_started",
            "step_completed",
            "step_started",
            "step_completed"
        ]
    );
    assert_eq!(step.events[1].data["reference"], "/do/0/a");
    assert_eq!(step.events[1].data["output"], json!({"n": 2, "k": "fixed"}));
    assert!(step.state.is_ended());
}

#[test]
fn the_page_for_example_sums_245() {
    let step = run(
        "do:\n  - total:\n      for:\n        each: line\n        in: $data.lines\n      do:\n        - add:\n            set:\n              sum: ${ ($data.sum ?? 0) + $line.amount }\n",
        json!({"lines": [{"amount": 120}, {"amount": 80}, {"amount": 45}]}),
    );
    assert_eq!(output(&step), json!({"sum": 245}));
}

#[test]
fn for_with_at_while_and_exit() {
    let body = "do:\n  - loop:\n      for:\n        in: '${ [1, 2, 3, 4] }'\n        at: i\n      while: '${ $i < 3 }'\n      do:\n        - add:\n            set: '${ ({ seen: [...($data.seen ?? []), $item * 10], last: $i }) }'\n";
    assert_eq!(
        output(&run(body, json!({}))),
        json!({"seen": [10, 20, 30], "last": 2})
    );
    let exit = "do:\n  - loop:\n      for:\n        in: '${ [1, 2, 3] }'\n      do:\n        - add:\n            set: '${ ({ n: $item }) }'\n        - stop:\n            if: '${ $data.n == 2 }'\n            set: '${ ({ stopped: $data.n }) }'\n            then: exit\n  - after:\n      set: '${ ({ after: $data }) }'\n";
    assert_eq!(
        output(&run(exit, json!({}))),
        json!({"after": {"stopped": 2}})
    );
    let not_list = run(
        "do:\n  - loop:\n      for:\n        in: $data.n\n      do:\n        - a:\n            set: {}\n",
        json!({"n": 3}),
    );
    let p = problem(&not_list);
    assert_eq!(p["reason"], "invalid_input");
    assert_eq!(
        p["detail"],
        "A value is not valid, at the step loop: for.in gave a number, not a list."
    );
}

#[test]
fn do_switch_if_and_then() {
    let body = "do:
  - pick:
      switch:
        - big:
            when: '${ $data.n > 10 }'
            then: large
        - otherwise:
            then: small
  - small:
      set: { size: small }
      then: end
  - large:
      set: { size: large }
      then: exit
  - never:
      set: { size: never }
";
    assert_eq!(
        output(&run(body, json!({"n": 50}))),
        json!({"size": "large"})
    );
    assert_eq!(
        output(&run(body, json!({"n": 1}))),
        json!({"size": "small"})
    );
    let skip = "do:
  - maybe:
      if: '${ $data.go }'
      set: { went: true }
      then: end
  - nested:
      do:
        - inner:
            set: '${ ({ inner: $data }) }'
            then: exit
        - skipped:
            set: { no: true }
  - last:
      set: '${ ({ last: $data }) }'
";
    assert_eq!(
        output(&run(skip, json!({"go": false}))),
        json!({"last": {"inner": {"go": false}}})
    );
    assert_eq!(
        output(&run(skip, json!({"go": true}))),
        json!({"went": true})
    );
}

#[test]
fn jumping_back_loops_until_a_condition() {
    let body = "do:
  - add:
      set: '${ ({ n: ($data.n ?? 0) + 1 }) }'
  - again:
      switch:
        - more:
            when: '${ $data.n < 5 }'
            then: add
        - done:
            then: continue
  - last:
      set: '${ ({ total: $data.n }) }'
";
    assert_eq!(output(&run(body, json!({}))), json!({"total": 5}));
}

#[test]
fn a_runaway_jump_stops_at_ten_thousand_tasks() {
    let body = "do:\n  - spin:\n      set: {}\n      then: spin\n";
    let p = problem(&run(body, json!({})));
    assert_eq!(p["reason"], "unavailable");
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .contains("10,000 tasks without waiting"),
        "{p}"
    );
}

#[test]
fn shaping_and_variables() {
    let body = "input:
  from: '${ ({ x: $data.raw, first: $workflow.input.raw }) }'
output:
  as: '${ ({ out: $data, runInput: $input, ctx: $context }) }'
do:
  - a:
      input:
        from: '${ ({ y: $data.x * 2 }) }'
      set: '${ ({ got: $input.y, same: $data.y }) }'
      output:
        as: '${ ({ ...$input, result: $data.got }) }'
      export:
        as: '${ ({ ...$context, fromA: $output.result }) }'
  - b:
      set:
        task: '${ $task.name }'
        ref: '${ $task.reference }'
        started: '${ $task.startedAt.epoch.milliseconds }'
        iso: '${ $task.startedAt.iso8601 }'
        run: '${ $workflow.id }'
        wfStarted: '${ $workflow.startedAt.iso8601 }'
        def: '${ $workflow.definition.name }'
        runtime: '${ $runtime.name }'
        kind: '${ $runtime.metadata.type }'
        ctx: '${ $context.fromA }'
        missing: '${ $data.nothing }'
        nested: '${ ({ a: $data.nothing }) }'
";
    let step = run(body, json!({"raw": 3}));
    assert_eq!(
        output(&step),
        json!({
            "out": {
                "task": "b",
                "ref": "/do/1/b",
                "started": 5000,
                "iso": "1970-01-01T00:00:05.000Z",
                "run": "run-1",
                "wfStarted": "1970-01-01T00:00:01.000Z",
                "def": "flow",
                "runtime": "auto-runtime",
                "kind": "workflow",
                "ctx": 6,
                "missing": null,
                "nested": {"a": null},
            },
            "runInput": {"x": 3, "first": 3},
            "ctx": {"fromA": 6},
        })
    );
}

#[test]
fn values_nest_at_most_512_levels() {
    let body =
        "do:\n  - deep:\n      set: '${ Array.from({ length: $data.n }).reduce((v) => [v], 0) }'\n";
    assert!(matches!(
        run(body, json!({"n": 511})).ending,
        Some(Ending::Succeeded { .. })
    ));
    let p = problem(&run(body, json!({"n": 600})));
    assert_eq!(p["reason"], "invalid_input");
    assert!(p["detail"].as_str().unwrap().contains("512"), "{p}");
}

#[test]
fn the_clock_is_the_inputs() {
    let body = "do:\n  - now:\n      set: { now: '${ Date.now() }' }\n";
    let step = start(&workflow(body), &info(), json!({}), 1_234_567);
    assert_eq!(output(&step), json!({"now": 1_234_567}));
}

// ---- 2. raise, try/catch, errors, endings ----

#[test]
fn an_uncaught_raise_rejects_with_the_page_detail() {
    let body = "do:
  - stop:
      raise:
        error:
          type: https://example.com/errors/brief
          status: 400
          title: The brief is not usable
          detail: '${ \"Missing: \" + $data.field }'
";
    let p = problem(&run(body, json!({"field": "audience"})));
    assert_eq!(p["reason"], "invalid_input");
    assert_eq!(p["status"], 422);
    assert_eq!(
        p["detail"],
        "The brief is not usable, at the step stop: Missing: audience"
    );
    assert_eq!(p["type"], "https://on.auto/problems/invalid_input");
    assert_eq!(p["title"], "The workflow flow stopped");
}

#[test]
fn named_errors_and_reasons_by_status() {
    let body = "use:
  errors:
    down:
      type: https://example.com/down
      status: 503
      title: Down
do:
  - stop:
      raise:
        error: down
";
    let p = problem(&run(body, json!({})));
    assert_eq!(p["reason"], "unavailable");
    assert_eq!(p["detail"], "Down, at the step stop.");
    let timeout = "do:\n  - stop:\n      raise:\n        error: { type: x:y, status: 408 }\n";
    assert_eq!(problem(&run(timeout, json!({})))["reason"], "unavailable");
    let rate = "do:\n  - stop:\n      raise:\n        error: { type: x:y, status: 429 }\n";
    let p = problem(&run(rate, json!({})));
    assert_eq!(p["reason"], "unavailable");
    assert_eq!(p["detail"], "x:y, at the step stop.");
    let kinds = "do:\n  - stop:\n      raise:\n        error: { type: 'https://on.auto/problems/effect_unknown', status: 409, because: tool_error }\n";
    let p = problem(&run(kinds, json!({})));
    assert_eq!(
        (p["reason"].clone(), p["kind"].clone(), p["because"].clone()),
        (
            json!("conflict"),
            json!("effect_unknown"),
            json!("tool_error")
        )
    );
    let unanswered = "do:\n  - stop:\n      raise:\n        error: { type: 'https://on.auto/problems/unanswered', status: 410, kind: expired }\n";
    let p = problem(&run(unanswered, json!({})));
    assert_eq!(
        (p["reason"].clone(), p["kind"].clone()),
        (json!("unanswered"), json!("expired"))
    );
    let computed = "do:\n  - stop:\n      raise:\n        error: '${ ({ type: \"x:z\" }) }'\n";
    let p = problem(&run(computed, json!({})));
    assert_eq!(p["reason"], "invalid_input");
    assert!(
        p["detail"].as_str().unwrap().starts_with(
            "The workflow is not configured to go on, at the step stop: The raise names no error"
        ),
        "{p}"
    );
}

#[test]
fn try_catch_with_when_as_and_recovery() {
    let body = "do:
  - guarded:
      try:
        - fail:
            raise:
              error: { type: https://example.com/e, status: 503, title: Busy, detail: try later, kind: k1 }
      catch:
        errors:
          with: { status: 503, details: try later, kind: k1, type: https://example.com/e }
        as: problem
        when: '${ $problem.title == \"Busy\" && $data.ok }'
        do:
          - recover:
              set: '${ ({ recovered: $problem.detail, instance: $problem.instance, input: $data.ok }) }'
  - after:
      set: '${ ({ after: $data }) }'
";
    assert_eq!(
        output(&run(body, json!({"ok": true}))),
        json!({"after": {"recovered": "try later", "instance": "/do/0/guarded/try/0/fail", "input": true}})
    );
    let p = problem(&run(body, json!({"ok": false})));
    assert_eq!(p["detail"], "Busy, at the step fail: try later");
    let except = body.replace("when:", "exceptWhen:");
    assert_eq!(
        problem(&run(&except, json!({"ok": true})))["reason"],
        "unavailable"
    );
    let other_status = body.replace("with: { status: 503", "with: { status: 500");
    assert_eq!(
        problem(&run(&other_status, json!({"ok": true})))["reason"],
        "unavailable"
    );
}

#[test]
fn a_catch_without_do_hands_on_the_input_and_catches_runtime_errors() {
    let body = "do:
  - guarded:
      try:
        - broken:
            set: '${ $data.a.b.c }'
      catch:
        errors:
          with: { type: expression, status: 400 }
";
    assert_eq!(output(&run(body, json!({"x": 1}))), json!({"x": 1}));
    let uncaught = "do:\n  - broken:\n      set: '${ $data.a.b.c }'\n";
    let p = problem(&run(uncaught, json!({})));
    assert_eq!(p["reason"], "invalid_input");
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .starts_with("An expression failed, at the step broken: "),
        "{p}"
    );
}

// ---- 3. wait, retry, timeouts ----

#[test]
fn wait_sets_a_timer_and_resumes() {
    let wf = workflow(
        "do:\n  - pause:\n      wait: PT30S\n  - after:\n      set: '${ ({ waited: $data.n }) }'\n",
    );
    let step = start(&wf, &info(), json!({"n": 1}), 5_000);
    assert!(step.ending.is_none());
    let set = timers(&step);
    assert_eq!(set, [("wait:/do/0/pause#1".to_owned(), 35_000)]);
    let state = roundtrip(step.state);
    let stale = apply(
        &wf,
        &info(),
        state.clone(),
        Input::TimerFired {
            timer_id: "nope".into(),
        },
        6_000,
    );
    assert_eq!(stale.state, state);
    assert!(stale.events.is_empty());
    let step = apply(
        &wf,
        &info(),
        state,
        Input::TimerFired {
            timer_id: set[0].0.clone(),
        },
        35_000,
    );
    assert_eq!(output(&step), json!({"waited": 1}));
}

#[test]
fn retries_wait_with_backoff_and_run_the_try_list_from_its_first_task() {
    let body = "use:
  retries:
    patient:
      delay: { seconds: 5 }
      backoff: { exponential: {} }
      limit:
        attempt: { count: 3 }
do:
  - review:
      try:
        - first:
            set: '${ ({ tries: ($context.tries ?? 0) + 1 }) }'
            export:
              as: '${ ({ tries: $output.tries }) }'
        - fail:
            raise:
              error: { type: https://example.com/busy, status: 503, title: Busy }
      catch:
        errors:
          with: { status: 503 }
        retry: patient
        do:
          - give-up:
              raise:
                error:
                  type: https://example.com/errors/review-unavailable
                  status: 503
                  title: The review could not be run
";
    let wf = workflow(body);
    let mut step = start(&wf, &info(), json!({}), 0);
    let mut delays = Vec::new();
    let mut now = 0;
    while step.ending.is_none() {
        let set = timers(&step);
        assert_eq!(set.len(), 1, "{:?}", step.commands);
        delays.push(set[0].1 - now);
        now = set[0].1;
        step = apply(
            &wf,
            &info(),
            roundtrip(step.state),
            Input::TimerFired {
                timer_id: set[0].0.clone(),
            },
            now,
        );
    }
    assert_eq!(delays, [5_000, 10_000, 20_000]);
    let p = problem(&step);
    assert_eq!(p["reason"], "unavailable");
    assert_eq!(
        p["detail"],
        "The review could not be run, at the step give-up."
    );
    assert_eq!(step.state.context, json!({"tries": 4}));
}

#[test]
fn linear_backoff_jitter_when_and_duration_limits() {
    let body = "do:
  - t:
      try:
        - fail:
            raise:
              error: { type: x:e, status: 503 }
      catch:
        retry:
          delay: PT10S
          backoff: { linear: {} }
          jitter: { from: PT1S, to: PT2S }
          limit:
            duration: PT25S
          exceptWhen: '${ $error.status == 500 }'
";
    let wf = workflow(body);
    let mut step = start(&wf, &info(), json!({"in": 1}), 0);
    let mut delays = Vec::new();
    let mut now = 0;
    while step.ending.is_none() {
        let set = timers(&step);
        delays.push(set[0].1 - now);
        now = set[0].1;
        step = apply(
            &wf,
            &info(),
            step.state,
            Input::TimerFired {
                timer_id: set[0].0.clone(),
            },
            now,
        );
    }
    // The second retry would start after 21 to 22 seconds more, past the 25 seconds since
    // the first attempt: "No retry starts once this much time has passed", so none is
    // waited for.
    assert_eq!(delays.len(), 1, "{delays:?}");
    assert!((11_000..=12_000).contains(&delays[0]), "{delays:?}");
    // Retries ran out within 25 seconds; no catch.do hands on the input.
    assert_eq!(output(&step), json!({"in": 1}));
    // The same run gives the same jitter.
    let again = start(&wf, &info(), json!({"in": 1}), 0);
    assert_eq!(timers(&again)[0].1, delays[0]);
}

#[test]
fn a_task_timeout_raises_408_and_cancels_what_it_waits_for() {
    let body = "do:
  - slow:
      timeout:
        after: PT10S
      call: run_definition
      with: { type: computation, name: month-window }
";
    let wf = workflow(body);
    let step = start(&wf, &info(), json!({}), 0);
    let set = timers(&step);
    assert_eq!(set.len(), 2, "{set:?}");
    let timeout = set
        .iter()
        .find(|(id, _)| id.starts_with("timeout:"))
        .unwrap()
        .clone();
    assert_eq!(timeout.1, 10_000);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired {
            timer_id: timeout.0,
        },
        10_000,
    );
    assert!(
        step.commands
            .iter()
            .any(|c| matches!(c, Command::CancelCall { kind, .. } if kind == "deadline"))
    );
    let p = problem(&step);
    assert_eq!(p["reason"], "unavailable");
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .starts_with("The step ran out of time, at the step slow"),
        "{p}"
    );
}

#[test]
fn a_document_timeout_ends_the_run() {
    let body = "timeout:\n  after: PT1M\ndo:\n  - pause:\n      wait: PT2M\n";
    let wf = workflow(body);
    let step = start(&wf, &info(), json!({}), 0);
    let set = timers(&step);
    assert!(set.contains(&("timeout:/".to_owned(), 60_000)), "{set:?}");
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired {
            timer_id: "timeout:/".into(),
        },
        60_000,
    );
    assert_eq!(problem(&step)["reason"], "unavailable");
    assert!(step.commands.contains(&Command::CancelTimer {
        timer_id: "wait:/do/0/pause#1".into()
    }));
}

#[test]
fn a_caught_timeout_retries_the_call_under_a_new_id() {
    let body = "do:
  - t:
      try:
        - slow:
            timeout: { after: PT5S }
            call: run_definition
            with: { type: computation, name: month-window, input: { m: '${ $data.m }' } }
      catch:
        errors:
          with: { type: timeout }
        retry:
          limit:
            attempt: { count: 1 }
";
    let wf = workflow(body);
    let step = start(&wf, &info(), json!({"m": "2026-01"}), 0);
    let first = calls(&step);
    assert_eq!(first[0].2, json!({"m": "2026-01"}));
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired {
            timer_id: "timeout:/do/0/t/try/0/slow#1".into(),
        },
        5_000,
    );
    let second = calls(&step);
    assert_eq!(second.len(), 1, "{:?}", step.commands);
    assert_ne!(first[0].0, second[0].0);
    // The first child's late ending is ignored.
    let late = apply(
        &wf,
        &info(),
        step.state.clone(),
        Input::CallEnded {
            call_id: first[0].0.clone(),
            outcome: CallOutcome::Succeeded { output: json!(1) },
        },
        6_000,
    );
    assert!(late.ending.is_none() && late.commands.is_empty());
    let done = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id: second[0].0.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!({"ok": 2}),
            },
        },
        6_000,
    );
    assert_eq!(output(&done), json!({"ok": 2}));
}

// ---- 4. calls ----

#[test]
fn a_call_starts_a_child_with_derived_ids_and_takes_its_output() {
    let body = "do:\n  - work:\n      call: run_definition\n      with:\n        type: computation\n        name: month-window\n        input: { month: '${ $data.month }' }\n";
    let wf = workflow(body);
    let mut run_info = info();
    run_info
        .functions_ms
        .insert("computation/month-window".into(), 10_000);
    let step = start(&wf, &run_info, json!({"month": "2026-05"}), 5_000);
    let again = start(&wf, &run_info, json!({"month": "2026-05"}), 5_000);
    assert_eq!(
        step.commands, again.commands,
        "the same inputs give the same ids"
    );
    let Command::StartCall {
        call_id,
        child_run_id,
        def_type,
        name,
        input,
        wait_ms,
    } = &step.commands[0]
    else {
        panic!("{:?}", step.commands)
    };
    assert_eq!(
        (def_type.as_str(), name.as_str()),
        ("computation", "month-window")
    );
    assert_eq!(input, &json!({"month": "2026-05"}));
    assert_eq!(*wait_ms, 70_000);
    assert!(child_run_id.starts_with("run-1.") && child_run_id.len() <= 128);
    assert_eq!(timers(&step)[0].1, 75_000);
    let done = apply(
        &wf,
        &run_info,
        roundtrip(step.state),
        Input::CallEnded {
            call_id: call_id.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!([1, 2]),
            },
        },
        9_000,
    );
    assert_eq!(output(&done), json!([1, 2]));
    assert!(
        done.commands
            .iter()
            .any(|c| matches!(c, Command::CancelTimer { .. }))
    );
}

#[test]
fn a_child_rejection_raises_the_error_of_the_table() {
    let body = "do:\n  - work-out-month:\n      call: run_definition\n      with: { type: computation, name: month-window }\n";
    let wf = workflow(body);
    let step = start(&wf, &info(), json!({}), 0);
    let call_id = calls(&step)[0].0.clone();
    let child = json!({
        "reason": "invalid_input",
        "title": "The computation function month-window refused its input",
        "detail": "month, The month to report on: expected at least 6 characters",
        "issues": [{"pointer": "/month", "message": "expected at least 6 characters"}],
        "status": 422,
    });
    let done = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id,
            outcome: CallOutcome::Rejected {
                problem: child_problem(child),
            },
        },
        1_000,
    );
    let p = problem(&done);
    assert_eq!(p["reason"], "invalid_input");
    assert_eq!(
        p["detail"],
        "The computation function month-window refused its input, at the step work-out-month: month, The month to report on: expected at least 6 characters"
    );
    assert_eq!(p["issues"][0]["pointer"], "/month");
    let cases = [
        (json!({"reason": "forbidden"}), "authorization", 403),
        (json!({"reason": "not_found"}), "configuration", 404),
        (
            json!({"reason": "conflict", "kind": "unworkable"}),
            "runtime",
            409,
        ),
        (
            json!({"reason": "conflict", "kind": "tools_called"}),
            "https://on.auto/problems/tools_called",
            409,
        ),
        (json!({"reason": "unavailable"}), "communication", 503),
        (
            json!({"reason": "unavailable", "kind": "rebuilding"}),
            "https://on.auto/problems/rebuilding",
            503,
        ),
        (
            json!({"reason": "cancelled", "kind": "requested"}),
            "https://on.auto/problems/cancelled",
            409,
        ),
        (
            json!({"reason": "unanswered", "kind": "expired"}),
            "https://on.auto/problems/unanswered",
            410,
        ),
        (json!({"reason": "failed"}), "runtime", 500),
    ];
    for (child, error_type, status) in cases {
        let error = call_error(&child_problem(child.clone()), "computation", "month-window");
        let expected = if error_type.contains(':') {
            error_type.to_owned()
        } else {
            format!("{ERROR_TYPE_BASE}{error_type}")
        };
        assert_eq!(
            (error.error_type.as_str(), error.status),
            (expected.as_str(), status),
            "{child}"
        );
        assert_eq!(
            error.kind,
            child.get("kind").and_then(Value::as_str).map(str::to_owned)
        );
    }
    assert_eq!(
        call_error(
            &child_problem(json!({"reason": "invalid_input"})),
            "workflow",
            "monthly"
        )
        .title
        .as_deref(),
        Some("The workflow monthly stopped")
    );
    assert_eq!(
        call_error(
            &child_problem(json!({"reason": "invalid_input"})),
            "computation",
            "m"
        )
        .title
        .as_deref(),
        Some("The computation function m refused its input")
    );
}

#[test]
fn a_call_past_its_wait_raises_timeout_and_cancels_the_child_with_deadline() {
    let body = "do:\n  - work:\n      call: run_definition\n      with: { type: workflow, name: monthly }\n";
    let wf = workflow(body);
    let mut run_info = info();
    run_info.run_duration_ms = 7_200_000;
    let step = start(&wf, &run_info, json!({}), 1_000);
    // A workflow's own maximum is a run's, plus a minute, within the run's time left.
    assert_eq!(calls(&step)[0].3, 7_200_000);
    let (timer_id, due) = timers(&step)[0].clone();
    assert_eq!(due, 7_201_000);
    let done = apply(
        &wf,
        &run_info,
        step.state,
        Input::TimerFired { timer_id },
        due,
    );
    assert!(
        done.commands
            .iter()
            .any(|c| matches!(c, Command::CancelCall { kind, .. } if kind == "deadline"))
    );
    let p = problem(&done);
    assert_eq!(p["reason"], "unavailable");
}

#[test]
fn invalid_call_arguments_are_validation_errors() {
    let body = "do:\n  - work:\n      call: run_definition\n      with: { type: '${ $data.t }', name: x }\n";
    let p = problem(&run(body, json!({"t": "nothing"})));
    assert_eq!(p["reason"], "invalid_input");
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .starts_with("A value is not valid, at the step work"),
        "{p}"
    );
}

// ---- 5. fork and cancel ----

const FORK: &str = "do:
  - reviews:
      fork:
        compete: COMPETE
        branches:
          - first:
              call: run_definition
              with: { type: reasoning, name: review, input: { brief: '${ $data.a }' } }
          - second:
              call: run_definition
              with: { type: reasoning, name: review, input: { brief: '${ $data.b }' } }
";

#[test]
fn a_fork_hands_on_its_branches_outputs_in_written_order() {
    let wf = workflow(&FORK.replace("COMPETE", "false"));
    let step = start(&wf, &info(), json!({"a": "A", "b": "B"}), 0);
    let started = calls(&step);
    assert_eq!(started.len(), 2);
    assert_eq!(started[1].2, json!({"brief": "B"}));
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id: started[1].0.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!("two"),
            },
        },
        1,
    );
    assert!(step.ending.is_none());
    let step = apply(
        &wf,
        &info(),
        roundtrip(step.state),
        Input::CallEnded {
            call_id: started[0].0.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!("one"),
            },
        },
        2,
    );
    assert_eq!(output(&step), json!(["one", "two"]));
}

#[test]
fn a_failing_branch_fails_the_fork_and_cancels_the_others() {
    let wf = workflow(&FORK.replace("COMPETE", "false"));
    let step = start(&wf, &info(), json!({}), 0);
    let started = calls(&step);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id: started[0].0.clone(),
            outcome: CallOutcome::Rejected {
                problem: child_problem(json!({"reason": "unavailable", "detail": "down"})),
            },
        },
        1,
    );
    assert!(step.commands.iter().any(|c| matches!(c, Command::CancelCall { call_id, kind, .. } if *call_id == started[1].0 && kind == "parent_ended")));
    assert_eq!(problem(&step)["reason"], "unavailable");
}

#[test]
fn a_competing_fork_takes_the_first_to_finish_and_cancels_the_losers() {
    let wf = workflow(&FORK.replace("COMPETE", "true"));
    let step = start(&wf, &info(), json!({}), 0);
    let started = calls(&step);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id: started[0].0.clone(),
            outcome: CallOutcome::Rejected {
                problem: child_problem(json!({"reason": "unavailable"})),
            },
        },
        1,
    );
    assert!(step.ending.is_none(), "one failure does not end a race");
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id: started[1].0.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!("won"),
            },
        },
        2,
    );
    assert_eq!(output(&step), json!("won"));
    let wf = workflow(&FORK.replace("COMPETE", "true"));
    let step = start(&wf, &info(), json!({}), 0);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::CallEnded {
            call_id: started[1].0.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!("fast"),
            },
        },
        1,
    );
    assert_eq!(output(&step), json!("fast"));
    assert!(step.commands.iter().any(|c| matches!(c, Command::CancelCall { call_id, kind, .. } if *call_id == started[0].0 && kind == "parent_ended")));
}

#[test]
fn cancel_ends_the_run_and_cancels_its_children() {
    let wf = workflow(&FORK.replace("COMPETE", "false"));
    let step = start(&wf, &info(), json!({}), 0);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::Cancel {
            detail: "Nobody needs it now".into(),
            kind: None,
        },
        1,
    );
    let p = problem(&step);
    assert_eq!(
        (p["reason"].clone(), p["kind"].clone(), p["detail"].clone()),
        (
            json!("cancelled"),
            json!("requested"),
            json!("Nobody needs it now")
        )
    );
    let cancels = step
        .commands
        .iter()
        .filter(|c| matches!(c, Command::CancelCall { kind, .. } if kind == "parent_ended"))
        .count();
    assert_eq!(cancels, 2);
    let after = apply(
        &wf,
        &info(),
        step.state.clone(),
        Input::Cancel {
            detail: "again".into(),
            kind: None,
        },
        2,
    );
    assert!(after.ending.is_none() && after.commands.is_empty());
}

#[test]
fn a_cancel_from_the_waiting_workflow_keeps_its_kind() {
    let wf = workflow(&FORK.replace("COMPETE", "false"));
    let step = start(&wf, &info(), json!({}), 0);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::Cancel {
            detail: "The workflow run top no longer waits for this run.".into(),
            kind: Some("parent_ended".into()),
        },
        1,
    );
    let p = problem(&step);
    assert_eq!(
        (p["reason"].clone(), p["kind"].clone()),
        (json!("cancelled"), json!("parent_ended"))
    );
}

#[test]
fn a_run_past_the_longest_a_run_may_last_is_cancelled_as_overrun() {
    let wf = workflow("do:\n  - nap:\n      wait: PT1H\n");
    let mut info = info();
    info.run_duration_ms = 2 * 3_600_000;
    let step = super::start(&wf, &info, json!({}), 1_000);
    // The overrun timer is set from the start, at the run's start plus its longest duration;
    // the task's own wait is bounded by it.
    let timers: Vec<(&str, i64)> = step
        .commands
        .iter()
        .filter_map(|c| match c {
            Command::SetTimer { timer_id, due_ms } => Some((timer_id.as_str(), *due_ms)),
            _ => None,
        })
        .collect();
    let started = info.started_at_ms;
    assert!(
        timers.contains(&("overrun:/", started + 2 * 3_600_000)),
        "{timers:?}"
    );
    let step = apply(
        &wf,
        &info,
        step.state,
        Input::TimerFired {
            timer_id: "overrun:/".into(),
        },
        started + 2 * 3_600_000,
    );
    let p = problem(&step);
    assert_eq!(
        (
            p["reason"].clone(),
            p["kind"].clone(),
            p["status"].clone(),
            p["detail"].clone()
        ),
        (
            json!("cancelled"),
            json!("overrun"),
            json!(409),
            json!("The run was still running at the longest a run may last, 2 hours.")
        )
    );
}

#[test]
fn then_end_in_a_branch_ends_the_run_and_cancels_the_other_branches() {
    let body = "do:
  - race:
      fork:
        branches:
          - slow:
              wait: PT1H
          - quick:
              set: { quick: true }
              then: end
  - never:
      set: { never: true }
";
    let step = run(body, json!({}));
    assert_eq!(output(&step), json!({"quick": true}));
    assert!(
        step.commands.contains(&Command::CancelTimer {
            timer_id: "wait:/do/0/race/fork/branches/0/slow#1".into()
        }),
        "{:?}",
        step.commands
    );
}

#[test]
fn a_deep_snapshot_goes_through_json() {
    let depth = 60;
    let mut body = String::from("do:\n");
    let mut indent = 2;
    for level in 0..depth {
        let pad = " ".repeat(indent);
        body.push_str(&format!("{pad}- d{level}:\n{pad}    do:\n"));
        indent += 6;
    }
    let pad = " ".repeat(indent);
    body.push_str(&format!("{pad}- pause:\n{pad}    wait: PT1S\n"));
    let wf = workflow(&body);
    let mut deep = json!(1);
    for _ in 0..500 {
        deep = json!([deep]);
    }
    let step = start(&wf, &info(), json!({"deep": deep}), 0);
    let (timer_id, _) = timers(&step)[0].clone();
    let state = roundtrip(step.state);
    let done = apply(&wf, &info(), state, Input::TimerFired { timer_id }, 1_000);
    assert_eq!(output(&done)["deep"], deep);
}

#[test]
fn a_run_keeping_more_than_1_5_mib_across_a_wait_ends() {
    let body = "do:\n  - grow:\n      set: '${ ({ text: \"x\".repeat($data.n) }) }'\n  - pause:\n      wait: PT1S\n";
    // What the waiting step records: its snapshot and its events, each holding the text;
    // `None` when the run ended instead of waiting.
    let kept = |n: usize| {
        let step = run(body, json!({ "n": n }));
        step.ending.is_none().then(|| {
            serde_json::to_vec(&step.state).unwrap().len() + super::run::events_bytes(&step.events)
        })
    };
    let (one, two) = (kept(10_000).unwrap(), kept(20_000).unwrap());
    let copies = (two - one) / 10_000;
    let overhead = one - copies * 10_000;
    // The longest text whose step fits the limit, found from the two measures; the digits of
    // the count recorded in the history move with it, so it is checked, not assumed.
    let mut edge = (KEPT_ACROSS_WAIT_BYTES_MAX - overhead) / copies;
    while kept(edge).is_none() {
        edge -= 1;
    }
    assert!(kept(edge).unwrap() <= KEPT_ACROSS_WAIT_BYTES_MAX);
    let over = run(body, json!({ "n": edge + 1 }));
    let p = problem(&over);
    assert_eq!(
        (p["reason"].clone(), p["status"].clone()),
        (json!("unavailable"), json!(503))
    );
    let detail = p["detail"].as_str().unwrap();
    assert!(
        detail.contains("across its wait") && detail.contains("at most 1,572,864 in all."),
        "{detail}"
    );
}

#[test]
fn a_run_past_512_mib_of_history_ends() {
    let wf = workflow("do:\n  - pause:\n      wait: PT1S\n  - again:\n      wait: PT1S\n");
    let step = start(&wf, &info(), json!({}), 0);
    let timer = timers(&step)[0].0.clone();
    let mut state = step.state;
    state.history_bytes = HISTORY_BYTES_MAX - 10;
    let step = apply(
        &wf,
        &info(),
        state,
        Input::TimerFired { timer_id: timer },
        1_000,
    );
    let p = problem(&step);
    assert_eq!(p["reason"], "unavailable");
    assert!(
        p["detail"].as_str().unwrap().contains("at most 512 MiB."),
        "{p}"
    );
}

#[test]
fn output_as_of_a_task_reads_its_input_after_input_from() {
    let body = "do:\n  - a:\n      input:\n        from: '${ ({ shaped: true }) }'\n      set: { x: 1 }\n      output:\n        as: '${ ({ ...$input, ...$data }) }'\n";
    assert_eq!(
        output(&run(body, json!({"raw": true}))),
        json!({"shaped": true, "x": 1})
    );
}

#[test]
fn an_attempt_past_its_duration_raises_timeout_inside_the_try() {
    let body = "do:
  - t:
      try:
        - slow:
            call: run_definition
            with: { type: computation, name: month-window }
      catch:
        errors:
          with: { type: timeout, status: 408 }
        retry:
          limit:
            attempt: { count: 1, duration: PT3S }
        do:
          - gave-up:
              set: '${ ({ gaveUp: $error.status }) }'
";
    let wf = workflow(body);
    let step = start(&wf, &info(), json!({}), 0);
    let attempt = timers(&step)
        .into_iter()
        .find(|(id, _)| id.starts_with("attempt:"))
        .unwrap();
    assert_eq!(attempt.1, 3_000);
    let first = calls(&step)[0].0.clone();
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired {
            timer_id: attempt.0,
        },
        3_000,
    );
    assert!(step.commands.iter().any(|c| matches!(c, Command::CancelCall { call_id, kind, .. } if *call_id == first && kind == "deadline")));
    let second = calls(&step);
    assert_eq!(second.len(), 1);
    let attempt = timers(&step)
        .into_iter()
        .find(|(id, _)| id.starts_with("attempt:"))
        .unwrap();
    assert_eq!(attempt, ("attempt:/do/0/t#2".to_owned(), 6_000));
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired {
            timer_id: attempt.0,
        },
        6_000,
    );
    assert_eq!(output(&step), json!({"gaveUp": 408}));
}

#[test]
fn a_called_workflows_rejection_reads_before_its_own_words() {
    // The child workflow `monthly` stops at work-out-month with the function's refusal.
    let child = workflow(
        "do:\n  - work-out-month:\n      call: run_definition\n      with: { type: computation, name: month-window }\n",
    );
    let child_info = RunInfo::new(
        "child",
        json!({"type": "workflow", "name": "monthly", "version": 1}),
        0,
    );
    let step = start(&child, &child_info, json!({}), 0);
    let refusal = json!({
        "reason": "invalid_input",
        "title": "The computation function month-window refused its input",
        "detail": "month, The month to report on: expected at least 6 characters",
        "status": 422,
    });
    let call_id = calls(&step)[0].0.clone();
    let step = apply(
        &child,
        &child_info,
        step.state,
        Input::CallEnded {
            call_id,
            outcome: CallOutcome::Rejected {
                problem: child_problem(refusal),
            },
        },
        1,
    );
    let stopped = problem(&step);
    assert_eq!(stopped["title"], "The workflow monthly stopped");
    // The parent calls it at the step report.
    let parent = workflow(
        "do:\n  - report:\n      call: run_definition\n      with: { type: workflow, name: monthly }\n",
    );
    let step = start(&parent, &info(), json!({}), 0);
    let call_id = calls(&step)[0].0.clone();
    let step = apply(
        &parent,
        &info(),
        step.state,
        Input::CallEnded {
            call_id,
            outcome: CallOutcome::Rejected {
                problem: child_problem(stopped),
            },
        },
        2,
    );
    let p = problem(&step);
    assert_eq!(p["reason"], "invalid_input");
    assert_eq!(
        p["detail"],
        "The workflow monthly stopped, at the step report: The computation function month-window refused its input, at the step work-out-month: month, The month to report on: expected at least 6 characters"
    );
}

#[test]
fn the_input_past_100000_ends_the_run() {
    let wf = workflow("do:\n  - pause:\n      wait: PT1S\n  - again:\n      wait: PT1S\n");
    let step = start(&wf, &info(), json!({}), 0);
    let timer = timers(&step)[0].0.clone();
    let mut state = step.state;
    state.inputs = INPUTS_MAX - 1;
    let step = apply(
        &wf,
        &info(),
        state,
        Input::TimerFired { timer_id: timer },
        1_000,
    );
    assert!(step.ending.is_none());
    let timer = timers(&step)[0].0.clone();
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired { timer_id: timer },
        2_000,
    );
    let p = problem(&step);
    assert_eq!(p["reason"], "unavailable");
    assert!(
        p["detail"].as_str().unwrap().contains("100,000 inputs"),
        "{p}"
    );
}

/// The page's first example, as written there.
const PAGE_EXAMPLE: &str = r#"document:
  dsl: '1.0.3'
  namespace: campaign-review-tutorial
  name: review-and-approve
  version: '1.0.0'
  title: Review a brief and ask for approval
input:
  schema:
    document:
      type: object
      properties:
        brief: { type: string }
        owner: { type: string }
      required: [brief, owner]
use:
  retries:
    patient:
      delay: { seconds: 5 }
      backoff: { exponential: {} }
      limit:
        attempt: { count: 3 }
do:
  - review:
      try:
        - review-brief:
            call: run_definition
            with:
              type: reasoning
              name: review-campaign-brief
              input:
                brief: ${ $data.brief }
      catch:
        errors:
          with: { status: 503 }
        retry: patient
        do:
          - give-up:
              raise:
                error:
                  type: https://example.com/errors/review-unavailable
                  status: 503
                  title: The review could not be run
      output:
        as: '${ ({ owner: $input.owner, review: $data }) }'
  - approval:
      try:
        - ask-for-approval:
            call: run_definition
            with:
              type: interaction
              name: approve-campaign-brief
              input:
                owner: ${ $data.owner }
                review: ${ $data.review }
      catch:
        errors:
          with: { type: https://on.auto/problems/unanswered }
        do:
          - no-answer:
              set: { verdict: revise, note: No answer within two days }
      output:
        as: '${ ({ review: $input.review, approval: $data }) }'
"#;

fn only_call(step: &Step) -> (String, String, Value) {
    let started = calls(step);
    assert_eq!(started.len(), 1, "{:?}", step.commands);
    let (call_id, name, input, _) = started[0].clone();
    (call_id, name, input)
}

#[test]
fn the_page_example_reviews_then_asks_for_approval() {
    let wf = Workflow::from_source(PAGE_EXAMPLE).unwrap();
    let run_info = RunInfo::new(
        "r",
        json!({"type": "workflow", "name": "review-and-approve", "version": 1}),
        0,
    );
    let step = start(
        &wf,
        &run_info,
        json!({"brief": "B", "owner": "o@example.com"}),
        0,
    );
    let (call_id, name, input) = only_call(&step);
    assert_eq!(
        (name.as_str(), input),
        ("review-campaign-brief", json!({"brief": "B"}))
    );
    let step = apply(
        &wf,
        &run_info,
        step.state,
        Input::CallEnded {
            call_id,
            outcome: CallOutcome::Succeeded {
                output: json!("Ready"),
            },
        },
        1_000,
    );
    let (call_id, name, input) = only_call(&step);
    assert_eq!(
        (name.as_str(), input),
        (
            "approve-campaign-brief",
            json!({"owner": "o@example.com", "review": "Ready"})
        )
    );
    let answered = apply(
        &wf,
        &run_info,
        step.state.clone(),
        Input::CallEnded {
            call_id: call_id.clone(),
            outcome: CallOutcome::Succeeded {
                output: json!({"verdict": "approve"}),
            },
        },
        2_000,
    );
    assert_eq!(
        output(&answered),
        json!({"review": "Ready", "approval": {"verdict": "approve"}})
    );
    let expired = json!({"reason": "unanswered", "kind": "expired", "title": "The interaction function approve-campaign-brief was not answered"});
    let unanswered = apply(
        &wf,
        &run_info,
        step.state,
        Input::CallEnded {
            call_id,
            outcome: CallOutcome::Rejected {
                problem: child_problem(expired),
            },
        },
        3_000,
    );
    assert_eq!(
        output(&unanswered),
        json!({"review": "Ready", "approval": {"verdict": "revise", "note": "No answer within two days"}})
    );
}

#[test]
fn the_page_example_gives_up_after_three_retries() {
    let wf = Workflow::from_source(PAGE_EXAMPLE).unwrap();
    let run_info = RunInfo::new(
        "r",
        json!({"type": "workflow", "name": "review-and-approve", "version": 1}),
        0,
    );
    let mut step = start(&wf, &run_info, json!({"brief": "B", "owner": "o"}), 0);
    let mut children = Vec::new();
    let mut now = 0;
    loop {
        let (call_id, _, _) = only_call(&step);
        children.push(call_id.clone());
        let down = json!({"reason": "unavailable", "detail": "The provider is down"});
        step = apply(
            &wf,
            &run_info,
            step.state,
            Input::CallEnded {
                call_id,
                outcome: CallOutcome::Rejected {
                    problem: child_problem(down),
                },
            },
            now,
        );
        if step.ending.is_some() {
            break;
        }
        let retry = timers(&step)
            .into_iter()
            .find(|(id, _)| id.starts_with("retry:"))
            .unwrap();
        now = retry.1;
        step = apply(
            &wf,
            &run_info,
            step.state,
            Input::TimerFired { timer_id: retry.0 },
            now,
        );
    }
    assert_eq!(children.len(), 4);
    assert_eq!(now, 35_000);
    let p = problem(&step);
    assert_eq!(p["reason"], "unavailable");
    assert_eq!(
        p["detail"],
        "The review could not be run, at the step give-up."
    );
    assert_eq!(p["title"], "The workflow review-and-approve stopped");
}

#[test]
fn a_snapshot_of_another_workflow_stops_the_run_without_a_panic() {
    let one = workflow("do:\n  - pause:\n      wait: PT1S\n");
    let other = workflow("do:\n  - renamed:\n      wait: PT1S\n");
    let step = start(&one, &info(), json!({}), 0);
    let timer = timers(&step)[0].0.clone();
    let step = apply(
        &other,
        &info(),
        step.state,
        Input::TimerFired { timer_id: timer },
        1,
    );
    assert_eq!(problem(&step)["reason"], "unavailable");
}

/// The engine's pointer lookup finds what `Value::pointer` finds, escapes and indexes alike.
#[test]
fn a_pointer_resolves_as_serde_json_resolves_it() {
    let doc = json!({
        "do": [{"first": {"set": {"x": 1}}}, {"a/b": {"c~d": 2}}],
        "": {"": 3},
        "use": {"timeouts": {"t": {"after": "PT1S"}}},
    });
    for pointer in [
        "",
        "/",
        "//",
        "/do",
        "/do/0/first/set/x",
        "/do/1/a~1b/c~0d",
        "/do/1/a~1b/c~01d",
        "/do/01",
        "/do/+1",
        "/do/-1",
        "/do/2",
        "/do/",
        "/use/timeouts/t/after",
        "/use/timeouts/t/after/x",
        "do",
        "/missing",
    ] {
        assert_eq!(resolve(&doc, pointer), doc.pointer(pointer), "{pointer:?}");
    }
}

/// Each task's fields are found from its node by the path the index keeps, and that node is
/// the one its pointer names: in lists, branches, a try and its recovery, nested, and under a
/// name a pointer escapes.
#[test]
fn a_task_path_finds_the_node_its_pointer_names() {
    let wf = workflow(
        "do:
  - first:
      set: { a: 1 }
      output: { as: '${ $data }' }
  - 'a~b':
      fork:
        branches:
          - left:
              do:
                - deep:
                    set: { b: 2 }
          - right:
              try:
                - inner:
                    set: { c: 3 }
              catch:
                do:
                  - again:
                      set: { d: 4 }
  - last:
      set: { e: 5 }
",
    );
    assert!(wf.index.tasks.len() >= 8, "{:?}", wf.index.tasks.keys());
    for info in wf.index.tasks.values() {
        let path = info.path.as_deref().expect("every task's path is found");
        let by_path = follow(&wf.raw, path).unwrap();
        assert!(
            std::ptr::eq(by_path, wf.raw(&info.pointer).unwrap()),
            "{}",
            info.pointer
        );
        assert_eq!(
            wf.field(info, "set"),
            wf.raw(&format!("{}/set", info.pointer)),
            "{}",
            info.pointer
        );
    }
    let first = wf.task("/do/0/first");
    assert_eq!(wf.field(first, "output/as"), Some(&json!("${ $data }")));
    assert_eq!(wf.field(first, "output/from"), None);
    assert_eq!(wf.field(first, "set/a"), Some(&json!(1)));
    assert!(wf.index.tasks.contains_key("/do/1/a~0b"));
}
