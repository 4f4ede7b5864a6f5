//! The overview ("The overview"): the workflow in plain words for a person who does not read
//! YAML. It says, in order, what the workflow is, what starts it, what it needs and produces,
//! what it does (a Mermaid flowchart and the same steps as a numbered list) and what it calls.
//!
//! "Used by", the page's last part, is not written here, and cannot be: this overview is written
//! once, when the document is saved, and stored with its version, while the page reads "the
//! active definitions of the playbook that use this workflow" each time it is returned. Those
//! change without this workflow being saved again: another workflow that calls it is created,
//! updated or retired later. So the server computes them when it returns the definition
//! (`used_by` in `auto-server`'s `service.rs`, from each active definition's `uses`, which this
//! checker derives as [`WorkflowDocument::uses`]) and returns them beside the overview, as the
//! definition's `used_by` field, empty when there are none. [`used_by_section`] writes them in
//! the overview's words, for the server to append to the stored overview when it returns it.

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
    // A then: exit in the top list leaves the run's tasks, as their end does.
    for (node, label) in chart.list(&document.tasks, entries, false).all() {
        chart.edge(&node, "finish", label.as_deref());
    }
    out.push_str("```mermaid\nflowchart TD\n");
    out.push_str(&chart.nodes);
    out.push_str(&chart.edges);
    out.push_str("```\n\n");
    out.push_str(&chart.steps);
    out.push_str("\n## What it calls\n\n");
    calls(document, &mut out);
    out
}

/// The overview's last part, "Used by", for the definitions (as `type/name`, which the server
/// reads each time the workflow is returned) that use it; `None` when there are none, since the
/// page leaves it out then.
pub fn used_by_section(used_by: &[String]) -> Option<String> {
    if used_by.is_empty() {
        return None;
    }
    let mut out = String::from("\n## Used by\n\n");
    for user in used_by {
        let _ = writeln!(out, "- The {}.", definition_in_words(user));
    }
    Some(out)
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
        let words = cron_in_words(cron);
        // The words say "on the cron schedule ..." when the fields do not read plainly.
        let words = words
            .strip_prefix("on the cron schedule ")
            .unwrap_or(&words);
        let _ = writeln!(out, "- Its cron schedule, {words}.");
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
        let _ = writeln!(out, "- The {}.", definition_in_words(used));
    }
}

/// `type/name` in words, as "reasoning function review-campaign-brief".
fn definition_in_words(key: &str) -> String {
    let (kind, name) = key.split_once('/').unwrap_or(("", key));
    let noun = kind
        .parse::<crate::definitions::DefinitionType>()
        .map_or(kind, |t| t.noun());
    format!("{noun} {name}")
}

/// The flowchart and the numbered list, built together so their numbers agree.
///
/// Nodes and groups are written first and every edge after them, outside every group: an edge
/// written inside a Mermaid `subgraph` makes both its ends members of that group, which would
/// draw `finish` (or a step of another list) inside it.
#[derive(Default)]
struct Chart {
    nodes: String,
    edges: String,
    steps: String,
    count: usize,
    depth: usize,
}

/// An edge still to be drawn: the node it leaves and its label.
type Exits = Vec<(String, Option<String>)>;

/// Where flow leaves a task, and the `then` that decides where it goes in the task's list.
struct Exit {
    from: String,
    label: Option<String>,
    then: Option<String>,
}

/// How flow leaves a list: at its end (falling through), and by a `then: exit`.
#[derive(Default)]
struct Leaves {
    entry: Option<String>,
    end: Exits,
    exit: Exits,
}

impl Leaves {
    fn all(self) -> Exits {
        let mut all = self.end;
        all.extend(self.exit);
        all
    }
}

/// The steps a task is drawn as: itself and every task nested in it.
fn size(task: &Task) -> usize {
    let nested = |list: &TaskList| list.tasks.iter().map(size).sum::<usize>();
    1 + match &task.kind {
        TaskKind::Do { tasks } | TaskKind::For { tasks, .. } => nested(tasks),
        TaskKind::Fork { branches, .. } => nested(branches),
        TaskKind::Try {
            tasks, recovery, ..
        } => nested(tasks) + recovery.as_ref().map_or(0, nested),
        _ => 0,
    }
}

impl Chart {
    /// Draws a list that flow reaches from `incoming`. When `entered`, those edges are already
    /// drawn (to the group around the list), so its first task takes none of its own; they
    /// still pass around that task when its `if` may not hold.
    fn list(&mut self, list: &TaskList, incoming: Exits, entered: bool) -> Leaves {
        // Each task's node, known before it is drawn, so a then may jump forwards.
        let mut ids = Vec::with_capacity(list.tasks.len());
        let mut number = self.count;
        for task in &list.tasks {
            ids.push(format!("s{}", number + 1));
            number += size(task);
        }
        let mut leaves = Leaves {
            entry: ids.first().cloned(),
            ..Leaves::default()
        };
        let mut pending = incoming;
        for (i, task) in list.tasks.iter().enumerate() {
            let arriving = std::mem::take(&mut pending);
            if !(entered && i == 0) {
                for (node, label) in &arriving {
                    self.edge(node, &ids[i], label.as_deref());
                }
            }
            for exit in self.task(task, &arriving) {
                match target(exit.then.as_deref(), list, &ids) {
                    Target::Next => pending.push((exit.from, exit.label)),
                    Target::Exit => leaves.exit.push((exit.from, exit.label)),
                    Target::End => self.edge(&exit.from, "finish", exit.label.as_deref()),
                    Target::Task(to) => self.edge(&exit.from, &to, exit.label.as_deref()),
                }
            }
            if let Some(condition) = &task.condition {
                // Flow passes around a task whose if may not hold, and its then is not
                // followed.
                let words = format!("unless {}", short(condition));
                pending.extend(
                    arriving
                        .into_iter()
                        .map(|(node, _)| (node, Some(words.clone()))),
                );
            }
        }
        leaves.end = pending;
        leaves
    }

    /// Draws one task that flow reaches from `arriving`; returns where its flow leaves it.
    /// One arm for each kind of task, each drawn its own way; that is why it is long.
    fn task(&mut self, task: &Task, arriving: &Exits) -> Vec<Exit> {
        self.count += 1;
        let number = self.count;
        let id = format!("s{number}");
        let indent = "  ".repeat(self.depth + 1);
        let words = step_words(task);
        // A bullet with the number in bold, not an ordered list: Markdown renumbers an ordered
        // list's items from its first, so step 4 after two nested steps would read as 2.
        let _ = writeln!(
            self.steps,
            "{}- **{number}.** {}: {}.",
            "  ".repeat(self.depth),
            markdown(&task.name),
            markdown(&words)
        );
        let label = format!("{number}. {}", escape(&task.name));
        let then = || task.then.clone();
        let leaving = |exits: Exits| {
            exits
                .into_iter()
                .map(|(from, label)| Exit {
                    from,
                    label,
                    then: then(),
                })
                .collect::<Vec<_>>()
        };
        match &task.kind {
            TaskKind::Call { def_name, .. } => {
                let runs = def_name.as_deref().unwrap_or("a computed definition");
                let _ = writeln!(
                    self.nodes,
                    "{indent}{id}[\"{label}: Run {}\"]",
                    escape(runs)
                );
                leaving(vec![(id, None)])
            }
            TaskKind::Raise { .. } => {
                // An end node: flow stops here unless a try around it catches the error.
                let _ = writeln!(self.nodes, "{indent}{id}([\"{label}: raises an error\"])");
                Vec::new()
            }
            TaskKind::Switch { cases } => {
                let _ = writeln!(self.nodes, "{indent}{id}{{\"{label}\"}}");
                let mut exits: Vec<Exit> = cases
                    .iter()
                    .map(|case| Exit {
                        from: id.clone(),
                        label: Some(case.name.clone()),
                        then: case.then.clone(),
                    })
                    .collect();
                // "When no case is chosen, the switch task's own then applies."
                if cases_all_test(task) {
                    exits.push(Exit {
                        from: id.clone(),
                        label: Some("no case holds".to_owned()),
                        then: then(),
                    });
                }
                exits
            }
            TaskKind::Do { tasks } => {
                let leaves = self.group(&id, &label, "does in order", tasks, arriving);
                leaving(leaves.all())
            }
            TaskKind::For { tasks, each, .. } => {
                let leaves = self.group(&id, &label, &format!("for each {each}"), tasks, arriving);
                // The next item starts the list again; a then: exit stops the loop.
                if let Some(entry) = &leaves.entry {
                    for (node, _) in &leaves.end {
                        self.edge(node, entry, Some("next item"));
                    }
                }
                leaving(leaves.all())
            }
            TaskKind::Fork { branches, compete } => {
                let words = if *compete {
                    "runs its branches at once; the first to finish wins"
                } else {
                    "runs its branches at once"
                };
                let _ = writeln!(self.nodes, "{indent}subgraph {id}[\"{label}: {words}\"]");
                self.depth += 1;
                for branch in &branches.tasks {
                    // Each branch starts with the fork; only its then: end leaves the fork.
                    for exit in self.task(branch, &Vec::new()) {
                        if exit.then.as_deref() == Some("end") {
                            self.edge(&exit.from, "finish", exit.label.as_deref());
                        }
                    }
                }
                self.depth -= 1;
                let _ = writeln!(self.nodes, "{indent}end");
                leaving(vec![(id, None)])
            }
            TaskKind::Try {
                tasks, recovery, ..
            } => {
                let _ = writeln!(self.nodes, "{indent}subgraph {id}[\"{label}: tries\"]");
                self.depth += 1;
                let first_try = self.count + 1;
                let mut exits = self.list(tasks, arriving.clone(), true).all();
                let last_try = self.count;
                let caught = match recovery {
                    Some(recovery) => {
                        let leaves = self.list(recovery, Vec::new(), true);
                        let entry = leaves.entry.clone();
                        exits.extend(leaves.all());
                        entry
                    }
                    None => None,
                };
                self.depth -= 1;
                let _ = writeln!(self.nodes, "{indent}end");
                for step in first_try..=last_try {
                    match &caught {
                        Some(entry) => {
                            let _ = writeln!(self.edges, "  s{step} -.->|caught| {entry}");
                        }
                        None => exits.push((format!("s{step}"), Some("caught".to_owned()))),
                    }
                }
                leaving(exits)
            }
            TaskKind::Set | TaskKind::Wait | TaskKind::Listen | TaskKind::Emit { .. } => {
                let _ = writeln!(self.nodes, "{indent}{id}[\"{label}: {}\"]", escape(&words));
                leaving(vec![(id, None)])
            }
        }
    }

    /// A group around a list that flow reaches from `arriving` (drawn to the group itself).
    fn group(
        &mut self,
        id: &str,
        label: &str,
        words: &str,
        tasks: &TaskList,
        arriving: &Exits,
    ) -> Leaves {
        let indent = "  ".repeat(self.depth + 1);
        let _ = writeln!(self.nodes, "{indent}subgraph {id}[\"{label}: {words}\"]");
        self.depth += 1;
        let leaves = self.list(tasks, arriving.clone(), true);
        self.depth -= 1;
        let _ = writeln!(self.nodes, "{indent}end");
        leaves
    }

    /// The entry nodes: each trigger, and a call of run_definition.
    fn entries(&mut self, document: &WorkflowDocument) -> Exits {
        let mut entries = vec![("start".to_owned(), None)];
        self.nodes
            .push_str("  start([run_definition])\n  finish([end])\n");
        if document.schedule.on.is_some() {
            self.nodes.push_str("  on([an event it listens for])\n");
            entries.push(("on".to_owned(), None));
        }
        if let Some(cron) = &document.schedule.cron {
            let _ = writeln!(self.nodes, "  cron([\"{}\"])", escape(&cron_in_words(cron)));
            entries.push(("cron".to_owned(), None));
        }
        if let Some(ms) = document.schedule.every_ms {
            let _ = writeln!(self.nodes, "  every([\"every {}\"])", in_words(ms));
            entries.push(("every".to_owned(), None));
        }
        entries
    }

    /// An edge; its label quoted, since Mermaid reads brackets and braces in a bare one.
    fn edge(&mut self, from: &str, to: &str, label: Option<&str>) {
        match label {
            Some(label) => {
                let _ = writeln!(self.edges, "  {from} -->|\"{}\"| {to}", escape(label));
            }
            None => {
                let _ = writeln!(self.edges, "  {from} --> {to}");
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

/// Where a `then` leads within `list`, whose tasks are drawn as `ids`.
fn target(then: Option<&str>, list: &TaskList, ids: &[String]) -> Target {
    match then {
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
            let cases: Vec<String> = cases
                .iter()
                .map(|case| {
                    let when = match &case.when {
                        Some(when) => format!(" if {}", short(when)),
                        None => " otherwise".to_owned(),
                    };
                    let then = case
                        .then
                        .as_deref()
                        .map_or("goes on".to_owned(), flow_words);
                    format!("{}{when}, {then}", case.name)
                })
                .collect();
            let mut words = format!("chooses the first case that holds: {}", cases.join("; "));
            // "When no case is chosen, the switch task's own then applies."
            if cases_all_test(task) {
                let then = task
                    .then
                    .as_deref()
                    .map_or("goes on".to_owned(), flow_words);
                let _ = write!(words, "; when none holds, {then}");
            }
            words
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
            Some(error) => format!("stops with the error “{error}”"),
            None => "stops with an error".to_owned(),
        },
        TaskKind::Wait => "waits".to_owned(),
        TaskKind::Listen => "waits for events".to_owned(),
        TaskKind::Emit { event_type } => match event_type {
            Some(kind) => format!("emits the event {kind}"),
            None => "emits an event".to_owned(),
        },
    };
    let switch = matches!(task.kind, TaskKind::Switch { .. });
    if let Some(then) = task.then.as_deref().filter(|t| *t != "continue" && !switch) {
        let _ = write!(words, ", then {}", flow_words(then));
    }
    match &task.condition {
        Some(condition) => format!("if {}, {words}", short(condition)),
        None => words,
    }
}

/// Whether every case of a switch has a when, so that none may be chosen.
fn cases_all_test(task: &Task) -> bool {
    match &task.kind {
        TaskKind::Switch { cases } => cases.iter().all(|case| case.when.is_some()),
        _ => false,
    }
}

/// A `then` in words.
fn flow_words(then: &str) -> String {
    match then {
        "continue" => "goes on".to_owned(),
        "exit" => "leaves its list".to_owned(),
        "end" => "ends the run".to_owned(),
        name => format!("goes to {name}"),
    }
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

/// Text that Markdown shows as written: what would start emphasis, code, a link or HTML is
/// escaped.
fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '`' | '[' | ']' | '<') {
            out.push('\\');
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

/// Text safe inside a quoted Mermaid label: `#` first, since Mermaid reads `#name;` as a
/// character; then what ends the label or the line, and what Mermaid would read as Markdown or
/// HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::{WorkflowLimits, check_workflow};

    /// The flowchart of a document whose `do` is `tasks` (YAML, indented by two).
    fn chart(tasks: &str) -> String {
        let source = format!(
            "document: {{ dsl: 1.0.3, namespace: t, name: n, version: 1.0.0 }}\ndo:\n{tasks}"
        );
        let document = check_workflow(&source, &WorkflowLimits::default(), None)
            .unwrap_or_else(|issues| panic!("{issues:?}"));
        let text = overview(&document);
        let start = text.find("```mermaid\n").expect("a flowchart");
        let end = text[start + 3..].find("```").expect("its end") + start + 3;
        text[start..end].to_owned()
    }

    #[test]
    fn an_edge_label_is_quoted_since_mermaid_reads_brackets_in_a_bare_one() {
        // Mermaid's parser refused `-->|unless ({ a: [1] }).a.length > 0|` before.
        let chart = chart(
            "  - a:\n      if: '${ ({ a: [1] }).a.length > 0 }'\n      set: { x: 1 }\n  - b:\n      set: { y: 2 }\n",
        );
        assert!(
            chart.contains("start -->|\"unless ({ a: [1] }).a.length #gt; 0\"| s2\n"),
            "{chart}"
        );
        assert!(!chart.contains("-->|unless"), "{chart}");
    }

    #[test]
    fn edges_follow_every_group_so_none_joins_one() {
        // An edge written inside a subgraph makes its ends members of it: `finish` drawn inside
        // the try.
        let chart = chart(
            "  - t:\n      try:\n        - a:\n            set: { x: 1 }\n            then: end\n        - b:\n            set: { x: 2 }\n      catch:\n        do:\n          - c:\n              set: { x: 3 }\n",
        );
        let last_end = chart.rfind("  end\n").expect("a group");
        let first_edge = chart.find("-->").expect("an edge");
        assert!(last_end < first_edge, "{chart}");
        assert!(chart.contains("  s2 --> finish\n"), "{chart}");
        assert!(
            chart.contains("  s2 -.->|caught| s4\n  s3 -.->|caught| s4\n"),
            "{chart}"
        );
    }

    #[test]
    fn each_case_of_a_switch_goes_where_its_then_says() {
        let chart = chart(
            "  - pick:\n      switch:\n        - big:\n            when: $data.n > 3\n            then: last\n        - stop:\n            when: $data.stop\n            then: end\n  - middle:\n      set: { x: 1 }\n  - last:\n      set: { x: 2 }\n",
        );
        assert!(chart.contains("  s1 -->|\"big\"| s3\n"), "{chart}");
        assert!(chart.contains("  s1 -->|\"stop\"| finish\n"), "{chart}");
        // No case holds: the switch's own then, here the next task.
        assert!(
            chart.contains("  s1 -->|\"no case holds\"| s2\n"),
            "{chart}"
        );
        assert!(!chart.contains("s1 -->|\"big\"| s2"), "{chart}");
    }

    #[test]
    fn a_then_exit_leaves_its_list_and_stops_a_loop() {
        let chart = chart(
            "  - each:\n      for:\n        in: $data.items\n      do:\n        - first:\n            set: { x: 1 }\n            then: exit\n        - second:\n            set: { x: 2 }\n  - after:\n      set: { x: 3 }\n",
        );
        // first leaves the loop for the step after it, with no edge to second and no next item.
        assert!(chart.contains("  s2 --> s4\n"), "{chart}");
        assert!(!chart.contains("s2 --> s3"), "{chart}");
        assert!(chart.contains("  s3 -->|\"next item\"| s2\n"), "{chart}");
        assert!(!chart.contains("s2 -->|\"next item\"|"), "{chart}");
        assert!(chart.contains("  s3 --> s4\n"), "{chart}");
    }

    #[test]
    fn flow_passes_around_the_first_task_of_a_group_whose_if_may_not_hold() {
        let chart = chart(
            "  - group:\n      do:\n        - maybe:\n            if: $data.go\n            set: { x: 1 }\n        - then-this:\n            set: { x: 2 }\n",
        );
        assert!(chart.contains("  start --> s1\n"), "{chart}");
        assert!(
            chart.contains("  start -->|\"unless $data.go\"| s3\n"),
            "{chart}"
        );
        assert!(!chart.contains("start --> s2"), "{chart}");
    }

    #[test]
    fn the_steps_keep_their_numbers_when_markdown_renders_them() {
        let document = check_workflow(
            "document: { dsl: 1.0.3, namespace: t, name: n, version: 1.0.0 }\ndo:\n  - a:\n      do:\n        - '*b*':\n            set: { x: '${ $data.n > 1 }' }\n  - c:\n      wait: PT1S\n",
            &WorkflowLimits::default(),
            None,
        )
        .unwrap_or_else(|issues| panic!("{issues:?}"));
        let text = overview(&document);
        assert!(
            text.contains(
                "- **1.** a: does the steps below in order.\n  - **2.** \\*b\\*: sets its output.\n- **3.** c: waits.\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn labels_escape_what_mermaid_reads() {
        assert_eq!(
            escape("a \"b\" #1; | `c` <i>\nd"),
            "a #quot;b#quot; #35;1; #124; #96;c#96; #lt;i#gt; d"
        );
    }

    #[test]
    fn used_by_reads_in_words_and_is_left_out_when_empty() {
        assert_eq!(used_by_section(&[]), None);
        assert_eq!(
            used_by_section(&["workflow/monthly".to_owned(), "reasoning/x".to_owned()]).as_deref(),
            Some("\n## Used by\n\n- The workflow monthly.\n- The reasoning function x.\n")
        );
    }
}
