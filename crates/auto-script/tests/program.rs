//! Computation programs: the default export called with the input, in the same sandbox, with a
//! program's budgets; an error names the line the author wrote.

use std::time::{Duration, Instant};

use auto_script::{
    BRIEF_PROGRAM_CHECKPOINTS_MAX, CHECKPOINT_STEPS, Limit, PROGRAM_CHECKPOINTS_MAX, ScriptError,
    check_program, run_program, run_program_briefly, strip_program,
};
use serde_json::{Value, json};

const NOW_MS: i64 = 1_790_000_000_000;

fn run(program: &str, input: &Value) -> Result<Value, ScriptError> {
    assert_eq!(
        check_program(program, &[]),
        vec![],
        "the program passes the check"
    );
    run_program(program, input, NOW_MS)
}

#[test]
fn the_default_export_maps_the_input_to_the_output() {
    let program = "\
interface Input { month: string }
const pad = (n: number): string => String(n).padStart(2, '0');
export default function window(input: Input) {
  const [year, month] = input.month.split('-').map(Number);
  const end = new Date(Date.UTC(year, month, 0));
  return { from: `${input.month}-01`, to: `${input.month}-${pad(end.getUTCDate())}`, at: new Date().toISOString() };
}
";
    let output = run(program, &json!({ "month": "2026-02" })).unwrap();
    assert_eq!(
        output,
        json!({ "from": "2026-02-01", "to": "2026-02-28", "at": "2026-09-21T14:13:20.000Z" })
    );
}

#[test]
fn every_form_of_default_export_runs() {
    let programs = [
        "export default (input: number) => input + 1;",
        "export default function (input: number) { return input + 1; }",
        "function main(input: number) { return input + 1; }\nexport default main;",
        "const main = (input: number) => input + 1;\nexport { main as default };",
        "export const helper = 1;\nexport default (input: number) => input + helper;",
    ];
    for program in programs {
        assert_eq!(
            run_program(program, &json!(1), NOW_MS).unwrap(),
            json!(2),
            "{program}"
        );
    }
}

#[test]
fn an_error_carries_the_program_words_and_line() {
    let program = "\
type Input = {
  n: number;
};

export default function (input: Input) {
  if (input.n > 1) {
    throw new RangeError(`too many: ${input.n}`);
  }
  return input.n;
}
";
    assert_eq!(run(program, &json!({ "n": 1 })).unwrap(), json!(1));
    let error = run(program, &json!({ "n": 2 })).unwrap_err();
    assert_eq!(
        error,
        ScriptError::Expression {
            message: "RangeError: too many: 2".into(),
            line: Some(7)
        }
    );
    assert_eq!(error.status(), 400);
}

#[test]
fn an_engine_error_names_its_line_too() {
    let program = "export default function (input: any) {\n  const x = input.missing;\n  return x.deeper;\n}\n";
    let error = run(program, &json!({})).unwrap_err();
    assert_eq!(
        error,
        ScriptError::Expression {
            message: "TypeError: cannot read property 'deeper' of undefined".into(),
            line: Some(3)
        }
    );
}

#[test]
fn module_state_starts_again_on_every_run() {
    let program = "let count = 0;\nexport default () => ++count;";
    assert_eq!(run(program, &Value::Null).unwrap(), json!(1));
    assert_eq!(run(program, &Value::Null).unwrap(), json!(1));
}

#[test]
fn a_runaway_program_stops_at_its_work_budget() {
    let started = Instant::now();
    let error = run("export default () => { while (true) {} };", &Value::Null).unwrap_err();
    assert_eq!(
        error,
        ScriptError::Runtime {
            message: format!(
                "The program did more than {PROGRAM_CHECKPOINTS_MAX} checkpoints of work."
            ),
            limit: Limit::Work
        }
    );
    assert_eq!(error.status(), 500);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        run("export default () => 1;", &Value::Null).unwrap(),
        json!(1)
    );
}

/// A brief run, on a thread that must not block long, gives what a full run gives: its value,
/// or what it threw, with the same words.
#[test]
fn a_brief_run_gives_what_a_full_run_gives() {
    for program in [
        "export default (input: { x: number }) => ({ x: input.x + 1 });",
        "export default () => { throw new Error('no'); };",
        "export default () => JSON.parse('{');",
    ] {
        let full = run(program, &json!({ "x": 1 }));
        let brief = run_program_briefly(program, &json!({ "x": 1 }), NOW_MS);
        assert_eq!(brief, Some(full), "{program}");
    }
}

/// A program that needs more than the brief budget is left for a full run, which gives its
/// value (a runaway one stops at its whole budget: `a_runaway_program_stops_at_its_work_budget`).
#[test]
fn a_program_past_the_brief_budget_is_left_for_a_full_run() {
    let steps = (BRIEF_PROGRAM_CHECKPOINTS_MAX + 10) * CHECKPOINT_STEPS;
    let program = format!(
        "export default () => {{ let n = 0; for (let i = 0; i < {steps}; i++) {{ n += 1; }} return n; }};"
    );
    assert_eq!(run_program_briefly(&program, &Value::Null, NOW_MS), None);
    assert_eq!(run(&program, &Value::Null).unwrap(), json!(steps));
    let runaway = "export default () => { while (true) {} };";
    assert_eq!(run_program_briefly(runaway, &Value::Null, NOW_MS), None);
}

#[test]
fn a_program_cannot_catch_the_memory_limit() {
    let program = "\
export default () => {
  try {
    return 'x'.repeat(2 ** 28).length;
  } catch (error) {
    return 'caught';
  }
};
";
    let error = run(program, &Value::Null).unwrap_err();
    assert_eq!(
        error,
        ScriptError::Runtime {
            message: "The program used more than the sandbox's 64 MiB.".into(),
            limit: Limit::Memory
        }
    );
    assert_eq!(
        run("export default () => 1;", &Value::Null).unwrap(),
        json!(1)
    );
}

#[test]
fn a_default_export_that_is_no_function_fails_when_run() {
    let error = run_program("export default 42;", &Value::Null, NOW_MS).unwrap_err();
    assert_eq!(
        error,
        ScriptError::Expression {
            message: "The default export is not a function".into(),
            line: None
        }
    );
}

#[test]
fn a_program_that_does_not_parse_fails_with_its_line() {
    let error = run_program(
        "export default () => {\n  return (;\n};",
        &Value::Null,
        NOW_MS,
    )
    .unwrap_err();
    assert_eq!(
        error,
        ScriptError::Expression {
            message: "Unexpected token".into(),
            line: Some(2)
        }
    );
}

#[test]
fn stripping_keeps_the_program_lines() {
    let stripped = strip_program(
        "interface A {\n  n: number;\n}\nexport default (a: A) => {\n  return a.n;\n};\n",
    )
    .unwrap();
    let return_line = stripped
        .factory
        .lines()
        .position(|line| line.contains("return a.n"))
        .unwrap();
    assert_eq!(
        stripped.program_line(u32::try_from(return_line).unwrap() + 1),
        Some(5)
    );
}
