//! Expressions, templates, conditions and durations as a run evaluates them, with the variables
//! of the page's table ("Expressions", "Data between tasks").

use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use super::super::durations::{IsoError, parse_iso};
use super::super::expressions::enclosed;
use super::errors::WorkflowError;
use super::run::Engine;

const MS_PER_SECOND: f64 = 1_000.0;

/// What one expression's place offers beyond `$context`, `$workflow` and `$runtime`.
#[derive(Clone, Copy, Default)]
pub(super) struct Vars<'v> {
    pub data: Option<&'v Value>,
    pub input: Option<&'v Value>,
    pub output: Option<&'v Value>,
    /// `$task`, built only when an expression names it.
    pub task: Option<TaskVar<'v>>,
    /// Loop and catch names, each with its `$`.
    pub locals: &'v [(String, Value)],
}

/// What `$task` is made of.
#[derive(Clone, Copy)]
pub(super) struct TaskVar<'v> {
    pub pointer: &'v str,
    pub input: &'v Value,
    pub started_at_ms: i64,
    pub output: Option<&'v Value>,
}

/// `startedAt`: "iso8601 and epoch with seconds and milliseconds".
pub(super) fn time_value(ms: i64) -> Value {
    json!({
        "iso8601": iso8601(ms),
        "epoch": { "seconds": ms.div_euclid(1_000), "milliseconds": ms },
    })
}

/// `2026-01-02T03:04:05.678Z`.
pub(super) fn iso8601(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1_000 % 60,
        in_day % 1_000
    )
}

/// `$runtime`: the same for every run.
static RUNTIME_VAR: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "name": "auto-runtime",
        "version": env!("CARGO_PKG_VERSION"),
        "metadata": { "type": "workflow" },
    })
});

impl Engine<'_> {
    /// Evaluates one expression with the variables it names.
    pub(super) fn eval(
        &mut self,
        expression: &str,
        vars: &Vars<'_>,
    ) -> Result<Value, WorkflowError> {
        let task_value = vars
            .task
            .filter(|_| expression.contains("$task"))
            .map(|task| self.task_value(&task));
        let mut named: Vec<(&str, &Value)> = Vec::new();
        let workflow_var = expression.contains("$workflow").then(|| {
            self.workflow_var.get_or_init(|| {
                json!({
                    "id": self.info.run_id,
                    "definition": self.info.definition,
                    "input": self.workflow_input,
                    "startedAt": time_value(self.info.started_at_ms),
                })
            })
        });
        let fixed: [(&str, Option<&Value>); 7] = [
            ("$data", vars.data),
            ("$input", vars.input),
            ("$output", vars.output),
            ("$context", Some(&self.context)),
            ("$workflow", workflow_var),
            ("$runtime", Some(&RUNTIME_VAR)),
            ("$task", task_value.as_ref()),
        ];
        for (name, value) in fixed {
            if let Some(value) = value
                && expression.contains(name)
            {
                named.push((name, value));
            }
        }
        for (name, value) in vars.locals.iter().rev() {
            if expression.contains(name.as_str()) && !named.iter().any(|(n, _)| n == name) {
                named.push((name.as_str(), value));
            }
        }
        auto_script::evaluate(expression, &named, self.now_ms, &mut self.budget)
            .map_err(|error| WorkflowError::from_script(&error))
    }

    fn task_value(&self, task: &TaskVar<'_>) -> Value {
        let info = self.wf.task(task.pointer);
        let mut value = json!({
            "name": info.name,
            "reference": info.pointer,
            "definition": self.wf.raw(task.pointer).cloned().unwrap_or(Value::Null),
            "input": task.input,
            "startedAt": time_value(task.started_at_ms),
        });
        if let Some(output) = task.output {
            value["output"] = output.clone();
        }
        value
    }

    /// A template: each `${ }` string in it evaluated, the rest as written.
    pub(super) fn template(
        &mut self,
        value: &Value,
        vars: &Vars<'_>,
    ) -> Result<Value, WorkflowError> {
        match value {
            Value::String(text) => match enclosed(text) {
                Some((inner, _)) => self.eval(inner, vars),
                None => Ok(value.clone()),
            },
            Value::Array(items) => items
                .iter()
                .map(|item| self.template(item, vars))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, item) in map {
                    out.insert(key.clone(), self.template(item, vars)?);
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.clone()),
        }
    }

    /// input.from, output.as, export.as: a string is an expression even without `${ }`.
    pub(super) fn shaping(
        &mut self,
        value: &Value,
        vars: &Vars<'_>,
    ) -> Result<Value, WorkflowError> {
        match value {
            Value::String(text) => self.bare(text, vars),
            other => self.template(other, vars),
        }
    }

    fn bare(&mut self, text: &str, vars: &Vars<'_>) -> Result<Value, WorkflowError> {
        let inner = enclosed(text).map_or(text, |(inner, _)| inner);
        self.eval(inner, vars)
    }

    /// "A condition holds unless it gives false or null."
    pub(super) fn condition(
        &mut self,
        value: &Value,
        vars: &Vars<'_>,
    ) -> Result<bool, WorkflowError> {
        let result = match value {
            Value::String(text) => self.bare(text, vars)?,
            other => other.clone(),
        };
        Ok(!matches!(result, Value::Bool(false) | Value::Null))
    }

    /// A bare expression that must give a value (for.in).
    pub(super) fn expression_value(
        &mut self,
        value: &Value,
        vars: &Vars<'_>,
    ) -> Result<Value, WorkflowError> {
        match value {
            Value::String(text) => self.bare(text, vars),
            other => Ok(other.clone()),
        }
    }

    /// A duration in milliseconds: ISO 8601, a mapping, or an expression giving either. One
    /// that is invalid or longer than a run may last is a configuration error.
    pub(super) fn duration(
        &mut self,
        value: &Value,
        vars: &Vars<'_>,
    ) -> Result<u64, WorkflowError> {
        let value = self.template(value, vars)?;
        let ms = duration_ms(&value).map_err(WorkflowError::configuration)?;
        if ms > self.run_duration_ms {
            return Err(WorkflowError::configuration(format!(
                "The duration of {ms} milliseconds is longer than a run may last."
            )));
        }
        Ok(ms)
    }
}

/// Milliseconds of a duration value, or why it is not one.
pub(super) fn duration_ms(value: &Value) -> Result<u64, String> {
    let refused = || {
        format!(
            "{value} is not a duration: ISO 8601 such as PT30M, or a mapping of days, hours, minutes, seconds and milliseconds."
        )
    };
    match value {
        Value::String(text) => parse_iso(text).map_err(|e| match e {
            IsoError::YearsOrMonths => {
                "Years and months are refused because their length varies.".to_owned()
            }
            IsoError::Form => refused(),
        }),
        Value::Object(map) => {
            let mut total = 0.0;
            for (key, amount) in map {
                let unit = match key.as_str() {
                    "days" => 86_400.0 * MS_PER_SECOND,
                    "hours" => 3_600.0 * MS_PER_SECOND,
                    "minutes" => 60.0 * MS_PER_SECOND,
                    "seconds" => MS_PER_SECOND,
                    "milliseconds" => 1.0,
                    _ => return Err(refused()),
                };
                match amount.as_f64() {
                    Some(n) if n >= 0.0 && n.is_finite() => total += n * unit,
                    _ => return Err(refused()),
                }
            }
            if total > u64::MAX as f64 / 2.0 {
                return Err(refused());
            }
            Ok(total.round() as u64)
        }
        _ => Err(refused()),
    }
}
