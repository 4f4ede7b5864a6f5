//! listen and emit ("Waiting for events", "Emitting an event") and their limits.

use super::*;

fn event(id: &str, event_type: &str, data: Value) -> Value {
    json!({
        "specversion": "1.0",
        "id": id,
        "type": event_type,
        "source": "/callers/local",
        "time": "2026-01-01T00:00:00.000Z",
        "data": data,
    })
}

fn send(wf: &Workflow, state: RunState, event: Value, now_ms: i64) -> Step {
    apply(wf, &info(), state, Input::EventReceived { event }, now_ms)
}

fn emitted(step: &Step) -> Vec<Value> {
    step.commands
        .iter()
        .filter_map(|c| match c {
            Command::EmitEvent { event } => Some(event.clone()),
            _ => None,
        })
        .collect()
}

fn types(step: &Step) -> Vec<&str> {
    step.events.iter().map(|e| e.event_type.as_str()).collect()
}

const LISTEN_ONE: &str = "do:
  - hear:
      listen:
        to:
          one:
            with: { type: com.example.revised }
";

#[test]
fn listen_one_waits_and_takes_the_data_of_the_event_that_matches() {
    let wf = workflow(LISTEN_ONE);
    let step = start(&wf, &info(), json!({}), 5_000);
    assert!(step.ending.is_none());
    assert!(step.commands.is_empty(), "{:?}", step.commands);
    let state = roundtrip(step.state);
    let step = send(
        &wf,
        state,
        event("e1", "com.example.other", json!(1)),
        6_000,
    );
    assert!(step.ending.is_none());
    assert_eq!(step.state.events_waiting(), 1);
    assert_eq!(types(&step), ["event_received"]);
    let step = send(
        &wf,
        step.state,
        event("e2", "com.example.revised", json!({"brief": "v2"})),
        7_000,
    );
    assert_eq!(output(&step), json!([{"brief": "v2"}]));
    assert_eq!(
        types(&step),
        ["event_received", "events_taken", "step_completed"]
    );
    assert_eq!(step.events[1].data["event_ids"], json!(["e2"]));
}

#[test]
fn an_event_sent_before_the_task_listens_is_kept_and_the_earliest_is_taken() {
    let wf = workflow(&format!(
        "do:\n  - pause:\n      wait: PT1S\n{}",
        &LISTEN_ONE["do:\n".len()..]
    ));
    let step = start(&wf, &info(), json!({}), 0);
    let timer = timers(&step)[0].0.clone();
    let step = send(
        &wf,
        step.state,
        event("a", "com.example.revised", json!("first")),
        100,
    );
    let step = send(
        &wf,
        step.state,
        event("b", "com.example.revised", json!("second")),
        200,
    );
    assert!(step.ending.is_none());
    assert_eq!(step.state.events_waiting(), 2);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired { timer_id: timer },
        1_000,
    );
    assert_eq!(output(&step), json!(["first"]));
}

#[test]
fn listen_any_takes_the_first_event_that_matches_any_filter() {
    let wf = workflow(
        "do:
  - hear:
      listen:
        to:
          any:
            - with: { type: com.example.approved }
            - with: { type: com.example.rejected }
",
    );
    let step = start(&wf, &info(), json!({}), 0);
    let step = send(
        &wf,
        step.state,
        event("x", "com.example.other", json!(0)),
        1,
    );
    let step = send(
        &wf,
        step.state,
        event("r", "com.example.rejected", json!("no")),
        2,
    );
    assert_eq!(output(&step), json!(["no"]));
    assert_eq!(step.state.events_waiting(), 1);
}

#[test]
fn listen_all_takes_one_event_for_each_filter_and_lists_them_in_filter_order() {
    let wf = workflow(
        "do:
  - hear:
      listen:
        to:
          all:
            - with: { type: com.example.legal }
            - with: { type: com.example.finance }
",
    );
    let step = start(&wf, &info(), json!({}), 0);
    let step = send(
        &wf,
        step.state,
        event("f", "com.example.finance", json!("f")),
        1,
    );
    assert!(step.ending.is_none());
    let step = send(
        &wf,
        roundtrip(step.state),
        event("f2", "com.example.finance", json!("f2")),
        2,
    );
    assert!(step.ending.is_none());
    assert_eq!(step.state.events_waiting(), 1);
    let step = send(
        &wf,
        step.state,
        event("l", "com.example.legal", json!("l")),
        3,
    );
    assert_eq!(output(&step), json!(["l", "f"]));
    assert_eq!(step.state.events_waiting(), 1);
}

#[test]
fn read_envelope_and_raw_give_the_whole_events() {
    for read in ["envelope", "raw"] {
        let wf = workflow(&format!("{LISTEN_ONE}        read: {read}\n"));
        let step = start(&wf, &info(), json!({}), 0);
        let sent = json!({
            "specversion": "1.0", "id": "e", "type": "com.example.revised",
            "source": "https://example.com", "subject": "brief-7",
            "time": "2026-01-01T00:00:00.000Z",
        });
        let step = send(&wf, step.state, sent.clone(), 1);
        assert_eq!(output(&step), json!([sent]));
    }
    let wf = workflow(&format!("{LISTEN_ONE}        read: data\n"));
    let step = start(&wf, &info(), json!({}), 0);
    let mut sent = event("e", "com.example.revised", json!(null));
    sent.as_object_mut().unwrap().remove("data");
    assert_eq!(output(&send(&wf, step.state, sent, 1)), json!([null]));
}

#[test]
fn filters_compare_attributes_as_json_or_evaluate_an_expression_on_them() {
    let wf = workflow(
        "do:
  - hear:
      listen:
        to:
          one:
            with:
              type: com.example.reading
              subject: ~
              data: '${ $data > 5 }'
",
    );
    let step = start(&wf, &info(), json!({}), 0);
    let step = send(
        &wf,
        step.state,
        event("a", "com.example.reading", json!(5)),
        1,
    );
    let mut with_subject = event("b", "com.example.reading", json!(9));
    with_subject["subject"] = json!("s");
    let step = send(&wf, step.state, with_subject, 2);
    assert!(step.ending.is_none());
    let step = send(
        &wf,
        step.state,
        event("c", "com.example.reading", json!(6)),
        3,
    );
    assert_eq!(output(&step), json!([6]));

    let wf = workflow(
        "do:
  - hear:
      listen:
        to:
          one:
            with: { type: com.example.order, data: { region: eu, lines: 2 } }
",
    );
    let step = start(&wf, &info(), json!({}), 0);
    let step = send(
        &wf,
        step.state,
        event("a", "com.example.order", json!({"region": "eu"})),
        1,
    );
    assert!(step.ending.is_none());
    let step = send(
        &wf,
        step.state,
        event(
            "b",
            "com.example.order",
            json!({"lines": 2.0, "region": "eu"}),
        ),
        2,
    );
    assert_eq!(output(&step), json!([{"lines": 2.0, "region": "eu"}]));
}

#[test]
fn a_filter_that_raises_raises_an_expression_error_at_the_task() {
    let wf = workflow(
        "do:
  - hear:
      listen:
        to:
          one:
            with: { type: com.example.x, data: '${ $data.deep.value > 1 }' }
",
    );
    let step = start(&wf, &info(), json!({}), 0);
    let step = send(&wf, step.state, event("bad", "com.example.x", json!({})), 1);
    let p = problem(&step);
    assert_eq!(p["reason"], "invalid_input");
    let detail = p["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "An expression failed, at the step hear: The filter raised on the event bad:"
        ),
        "{detail}"
    );
}

#[test]
fn an_event_id_received_before_is_ignored() {
    let wf = workflow(&format!(
        "{LISTEN_ONE}  - again:\n      listen:\n        to:\n          one:\n            with: {{ type: com.example.revised }}\n"
    ));
    let step = start(&wf, &info(), json!({}), 0);
    let step = send(
        &wf,
        step.state,
        event("same", "com.example.revised", json!(1)),
        1,
    );
    assert!(step.ending.is_none());
    let before = step.state.clone();
    let again = send(
        &wf,
        step.state,
        event("same", "com.example.revised", json!(2)),
        2,
    );
    assert_eq!(again.state, before);
    assert!(again.events.is_empty() && again.commands.is_empty());
    let step = send(
        &wf,
        again.state,
        event("other", "com.example.revised", json!(3)),
        3,
    );
    assert_eq!(output(&step), json!([3]));
}

#[test]
fn a_listen_past_its_timeout_raises_408_and_puts_back_what_it_took() {
    let wf = workflow(
        "do:
  - t:
      try:
        - hear:
            timeout: { after: PT1M }
            listen:
              to:
                all:
                  - with: { type: com.example.a }
                  - with: { type: com.example.b }
      catch:
        errors:
          with: { status: 408 }
        as: failure
        do:
          - late:
              set: '${ ({ late: $failure.status }) }'
  - hear-a:
      listen:
        to:
          one:
            with: { type: com.example.a }
",
    );
    let step = start(&wf, &info(), json!({}), 0);
    assert_eq!(
        timers(&step),
        [("timeout:/do/0/t/try/0/hear#1".to_owned(), 60_000)]
    );
    let step = send(
        &wf,
        step.state,
        event("a1", "com.example.a", json!("a")),
        10,
    );
    assert_eq!(step.state.events_waiting(), 0);
    let step = apply(
        &wf,
        &info(),
        step.state,
        Input::TimerFired {
            timer_id: "timeout:/do/0/t/try/0/hear#1".into(),
        },
        60_000,
    );
    // The event the timed-out task took goes to the next listen.
    assert_eq!(output(&step), json!(["a"]));
}

#[test]
fn at_64_waiting_events_the_run_goes_on_and_one_more_ends_it() {
    let wf = workflow(LISTEN_ONE);
    let mut state = start(&wf, &info(), json!({}), 0).state;
    for n in 0..EVENTS_WAITING_MAX {
        let step = send(
            &wf,
            state,
            event(&format!("e{n}"), "com.example.other", json!(n)),
            1,
        );
        assert!(step.ending.is_none());
        state = step.state;
    }
    assert_eq!(state.events_waiting(), 64);
    let step = send(&wf, state, event("last", "com.example.other", json!(0)), 2);
    let p = problem(&step);
    assert_eq!(p["reason"], "unavailable");
    assert_eq!(
        p["detail"],
        "A limit of the run was exceeded: 65 events wait to be taken; a run keeps at most 64."
    );
    assert!(step.state.is_ended());
}

/// An event of exactly `bytes` bytes as JSON.
fn event_of_bytes(id: &str, event_type: &str, bytes: usize) -> Value {
    let overhead = serde_json::to_vec(&event(id, event_type, json!("")))
        .unwrap()
        .len();
    event(id, event_type, json!("x".repeat(bytes - overhead)))
}

#[test]
fn one_mib_of_waiting_events_is_kept_and_a_byte_more_ends_the_run() {
    let wf = workflow(LISTEN_ONE);
    let state = start(&wf, &info(), json!({}), 0).state;
    let at = event_of_bytes("big", "com.example.other", EVENTS_WAITING_BYTES_MAX);
    let step = send(&wf, state.clone(), at, 1);
    assert!(step.ending.is_none());
    let past = event_of_bytes("big", "com.example.other", EVENTS_WAITING_BYTES_MAX + 1);
    let p = problem(&send(&wf, state, past, 1));
    assert_eq!(
        p["detail"],
        "A limit of the run was exceeded: The events waiting to be taken hold 1048577 bytes as JSON; a run keeps at most 1 MiB."
    );
}

const LISTEN_LOOP: &str = "do:
  - loop:
      for:
        in: '${ Array.from({ length: 2000 }, (_, i) => i) }'
      do:
        - hear:
            listen:
              to:
                one:
                  with: { type: com.example.tick }
";

#[test]
fn a_run_takes_1024_events_over_its_life_and_one_more_ends_it() {
    let wf = workflow(LISTEN_LOOP);
    let mut state = start(&wf, &info(), json!({}), 0).state;
    for n in 0..EVENTS_RECEIVED_MAX {
        let step = send(
            &wf,
            state,
            event(&format!("t{n}"), "com.example.tick", json!(n)),
            1,
        );
        assert!(step.ending.is_none(), "{n}");
        state = step.state;
    }
    let step = send(&wf, state, event("t-last", "com.example.tick", json!(0)), 2);
    assert_eq!(
        problem(&step)["detail"],
        "A limit of the run was exceeded: The run received 1025 events; a run takes at most 1,024 over its life."
    );
}

#[test]
fn a_run_takes_4_mib_of_events_over_its_life_and_a_byte_more_ends_it() {
    let wf = workflow(LISTEN_LOOP);
    // Sixteen events of 256 KiB, the most one event may hold ("An event: 256 KiB as JSON").
    let part = EVENTS_RECEIVED_BYTES_MAX / 16;
    let mut state = start(&wf, &info(), json!({}), 0).state;
    for n in 0..15 {
        let step = send(
            &wf,
            state,
            event_of_bytes(&format!("q{n}"), "com.example.tick", part),
            1,
        );
        assert!(step.ending.is_none());
        state = step.state;
    }
    let at = send(
        &wf,
        state.clone(),
        event_of_bytes("q15", "com.example.tick", part),
        1,
    );
    assert!(at.ending.is_none());
    let past = send(
        &wf,
        state,
        event_of_bytes("q15", "com.example.tick", part + 1),
        1,
    );
    assert_eq!(
        problem(&past)["detail"],
        "A limit of the run was exceeded: The run received 4194305 bytes of events as JSON; a run takes at most 4 MiB over its life."
    );
}

#[test]
fn cancel_ends_a_listening_run() {
    let wf = workflow(LISTEN_ONE);
    let state = start(&wf, &info(), json!({}), 0).state;
    let step = apply(
        &wf,
        &info(),
        state,
        Input::Cancel {
            detail: "no longer needed".into(),
            kind: None,
        },
        1,
    );
    assert_eq!(problem(&step)["reason"], "cancelled");
    let after = send(
        &wf,
        step.state,
        event("late", "com.example.revised", json!(1)),
        2,
    );
    assert!(after.events.is_empty() && after.ending.is_none());
}

// ---- emit ----

const EMIT: &str = "do:
  - announce:
      emit:
        event:
          with:
            type: com.example.brief.approved
            source: https://example.com/campaigns
            subject: '${ $data.brief }'
            region: eu
            data: { brief: '${ $data.brief }' }
";

#[test]
fn emit_records_the_event_with_a_derived_id_and_the_steps_time_and_hands_its_input_on() {
    let wf = workflow(EMIT);
    let step = start(&wf, &info(), json!({"brief": "b-7"}), 1_767_225_600_000);
    assert_eq!(output(&step), json!({"brief": "b-7"}));
    let events = emitted(&step);
    assert_eq!(events.len(), 1);
    let sent = &events[0];
    let id = sent["id"].as_str().unwrap();
    assert!(id.starts_with("run-1.emit."), "{id}");
    assert_eq!(
        *sent,
        json!({
            "specversion": "1.0", "id": id, "type": "com.example.brief.approved",
            "source": "https://example.com/campaigns", "subject": "b-7",
            "time": "2026-01-01T00:00:00.000Z", "region": "eu", "data": {"brief": "b-7"},
        })
    );
    assert_eq!(
        types(&step),
        ["step_started", "event_published", "step_completed"]
    );
    assert_eq!(step.events[1].data["event"]["id"], json!(id));
    // The same step taken again emits the same id; another run, another.
    let again = start(&wf, &info(), json!({"brief": "b-7"}), 1_767_225_600_000);
    assert_eq!(emitted(&again)[0]["id"], json!(id));
    let other = RunInfo::new("run-2", info().definition, 1_000);
    let other = start(&wf, &other, json!({"brief": "b-7"}), 1_767_225_600_000);
    assert_ne!(emitted(&other)[0]["id"], json!(id));
}

#[test]
fn each_emit_of_a_loop_has_its_own_id_and_a_given_time_is_kept() {
    let wf = workflow(
        "do:
  - loop:
      for:
        in: '${ [1, 2] }'
      do:
        - tell:
            emit:
              event:
                with:
                  type: com.example.tick
                  source: '${ \"/campaigns\" }'
                  time: '2026-04-01T09:30:00+02:00'
",
    );
    let events = emitted(&start(&wf, &info(), json!({}), 0));
    assert_eq!(events.len(), 2);
    assert_ne!(events[0]["id"], events[1]["id"]);
    assert_eq!(events[0]["time"], "2026-04-01T09:30:00+02:00");
    assert_eq!(events[0]["source"], "/campaigns");
}

#[test]
fn an_emit_that_computes_a_kept_type_or_a_bad_attribute_fails_with_a_validation_error() {
    let cases = [
        (
            "type: '${ \"run_started\" }'\n                  source: https://x.example",
            "The type run_started is one the playbook keeps for its own facts.",
        ),
        (
            "type: t\n                  source: '${ \"/runs/abc\" }'",
            "The source /runs/abc is one the playbook keeps for its own facts.",
        ),
        (
            "type: t\n                  source: https://x.example\n                  time: yesterday",
            "The time \"yesterday\" is not an RFC 3339 time such as 2026-04-01T09:30:00Z.",
        ),
        (
            "type: t\n                  source: https://x.example\n                  depth: 3",
            "The attribute depth is set by the playbook, not by a sender.",
        ),
        (
            "type: '${ 7 }'\n                  source: https://x.example",
            "The event's type must be a string.",
        ),
    ];
    for (attributes, words) in cases {
        let wf = workflow(&format!(
            "do:\n  - tell:\n      emit:\n        event:\n          with:\n                  {attributes}\n"
        ));
        let p = problem(&start(&wf, &info(), json!({}), 0));
        assert_eq!(p["reason"], "invalid_input", "{attributes}");
        assert_eq!(
            p["detail"],
            format!("A value is not valid, at the step tell: {words}")
        );
    }
}

/// An emit of an event with `lengths[i]` characters of data for each item.
fn emit_loop(lengths: &[usize]) -> Step {
    let wf = workflow(&format!(
        "do:
  - loop:
      for:
        in: '${{ {lengths:?} }}'
      do:
        - tell:
            emit:
              event:
                with:
                  type: t
                  source: https://x.example
                  data: '${{ \"x\".repeat($item) }}'
"
    ));
    start(&wf, &info(), json!({}), 0)
}

/// The bytes of an emitted event beside its data's characters.
fn emitted_overhead() -> usize {
    let step = emit_loop(&[0]);
    serde_json::to_vec(&emitted(&step)[0]).unwrap().len()
}

#[test]
fn an_emitted_event_of_240_kib_is_recorded_and_a_byte_more_fails_with_400() {
    let overhead = emitted_overhead();
    let at = emit_loop(&[EMITTED_EVENT_BYTES_MAX - overhead]);
    assert_eq!(
        serde_json::to_vec(&emitted(&at)[0]).unwrap().len(),
        EMITTED_EVENT_BYTES_MAX
    );
    assert!(matches!(at.ending, Some(Ending::Succeeded { .. })));
    let past = emit_loop(&[EMITTED_EVENT_BYTES_MAX - overhead + 1]);
    let p = problem(&past);
    assert_eq!(p["reason"], "invalid_input");
    assert_eq!(
        p["detail"],
        "A value is not valid, at the step tell: The event holds 245761 bytes as JSON; an emitted event holds at most 245,760 (240 KiB)."
    );
}

#[test]
fn a_run_emits_1024_events_and_the_next_fails_with_a_runtime_error() {
    let at = emit_loop(&[0; EVENTS_EMITTED_MAX as usize]);
    assert_eq!(emitted(&at).len(), 1_024);
    assert!(matches!(at.ending, Some(Ending::Succeeded { .. })));
    let past = emit_loop(&[0; EVENTS_EMITTED_MAX as usize + 1]);
    assert_eq!(emitted(&past).len(), 1_024);
    let p = problem(&past);
    assert_eq!(p["reason"], "unavailable");
    assert_eq!(
        p["detail"],
        "A limit of the run was exceeded, at the step tell: The run emitted 1,024 events, the most a run emits over its life."
    );
}

#[test]
fn a_run_emits_4_mib_of_events_and_a_byte_more_fails_with_a_runtime_error() {
    let overhead = emitted_overhead();
    let full = EMITTED_EVENT_BYTES_MAX - overhead;
    let whole = EVENTS_EMITTED_BYTES_MAX / EMITTED_EVENT_BYTES_MAX;
    let rest = EVENTS_EMITTED_BYTES_MAX - whole * EMITTED_EVENT_BYTES_MAX;
    let mut lengths = vec![full; whole];
    lengths.push(rest - overhead);
    let at = emit_loop(&lengths);
    let total: usize = emitted(&at)
        .iter()
        .map(|e| serde_json::to_vec(e).unwrap().len())
        .sum();
    assert_eq!(total, EVENTS_EMITTED_BYTES_MAX);
    assert!(matches!(at.ending, Some(Ending::Succeeded { .. })));
    *lengths.last_mut().unwrap() += 1;
    let p = problem(&emit_loop(&lengths));
    assert_eq!(
        p["detail"],
        "A limit of the run was exceeded, at the step tell: The run's emitted events would hold 4194305 bytes as JSON; a run emits at most 4 MiB over its life."
    );
}

#[test]
fn a_caught_emit_failure_goes_on() {
    let wf = workflow(
        "do:
  - t:
      try:
        - tell:
            emit:
              event:
                with:
                  type: '${ \"run_started\" }'
                  source: https://x.example
      catch:
        errors:
          with: { status: 400 }
        do:
          - fallback:
              set: { told: false }
",
    );
    assert_eq!(
        output(&start(&wf, &info(), json!({}), 0)),
        json!({"told": false})
    );
}

#[test]
fn the_same_events_in_the_same_order_give_the_same_run() {
    let wf = workflow(
        "do:
  - hear:
      listen:
        to:
          all:
            - with: { type: com.example.a }
            - with: { type: com.example.b }
  - tell:
      emit:
        event:
          with:
            type: com.example.both
            source: https://x.example
            data: '${ $data }'
",
    );
    let inputs = [
        event("b", "com.example.b", json!(2)),
        event("x", "com.example.x", json!(0)),
        event("a", "com.example.a", json!(1)),
    ];
    let replay = || {
        let mut step = start(&wf, &info(), json!({}), 0);
        let mut all = vec![step.clone()];
        for (n, sent) in inputs.iter().enumerate() {
            step = send(&wf, roundtrip(step.state), sent.clone(), n as i64 + 1);
            all.push(step.clone());
        }
        all
    };
    let first = replay();
    assert_eq!(first, replay());
    let last = first.last().unwrap();
    assert_eq!(output(last), json!([1, 2]));
    assert_eq!(emitted(last)[0]["data"], json!([1, 2]));
}

fn hear(wf: &Workflow, state: RunState, event: Value, now_ms: i64) -> Step {
    apply(wf, &info(), state, Input::EventHeard { event }, now_ms)
}

const LISTEN_ALL: &str = "do:
  - hear:
      listen:
        to:
          all:
            - with: { type: com.example.a }
            - with: { type: com.example.b }
";

#[test]
fn a_heard_event_no_task_takes_passes_and_never_counts_against_the_waiting_limit() {
    let wf = workflow(LISTEN_ALL);
    let mut step = hear(
        &wf,
        start(&wf, &info(), json!({}), 0).state,
        event("a0", "com.example.a", json!(0)),
        1,
    );
    assert!(step.ending.is_none());
    assert_eq!(step.events[0].data["taken"], json!(true));
    // More of the playbook's `a` events than a run keeps: each finds its slot full and passes.
    for n in 1..=EVENTS_WAITING_MAX + 1 {
        step = hear(
            &wf,
            step.state,
            event(&format!("a{n}"), "com.example.a", json!(n)),
            2,
        );
        assert!(step.ending.is_none(), "{:?}", step.ending);
        assert_eq!(step.state.events_waiting(), 0);
        assert_eq!(step.events[0].data["heard"], json!(true));
        assert_eq!(step.events[0].data["taken"], json!(false));
    }
    let step = hear(&wf, step.state, event("b0", "com.example.b", json!("b")), 3);
    assert_eq!(output(&step), json!([0, "b"]));
}

#[test]
fn a_heard_event_that_passed_is_not_kept_for_a_later_listen_but_a_sent_one_is() {
    let wf = workflow(
        "do:
  - first:
      listen:
        to:
          one:
            with: { type: com.example.a }
  - second:
      listen:
        to:
          one:
            with: { type: com.example.b }
",
    );
    let state = start(&wf, &info(), json!({}), 0).state;
    // `b` heard while only `first` listens: no task takes it, so `second` never sees it.
    let step = hear(&wf, state, event("b-heard", "com.example.b", json!(1)), 1);
    assert_eq!(step.state.events_waiting(), 0);
    // `b` sent to the run is kept for `second`.
    let step = send(
        &wf,
        step.state,
        event("b-sent", "com.example.b", json!(2)),
        2,
    );
    assert_eq!(step.state.events_waiting(), 1);
    let step = hear(&wf, step.state, event("a", "com.example.a", json!(3)), 3);
    assert_eq!(output(&step), json!([2]));
}
