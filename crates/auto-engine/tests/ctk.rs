//! The Serverless Workflow specification's conformance test kit (ctk), translated into our
//! dialect and run over the pure workflow engine. Each `tests/ctk/*.yaml` is one upstream
//! scenario; `tests/ctk/README.md` describes the form of a file and where the scenarios come
//! from. Every upstream scenario has a file, translated or skipped with its reason, and the
//! counts below make a dropped one fail.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use auto_doc::{YamlConfig, read_yaml};
use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use auto_engine::workflow::engine::{
    CallOutcome, Command, Ending, Input, RunInfo, RunState, Step, StepEvent, Workflow, apply, start,
};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

/// The commit of `serverlessworkflow/specification` whose `ctk/features` were translated.
const UPSTREAM_COMMIT: &str = "d758f0b4a920484ec37dd0466e39fb75995e982f";

/// The scenarios of each upstream feature file at [`UPSTREAM_COMMIT`].
const UPSTREAM_SCENARIOS: [(&str, usize); 11] = [
    ("branch", 1),
    ("call", 5),
    ("data-flow", 3),
    ("do", 1),
    ("emit", 1),
    ("flow", 2),
    ("for", 1),
    ("raise", 1),
    ("set", 1),
    ("switch", 3),
    ("try", 2),
];

/// How many scenarios are translated (run, passing or a known gap) and how many skipped. A
/// change to either is a decision, made here on purpose.
const TRANSLATED: usize = 16;
const SKIPPED: usize = 5;

/// The time the run starts: 2026-01-01T00:00:00Z in epoch milliseconds.
const START_MS: i64 = 1_767_225_600_000;

/// The most inputs one scenario may feed, fired timers included, so a run that keeps setting
/// timers ends the test instead of hanging it.
const INPUTS_MAX: usize = 1_000;

/// One scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    feature: String,
    scenario: String,
    /// The upstream file and the scenario's title.
    source: String,
    /// What the translation changed, and why.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "read by people; kept in the struct so a typo is refused"
    )]
    note: Option<String>,
    /// Why the scenario is not run: our dialect refuses it on purpose.
    #[serde(default)]
    skip: Option<String>,
    /// What the engine lacks for the scenario to pass; it is run and must still fail.
    #[serde(default)]
    known_gap: Option<String>,
    /// Our workflow document, as it would be saved.
    document: String,
    #[serde(default = "empty_object")]
    input: Value,
    /// What to feed after the start, in order.
    #[serde(default)]
    events: Vec<Event>,
    expected: Expected,
}

/// A call's ending to feed: the call it answers, and how its run ended.
#[derive(Debug, Deserialize)]
struct Event {
    call: CallMatch,
    /// When it comes, in ms after the start; the timers due before it fire first.
    #[serde(default)]
    at_ms: Option<i64>,
    #[serde(flatten)]
    outcome: Outcome,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallMatch {
    #[serde(rename = "type")]
    def_type: String,
    name: String,
    /// The input the call must have been started with, when given.
    #[serde(default, deserialize_with = "present")]
    input: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Succeeded(Value),
    /// The child run's problem document: reason, kind, title, detail...
    Rejected(Value),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    /// The run succeeds with exactly this output.
    #[serde(default, deserialize_with = "present")]
    output: Option<Value>,
    /// The run is rejected, and the error that ended it is exactly this.
    #[serde(default)]
    error: Option<Value>,
    /// The fields named of the run's rejection (its problem document).
    #[serde(default)]
    rejection: Option<BTreeMap<String, Value>>,
    /// The document is refused when saved, with these issues, one a line.
    #[serde(default)]
    refused_at_save: Option<String>,
    /// The names of the tasks started, in order, at every level.
    #[serde(default)]
    tasks: Option<Vec<String>>,
    /// The events the run emitted, in order: each one's fields named here, as written.
    #[serde(default)]
    emitted: Option<Vec<BTreeMap<String, Value>>>,
}

fn empty_object() -> Value {
    json!({})
}

/// Keeps a value written as `null` apart from one left out.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

fn case_paths() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ctk");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the ctk folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    paths
}

fn read_case(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).expect("a case is UTF-8");
    parse_case(&text, &path.display().to_string())
}

fn parse_case(text: &str, name: &str) -> Case {
    let read = read_yaml(text, &YamlConfig::workflow());
    assert!(
        read.issues.is_empty(),
        "{name}: {:?}",
        read.issues.iter().map(|i| i.message()).collect::<Vec<_>>()
    );
    serde_json::from_value(read.document.into_value())
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

fn cases() -> Vec<(String, Case)> {
    case_paths()
        .iter()
        .map(|path| {
            let stem = path.file_stem().expect("a file name").to_string_lossy();
            (stem.into_owned(), read_case(path))
        })
        .collect()
}

// ---- driving a run ----

/// What driving a scenario's run gave.
struct Driven {
    ending: Ending,
    events: Vec<StepEvent>,
    /// Every input after the start with its time, for the replay.
    inputs: Vec<(Input, i64)>,
    state: RunState,
    /// The events its emit tasks recorded.
    emitted: Vec<Value>,
}

/// What the run waits for, kept from the commands of its steps.
#[derive(Default)]
struct Pending {
    /// call id -> (type, name, input), in the order started.
    calls: Vec<(String, String, String, Value)>,
    /// (due, timer id).
    timers: Vec<(i64, String)>,
}

impl Pending {
    /// Keeps the calls and timers the commands start and cancel. Other commands (an emitted
    /// event) ask nothing of the run's inputs, so they are passed over.
    fn take(&mut self, commands: &[Command]) {
        for command in commands {
            if let Command::StartCall {
                call_id,
                def_type,
                name,
                input,
                ..
            } = command
            {
                let call = (
                    call_id.clone(),
                    def_type.clone(),
                    name.clone(),
                    input.clone(),
                );
                self.calls.push(call);
            } else if let Command::CancelCall { call_id, .. } = command {
                self.calls.retain(|c| c.0 != *call_id);
            } else if let Command::SetTimer { timer_id, due_ms } = command {
                self.timers.push((*due_ms, timer_id.clone()));
            } else if let Command::CancelTimer { timer_id } = command {
                self.timers.retain(|t| t.1 != *timer_id);
            }
        }
    }

    /// The timer due first, if it is due by `until_ms`.
    fn next_timer(&mut self, until_ms: i64) -> Option<(i64, String)> {
        let first = self
            .timers
            .iter()
            .enumerate()
            .min_by_key(|(_, (due, id))| (*due, id.clone()))
            .map(|(at, _)| at)?;
        (self.timers[first].0 <= until_ms).then(|| self.timers.remove(first))
    }
}

/// A run in progress: its snapshot, as the shell would store it, and what it has done.
struct Runner<'a> {
    workflow: &'a Workflow,
    info: RunInfo,
    state: RunState,
    now_ms: i64,
    pending: Pending,
    events: Vec<StepEvent>,
    inputs: Vec<(Input, i64)>,
    ending: Option<Ending>,
    emitted: Vec<Value>,
}

impl Runner<'_> {
    fn take(&mut self, step: Step) {
        self.pending.take(&step.commands);
        for command in &step.commands {
            if let Command::EmitEvent { event } = command {
                self.emitted.push(event.clone());
            }
        }
        self.events.extend(step.events);
        // The shell stores the snapshot as JSON between inputs; so does the test.
        self.state = RunState::from_json(&step.state.to_json()).expect("a snapshot reads back");
        if step.ending.is_some() {
            self.ending = step.ending;
        }
    }

    fn feed(&mut self, input: Input, at_ms: i64) -> Result<(), String> {
        if self.inputs.len() >= INPUTS_MAX {
            return Err(format!("the run took {INPUTS_MAX} inputs without ending"));
        }
        self.now_ms = self.now_ms.max(at_ms);
        self.inputs.push((input.clone(), self.now_ms));
        let state = self.state.clone();
        let step = apply(self.workflow, &self.info, state, input, self.now_ms);
        self.take(step);
        Ok(())
    }

    /// Fires the timers due by `until_ms`, in due order, while the run goes on.
    fn fire_timers(&mut self, until_ms: i64) -> Result<(), String> {
        while self.ending.is_none()
            && let Some((due_ms, timer_id)) = self.pending.next_timer(until_ms)
        {
            self.feed(Input::TimerFired { timer_id }, due_ms)?;
        }
        Ok(())
    }

    fn answer(&mut self, index: usize, event: &Event) -> Result<(), String> {
        let at_ms = event.at_ms.map_or(self.now_ms, |at| START_MS + at);
        self.fire_timers(at_ms)?;
        if self.ending.is_some() {
            return Err(format!("the run ended before event {index}"));
        }
        let want = &event.call;
        let Some(at) = self
            .pending
            .calls
            .iter()
            .position(|c| c.1 == want.def_type && c.2 == want.name)
        else {
            let waiting: Vec<String> = self
                .pending
                .calls
                .iter()
                .map(|c| format!("{}/{}", c.1, c.2))
                .collect();
            return Err(format!(
                "event {index}: no call of {}/{} waits; waiting: {waiting:?}",
                want.def_type, want.name
            ));
        };
        let (call_id, _, _, input) = self.pending.calls.remove(at);
        if let Some(expected) = &want.input
            && *expected != input
        {
            return Err(format!(
                "event {index}: the call of {}/{} was started with {input}, not {expected}",
                want.def_type, want.name
            ));
        }
        let outcome = match &event.outcome {
            Outcome::Succeeded(output) => CallOutcome::Succeeded {
                output: output.clone(),
            },
            Outcome::Rejected(problem) => CallOutcome::Rejected {
                problem: auto_problem::Problem::read(problem)
                    .ok_or_else(|| format!("event {index}: not a problem document: {problem}"))?,
            },
        };
        self.feed(Input::CallEnded { call_id, outcome }, at_ms)
    }
}

fn run_info(stem: &str, workflow: &Workflow) -> RunInfo {
    let name = &workflow.document().name;
    RunInfo::new(
        format!("ctk-{stem}"),
        json!({"type": "workflow", "name": name, "version": 1}),
        START_MS,
    )
}

/// Starts the run, feeds the case's events in order, then fires the timers left until the run
/// ends.
fn drive(stem: &str, workflow: &Workflow, case: &Case) -> Result<Driven, String> {
    let info = run_info(stem, workflow);
    let step = start(workflow, &info, case.input.clone(), START_MS);
    let mut runner = Runner {
        workflow,
        info,
        state: step.state.clone(),
        now_ms: START_MS,
        pending: Pending::default(),
        events: Vec::new(),
        inputs: Vec::new(),
        ending: None,
        emitted: Vec::new(),
    };
    runner.take(step);
    for (index, event) in case.events.iter().enumerate() {
        runner.answer(index, event)?;
    }
    runner.fire_timers(i64::MAX)?;
    let Some(ending) = runner.ending else {
        let waiting: Vec<&str> = runner.pending.calls.iter().map(|c| c.0.as_str()).collect();
        return Err(format!(
            "the run did not end; it waits for the calls {waiting:?}"
        ));
    };
    Ok(Driven {
        ending,
        events: runner.events,
        inputs: runner.inputs,
        state: runner.state,
        emitted: runner.emitted,
    })
}

/// "Every workflow scenario also checks determinism: applying its recorded inputs from the
/// start gives the same final state."
fn replay(stem: &str, workflow: &Workflow, case: &Case, driven: &Driven) -> Result<(), String> {
    let info = run_info(stem, workflow);
    let mut step = start(workflow, &info, case.input.clone(), START_MS);
    let mut ending = step.ending.clone();
    for (input, at_ms) in &driven.inputs {
        step = apply(workflow, &info, step.state, input.clone(), *at_ms);
        ending = ending.or(step.ending.clone());
    }
    if step.state.to_json() != driven.state.to_json() || ending.as_ref() != Some(&driven.ending) {
        return Err("replaying the recorded inputs gave another run".to_owned());
    }
    Ok(())
}

// ---- comparing ----

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The error that ended the run: the last one a step failed with.
fn last_error(events: &[StepEvent]) -> Option<&Value> {
    events
        .iter()
        .rev()
        .find(|e| e.event_type == "step_failed")
        .and_then(|e| e.data.get("error"))
}

/// Every way the run differs from what the case expects; empty when it conforms.
fn differences(expected: &Expected, driven: &Driven) -> Vec<String> {
    let mut found = Vec::new();
    match (&driven.ending, &expected.output) {
        (Ending::Succeeded { output }, Some(want)) if output != want => found.push(format!(
            "output:\n{}\nexpected:\n{}",
            pretty(output),
            pretty(want)
        )),
        (Ending::Succeeded { .. }, None) => found.push("the run succeeded".to_owned()),
        (Ending::Rejected { problem }, Some(_)) => {
            let problem = serde_json::to_value(problem).unwrap_or_default();
            found.push(format!("the run was rejected:\n{}", pretty(&problem)));
        }
        _ => {}
    }
    if let Some(want) = &expected.error {
        match last_error(&driven.events) {
            Some(error) if error == want => {}
            Some(error) => found.push(format!(
                "error:\n{}\nexpected:\n{}",
                pretty(error),
                pretty(want)
            )),
            None => found.push("no step failed".to_owned()),
        }
    }
    if let (Some(want), Ending::Rejected { problem }) = (&expected.rejection, &driven.ending) {
        let problem = serde_json::to_value(problem).unwrap_or_default();
        for (field, value) in want {
            let actual = problem.get(field).unwrap_or(&Value::Null);
            if actual != value {
                found.push(format!("rejection.{field}: {actual}, expected {value}"));
            }
        }
    }
    if let Some(want) = &expected.emitted {
        if want.len() != driven.emitted.len() {
            found.push(format!(
                "{} events emitted, expected {}",
                driven.emitted.len(),
                want.len()
            ));
        }
        for (n, (want, event)) in want.iter().zip(&driven.emitted).enumerate() {
            for (field, value) in want {
                let actual = event.get(field).unwrap_or(&Value::Null);
                if actual != value {
                    found.push(format!("emitted[{n}].{field}: {actual}, expected {value}"));
                }
            }
        }
    }
    if let Some(want) = &expected.tasks {
        let started: Vec<&str> = driven
            .events
            .iter()
            .filter(|e| e.event_type == "step_started")
            .filter_map(|e| e.data["name"].as_str())
            .collect();
        if started != *want {
            found.push(format!("tasks started: {started:?}, expected {want:?}"));
        }
    }
    found
}

fn issues_text(issues: &[auto_doc::Issue]) -> String {
    issues
        .iter()
        .map(|i| i.message())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a case gives: `Ok(differences)` when it ran (empty when it conforms), `Err` when it
/// could not be run as written.
fn outcome(stem: &str, case: &Case) -> Result<Vec<String>, String> {
    // The save is judged as create_definition judges it, through the registry of checkers.
    let refusal = match Checkers::standard().check(DefinitionType::Workflow, &case.document) {
        Ok(_) => None,
        Err(CheckError::Issues(issues)) => Some(issues_text(&issues)),
        Err(CheckError::NotSupported(t)) => return Err(format!("no checker for {t:?}")),
    };
    match (refusal, &case.expected.refused_at_save) {
        (Some(said), Some(want)) if want.trim_end() == said => return Ok(Vec::new()),
        (Some(said), Some(want)) => {
            return Ok(vec![format!(
                "refused at save with:\n{said}\nexpected:\n{want}"
            )]);
        }
        (Some(said), None) => return Err(format!("refused at save:\n{said}")),
        (None, Some(_)) => return Ok(vec!["the document was accepted at save".to_owned()]),
        (None, None) => {}
    }
    let workflow = Workflow::from_source(&case.document).map_err(|issues| {
        format!(
            "saved, yet Workflow::from_source refuses it:\n{}",
            issues_text(&issues)
        )
    })?;
    let driven = drive(stem, &workflow, case)?;
    replay(stem, &workflow, case, &driven)?;
    Ok(differences(&case.expected, &driven))
}

// ---- the tests ----

#[test]
fn every_upstream_scenario_has_a_file() {
    let cases = cases();
    let mut per_feature: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen = BTreeMap::new();
    for (stem, case) in &cases {
        *per_feature.entry(case.feature.as_str()).or_default() += 1;
        let key = (case.feature.as_str(), case.scenario.as_str());
        if let Some(other) = seen.insert(key, stem) {
            panic!("{stem} and {other} both translate {key:?}");
        }
        let upstream = format!(
            "ctk/features/{}.feature, \"{}\"",
            case.feature, case.scenario
        );
        assert_eq!(
            case.source, upstream,
            "{stem}: its source names its scenario"
        );
    }
    let upstream: BTreeMap<&str, usize> = UPSTREAM_SCENARIOS.into_iter().collect();
    assert_eq!(
        per_feature, upstream,
        "each upstream feature's scenarios at {UPSTREAM_COMMIT}"
    );
    let skipped = cases.iter().filter(|(_, c)| c.skip.is_some()).count();
    assert_eq!(
        (cases.len() - skipped, skipped),
        (TRANSLATED, SKIPPED),
        "translated and skipped scenarios"
    );
    for (stem, case) in &cases {
        assert!(
            !(case.skip.is_some() && case.known_gap.is_some()),
            "{stem}: a scenario is skipped or a known gap, not both"
        );
    }
}

#[test]
fn translated_scenarios_conform() {
    let mut failures = Vec::new();
    let mut report = String::new();
    let (mut passing, mut gaps, mut skipped) = (0, 0, 0);
    for (stem, case) in cases() {
        let result = outcome(&stem, &case);
        if let Some(reason) = &case.skip {
            // A skip that carries its document shows the refusal it names.
            skipped += 1;
            match result {
                Ok(found) if found.is_empty() => {}
                Ok(found) => failures.push(format!("{stem} (skipped): {}", found.join("\n"))),
                Err(error) => failures.push(format!("{stem} (skipped): {error}")),
            }
            writeln!(report, "  skip {stem}: {}", reason.trim()).ok();
            continue;
        }
        let found = result.unwrap_or_else(|error| vec![error]);
        match (&case.known_gap, found.is_empty()) {
            (None, true) => passing += 1,
            (None, false) => failures.push(format!("{stem}:\n{}", found.join("\n"))),
            (Some(_), true) => failures.push(format!("{stem} conforms now: remove its known_gap")),
            (Some(gap), false) => {
                gaps += 1;
                let now = found[0].split_whitespace().collect::<Vec<_>>().join(" ");
                writeln!(report, "  gap  {stem}: {} Now: {now}", gap.trim()).ok();
            }
        }
    }
    println!(
        "ctk @ {}: {} scenarios, {passing} passing, {gaps} known gap{}, {skipped} skipped\n{report}",
        &UPSTREAM_COMMIT[..7],
        passing + gaps + skipped,
        if gaps == 1 { "" } else { "s" }
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The runner itself: timers fire in due order before an event that comes after them, and the
/// inputs it fed are what the replay applies. No upstream scenario waits, so this one is ours.
#[test]
fn the_runner_fires_timers_before_a_later_event() {
    let case = parse_case(
        r#"
feature: runner
scenario: A timer falls due before a call ends
source: tests/ctk.rs
document: |
  document: { dsl: '1.0.3', namespace: default, name: timers, version: '1.0.0' }
  do:
    - both:
        fork:
          branches:
            - pause:
                wait: PT1M
            - work:
                call: run_definition
                with: { type: computation, name: work }
input: { n: 1 }
events:
  - call: { type: computation, name: work, input: {} }
    at_ms: 120000
    succeeded: done
expected:
  output: [{ n: 1 }, done]
"#,
        "the runner's own case",
    );
    let workflow = Workflow::from_source(&case.document).expect("the document is accepted");
    let driven = drive("runner", &workflow, &case).expect("the run ends");
    let fed: Vec<(&str, i64)> = driven
        .inputs
        .iter()
        .map(|(input, at_ms)| match input {
            Input::TimerFired { .. } => ("timer", at_ms - START_MS),
            Input::CallEnded { .. } => ("call", at_ms - START_MS),
            _ => ("other", at_ms - START_MS),
        })
        .collect();
    assert_eq!(fed, [("timer", 60_000), ("call", 120_000)]);
    assert!(differences(&case.expected, &driven).is_empty());
    replay("runner", &workflow, &case, &driven).expect("the replay gives the same run");
}
