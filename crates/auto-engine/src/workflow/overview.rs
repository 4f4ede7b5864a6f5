//! The overview ("The overview"): the workflow in plain words for a person who does not read
//! YAML. It says, in order, what the workflow is, what starts it, what it needs and produces,
//! what it does (a Mermaid flowchart and the same steps as a numbered list) and what it calls.
//! "Used by" is read each time the definition is returned, so it is not written here.

use std::fmt::Write as _;

use serde_json::Value;

use super::durations::in_words;
use super::model::{Task, TaskKind, TaskList, WorkflowDocument};
use super::schedule::cron_in_words;

/// The overview of a workflow that passed its checks.
pub fn overview(document: &WorkflowDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}", title(document));
    out.push('\n');
    match document.description() {
        Some(text) => out.push_str(&text),
        None => out.push_str("This workflow has no description yet."),
    }
    out.push_str("\n\n## What starts it\n\n");
    starts(document, &mut out);
    out.push_str("\n## What it needs and produces\n\n");
    needs(document, &mut out);
    out.push_str("\n## What it does\n\n");
    let mut chart = Chart::default();
    let entries = chart.entries(document);
    let (_, exits) = chart.list(&document.tasks, entries);
    for (node, label) in exits {
        chart.edge(&node, "finish", label.as_deref());
    }
    out.push_str("```mermaid\nflowchart TD\n");
    out.push_str(&chart.lines);
    out.push_str("```\n\n");
    out.push_str(&chart.steps);
    out.push_str("\n## What it calls\n\n");
    calls(document, &mut out);
    out
}

fn title(document: &WorkflowDocument) -> String {
    document
        .title
        .clone()
        .unwrap_or_else(|| document.name.clone())
}

fn starts(document: &WorkflowDocument, out: &mut String) {
    if let Some(filters) = &document.schedule.on {
        for filter in filters {
            let _ = writeln!(
                out,
                "- Each event of the playbook {}.",
                filter_in_words(filter)
            );
        }
    }
    if let Some(cron) = &document.schedule.cron {
        let _ = writeln!(out, "- Its cron schedule, {}.", cron_in_words(cron));
    }
    if let Some(ms) = document.schedule.every_ms {
        let _ = writeln!(out, "- Its schedule, every {}.", in_words(ms));
    }
    out.push_str("- A call of run_definition, which can always start it.\n");
}

fn filter_in_words(filter: &Value) -> String {
    let mut words = Vec::new();
    if let Value::Object(map) = filter {
        for (key, value) in map {
            match value {
                Value::String(text) if super::expressions::enclosed(text).is_some() => {
                    words.push(format!("whose {key} passes {}", short(text)));
                }
                Value::String(text) => words.push(format!("whose {key} is {text}")),
                other => words.push(format!("whose {key} is {other}")),
            }
        }
    }
    if words.is_empty() {
        "that matches its filter".to_owned()
    } else {
        words.join(", ")
    }
}

fn needs(document: &WorkflowDocument, out: &mut String) {
    match &document.input_schema {
        Some(schema) => fields("It needs", schema, out),
        None => out.push_str("It names no input fields.\n"),
    }
    out.push('\n');
    match (&document.output_schema, &document.output_shape) {
        (Some(schema), _) => fields("It produces", schema, out),
        (None, Some(shape)) => {
            let _ = writeln!(out, "It produces the output shape {shape}.");
        }
        (None, None) => out.push_str("It names no output fields.\n"),
    }
}

/// Each property of an object schema, with its type and its examples unless its description
/// gives one.
fn fields(lead: &str, schema: &Value, out: &mut String) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        let kind = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("value");
        let _ = writeln!(out, "{lead} a {kind}.");
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let _ = writeln!(out, "{lead}:\n");
    for (name, property) in properties {
        let kind = match property.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Array(kinds)) => kinds
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "any value".to_owned(),
        };
        let mut line = format!("- {name} ({kind}");
        if !required.contains(&name.as_str()) {
            line.push_str(", optional");
        }
        line.push(')');
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            let _ = write!(line, ": {description}");
        }
        let examples = property.get("examples").and_then(Value::as_array);
        let described = property
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| d.contains("such as") || d.contains("e.g."));
        if let Some(examples) = examples.filter(|e| !e.is_empty() && !described) {
            let shown: Vec<String> = examples.iter().map(Value::to_string).collect();
            let _ = write!(line, ", such as {}", shown.join(" or "));
        }
        out.push_str(&line);
        out.push('\n');
    }
}

fn calls(document: &WorkflowDocument, out: &mut String) {
    if document.uses.is_empty() {
        out.push_str("It calls no definition by name.\n");
        return;
    }
    for used in &document.uses {
        let (kind, name) = used.split_once('/').unwrap_or(("", used));
        let noun = kind
            .parse::<crate::definitions::DefinitionType>()
            .map_or(kind, |t| t.noun());
        let _ = writeln!(out, "- The {noun} {name}.");
    }
}

/// The flowchart and the numbered list, built together so their numbers agree.
#[derive(Default)]
struct Chart {
    lines: String,
    steps: String,
    count: usize,
    depth: usize,
}

/// Where a list's flow leaves it: the nodes whose next step follows the list.
type Exits = Vec<(String, Option<String>)>;

impl Chart {
    /// Draws a list after `incoming`; returns its first node and the exits that go on
    /// after it.
    fn list(&mut self, list: &TaskList, incoming: Exits) -> (Option<String>, Exits) {
        let mut drawn: Vec<(String, Exits)> = Vec::new();
        for task in &list.tasks {
            drawn.push(self.task(task));
        }
        let ids: Vec<String> = drawn.iter().map(|(id, _)| id.clone()).collect();
        let mut pending = incoming;
        for (task, (id, exits)) in list.tasks.iter().zip(drawn) {
            let arriving = std::mem::take(&mut pending);
            for (node, label) in &arriving {
                self.edge(node, &id, label.as_deref());
            }
            for (node, label) in exits {
                match self.target(task, list, &ids) {
                    Target::Next | Target::Exit => pending.push((node, label)),
                    Target::Task(to) => self.edge(&node, &to, label.as_deref()),
                    Target::End => self.edge(&node, "finish", label.as_deref()),
                }
            }
            if let Some(condition) = &task.condition {
                // Flow passes around a task whose if may not hold.
                let words = format!("unless {}", short(condition));
                pending.extend(
                    arriving
                        .into_iter()
                        .map(|(node, _)| (node, Some(words.clone()))),
                );
            }
        }
        (ids.first().cloned(), pending)
    }

    fn target(&self, task: &Task, list: &TaskList, ids: &[String]) -> Target {
        match task.then.as_deref() {
            None | Some("continue") => Target::Next,
            Some("exit") => Target::Exit,
            Some("end") => Target::End,
            Some(name) => list
                .tasks
                .iter()
                .position(|t| t.name == name)
                .map_or(Target::Next, |i| Target::Task(ids[i].clone())),
        }
    }

    /// Draws one task; returns its node and the nodes its flow leaves from.
    fn task(&mut self, task: &Task) -> (String, Exits) {
        self.count += 1;
        let number = self.count;
        let id = format!("s{number}");
        let indent = "  ".repeat(self.depth + 1);
        let words = step_words(task);
        let _ = writeln!(
            self.steps,
            "{}{number}. {}: {words}.",
            "   ".repeat(self.depth),
            task.name
        );
        let label = format!("{number}. {}", escape(&task.name));
        match &task.kind {
            TaskKind::Call { def_name, .. } => {
                let runs = def_name.as_deref().unwrap_or("a computed definition");
                let _ = writeln!(
                    self.lines,
                    "{indent}{id}[\"{label}: Run {}\"]",
                    escape(runs)
                );
                (id.clone(), vec![(id, None)])
            }
            TaskKind::Raise { .. } => {
                let _ = writeln!(self.lines, "{indent}{id}([\"{label}: raises an error\"])");
                (id, Vec::new())
            }
            TaskKind::Switch { cases } => {
                let _ = writeln!(self.lines, "{indent}{id}{{\"{label}\"}}");
                let exits = cases
                    .iter()
                    .map(|case| (id.clone(), Some(escape(&case.name))))
                    .collect();
                (id, exits)
            }
            TaskKind::Do { tasks } => self.group(&id, &label, "does in order", tasks, false),
            TaskKind::For { tasks, each, .. } => {
                let (group, exits) =
                    self.group(&id, &label, &format!("for each {each}"), tasks, true);
                (group, exits)
            }
            TaskKind::Fork { branches, compete } => {
                let words = if *compete {
                    "runs its branches at once; the first to finish wins"
                } else {
                    "runs its branches at once"
                };
                let _ = writeln!(self.lines, "{indent}subgraph {id}[\"{label}: {words}\"]");
                self.depth += 1;
                for branch in &branches.tasks {
                    let (node, _) = self.task(branch);
                    let _ = node;
                }
                self.depth -= 1;
                let _ = writeln!(self.lines, "{indent}end");
                (id.clone(), vec![(id, None)])
            }
            TaskKind::Try {
                tasks, recovery, ..
            } => {
                let _ = writeln!(self.lines, "{indent}subgraph {id}[\"{label}: tries\"]");
                self.depth += 1;
                let first_try = self.count + 1;
                let (_, mut exits) = self.list(tasks, Vec::new());
                let last_try = self.count;
                let caught = match recovery {
                    Some(recovery) => {
                        let (entry, recovered) = self.list(recovery, Vec::new());
                        exits.extend(recovered);
                        entry
                    }
                    None => None,
                };
                self.depth -= 1;
                let _ = writeln!(self.lines, "{indent}end");
                for step in first_try..=last_try {
                    match &caught {
                        Some(entry) => {
                            let _ = writeln!(self.lines, "{indent}s{step} -.->|caught| {entry}");
                        }
                        None => exits.push((format!("s{step}"), Some("caught".to_owned()))),
                    }
                }
                (id, exits)
            }
            TaskKind::Set | TaskKind::Wait | TaskKind::Listen | TaskKind::Emit { .. } => {
                let _ = writeln!(self.lines, "{indent}{id}[\"{label}: {}\"]", escape(&words));
                (id.clone(), vec![(id, None)])
            }
        }
    }

    fn group(
        &mut self,
        id: &str,
        label: &str,
        words: &str,
        tasks: &TaskList,
        loops: bool,
    ) -> (String, Exits) {
        let indent = "  ".repeat(self.depth + 1);
        let _ = writeln!(self.lines, "{indent}subgraph {id}[\"{label}: {words}\"]");
        self.depth += 1;
        let (entry, exits) = self.list(tasks, Vec::new());
        self.depth -= 1;
        let _ = writeln!(self.lines, "{indent}end");
        if loops && let Some(entry) = &entry {
            for (node, _) in &exits {
                let _ = writeln!(self.lines, "{indent}{node} -->|next item| {entry}");
            }
        }
        (id.to_owned(), exits)
    }

    /// The entry nodes: each trigger, and a call of run_definition.
    fn entries(&mut self, document: &WorkflowDocument) -> Exits {
        let mut entries = vec![("start".to_owned(), None)];
        self.lines
            .push_str("  start([run_definition])\n  finish([end])\n");
        if document.schedule.on.is_some() {
            self.lines.push_str("  on([an event it listens for])\n");
            entries.push(("on".to_owned(), None));
        }
        if let Some(cron) = &document.schedule.cron {
            let _ = writeln!(self.lines, "  cron([\"cron {}\"])", escape(cron));
            entries.push(("cron".to_owned(), None));
        }
        if let Some(ms) = document.schedule.every_ms {
            let _ = writeln!(self.lines, "  every([\"every {}\"])", in_words(ms));
            entries.push(("every".to_owned(), None));
        }
        entries
    }

    fn edge(&mut self, from: &str, to: &str, label: Option<&str>) {
        let arrow = "-->";
        let indent = "  ".repeat(self.depth + 1);
        match label {
            Some(label) => {
                let _ = writeln!(self.lines, "{indent}{from} {arrow}|{}| {to}", escape(label));
            }
            None => {
                let _ = writeln!(self.lines, "{indent}{from} {arrow} {to}");
            }
        }
    }
}

enum Target {
    Next,
    Exit,
    End,
    Task(String),
}

/// A step in words, for the numbered list.
fn step_words(task: &Task) -> String {
    let mut words = match &task.kind {
        TaskKind::Call {
            def_type, def_name, ..
        } => match (def_type, def_name) {
            (Some(kind), Some(name)) => {
                let noun = kind
                    .parse::<crate::definitions::DefinitionType>()
                    .map_or(kind.as_str(), |t| t.noun());
                format!("runs the {noun} {name}")
            }
            _ => "runs a definition it computes".to_owned(),
        },
        TaskKind::Set => "sets its output".to_owned(),
        TaskKind::Do { .. } => "does the steps below in order".to_owned(),
        TaskKind::Switch { cases } => {
            let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
            format!("chooses between {}", names.join(", "))
        }
        TaskKind::For { each, .. } => format!("repeats the steps below for each {each}"),
        TaskKind::Fork { compete, .. } => {
            if *compete {
                "runs the branches below at once, and the first to finish wins".to_owned()
            } else {
                "runs the branches below at once".to_owned()
            }
        }
        TaskKind::Try {
            recovery, retries, ..
        } => {
            let mut words = "tries the steps below".to_owned();
            if *retries {
                words.push_str(", retrying when they fail");
            }
            if recovery.is_some() {
                words.push_str(", and recovers with the steps of its catch");
            }
            words
        }
        TaskKind::Raise { error } => match error {
            Some(error) => format!("stops with the error {error}"),
            None => "stops with an error".to_owned(),
        },
        TaskKind::Wait => "waits".to_owned(),
        TaskKind::Listen => "waits for events".to_owned(),
        TaskKind::Emit { event_type } => match event_type {
            Some(kind) => format!("emits the event {kind}"),
            None => "emits an event".to_owned(),
        },
    };
    if let Some(condition) = &task.condition {
        let _ = write!(words, ", if {}", short(condition));
    }
    if let Some(then) = task.then.as_deref().filter(|t| *t != "continue") {
        let _ = write!(words, ", then {then}");
    }
    words
}

/// An expression shortened for a label.
fn short(text: &str) -> String {
    let text = text.trim();
    let text = text
        .strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text)
        .trim();
    let mut shown: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        shown.push('…');
    }
    shown
}

/// Text safe inside a quoted Mermaid label.
fn escape(text: &str) -> String {
    text.replace('"', "#quot;")
        .replace('|', "#124;")
        .replace(['\n', '\r'], " ")
}
