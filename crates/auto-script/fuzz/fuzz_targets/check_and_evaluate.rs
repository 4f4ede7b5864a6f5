//! Any text as a workflow expression: the check never panics; an expression that passes it is
//! evaluated in the reused sandbox, which ends with a value or one of its two errors (never a
//! crash, a hang past its budgets, or a leak into the next evaluation), and stays usable.

#![no_main]

use auto_script::{InputBudget, Place, ScriptError, check_expression, evaluate};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

const NOW_MS: i64 = 1_780_000_000_000;
const OFFERED: &[&str] = &["$data", "$input"];

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let problems = check_expression(source, &Place::offering(OFFERED));
    if !problems.is_empty() {
        return;
    }
    let input = json!({"n": 1, "items": [1, 2, 3], "name": "a"});
    let vars = [("$data", &input), ("$input", &input)];
    let mut budget = InputBudget::new();
    match evaluate(source, &vars, NOW_MS, &mut budget) {
        Ok(_) | Err(ScriptError::Expression { .. } | ScriptError::Runtime { .. }) => {}
    }
    // Nothing one expression did is seen by the next: the sandbox is as it was.
    let mut fresh = InputBudget::new();
    let after = evaluate(
        "typeof leaked + ':' + $data.n",
        &vars,
        NOW_MS,
        &mut fresh,
    );
    assert_eq!(after.ok(), Some(json!("undefined:1")), "after {source:?}");
});
