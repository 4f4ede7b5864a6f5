//! The sandbox against hostile expressions and at the edge of each budget: what an evaluation
//! may use, that the limits are runtime errors and the code's faults expression errors, and that
//! nothing one evaluation does reaches the next.

use std::time::{Duration, Instant};

use auto_script::{
    EXPRESSION_CHECKPOINTS_MAX, INPUT_CHECKPOINTS_MAX, INPUT_TIME_MS_MAX, InputBudget,
    LIBRARY_GLOBALS, Limit, Sandbox, ScriptError, VALUE_DEPTH_MAX, evaluate,
};
use serde_json::{Value, json};

const NOW_MS: i64 = 1_790_000_000_000;

fn eval(expression: &str) -> Result<Value, ScriptError> {
    evaluate(expression, &[], NOW_MS, &mut InputBudget::new())
}

fn eval_with(expression: &str, vars: &[(&str, &Value)]) -> Result<Value, ScriptError> {
    evaluate(expression, vars, NOW_MS, &mut InputBudget::new())
}

fn assert_runtime(result: Result<Value, ScriptError>, expected: Limit) -> String {
    match result {
        Err(error @ ScriptError::Runtime { limit, .. }) if limit == expected => {
            assert_eq!(error.status(), 500);
            error.to_string()
        }
        other => panic!("expected a runtime error of {expected:?}, got {other:?}"),
    }
}

fn assert_expression_error(result: Result<Value, ScriptError>) -> String {
    match result {
        Err(error @ ScriptError::Expression { .. }) => {
            assert_eq!(error.status(), 400);
            error.to_string()
        }
        other => panic!("expected an expression error, got {other:?}"),
    }
}

fn assert_still_works() {
    assert_eq!(eval("[1, 2, 3].map(x => x * 2)").unwrap(), json!([2, 4, 6]));
}

/// A loop of `iterations` empty turns, as an expression.
fn spin(iterations: u64) -> String {
    format!("(() => {{ let i = 0; while (i < {iterations}) {{ i++; }} return i; }})()")
}

/// Turns of a spin measured to learn the checkpoints a turn takes: about 100 checkpoints, so
/// the one checkpoint of slack from the engine's carried-over count is a 1% error.
const CALIBRATION_ITERATIONS: u64 = 1_000_000;

/// Checkpoints one spin of `iterations` uses, measured.
fn checkpoints_of(iterations: u64) -> u32 {
    let mut budget = InputBudget::new();
    evaluate(&spin(iterations), &[], NOW_MS, &mut budget).expect("the measuring spin fits");
    budget.checkpoints_used()
}

#[test]
fn an_endless_loop_stops_at_the_251st_checkpoint_and_the_sandbox_goes_on() {
    let mut budget = InputBudget::new();
    let started = Instant::now();
    let result = evaluate("(() => { while (true) {} })()", &[], NOW_MS, &mut budget);
    let message = assert_runtime(result, Limit::Work);
    assert_eq!(
        message,
        "The expression did more than 250 checkpoints of work."
    );
    assert_eq!(budget.checkpoints_used(), EXPRESSION_CHECKPOINTS_MAX + 1);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert_still_works();
}

#[test]
fn the_expression_work_budget_holds_at_its_edge() {
    let per_million = checkpoints_of(CALIBRATION_ITERATIONS).max(1);
    let fitting = CALIBRATION_ITERATIONS * 240 / u64::from(per_million);
    let too_much = CALIBRATION_ITERATIONS * 262 / u64::from(per_million);
    let mut budget = InputBudget::new();
    let fits = evaluate(&spin(fitting), &[], NOW_MS, &mut budget);
    assert_eq!(fits.unwrap(), json!(fitting));
    assert!(
        budget.checkpoints_used() <= EXPRESSION_CHECKPOINTS_MAX,
        "{budget:?}"
    );
    assert!(budget.checkpoints_used() >= 230, "{budget:?}");
    assert_runtime(eval(&spin(too_much)), Limit::Work);
}

#[test]
fn the_expressions_of_one_input_share_500_checkpoints() {
    let per_million = checkpoints_of(CALIBRATION_ITERATIONS).max(1);
    let two_hundred = spin(CALIBRATION_ITERATIONS * 200 / u64::from(per_million));
    let mut budget = InputBudget::new();
    evaluate(&two_hundred, &[], NOW_MS, &mut budget).unwrap();
    evaluate(&two_hundred, &[], NOW_MS, &mut budget).unwrap();
    assert!(budget.checkpoints_used() <= 410, "{budget:?}");
    let third = evaluate(&two_hundred, &[], NOW_MS, &mut budget);
    let message = assert_runtime(third, Limit::Work);
    assert_eq!(
        message,
        "The expressions of this input did more than 500 checkpoints of work together."
    );
    assert_eq!(budget.checkpoints_used(), INPUT_CHECKPOINTS_MAX + 1);
    // A cheap expression still runs on a spent budget: only work past it is refused.
    assert_eq!(
        evaluate("1 + 1", &[], NOW_MS, &mut budget).unwrap(),
        json!(2)
    );
    assert_runtime(
        evaluate(&spin(1_000_000), &[], NOW_MS, &mut budget),
        Limit::Work,
    );
}

#[test]
fn the_expressions_of_one_input_share_2_seconds() {
    // Builtin work counts no steps, so this spends time, not checkpoints.
    let slow = "(() => { const s = 'x'.repeat(1 << 16); let n = 0; \
                for (let i = 0; i < 1e7; i++) { n += s.indexOf('y'); } return n; })()";
    let mut budget = InputBudget::new();
    let started = Instant::now();
    let message = assert_runtime(evaluate(slow, &[], NOW_MS, &mut budget), Limit::Time);
    let elapsed = started.elapsed();
    assert_eq!(
        message,
        "The expressions of this input ran longer than 2 seconds together."
    );
    assert!(
        budget.checkpoints_used() < EXPRESSION_CHECKPOINTS_MAX,
        "{budget:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(INPUT_TIME_MS_MAX),
        "{elapsed:?}"
    );
    // The loop alone would run for minutes (1e7 scans of 64 KiB); stopping within a few times
    // the bound proves the clock stopped it. The margin is wide because the clock is asked at
    // checkpoints, which a builtin's work spaces out, and a loaded CI machine stretches them.
    assert!(
        elapsed < Duration::from_millis(INPUT_TIME_MS_MAX * 5),
        "{elapsed:?}"
    );
    // The input's time is spent: the next expression of the same input is refused at once.
    assert_runtime(evaluate("1", &[], NOW_MS, &mut budget), Limit::Time);
    assert_still_works();
}

#[test]
fn memory_past_64_mib_is_a_runtime_error_and_the_sandbox_goes_on() {
    assert_eq!(
        eval("'x'.repeat(2 ** 24).length").unwrap(),
        json!(16_777_216)
    );
    for hog in [
        "Array(1e8).fill(0)",
        "'x'.repeat(2 ** 28)",
        "'x'.repeat(2 ** 26).length",
        "(() => { const all = []; for (;;) { all.push({ n: all.length }); } })()",
    ] {
        let message = assert_runtime(eval(hog), Limit::Memory);
        assert_eq!(
            message,
            "The expression used more than the sandbox's 64 MiB."
        );
        assert_still_works();
    }
}

#[test]
fn a_stack_overflow_is_an_expression_error_and_the_sandbox_goes_on() {
    let message = assert_expression_error(eval(
        "(() => { const down = (n: number): number => down(n + 1) + 1; return down(0); })()",
    ));
    assert_eq!(message, "RangeError: Maximum call stack size exceeded");
    assert_still_works();
}

#[test]
fn tampering_with_the_library_fails_and_leaves_nothing_for_the_next_evaluation() {
    let attempts = [
        (
            "Object.prototype.polluted = 1",
            "({} as any).polluted",
            Value::Null,
        ),
        ("globalThis.leaked = 1", "typeof leaked", json!("undefined")),
        ("Array.prototype.push = () => 0", "[].push(7)", json!(1)),
        (
            "Object.defineProperty(String.prototype, 'x', { get: () => 1 })",
            "('' as any).x",
            Value::Null,
        ),
        (
            "JSON.stringify = () => 'hacked'",
            "JSON.stringify(1)",
            json!("1"),
        ),
        ("Math.max = () => 0", "Math.max(1, 2)", json!(2)),
        (
            "Object.setPrototypeOf(Object.prototype, { evil: 1 })",
            "({} as any).evil",
            Value::Null,
        ),
        ("Date.now = () => 0", "Date.now()", json!(NOW_MS)),
        (
            "(Error as any).prepareStackTrace = () => 'mine'",
            "typeof (Error as any).prepareStackTrace",
            json!("undefined"),
        ),
        (
            "(Error as any).stackTraceLimit = 0",
            "(Error as any).stackTraceLimit",
            json!(10),
        ),
        (
            "([].values() as any).__proto__.map = null",
            "typeof [].values().map",
            json!("function"),
        ),
        (
            "(function* () {} as any).constructor.prototype.x = 1",
            "(function* () {} as any).constructor.prototype.x",
            Value::Null,
        ),
        (
            "(Symbol as any).iterator = 1",
            "typeof Symbol.iterator",
            json!("symbol"),
        ),
        (
            "delete (Array.prototype as any).map",
            "typeof [].map",
            json!("function"),
        ),
    ];
    for (attempt, probe, expected) in attempts {
        assert_expression_error(eval(attempt));
        assert_eq!(
            eval(probe).unwrap(),
            expected,
            "{attempt} left something for {probe}"
        );
    }
}

#[test]
fn an_undeclared_write_in_strict_code_fails() {
    let message = assert_expression_error(eval("(() => { y = 1; })()"));
    assert_eq!(message, "ReferenceError: y is not defined");
    assert_eq!(eval("typeof y").unwrap(), json!("undefined"));
}

#[test]
fn everything_reachable_is_frozen() {
    let walker = r#"(() => {
        const roots: any[] = [globalThis, Object.getPrototypeOf(function* () {}),
            Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(new Map().keys()),
            Object.getPrototypeOf(new Set().keys()), Object.getPrototypeOf(""[Symbol.iterator]()),
            Object.getPrototypeOf(/a/g[Symbol.matchAll]("")),
            Object.getPrototypeOf([].values().map((x: unknown) => x)),
            Object.getPrototypeOf(Iterator.from({ next: () => ({ done: true, value: 0 }) }))];
        const seen = new Set<any>();
        const open: string[] = [];
        const pending = [...roots];
        while (pending.length > 0) {
            const item = pending.pop();
            if ((typeof item !== "object" && typeof item !== "function") || item === null || seen.has(item)) continue;
            seen.add(item);
            if (!Object.isFrozen(item)) open.push(String(item.name ?? Object.prototype.toString.call(item)));
            pending.push(Object.getPrototypeOf(item));
            for (const key of Reflect.ownKeys(item)) {
                const d = Object.getOwnPropertyDescriptor(item, key)!;
                pending.push(d.value, d.get, d.set);
            }
        }
        return { open, count: seen.size };
    })()"#;
    let result = eval(walker).unwrap();
    assert_eq!(result["open"], json!([]), "{result}");
    assert!(result["count"].as_u64().unwrap() > 500, "{result}");
}

#[test]
fn the_global_object_holds_exactly_the_library() {
    let names = eval("Object.getOwnPropertyNames(globalThis).sort()").unwrap();
    let expected: Vec<&str> = LIBRARY_GLOBALS.to_vec();
    assert_eq!(names, json!(expected));
}

#[test]
fn code_cannot_be_built_from_text_on_any_function_prototype() {
    for attempt in [
        "(() => 1).constructor('return 1')()",
        "(function () {}).constructor('return 1')()",
        "(function* () {}).constructor('yield 1')",
        "Reflect.construct(Object.getPrototypeOf(() => 0).constructor, ['return 1'])",
        "Object.getPrototypeOf(Object.getPrototypeOf(function* () {})).constructor('return 1')",
    ] {
        let message = assert_expression_error(eval(attempt));
        assert_eq!(
            message, "TypeError: Function is absent: code cannot be built from text",
            "{attempt}"
        );
    }
}

#[test]
fn variables_are_the_parameters_given_and_no_more() {
    let data = json!({ "n": 1 });
    assert_eq!(eval_with("$data.n", &[("$data", &data)]).unwrap(), json!(1));
    let message = assert_expression_error(eval("$data"));
    assert_eq!(message, "ReferenceError: $data is not defined");
    // A change to a variable's value is the evaluation's own.
    assert_expression_error(eval_with(
        "Object.freeze($data) && ($data.n = 2)",
        &[("$data", &data)],
    ));
    assert_eq!(
        eval_with("($data.n = 5, $data.n)", &[("$data", &data)]).unwrap(),
        json!(5)
    );
    assert_eq!(eval_with("$data.n", &[("$data", &data)]).unwrap(), json!(1));
    // The same text with other names is compiled for those names.
    assert_eq!(
        eval_with("typeof $data", &[("$input", &data)]).unwrap(),
        json!("undefined")
    );
    let message = assert_expression_error(eval_with("1", &[("data", &data)]));
    assert_eq!(message, "data is not a variable name");
    let message = assert_expression_error(eval_with("1", &[("$data", &data), ("$data", &data)]));
    assert_eq!(message, "$data is given twice");
}

#[test]
fn the_clock_is_the_one_given_for_each_evaluation() {
    for now in [0_i64, 86_400_000, NOW_MS] {
        let mut budget = InputBudget::new();
        let value = evaluate("[Date.now(), new Date().getTime()]", &[], now, &mut budget).unwrap();
        assert_eq!(value, json!([now, now]));
    }
}

/// `depth` nested arrays around 0, as an expression.
fn nested(depth: usize) -> String {
    format!(
        "(() => {{ let v: unknown = 0; for (let i = 0; i < {depth}; i++) v = [v]; return v; }})()"
    )
}

fn depth_of(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn a_value_may_nest_512_levels_and_no_more() {
    let deepest = eval(&nested(VALUE_DEPTH_MAX)).unwrap();
    assert_eq!(depth_of(&deepest), VALUE_DEPTH_MAX);
    let message = assert_expression_error(eval(&nested(VALUE_DEPTH_MAX + 1)));
    assert_eq!(
        message,
        "RangeError: The value nests deeper than 512 levels"
    );
    // A variable that nests 512 levels goes in and comes out whole; one of 513 does not go in.
    assert_eq!(eval_with("$data", &[("$data", &deepest)]).unwrap(), deepest);
    let deeper = json!([deepest]);
    let message = assert_expression_error(eval_with("0", &[("$data", &deeper)]));
    assert_eq!(
        message,
        "RangeError: The value nests deeper than 512 levels"
    );
}

#[test]
fn a_fresh_sandbox_and_a_reused_one_agree() {
    let mut fresh = Sandbox::new().unwrap();
    let data = json!({ "items": [3, 1, 2] });
    for expression in [
        "$data.items.toSorted()",
        "new Date().toISOString()",
        "Object.keys($data)",
    ] {
        let mut budget = InputBudget::new();
        let from_fresh = fresh.evaluate(expression, &[("$data", &data)], NOW_MS, &mut budget);
        assert_eq!(
            from_fresh,
            eval_with(expression, &[("$data", &data)]),
            "{expression}"
        );
    }
    assert!(!fresh.is_spoiled());
}

#[test]
fn text_that_is_not_one_expression_is_refused_before_it_runs() {
    for text in ["1); globalThis.x = (1", "a; b", "}", "1 /* */ ) ( 2"] {
        let message = assert_expression_error(eval(text));
        assert!(message.starts_with("Line 1, column "), "{text}: {message}");
    }
}

#[test]
fn the_compiled_cache_stays_within_its_bounds() {
    let mut sandbox = Sandbox::new().unwrap();
    for index in 0..(auto_script::COMPILED_CACHE_ENTRIES_MAX + 100) {
        let value = sandbox.evaluate(
            &format!("{index} + 1"),
            &[],
            NOW_MS,
            &mut InputBudget::new(),
        );
        assert_eq!(value.unwrap(), json!(index + 1));
    }
    // Large expressions: together past the cache's bytes, so it starts again on the way.
    let numbers: Vec<String> = (0..12_000).map(|n| n.to_string()).collect();
    for index in 0..100 {
        let expression = format!("[{}].length + {index}", numbers.join(","));
        let value = sandbox.evaluate(&expression, &[], NOW_MS, &mut InputBudget::new());
        assert_eq!(value.unwrap(), json!(12_000 + index), "expression {index}");
    }
}

#[test]
fn an_expression_that_does_not_compile_charges_no_work() {
    let mut budget = InputBudget::new();
    evaluate(&spin(100_000), &[], NOW_MS, &mut budget).unwrap();
    let used = budget.checkpoints_used();
    assert!(used > 0);
    assert_expression_error(evaluate("a; b", &[], NOW_MS, &mut budget));
    assert_eq!(budget.checkpoints_used(), used);
}

#[test]
fn a_value_larger_than_16_mib_as_json_does_not_leave_the_sandbox() {
    let edge = auto_script::VALUE_TEXT_BYTES_MAX - 2;
    let fits = eval(&format!("'x'.repeat({edge}).length")).unwrap();
    assert_eq!(fits, json!(edge));
    assert_eq!(
        eval(&format!("'x'.repeat({edge})"))
            .unwrap()
            .as_str()
            .map(str::len),
        Some(edge)
    );
    let message = assert_runtime(eval(&format!("'x'.repeat({})", edge + 1)), Limit::Memory);
    assert_eq!(
        message,
        "The expression's value is larger than 16 MiB as JSON."
    );
    assert_still_works();
}

#[test]
fn deeply_nested_code_fails_as_an_expression_error_without_harm() {
    let levels = auto_script::SCRIPT_BYTES_MAX / 2 - 1;
    let arrays = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
    let message = assert_expression_error(eval(&arrays));
    assert!(
        message.contains("stack overflow") || message.contains("Maximum call stack"),
        "{message}"
    );
    let negations = format!("{}true", "!".repeat(auto_script::SCRIPT_BYTES_MAX - 4));
    let result = eval(&negations);
    assert!(
        matches!(
            result,
            Ok(Value::Bool(true)) | Err(ScriptError::Expression { .. })
        ),
        "{result:?}"
    );
    assert_still_works();
}

/// Calls `then` with `depth` frames of 16 KiB each above it on this thread's stack.
fn deeper<R>(depth: usize, then: &mut dyn FnMut() -> R) -> R {
    let frame = std::hint::black_box([0u8; 16 * 1024]);
    let answer = if depth == 0 {
        then()
    } else {
        deeper(depth - 1, then)
    };
    std::hint::black_box(&frame);
    answer
}

#[test]
fn code_runs_however_deep_in_the_thread_the_sandbox_is_used() {
    // The sandbox is made at the top of a thread, then used 1 MiB deeper: twice the stack the
    // code itself may take, which counts from where the code starts.
    let thread = std::thread::Builder::new()
        .stack_size(16 * 1024 * 1024)
        .spawn(|| {
            assert_eq!(eval("1 + 1").unwrap(), json!(2));
            let deep = deeper(64, &mut || eval("[1, 2, 3].map((x) => x * 2)"));
            assert_eq!(deep.unwrap(), json!([2, 4, 6]));
            let compiled_deep = deeper(64, &mut || eval("'fresh'.length"));
            assert_eq!(compiled_deep.unwrap(), json!(5));
        })
        .unwrap();
    thread.join().expect("the deep evaluation answered");
}

#[test]
fn code_that_recurses_without_end_is_refused_even_on_a_thread_with_little_stack() {
    // Less stack than the code may take: the sandbox enters on a stack grown for it, so the
    // code meets QuickJS's limit, not the end of the thread's stack.
    let thread = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let endless = eval("(function down(n) { return 1 + down(n + 1); })(0)");
            let message = format!("{:?}", endless.unwrap_err());
            assert!(
                message.contains("Maximum call stack size exceeded"),
                "{message}"
            );
            assert_eq!(eval("1 + 1").unwrap(), json!(2));
        })
        .unwrap();
    thread
        .join()
        .expect("the sandbox answered on a small stack");
}
