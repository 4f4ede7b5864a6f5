//! Task lists and tasks ("Tasks", "Data between tasks", "Flow", "Calling a function",
//! "Errors, retries and timeouts", "Loops and parallel branches", "Emitting an event"): each
//! kind's fields, the names each field's expressions may read, and flow within a list.

use auto_doc::pointer;
use serde_json::{Map, Value};

use super::expressions::{Scope, is_expression};
use super::model::{SwitchCase, Task, TaskKind, TaskList};
use super::read::Reader;
use super::{CALL_REFERENCE_BYTES_MAX, CALLABLE_TYPES, FORK_BRANCHES_MAX, TASK_LIST_NESTING_MAX};
use crate::definitions::check_name;
use crate::events_kept::{is_kept_source, is_kept_type};

/// The keys that name a task's kind; `for` and `try` come first since they hold `do` and
/// `catch` beside them.
const KINDS: [&str; 12] = [
    "for", "try", "call", "set", "do", "switch", "fork", "raise", "wait", "listen", "emit", "run",
];
const COMMON_KEYS: [&str; 7] = [
    "if", "input", "output", "export", "timeout", "then", "metadata",
];
const FLOW_WORDS: [&str; 3] = ["continue", "exit", "end"];
const CALLS_REFUSED: [&str; 6] = ["http", "grpc", "openapi", "asyncapi", "a2a", "mcp"];
const ERROR_KEYS: [&str; 8] = [
    "type", "status", "instance", "title", "detail", "kind", "because", "issues",
];
const ERRORS_WITH_KEYS: [&str; 8] = [
    "type", "status", "instance", "title", "detail", "details", "kind", "because",
];
const CATCH_KEYS: [&str; 6] = ["errors", "as", "when", "exceptWhen", "retry", "do"];

/// The page's refusal of a call other than run_definition.
const ONLY_RUN_DEFINITION: &str = "A call is of run_definition, which is the one function.";

/// A name for.each, for.at or catch.as gives: letters, digits and underscores.
fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A noncharacter of Unicode: U+FDD0 to U+FDEF and the last two of every plane.
fn is_noncharacter(c: char) -> bool {
    let code = c as u32;
    (0xFDD0..=0xFDEF).contains(&code) || code & 0xFFFE == 0xFFFE
}

impl Reader<'_> {
    /// The task list at `at`, `depth` lists deep (the top `do` is 1).
    pub fn task_list(&mut self, at: &str, depth: usize, scope: &Scope, fork: bool) -> TaskList {
        let mut list = TaskList {
            pointer: at.to_owned(),
            tasks: Vec::new(),
        };
        if depth > TASK_LIST_NESTING_MAX {
            self.at(at, "Task lists nest at most 64 levels deep.");
            return list;
        }
        let Some(value) = self.get(at) else {
            return list;
        };
        let Value::Array(items) = value else {
            self.at(at, "Expected a list of named tasks.");
            return list;
        };
        if items.is_empty() {
            self.at(at, "Expected at least one task.");
        }
        let names: Vec<String> = items
            .iter()
            .filter_map(|item| match item {
                Value::Object(map) if map.len() == 1 => map.keys().next().cloned(),
                _ => None,
            })
            .collect();
        for (i, item) in items.iter().enumerate() {
            let item_at = format!("{at}/{i}");
            let Some((name, body)) = item
                .as_object()
                .filter(|map| map.len() == 1)
                .and_then(|map| map.iter().next())
            else {
                self.at(
                    &item_at,
                    "Each item of a task list is a mapping with one key, the task's name.",
                );
                continue;
            };
            let task_at = pointer::child_pointer(&item_at, name);
            if names.iter().filter(|n| *n == name).count() > 1
                && names.iter().position(|n| n == name) != Some(i)
            {
                self.at_key(&task_at, "A task's name is written once in its list.");
            }
            let context = ListContext {
                depth,
                fork,
                names: &names,
            };
            if let Some(task) = self.task(&task_at, name, body, scope, &context) {
                list.tasks.push(task);
            }
        }
        list
    }

    fn task(
        &mut self,
        at: &str,
        name: &str,
        body: &Value,
        scope: &Scope,
        list: &ListContext<'_>,
    ) -> Option<Task> {
        let Value::Object(map) = body else {
            self.at(
                at,
                "A task is a mapping whose key names its kind, such as call, set or do.",
            );
            return None;
        };
        let Some(kind) = KINDS.iter().find(|k| map.contains_key(**k)).copied() else {
            self.at(
                at,
                "It needs one of call, set, do, switch, for, fork, try, raise, wait, listen or emit",
            );
            return None;
        };
        let mut allowed: Vec<&str> = COMMON_KEYS.to_vec();
        allowed.push(kind);
        match kind {
            "for" => allowed.extend(["do", "while"]),
            "try" => allowed.push("catch"),
            "call" => allowed.push("with"),
            "listen" => allowed.push("foreach"),
            _ => {}
        }
        for key in map.keys() {
            let key_at = pointer::child_pointer(at, key);
            if key != kind && KINDS.contains(&key.as_str()) && allowed.contains(&key.as_str()) {
                continue;
            }
            if key == "foreach" && kind == "listen" {
                self.at_key(&key_at, "listen with foreach is not supported.");
            } else if KINDS.contains(&key.as_str()) && !allowed.contains(&key.as_str()) {
                self.at_key(&key_at, format!("A task has one kind: this one is {kind}."));
            } else if !allowed.contains(&key.as_str()) {
                self.at_key(
                    &key_at,
                    format!("Unknown key: the keys here are {}.", allowed.join(", ")),
                );
            }
        }
        let input_scope = scope.with(&["$data"]);
        let body_scope = scope.with(&["$data", "$input"]);
        self.common(at, map, scope, list);
        let kind_at = pointer::child_pointer(at, kind);
        let task_kind = match kind {
            "call" => self.call(at, map, &body_scope),
            "set" => {
                match map.get("set") {
                    Some(value @ (Value::Object(_) | Value::String(_))) => {
                        self.shaping(&kind_at, value, &body_scope)
                    }
                    _ => self.at(&kind_at, "Expected a template: a mapping or an expression."),
                }
                TaskKind::Set
            }
            "do" => TaskKind::Do {
                tasks: self.task_list(&kind_at, list.depth + 1, scope, false),
            },
            "switch" => self.switch(&kind_at, &input_scope, list),
            "for" => self.for_task(at, &body_scope, scope, list.depth),
            "fork" => self.fork(&kind_at, scope, list.depth),
            "try" => self.try_task(at, scope, list.depth),
            "raise" => self.raise(&kind_at, &body_scope),
            "wait" => {
                self.duration(&kind_at, &body_scope, true);
                TaskKind::Wait
            }
            "listen" => {
                self.listen(&kind_at);
                TaskKind::Listen
            }
            "emit" => self.emit(&kind_at, &body_scope),
            _ => {
                self.at_key(
                    &kind_at,
                    "run tasks are refused: the runtime does not run them.",
                );
                return None;
            }
        };
        Some(Task {
            name: name.to_owned(),
            pointer: at.to_owned(),
            condition: map.get("if").and_then(Value::as_str).map(str::to_owned),
            then: map.get("then").and_then(Value::as_str).map(str::to_owned),
            kind: task_kind,
        })
    }

    /// if, input, output, export, timeout and then, which every task takes.
    fn common(
        &mut self,
        at: &str,
        map: &Map<String, Value>,
        scope: &Scope,
        list: &ListContext<'_>,
    ) {
        let input_scope = scope.with(&["$data"]);
        self.bare(&format!("{at}/if"), &input_scope);
        let shaped = [
            ("input", "from", input_scope.clone()),
            ("output", "as", scope.with(&["$data", "$input"])),
            (
                "export",
                "as",
                scope.with(&["$data", "$input", "$output", "$context"]),
            ),
        ];
        for (field, key, field_scope) in shaped {
            let field_at = format!("{at}/{field}");
            if !map.contains_key(field) || self.object(&field_at).is_none() {
                continue;
            }
            self.only_keys(&field_at, &[key, "schema"]);
            let schema_at = format!("{field_at}/schema");
            if self.get(&schema_at).is_some() {
                self.at_key(
                    &schema_at,
                    "Schemas on tasks are refused: the runtime does not check them.",
                );
            }
            let value_at = format!("{field_at}/{key}");
            if let Some(value) = self.get(&value_at) {
                self.shaping(&value_at, value, &field_scope);
            }
        }
        if let Some(timeout) = map.get("timeout") {
            self.timeout(&format!("{at}/timeout"), timeout, &input_scope);
        }
        if map.contains_key("then") {
            let then_at = format!("{at}/then");
            if let Some(target) = self.string(&then_at) {
                self.flow(&then_at, target, list);
            }
        }
    }

    /// A `then`: continue, exit, end, or a task of the same list outside a fork's branches.
    fn flow(&mut self, at: &str, target: &str, list: &ListContext<'_>) {
        if FLOW_WORDS.contains(&target) {
            return;
        }
        if list.fork {
            self.at(
                at,
                "A branch of a fork can use only continue, exit and end.",
            );
        } else if !list.names.iter().any(|n| n == target) {
            self.at(
                at,
                format!("No task {target:?} in this list: a then names a task in the same list."),
            );
        }
    }

    fn call(&mut self, at: &str, map: &Map<String, Value>, scope: &Scope) -> TaskKind {
        let call_at = format!("{at}/call");
        let mut kind = TaskKind::Call {
            def_type: None,
            def_name: None,
        };
        let Some(function) = self.string(&call_at) else {
            return kind;
        };
        if CALLS_REFUSED.contains(&function) {
            self.at(
                &call_at,
                format!(
                    "A call of {function} is refused: a workflow reaches the world only through its playbook's functions, with run_definition."
                ),
            );
            return kind;
        }
        if function != "run_definition" {
            self.at(&call_at, ONLY_RUN_DEFINITION);
            return kind;
        }
        self.call_reference(at);
        let with_at = format!("{at}/with");
        if !map.contains_key("with") {
            self.at(at, "It needs with");
            return kind;
        }
        if self.object(&with_at).is_none() {
            return kind;
        }
        for key in map["with"].as_object().into_iter().flat_map(Map::keys) {
            if !["type", "name", "input"].contains(&key.as_str()) {
                self.at_key(
                    &pointer::child_pointer(&with_at, key),
                    "run_definition takes no arguments other than type, name and input.",
                );
            }
        }
        let def_type = match self.get(&format!("{with_at}/type")) {
            None => {
                self.at(&with_at, "It needs type");
                None
            }
            Some(value) if is_expression(value) => {
                self.template(&format!("{with_at}/type"), value, scope);
                None
            }
            Some(Value::String(text)) if CALLABLE_TYPES.contains(&text.as_str()) => {
                Some(text.clone())
            }
            Some(_) => {
                self.at(
                    &format!("{with_at}/type"),
                    "Expected a type: reasoning, interaction, prediction, recall, computation or workflow.",
                );
                None
            }
        };
        let def_name = match self.get(&format!("{with_at}/name")) {
            None => {
                self.at(&with_at, "It needs name");
                None
            }
            Some(value) if is_expression(value) => {
                self.template(&format!("{with_at}/name"), value, scope);
                None
            }
            Some(Value::String(text)) => match check_name(text) {
                Ok(()) => Some(text.clone()),
                Err(words) => {
                    self.at(&format!("{with_at}/name"), words);
                    None
                }
            },
            Some(_) => {
                self.at(&format!("{with_at}/name"), "Expected a definition name.");
                None
            }
        };
        if let Some(input) = self.get(&format!("{with_at}/input")) {
            self.template(&format!("{with_at}/input"), input, scope);
        }
        if let (Some(def_type), Some(def_name)) = (&def_type, &def_name) {
            let used = format!("{def_type}/{def_name}");
            if !self.uses.contains(&used) {
                self.uses.push(used);
            }
        }
        kind = TaskKind::Call { def_type, def_name };
        kind
    }

    /// The reference a call's runs carry: at most 256 bytes, and names a person can read.
    fn call_reference(&mut self, at: &str) {
        if at.len() > CALL_REFERENCE_BYTES_MAX {
            self.at_key(
                at,
                format!(
                    "The call's reference, its JSON Pointer, holds {} bytes: at most 256 bytes in UTF-8, so shorten the names of this task and those above it.",
                    at.len()
                ),
            );
        }
        if at
            .chars()
            .any(|c| c.is_control() || is_noncharacter(c) || c == char::REPLACEMENT_CHARACTER)
        {
            self.at_key(
                at,
                "The call's reference has a control character, an unpaired surrogate or a noncharacter in its name or a name above it.",
            );
        }
    }

    fn switch(&mut self, at: &str, scope: &Scope, list: &ListContext<'_>) -> TaskKind {
        let mut cases = Vec::new();
        let Some(Value::Array(items)) = self.get(at) else {
            self.at(at, "Expected a list of named cases.");
            return TaskKind::Switch { cases };
        };
        for (i, item) in items.iter().enumerate() {
            let item_at = format!("{at}/{i}");
            let Some((name, case)) = item
                .as_object()
                .filter(|map| map.len() == 1)
                .and_then(|map| map.iter().next())
            else {
                self.at(
                    &item_at,
                    "Each case is a mapping with one key, the case's name.",
                );
                continue;
            };
            let case_at = pointer::child_pointer(&item_at, name);
            if self.object(&case_at).is_none() {
                continue;
            }
            self.only_keys(&case_at, &["when", "then"]);
            self.bare(&format!("{case_at}/when"), scope);
            let then = match case.get("then") {
                None => {
                    self.at(&case_at, "It needs then");
                    None
                }
                Some(_) => self.string(&format!("{case_at}/then")),
            };
            if let Some(target) = then {
                self.flow(&format!("{case_at}/then"), target, list);
            }
            cases.push(SwitchCase {
                name: name.clone(),
                when: case.get("when").and_then(Value::as_str).map(str::to_owned),
                then: then.map(str::to_owned),
            });
        }
        TaskKind::Switch { cases }
    }

    fn for_task(&mut self, at: &str, body_scope: &Scope, scope: &Scope, depth: usize) -> TaskKind {
        let for_at = format!("{at}/for");
        let mut each = "item".to_owned();
        let mut index = "index".to_owned();
        if self.object(&for_at).is_some() {
            self.only_keys(&for_at, &["each", "in", "at"]);
            for (field, slot) in [("each", &mut each), ("at", &mut index)] {
                if let Some(name) = self.string(&format!("{for_at}/{field}")) {
                    if is_variable_name(name) {
                        *slot = name.to_owned();
                    } else {
                        self.at(
                            &format!("{for_at}/{field}"),
                            "Expected a name of letters, digits and underscores.",
                        );
                    }
                }
            }
            if self.get(&format!("{for_at}/in")).is_none() {
                self.at(&for_at, "It needs in");
            } else {
                self.bare(&format!("{for_at}/in"), body_scope);
            }
        }
        let loop_names = [format!("${each}"), format!("${index}")];
        let names: Vec<&str> = loop_names.iter().map(String::as_str).collect();
        self.bare(&format!("{at}/while"), &body_scope.with(&names));
        let inner = scope.with(&names);
        if self.get(&format!("{at}/do")).is_none() {
            self.at(at, "It needs do");
        }
        TaskKind::For {
            tasks: self.task_list(&format!("{at}/do"), depth + 1, &inner, false),
            each,
            at: index,
        }
    }

    fn fork(&mut self, at: &str, scope: &Scope, depth: usize) -> TaskKind {
        let mut compete = false;
        if self.object(at).is_some() {
            self.only_keys(at, &["branches", "compete"]);
            match self.get(&format!("{at}/compete")) {
                None => {}
                Some(Value::Bool(value)) => compete = *value,
                Some(_) => self.at(&format!("{at}/compete"), "Expected true or false."),
            }
        }
        let branches_at = format!("{at}/branches");
        match self.get(&branches_at) {
            None => self.at(at, "It needs branches"),
            Some(Value::Array(items)) if items.len() > FORK_BRANCHES_MAX => self.at(
                &branches_at,
                format!(
                    "A fork has at most 32 branches; this one has {}.",
                    items.len()
                ),
            ),
            _ => {}
        }
        TaskKind::Fork {
            branches: self.task_list(&branches_at, depth + 1, scope, true),
            compete,
        }
    }

    fn try_task(&mut self, at: &str, scope: &Scope, depth: usize) -> TaskKind {
        let tasks = self.task_list(&format!("{at}/try"), depth + 1, scope, false);
        let catch_at = format!("{at}/catch");
        let mut recovery = None;
        let mut retries = false;
        if self.get(&catch_at).is_none() {
            self.at(at, "It needs catch");
        } else if self.object(&catch_at).is_some() {
            self.only_keys(&catch_at, &CATCH_KEYS);
            let mut error_name = "$error".to_owned();
            if let Some(name) = self.string(&format!("{catch_at}/as")) {
                if is_variable_name(name) {
                    error_name = format!("${name}");
                } else {
                    self.at(
                        &format!("{catch_at}/as"),
                        "Expected a name of letters, digits and underscores.",
                    );
                }
            }
            let errors_at = format!("{catch_at}/errors");
            if self.get(&errors_at).is_some() && self.object(&errors_at).is_some() {
                self.only_keys(&errors_at, &["with"]);
                let with_at = format!("{errors_at}/with");
                if self.get(&with_at).is_some() && self.object(&with_at).is_some() {
                    self.only_keys(&with_at, &ERRORS_WITH_KEYS);
                }
            }
            let condition_scope = scope.with(&["$data", "$input", error_name.as_str()]);
            self.bare(&format!("{catch_at}/when"), &condition_scope);
            self.bare(&format!("{catch_at}/exceptWhen"), &condition_scope);
            let retry_at = format!("{catch_at}/retry");
            match self.get(&retry_at) {
                None => {}
                Some(Value::String(name)) => {
                    retries = true;
                    if !self.use_retries.iter().any(|n| n == name) {
                        self.at(
                            &retry_at,
                            format!("No retry {name:?} in use.retries: the reference must exist."),
                        );
                    }
                }
                Some(_) => {
                    retries = true;
                    self.retry_policy(&retry_at, &condition_scope);
                }
            }
            let do_at = format!("{catch_at}/do");
            if self.get(&do_at).is_some() {
                let inner = scope.with(&[error_name.as_str()]);
                recovery = Some(self.task_list(&do_at, depth + 1, &inner, false));
            }
        }
        TaskKind::Try {
            tasks,
            recovery,
            retries,
        }
    }

    fn raise(&mut self, at: &str, scope: &Scope) -> TaskKind {
        if self.object(at).is_none() {
            return TaskKind::Raise { error: None };
        }
        self.only_keys(at, &["error"]);
        let error_at = format!("{at}/error");
        let error = match self.get(&error_at) {
            None => {
                self.at(at, "It needs error");
                None
            }
            Some(Value::String(name)) if !is_expression(&Value::String(name.clone())) => {
                if !self.use_errors.iter().any(|n| n == name) {
                    self.at(
                        &error_at,
                        format!("No error {name:?} in use.errors: the reference must exist."),
                    );
                }
                Some(name.clone())
            }
            Some(value) => {
                self.error_definition(&error_at, value, scope);
                value
                    .get("title")
                    .or_else(|| value.get("type"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
        };
        TaskKind::Raise { error }
    }

    /// An error written inline, or in `use.errors`: a type and a status, whose values may be
    /// expressions.
    pub fn error_definition(&mut self, at: &str, value: &Value, scope: &Scope) {
        if is_expression(value) {
            self.template(at, value, scope);
            return;
        }
        if self.object(at).is_none() {
            return;
        }
        self.only_keys(at, &ERROR_KEYS);
        for field in ["type", "status"] {
            if value.get(field).is_none() {
                self.at(at, format!("It needs {field}"));
            }
        }
        if let Some(status) = value.get("status")
            && !is_expression(status)
            && status.as_u64().is_none_or(|s| !(100..=599).contains(&s))
        {
            self.at(
                &format!("{at}/status"),
                "Expected a whole number from 100 to 599.",
            );
        }
        self.template(at, value, scope);
    }

    fn listen(&mut self, at: &str) {
        if self.object(at).is_none() {
            return;
        }
        self.only_keys(at, &["to", "read"]);
        if let Some(read) = self.string(&format!("{at}/read"))
            && !["data", "envelope", "raw"].contains(&read)
        {
            self.at(&format!("{at}/read"), "Expected data, envelope or raw.");
        }
        let to_at = format!("{at}/to");
        if self.get(&to_at).is_none() {
            self.at(at, "It needs to");
            return;
        }
        if self.object(&to_at).is_none() {
            return;
        }
        self.event_consumption(&to_at, false);
    }

    fn emit(&mut self, at: &str, scope: &Scope) -> TaskKind {
        let mut event_type = None;
        if self.object(at).is_none() {
            return TaskKind::Emit { event_type };
        }
        self.only_keys(at, &["event"]);
        let event_at = format!("{at}/event");
        if self.get(&event_at).is_none() {
            self.at(at, "It needs event");
            return TaskKind::Emit { event_type };
        }
        if self.object(&event_at).is_none() {
            return TaskKind::Emit { event_type };
        }
        self.only_keys(&event_at, &["with"]);
        let with_at = format!("{event_at}/with");
        let Some(attributes) = self.get(&with_at) else {
            self.at(&event_at, "It needs with");
            return TaskKind::Emit { event_type };
        };
        if self.object(&with_at).is_none() {
            return TaskKind::Emit { event_type };
        }
        for field in ["type", "source"] {
            if attributes.get(field).is_none() {
                self.at(&with_at, format!("It needs {field}"));
            }
        }
        if attributes.get("id").is_some() {
            self.at_key(
                &format!("{with_at}/id"),
                "An emitted event takes no id: the runtime gives it one made from the run and the task.",
            );
        }
        if let Some(Value::String(kind)) = attributes.get("type")
            && !is_expression(&attributes["type"])
        {
            event_type = Some(kind.clone());
            if is_kept_type(kind) {
                self.at(
                    &format!("{with_at}/type"),
                    format!("The type {kind} is one the playbook keeps for its own facts."),
                );
            }
        }
        if let Some(Value::String(source)) = attributes.get("source")
            && !is_expression(&attributes["source"])
        {
            if is_kept_source(source) {
                self.at(
                    &format!("{with_at}/source"),
                    format!("The source {source} is one the playbook keeps for its own facts."),
                );
            } else if !is_absolute_uri(source) {
                self.at(
                    &format!("{with_at}/source"),
                    "A source written out is an absolute URI, such as https://example.com/campaigns; write a relative one as an expression: '${ \"/campaigns\" }'.",
                );
            }
        }
        self.template(&with_at, attributes, scope);
        TaskKind::Emit { event_type }
    }
}

/// Whether `text` starts with a URI scheme: a letter, then letters, digits, `+`, `-` or `.`,
/// then `:`.
fn is_absolute_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
}

/// What a task needs to know of the list that holds it.
struct ListContext<'n> {
    depth: usize,
    /// The list is a fork's branches: only continue, exit and end.
    fork: bool,
    names: &'n [String],
}
