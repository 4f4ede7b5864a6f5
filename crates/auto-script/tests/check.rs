//! The check corpus: `tests/cases/check.txt`, each expression or program with the names its
//! place offers and the exact problems the save-time check reports. `UPDATE_EXPECT=1` rewrites
//! the expectations.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use auto_script::{Place, ScriptProblem, check_expression, check_program};

#[derive(Debug)]
struct Case {
    header: Vec<String>,
    kind: String,
    offers: Vec<String>,
    source: String,
    expected: Vec<String>,
}

/// Fails unless what began at `started` took less than `limit`.
fn assert_within(started: Instant, limit: Duration) {
    let took = started.elapsed();
    assert!(took < limit, "took {took:?}, more than {limit:?}");
}

fn parse(text: &str) -> (Vec<String>, Vec<Case>) {
    let mut preamble = Vec::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut in_source = false;
    let mut source: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(kind) = line.strip_prefix("=== ") {
            cases.push(Case {
                header: vec![line.to_owned()],
                kind: kind.to_owned(),
                offers: Vec::new(),
                source: String::new(),
                expected: Vec::new(),
            });
            in_source = false;
        } else if let Some(case) = cases.last_mut() {
            if let Some(offers) = line.strip_prefix("offers:") {
                case.header.push(line.to_owned());
                case.offers = offers.split_whitespace().map(str::to_owned).collect();
                in_source = true;
                source.clear();
            } else if in_source && line == "---" {
                case.source = source.join("\n");
                in_source = false;
            } else if in_source {
                source.push(line);
            } else if !line.is_empty() {
                case.expected.push(line.to_owned());
            }
        } else {
            preamble.push(line.to_owned());
        }
    }
    (preamble, cases)
}

fn rendered(problems: &[ScriptProblem]) -> Vec<String> {
    if problems.is_empty() {
        return vec!["ok".to_owned()];
    }
    problems
        .iter()
        .map(|p| format!("{}:{} {}", p.line, p.column, p.text))
        .collect()
}

fn run(case: &Case) -> Vec<String> {
    let offers: Vec<&str> = case.offers.iter().map(String::as_str).collect();
    match case.kind.as_str() {
        "expression" => rendered(&check_expression(&case.source, &Place::offering(&offers))),
        "program" => rendered(&check_program(&case.source, &offers)),
        other => panic!("unknown kind of case: {other}"),
    }
}

#[test]
fn every_check_reports_what_the_corpus_says() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases/check.txt");
    let text = std::fs::read_to_string(&path).expect("the corpus is readable");
    let (preamble, cases) = parse(&text);
    assert!(
        cases.len() > 30,
        "the corpus has its cases: {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut updated = String::new();
    for line in &preamble {
        let _ = writeln!(updated, "{line}");
    }
    for (index, case) in cases.iter().enumerate() {
        let actual = run(case);
        if actual != case.expected {
            failures.push(format!(
                "{}\n  expected: {:?}\n  actual:   {actual:?}",
                case.source, case.expected
            ));
        }
        if index > 0 {
            let _ = writeln!(updated);
        }
        for line in &case.header {
            let _ = writeln!(updated, "{line}");
        }
        let _ = writeln!(updated, "{}\n---", case.source);
        for line in &actual {
            let _ = writeln!(updated, "{line}");
        }
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, updated).expect("the corpus is writable");
        return;
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_deepest_nesting_a_document_can_hold_is_checked_quickly_and_safely() {
    use auto_script::{SCRIPT_BYTES_MAX, TOO_LONG, strip_expression};
    let half = SCRIPT_BYTES_MAX / 2 - 1;
    let texts = [
        format!("{}1{}", "(".repeat(half), ")".repeat(half)),
        format!("{}1{}", "[".repeat(half), "]".repeat(half)),
        format!("{}1", "!".repeat(SCRIPT_BYTES_MAX - 1)),
        format!("{}1", "x => ".repeat(SCRIPT_BYTES_MAX / 5 - 1)),
    ];
    // Every depth up to the largest, on the test thread's own 2 MiB stack or a grown one.
    for levels in [100, 1_000, 3_000, 8_000, 16_000] {
        let text = format!("{}1{}", "(".repeat(levels), ")".repeat(levels));
        assert_eq!(
            check_expression(&text, &Place::offering(&[])),
            vec![],
            "{levels}"
        );
        assert!(strip_expression(&text).is_ok(), "{levels}");
    }
    for text in &texts {
        assert_eq!(
            check_expression(text, &Place::offering(&[])),
            vec![],
            "{}",
            &text[..12]
        );
        assert!(strip_expression(text).is_ok(), "{}", &text[..12]);
    }
    // Tens of thousands of problems in one text are located in one pass.
    let started = Instant::now();
    let many = format!("{}1", "a ? b : ".repeat(SCRIPT_BYTES_MAX / 8 - 1));
    let problems = check_expression(&many, &Place::offering(&[]));
    assert_eq!(problems.len(), 2 * (SCRIPT_BYTES_MAX / 8 - 1));
    assert_eq!(
        problems.last().map(|p| p.column),
        Some(u32::try_from(many.len()).unwrap() - 4)
    );
    assert_within(started, Duration::from_secs(2));
    let too_long = "1".repeat(SCRIPT_BYTES_MAX + 1);
    let refused = check_expression(&too_long, &Place::offering(&[]));
    assert_eq!(
        refused,
        vec![ScriptProblem {
            line: 1,
            column: 1,
            text: TOO_LONG.to_owned()
        }]
    );
    assert_eq!(check_program(&too_long, &[]), refused);
}

/// TypeScript's readings multiply with each bracket around a `<`: 12 levels of `({[0<` took a
/// second, 20 would take hours. A `<` inside more than 16 open brackets is refused before the
/// compiler reads the text; at 16 the worst known shape, with a long text inside, still checks
/// quickly.
#[test]
fn a_less_than_too_deep_in_brackets_is_refused_before_the_compiler_tries_its_readings() {
    use auto_script::{
        ANGLE_NESTING_MAX, ANGLE_TOO_DEEP, ARROW_HEADS_MAX, ARROW_HEADS_TOO_DEEP, InputBudget,
        evaluate, strip_expression,
    };
    let place = Place::offering(&["$data"]);
    // At the bound: a `<` inside 16 brackets is an expression like any other.
    let at_bound = format!(
        "{}1 < 2{}",
        "[".repeat(ANGLE_NESTING_MAX),
        "]".repeat(ANGLE_NESTING_MAX)
    );
    assert_eq!(check_expression(&at_bound, &place), vec![]);
    let value = evaluate(&at_bound, &[], 0, &mut InputBudget::new()).expect("it runs");
    let mut innermost = &value;
    for _ in 0..ANGLE_NESTING_MAX {
        innermost = &innermost[0];
    }
    assert_eq!(innermost, &serde_json::json!(true));
    // One past: refused where the `<` stands, by the check, the program check and the strip.
    let past = format!(
        "{}1 < 2{}",
        "[".repeat(ANGLE_NESTING_MAX + 1),
        "]".repeat(ANGLE_NESTING_MAX + 1)
    );
    let refused = vec![ScriptProblem {
        line: 1,
        column: 20,
        text: ANGLE_TOO_DEEP.to_owned(),
    }];
    assert_eq!(check_expression(&past, &place), refused);
    assert_eq!(strip_expression(&past).err(), Some(refused));
    let program = format!("export default function () {{ return {past}; }}");
    assert_eq!(check_program(&program, &[])[0].text, ANGLE_TOO_DEEP);
    // What the fuzz target found, and the shape grown past any time a save could wait.
    let started = Instant::now();
    let found = "$dS([[f[[([{[[0<=jOj<[f[([{[[0<f[([{[[0<=jOj<[-f[(OjOj<[([{[[0<=jOj,[f[([{[[0<([{[[0<f[([f[(OjOj<[([{[0<0<<0<[0<([0<0<<0<[0<OjOj<[([{[[0<=jOj<[f[([{[[0<f[([{[[0<=jOj<[-f[(OjOj<[([{[[0<=jOj,[f[([{[[0<f[([{[[0<=jOj<[-f[([{[[0<a<&>";
    for text in [found.to_owned(), format!("f{}a", "[({[0<".repeat(30))] {
        let problems = check_expression(&text, &place);
        assert_eq!(problems.len(), 1, "{text}");
        assert_eq!(problems[0].text, ANGLE_TOO_DEEP);
    }
    // Arrow parameters with annotations: 650 bytes took 9 seconds and 4.6 GB before the bound.
    let annotated = "$$d[([([[[{[[[[Y[(G:([[[([[][[[[[[[[[Y[(G[{[[[[Y[[[Y[(G[{[[[[Y[(G:([([([[[{[[[[Y[(G:([d[([[[[[{[[[[Y[(G[{[[[[Y[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[[[Y[(G:([[[([[][(G:([d[([[[[[{[[[[Y[(G[{[[[[Y[(G[{[[[[Y[[[Y[(G[{[[[[Y[(G:([([([[[{[[[[Y[(G:([d[([[[[[{[[[[Y[(G[{[[[[Y[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[[[Y[(G:([[[([[][(G:([d[([[[[[{[[[[Y[(G[{[[[[Y[(G:([([([[[{[[[[Y[(G:([d[([[[[[{[[[[Y[(G[{[[[[Y[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[[[Y[(G:(\\[[([Y[(G:([([([[[{[[[[Y[(G:([d[([[[[[{[[[[Y[(G[{[[[[Y[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[(G:([d[([[[[[{[[[[Y[[d[([[[[[{[[[[Y[(G:(\\[[([[][";
    let problems = check_expression(annotated, &place);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].text, ARROW_HEADS_TOO_DEEP);
    // Defaults around `<`: 340 bytes took 5 seconds.
    let defaults = r"(s =d\\sF\sFrsI<F\sFrsI<O<gI<inK1,(syd=(s =d\\sF\sFrsI<O<gI<inK0sI<OF\sFrsI<F\sFrsI<O<gI<inK1,(syd=(s =d\\sF\sFrsI<O<gI<inK0sI<O<gI<inK1,(syd=(s =d\\O<gI<inK1,(syd=(s =d\\sF\sFrsI<O<gI<inK0sI<O<gI<inK1,(syd=(s =d\\sF\s<gI<inK1,(syd=(s =d\\O<gI<inK1,(syd=(s =d\\sF\sFrsI<O<gI<inK0sI<O<gI<inK1,(syd=(s =d\\sF\sFrs,(syd=ta\,f**asiata\,f**asia";
    let problems = check_expression(defaults, &place);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].text, ARROW_HEADS_TOO_DEEP);
    // At that bound: six arrow heads, each around the next.
    let heads = format!(
        "{}$data{}",
        "({ a: ".repeat(ARROW_HEADS_MAX),
        " })".repeat(ARROW_HEADS_MAX)
    );
    assert_eq!(check_expression(&heads, &place), vec![]);
    // The worst known shape at the bound, its last `<` inside 16 brackets, around 60 KB of text:
    // about 0.2 s in a release build.
    let inner = "a + ".repeat(15_000);
    let worst = format!("f{}{inner}a", "[({[0<".repeat(4));
    assert!(
        check_expression(&worst, &place)
            .iter()
            .all(|p| p.text != ANGLE_TOO_DEEP)
    );
    assert_within(started, Duration::from_secs(2));
}

/// What follows a `<` is read as type arguments until the reading fails, then again as a
/// comparison, and the parser keeps what each failed reading built: 4,000 bytes of `d<t<t...`,
/// where every reading runs to the end, took 4.5 seconds and 540 MB. The readings a text's `<`s
/// may take together are bounded before the compiler reads it.
#[test]
fn less_thans_whose_readings_as_type_arguments_pass_the_bound_are_refused_before_the_compiler() {
    use auto_script::{SPECULATION_BYTES_MAX, SPECULATION_TOO_LONG, strip_expression};
    let place = Place::offering(&["$data"]);
    // `$data<$data<...`: the n-th `<` from the end reads 6n - 1 bytes, 3c² + 2c in all for c
    // of them: 261,665 bytes for 295, 262,848 for 296.
    let chain = |count: usize| format!("$data{}", "<$data".repeat(count));
    const { assert!(3 * 295 * 295 + 2 * 295 <= SPECULATION_BYTES_MAX) };
    assert_eq!(check_expression(&chain(295), &place), vec![]);
    let problems = check_expression(&chain(296), &place);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].text, SPECULATION_TOO_LONG);
    // `d<t<t...` of 2,000: the i-th `<` reads 3,999 - 2i bytes, and the first k together
    // 4,000k - k², which passes the bound at the 67th `<`, 134th byte.
    let started = Instant::now();
    let past = format!("d{}", "<t".repeat(2_000));
    let refused = vec![ScriptProblem {
        line: 1,
        column: 134,
        text: SPECULATION_TOO_LONG.to_owned(),
    }];
    assert_eq!(check_expression(&past, &place), refused);
    assert_eq!(strip_expression(&past).err(), Some(refused));
    let program = format!("export default function (t, d) {{\n  return {past};\n}}\n");
    let problems = check_program(&program, &[]);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].text, SPECULATION_TOO_LONG);
    assert_eq!((problems[0].line, problems[0].column), (2, 143));
    assert_within(started, Duration::from_millis(500));
    // A long program of ordinary comparisons is far from the bound.
    let body = "  for (let i = 0; i < items.length; i++) {\n    if (items[i] < limit && i < 10) { total += items[i] < 0 ? -items[i] : items[i]; }\n  }\n";
    let long = format!(
        "export default function (items: number[], limit: number): number {{\n  let total = 0;\n{}  return total;\n}}\n",
        body.repeat(400)
    );
    assert!(long.len() > 50_000);
    assert_eq!(check_program(&long, &[]), vec![]);
}

/// Texts the fuzz target found that took the compiler seconds to minutes and up to 21 GB
/// (`tests/cases/slow-checks/`, one text a file, named by its hash): each is refused by one of
/// the bounds before the compiler reads it. Several hid their brackets from the scan behind a
/// `\` (which the compiler takes into a name with the character after it, a backquote too) or
/// a line that ends at a carriage return.
#[test]
fn texts_that_once_took_the_check_seconds_are_refused_before_the_compiler_reads_them() {
    use auto_script::{ANGLE_TOO_DEEP, ARROW_HEADS_TOO_DEEP, SPECULATION_TOO_LONG};
    let place = Place::offering(&["$data", "$input"]);
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases/slow-checks");
    let mut count = 0;
    let started = Instant::now();
    for entry in std::fs::read_dir(&folder).expect("the folder") {
        let path = entry.expect("an entry").path();
        let text = String::from_utf8(std::fs::read(&path).expect("the text")).expect("UTF-8");
        let problems = check_expression(&text, &place);
        assert_eq!(problems.len(), 1, "{}", path.display());
        assert!(
            [ANGLE_TOO_DEEP, ARROW_HEADS_TOO_DEEP, SPECULATION_TOO_LONG]
                .contains(&problems[0].text.as_str()),
            "{}: {:?}",
            path.display(),
            problems[0]
        );
        count += 1;
    }
    assert!(count >= 24, "{count}");
    assert_within(started, Duration::from_secs(1));
}

/// The scan reads brackets where the compiler does: text it takes for a string, a comment, a
/// template or a regular expression must end where the compiler's does, or brackets it reads
/// would go uncounted.
#[test]
fn the_scan_ends_strings_comments_and_templates_where_the_compiler_does() {
    use auto_script::ANGLE_TOO_DEEP;
    let place = Place::offering(&["$data"]);
    let deep = format!("{}$data < 1{}", "(".repeat(17), ")".repeat(17));
    for before in [
        // A `\` takes the backquote into a name: no template starts.
        "$da\\`ta + ",
        // A line or paragraph separator, or a carriage return, ends a `//` comment.
        "// note\u{2028}",
        "// note\u{2029}",
        "// note\r",
        // A carriage return ends a string.
        "'open\r",
        // After `++`, a member named as a keyword, a `!` that asserts a value is there, or a
        // word that may be a name, a `/` divides.
        "$data++ / ",
        "$data.return / ",
        "$data?.typeof / ",
        "$data! / ",
        "of / ",
        "$data /* a */ / ",
    ] {
        let text = format!("{before}{deep}");
        let problems = check_expression(&text, &place);
        assert!(
            problems.iter().any(|p| p.text == ANGLE_TOO_DEEP),
            "{text:?}: {problems:?}"
        );
    }
}
