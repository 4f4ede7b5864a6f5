//! Kept inputs: a variable whose value stays the same is handed out again as the frozen tree
//! built from it, and code cannot tell: what it writes it writes to its own copy, what it
//! reads back reads the same, and nothing leaks from one evaluation to the next.

use auto_script::{
    INPUT_CACHE_NAMES_MAX, INPUT_CACHE_VALUES_MAX, InputBudget, Limit, Sandbox, ScriptError,
};
use serde_json::{Value, json};

const NOW_MS: i64 = 1_790_000_000_000;

fn kept() -> Sandbox {
    Sandbox::new().expect("a sandbox")
}

fn built() -> Sandbox {
    let mut sandbox = Sandbox::new().expect("a sandbox");
    sandbox.keep_inputs(false);
    sandbox
}

fn eval(
    sandbox: &mut Sandbox,
    expression: &str,
    vars: &[(&str, &Value)],
) -> Result<Value, ScriptError> {
    sandbox.evaluate(expression, vars, NOW_MS, &mut InputBudget::new())
}

/// Each expression three times in a keeping sandbox (built and kept, then handed out twice)
/// and once in a building one: all four the same, and the value `expected`.
fn same_everywhere(expression: &str, vars: &[(&str, &Value)], expected: &Value) {
    let mut keeping = kept();
    let reference = eval(&mut built(), expression, vars);
    assert_eq!(
        reference.as_ref(),
        Ok(expected),
        "built each time: {expression}"
    );
    for round in 0..3 {
        let value = eval(&mut keeping, expression, vars);
        assert_eq!(value, reference, "kept, round {round}: {expression}");
    }
    assert!(
        keeping.kept_values() > 0,
        "the input was kept: {expression}"
    );
}

#[test]
fn code_writes_to_its_own_copy_of_a_kept_input() {
    let data = json!({ "n": 1, "items": [3, 1, 2] });
    let vars = [("$data", &data)];
    for (expression, expected) in [
        ("$data.items.sort((a, b) => a - b)", json!([1, 2, 3])),
        ("($data.items.push(4), $data.items)", json!([3, 1, 2, 4])),
        (
            "($data.n = 5, $data)",
            json!({ "n": 5, "items": [3, 1, 2] }),
        ),
        ("(delete $data.n, $data)", json!({ "items": [3, 1, 2] })),
        (
            "Object.assign($data, { m: 2 })",
            json!({ "n": 1, "items": [3, 1, 2], "m": 2 }),
        ),
        ("$data.items.reverse()", json!([2, 1, 3])),
        ("($data.items.length = 1, $data.items)", json!([3])),
    ] {
        same_everywhere(expression, &vars, &expected);
    }
    // And the next evaluation sees the value as it was given.
    let mut keeping = kept();
    eval(&mut keeping, "$data.items.sort()", &vars).expect("sorts its own copy");
    assert_eq!(
        eval(&mut keeping, "$data.items", &vars),
        Ok(json!([3, 1, 2]))
    );
}

#[test]
fn a_write_that_code_catches_or_swallows_still_happens() {
    let data = json!({ "n": 1, "items": [3, 1, 2] });
    let vars = [("$data", &data)];
    for (expression, expected) in [
        (
            "(() => { try { $data.n = 5; } catch { return -1; } return $data.n; })()",
            json!(5),
        ),
        (
            "(() => { try { $data.items.sort(); } finally { } return $data.items; })()",
            json!([1, 2, 3]),
        ),
        (
            "(() => { try { throw 1; } catch { } return $data.n; })()",
            json!(1),
        ),
    ] {
        same_everywhere(expression, &vars, &expected);
    }
}

#[test]
fn code_cannot_see_that_a_kept_input_is_frozen() {
    let data = json!({ "n": 1 });
    let vars = [("$data", &data)];
    for (expression, expected) in [
        ("Object.isFrozen($data)", json!(false)),
        ("Object.isSealed($data)", json!(false)),
        ("Object.isExtensible($data)", json!(true)),
        (
            "Object.getOwnPropertyDescriptor($data, 'n')",
            json!({ "value": 1, "writable": true, "enumerable": true, "configurable": true }),
        ),
        (
            "Object.getOwnPropertyDescriptors($data).n.writable",
            json!(true),
        ),
        (
            "Reflect.getOwnPropertyDescriptor($data, 'n').configurable",
            json!(true),
        ),
        ("Reflect.isExtensible($data)", json!(true)),
        ("[Reflect.set($data, 'n', 2), $data.n]", json!([true, 2])),
        (
            "[Reflect.defineProperty($data, 'm', { value: 3 }), $data.m]",
            json!([true, 3]),
        ),
        (
            "[Reflect.deleteProperty($data, 'n'), $data.n]",
            json!([true, null]),
        ),
        ("Reflect.setPrototypeOf($data, null)", json!(true)),
        (
            "(() => { const child = Object.create($data); child.n = 9; return child.n; })()",
            json!(9),
        ),
        ("new Proxy($data, { get: () => 7 }).n", json!(7)),
        (
            "(() => { Object.defineProperty($data, 'n', { value: 2 }); return $data.n; })()",
            json!(2),
        ),
    ] {
        same_everywhere(expression, &vars, &expected);
    }
}

#[test]
fn what_a_kept_input_gives_back_reads_as_if_built_each_time() {
    // Array-index names come first in the engine; numbers read back as the engine holds them.
    let data = json!({
        "b": 1, "10": 2, "2": 3, "x": 1.0, "neg": -0.0, "big": 18_446_744_073_709_551_615_u64,
        "tiny": 5e-324, "list": [{ "id": 1 }, { "id": 2, "note": null }],
    });
    let vars = [("$data", &data)];
    let expected = json!({
        "2": 3, "10": 2, "b": 1, "x": 1, "neg": 0, "big": 1.844_674_407_370_955_2e19,
        "tiny": 5e-324, "list": [{ "id": 1 }, { "id": 2, "note": null }],
    });
    same_everywhere("$data", &vars, &expected);
    same_everywhere(
        "[$data.list, $data.list[1]]",
        &vars,
        &json!([expected["list"], expected["list"][1]]),
    );
    let plain = json!({ "items": [{ "id": 1, "name": "a" }, { "id": 2, "name": "b" }] });
    same_everywhere(
        "$data.items.filter((item) => item.id > 1)",
        &[("$data", &plain)],
        &json!([{ "id": 2, "name": "b" }]),
    );
}

fn nested(depth: usize) -> Value {
    (1..depth).fold(json!([]), |inner, _| json!([inner]))
}

#[test]
fn a_kept_value_given_back_deeper_than_512_levels_is_refused_the_same_way() {
    let deep = nested(512);
    let vars = [("$data", &deep)];
    same_everywhere("$data", &vars, &deep);
    let refused = "RangeError: The value nests deeper than 512 levels";
    for sandbox in [&mut built(), &mut kept(), &mut kept()] {
        for _ in 0..2 {
            match eval(sandbox, "[$data]", &vars) {
                Err(ScriptError::Expression { message, .. }) => assert_eq!(message, refused),
                other => panic!("[$data] of 512 levels: {other:?}"),
            }
        }
    }
}

#[test]
fn a_kept_value_given_back_too_large_is_refused_the_same_way() {
    let text = "x".repeat(1024 * 1024);
    let data = json!({ "text": text });
    let vars = [("$data", &data)];
    for sandbox in [&mut built(), &mut kept()] {
        for _ in 0..2 {
            match eval(sandbox, "Array(17).fill($data)", &vars) {
                Err(ScriptError::Runtime {
                    limit: Limit::Memory,
                    ..
                }) => {}
                other => panic!("17 MiB out: {other:?}"),
            }
            assert_eq!(
                eval(sandbox, "Array(15).fill($data).length", &vars),
                Ok(json!(15))
            );
        }
    }
}

#[test]
fn equal_values_under_two_names_are_two_values() {
    let data = json!({ "n": 1 });
    let vars = [("$a", &data), ("$b", &data)];
    same_everywhere("[$a === $b, ($a.n = 2, $b.n)]", &vars, &json!([false, 1]));
}

#[test]
fn a_value_is_kept_up_to_its_bound_of_values() {
    // An array of n - 1 numbers is n values.
    let at_bound = Value::Array(vec![json!(0); INPUT_CACHE_VALUES_MAX - 1]);
    let past_bound = Value::Array(vec![json!(0); INPUT_CACHE_VALUES_MAX]);
    let mut sandbox = kept();
    assert_eq!(
        eval(&mut sandbox, "$data.length", &[("$data", &at_bound)]),
        Ok(json!(INPUT_CACHE_VALUES_MAX - 1))
    );
    assert_eq!(sandbox.kept_values(), INPUT_CACHE_VALUES_MAX);
    assert_eq!(
        eval(&mut sandbox, "$data.length", &[("$data", &past_bound)]),
        Ok(json!(INPUT_CACHE_VALUES_MAX))
    );
    assert_eq!(
        sandbox.kept_values(),
        0,
        "a value past the bound is not kept"
    );
}

#[test]
fn at_most_16_names_are_kept_and_the_oldest_goes_first() {
    let mut sandbox = kept();
    let values: Vec<Value> = (0..=INPUT_CACHE_NAMES_MAX).map(|i| json!([i])).collect();
    let names: Vec<String> = (0..=INPUT_CACHE_NAMES_MAX)
        .map(|i| format!("$v{i}"))
        .collect();
    for (count, (name, value)) in names.iter().zip(&values).enumerate() {
        assert_eq!(
            eval(&mut sandbox, &format!("{name}[0]"), &[(name, value)]),
            Ok(json!(count))
        );
        assert_eq!(
            sandbox.kept_values(),
            2 * (count + 1).min(INPUT_CACHE_NAMES_MAX),
            "{count}"
        );
    }
}

#[test]
fn a_memory_overrun_forgets_the_kept_inputs_and_the_sandbox_goes_on() {
    let data = json!({ "items": [1, 2, 3] });
    let vars = [("$data", &data)];
    let mut sandbox = kept();
    assert_eq!(
        eval(&mut sandbox, "$data.items.length", &vars),
        Ok(json!(3))
    );
    assert!(sandbox.kept_values() > 0);
    match eval(
        &mut sandbox,
        "$data.items.concat(Array(1e8).fill(0)).length",
        &vars,
    ) {
        Err(ScriptError::Runtime {
            limit: Limit::Memory,
            ..
        }) => {}
        other => panic!("past 64 MiB: {other:?}"),
    }
    assert_eq!(
        sandbox.kept_values(),
        0,
        "the overrun forgot the kept inputs"
    );
    assert_eq!(
        eval(&mut sandbox, "$data.items.length", &vars),
        Ok(json!(3))
    );
}

/// The longest text `"x".repeat(n)` that `sandbox` can make, within 64 KiB.
fn longest_text(sandbox: &mut Sandbox) -> usize {
    let (mut fits, mut fails) = (0_usize, 64 * 1024 * 1024);
    while fails - fits > 64 * 1024 {
        let n = usize::midpoint(fits, fails);
        match eval(sandbox, &format!("'x'.repeat({n}).length"), &[]) {
            Ok(_) => fits = n,
            Err(ScriptError::Runtime {
                limit: Limit::Memory,
                ..
            }) => fails = n,
            Err(other) => panic!("{other:?}"),
        }
    }
    fits
}

#[test]
fn code_that_needs_the_room_kept_inputs_take_gets_it() {
    let n = longest_text(&mut built()) - 256 * 1024;
    let big = Value::Array(vec![json!("a kept text"); INPUT_CACHE_VALUES_MAX - 1]);
    let mut keeping = kept();
    let keep = |sandbox: &mut Sandbox| {
        assert_eq!(
            eval(sandbox, "$data.length", &[("$data", &big)]),
            Ok(json!(INPUT_CACHE_VALUES_MAX - 1))
        );
        assert_eq!(sandbox.kept_values(), INPUT_CACHE_VALUES_MAX);
    };
    keep(&mut keeping);
    assert_eq!(
        eval(&mut keeping, &format!("'x'.repeat({n}).length"), &[]),
        Ok(json!(n)),
        "an expression with no input of its own"
    );
    assert_eq!(keeping.kept_values(), 0, "the kept inputs made room");
    keep(&mut keeping);
    let program = "export default function (n: number) { return 'x'.repeat(n).length; }";
    assert_eq!(
        keeping.run_program(program, &json!(n), NOW_MS),
        Ok(json!(n)),
        "a computation program"
    );
    assert_eq!(keeping.kept_values(), 0, "the kept inputs made room");
}
