//! Any text as a workflow expression: the check never panics; an expression that passes it is
//! evaluated in the reused sandbox, which ends with a value or one of its two errors (never a
//! crash, a hang past its budgets, or a leak into the next evaluation), and stays usable. The
//! reused sandbox keeps its inputs from one evaluation to the next and reads plain values back
//! quickly; a sandbox that builds its inputs each time and reads every value back with the full
//! walk gives the same value or expression error.

#![no_main]

use std::cell::RefCell;

use auto_script::{InputBudget, Place, Sandbox, ScriptError, check_expression, evaluate};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

const NOW_MS: i64 = 1_780_000_000_000;
const OFFERED: &[&str] = &["$data", "$input"];

thread_local! {
    /// A sandbox that builds its inputs for each evaluation and reads values back with the walk.
    static BUILT: RefCell<Option<Sandbox>> = const { RefCell::new(None) };
}

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
    let kept = evaluate(source, &vars, NOW_MS, &mut budget);
    let built = BUILT.with(|built| {
        let mut built = built.borrow_mut();
        let sandbox = built.get_or_insert_with(|| {
            let mut sandbox = Sandbox::new().expect("a sandbox");
            sandbox.keep_inputs(false);
            sandbox.read_plain_first(false);
            sandbox.read_members_first(false);
            sandbox
        });
        sandbox.evaluate(source, &vars, NOW_MS, &mut InputBudget::new())
    });
    // Budgets of time may end the two differently; values and the code's own errors may not.
    match (&kept, &built) {
        (Err(ScriptError::Runtime { .. }), _) | (_, Err(ScriptError::Runtime { .. })) => {}
        _ => assert_eq!(kept, built, "the reused sandbox and the building, walking one differ for {source:?}"),
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
