//! Hostile templates: many thousands of random mixtures of Liquid's pieces, checked and
//! rendered, must never panic and must each finish quickly. The generator is a fixed-seed
//! xorshift, so a failure is reproducible: the panic message holds the template.

use std::time::{Duration, Instant};

use auto_template::{CheckConfig, RenderLimits, check, parse, render};
use serde_json::json;

const PIECES: &[&str] = &[
    "{{",
    "}}",
    "{%",
    "%}",
    "{%-",
    "-%}",
    "{{-",
    "-}}",
    " ",
    "\n",
    "x",
    "'",
    "\"",
    "\\",
    "(",
    ")",
    "[",
    "]",
    "..",
    ".",
    ",",
    ":",
    "|",
    "=",
    "==",
    "<",
    ">",
    "!=",
    "-",
    "1",
    "0",
    "-3",
    "2.5",
    "1e3",
    "9999999999999999999",
    "input",
    "input.a",
    "input.list",
    "input.o",
    "today",
    "now",
    "x",
    "forloop",
    "nil",
    "empty",
    "blank",
    "true",
    "if",
    "elsif",
    "else",
    "endif",
    "unless",
    "endunless",
    "case",
    "when",
    "endcase",
    "for",
    "in",
    "endfor",
    "break",
    "continue",
    "limit:",
    "offset:",
    "reversed",
    "cycle",
    "increment",
    "decrement",
    "assign",
    "echo",
    "liquid",
    "raw",
    "endraw",
    "comment",
    "endcomment",
    "#",
    "tablerow",
    "endtablerow",
    "cols:",
    "system",
    "endsystem",
    "ifchanged",
    "endifchanged",
    "and",
    "or",
    "not",
    "contains",
    "capture",
    "include",
    "| size",
    "| split: ','",
    "| join: '-'",
    "| append: input.a",
    "| date: '%Y %-d %:z'",
    "| slice: -2, 9",
    "| json: 3",
    "| replace: 'a', 'bb'",
    "| truncate: -99999999999",
    "| round: -2147483648",
    "| divided_by: 0",
    "| modulo: -1",
    "| times: 9223372036854775807",
    "| url_decode",
    "| base64_decode",
    "| sort",
    "| uniq",
    "| map: 'a'",
    "| where: 'a'",
    "| default: 1, allow_false: true",
    "| first",
    "| last",
    "| abs",
    "| plus: -9223372036854775808",
    "| strip_html",
    "| escape_once",
    "é",
    "💡",
    "(1..3)",
    "(1..input.n)",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn template(rng: &mut Rng) -> String {
    let len = 1 + rng.next() % 40;
    (0..len)
        .map(|_| PIECES[(rng.next() % PIECES.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

const OPERANDS: &[&str] = &[
    "input.a",
    "input.n",
    "input.f",
    "input.list",
    "input.o",
    "input.o.a",
    "input.list[2]",
    "input.list[-1]",
    "input.missing",
    "nil",
    "true",
    "false",
    "empty",
    "blank",
    "0",
    "-1",
    "2.5",
    "1e300",
    "-9223372036854775808",
    "'abc'",
    "'2026-03-05T21:07:09Z'",
    "''",
    "'a,b,,c'",
    "(1..4)",
    "(input.n..1)",
    "x",
    "today",
    "now",
];

const FILTERS: &[(&str, usize)] = &[
    ("abs", 0),
    ("append", 1),
    ("at_least", 1),
    ("at_most", 1),
    ("capitalize", 0),
    ("ceil", 0),
    ("compact", 0),
    ("concat", 1),
    ("date", 1),
    ("default", 1),
    ("divided_by", 1),
    ("downcase", 0),
    ("escape", 0),
    ("escape_once", 0),
    ("first", 0),
    ("floor", 0),
    ("join", 1),
    ("json", 0),
    ("last", 0),
    ("lstrip", 0),
    ("map", 1),
    ("minus", 1),
    ("modulo", 1),
    ("newline_to_br", 0),
    ("plus", 1),
    ("prepend", 1),
    ("remove", 1),
    ("remove_first", 1),
    ("replace", 2),
    ("replace_first", 2),
    ("reverse", 0),
    ("round", 1),
    ("rstrip", 0),
    ("size", 0),
    ("slice", 2),
    ("sort", 0),
    ("sort_natural", 0),
    ("split", 1),
    ("strip", 0),
    ("strip_html", 0),
    ("strip_newlines", 0),
    ("times", 1),
    ("truncate", 2),
    ("truncatewords", 2),
    ("uniq", 0),
    ("upcase", 0),
    ("url_decode", 0),
    ("url_encode", 0),
    ("where", 2),
    ("reject", 1),
    ("find", 2),
    ("has", 1),
    ("sum", 0),
    ("push", 1),
    ("pop", 0),
    ("shift", 0),
    ("unshift", 1),
    ("base64_encode", 0),
    ("base64_decode", 0),
    ("slugify", 0),
    ("array_to_sentence_string", 0),
    ("to_integer", 0),
    ("inspect", 0),
    ("date_to_xmlschema", 0),
];

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[(rng.next() % from.len() as u64) as usize]
}

fn expression(rng: &mut Rng) -> String {
    let mut out = pick(rng, OPERANDS).to_string();
    for _ in 0..rng.next() % 4 {
        let (name, arity) = FILTERS[(rng.next() % FILTERS.len() as u64) as usize];
        out.push_str(" | ");
        out.push_str(name);
        let args: Vec<&str> = (0..arity).map(|_| pick(rng, OPERANDS)).collect();
        if !args.is_empty() {
            out.push_str(": ");
            out.push_str(&args.join(", "));
        }
    }
    out
}

/// A condition: comparisons joined by `and` and `or`, some under `not`.
fn condition(rng: &mut Rng) -> String {
    const OPS: &[&str] = &["==", "!=", "<", ">", "<=", ">=", "contains"];
    let mut out = String::new();
    for i in 0..1 + rng.next() % 3 {
        if i > 0 {
            out.push_str(if rng.next().is_multiple_of(2) {
                " and "
            } else {
                " or "
            });
        }
        if rng.next().is_multiple_of(4) {
            out.push_str("not ");
        }
        out.push_str(pick(rng, OPERANDS));
        if !rng.next().is_multiple_of(3) {
            out.push_str(&format!(" {} {}", pick(rng, OPS), pick(rng, OPERANDS)));
        }
    }
    out
}

/// A template that parses: outputs and assignments inside random blocks.
fn structured(rng: &mut Rng, depth: usize) -> String {
    let mut out = String::new();
    for _ in 0..1 + rng.next() % 4 {
        let piece = match rng.next() % 11 {
            0 if depth < 4 => format!(
                "{{% if {} %}}{}{{% else %}}{}{{% endif %}}",
                condition(rng),
                structured(rng, depth + 1),
                structured(rng, depth + 1)
            ),
            1 if depth < 4 => format!(
                "{{% for x in {} limit: 3 %}}{{{{ forloop.index }}}}{}{{% endfor %}}",
                pick(rng, OPERANDS),
                structured(rng, depth + 1)
            ),
            2 if depth < 4 => format!(
                "{{% case {} %}}{{% when 1, 'abc' %}}{}{{% else %}}w{{% endcase %}}",
                pick(rng, OPERANDS),
                structured(rng, depth + 1)
            ),
            3 => format!("{{% assign x = {} %}}", expression(rng)),
            4 if depth < 4 => format!(
                "{{% tablerow x in {} cols: 2 %}}{}{{% endtablerow %}}",
                pick(rng, OPERANDS),
                structured(rng, depth + 1)
            ),
            5 => format!("{{% cycle 'a', {} %}}", pick(rng, OPERANDS)),
            6 if depth < 4 => format!(
                "{{%- unless {} -%}}\n {}{{% endunless %}}",
                condition(rng),
                structured(rng, depth + 1)
            ),
            7 if depth < 4 => format!(
                "{{% for x in {} offset: 1 reversed %}}{{{{ forloop.rindex }}}}{}{{% else %}}E{{% endfor %}}",
                pick(rng, OPERANDS),
                structured(rng, depth + 1)
            ),
            8 => format!(
                "{{% increment c %}}{{% decrement d %}}{{% echo {} %}}",
                expression(rng)
            ),
            _ => format!("[{{{{ {} }}}}]", expression(rng)),
        };
        out.push_str(&piece);
    }
    out
}

#[test]
fn random_valid_templates_never_panic() {
    let input = json!({
        "a": "a b\n<c>&amp;", "n": 3, "f": -2.5, "list": [3, "two", {"a": 3}, null, [5, 1], true],
        "o": {"a": 1, "b": [1, 2]},
    });
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut rendered = 0;
    for _ in 0..2_000 {
        let source = format!("{{% assign x = input.list %}}{}", structured(&mut rng, 0));
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            let Ok(parsed) = parse(&source) else {
                return false;
            };
            let expired = || started.elapsed() >= Duration::from_millis(200);
            let limits = RenderLimits::new(&expired);
            let result = render(
                &parsed,
                &input,
                "2026-04-01",
                "2026-04-01T09:30:00Z",
                &limits,
            );
            // For comparing with LiquidJS by hand: DIFF_DUMP names a file of JSON lines.
            if let (Ok(path), Ok(out)) = (std::env::var("DIFF_DUMP"), &result) {
                use std::io::Write as _;
                let line = json!({"template": source, "ours": out.message}).to_string();
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .unwrap();
                writeln!(file, "{line}").unwrap();
            }
            result.is_ok()
        });
        match outcome {
            Ok(ok) => rendered += usize::from(ok),
            Err(_) => panic!("panicked on {source:?}"),
        }
        if std::env::var("HOSTILE_SLOW").is_ok() && started.elapsed() > Duration::from_millis(20) {
            println!("{:?} {source}", started.elapsed());
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "slow on {source:?}"
        );
    }
    assert!(rendered > 200, "only {rendered} templates rendered");
}

#[test]
fn random_templates_never_panic_and_finish_quickly() {
    let input = json!({
        "a": "abc", "n": 4, "list": [1, "two", {"a": 3}, null, [5]], "o": {"a": 1, "size": 2},
    });
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut rendered = 0;
    for _ in 0..20_000 {
        let source = template(&mut rng);
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            let _ = check(&source, &CheckConfig::default());
            if let Ok(parsed) = parse(&source) {
                let expired = || started.elapsed() >= Duration::from_millis(200);
                let limits = RenderLimits::new(&expired);
                let _ = render(
                    &parsed,
                    &input,
                    "2026-04-01",
                    "2026-04-01T09:30:00Z",
                    &limits,
                );
                return true;
            }
            false
        });
        match outcome {
            Ok(did_render) => rendered += usize::from(did_render),
            Err(_) => panic!("panicked on {source:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "slow on {source:?}"
        );
    }
    // The generator must reach the renderer often enough to mean something.
    assert!(rendered > 500, "only {rendered} templates parsed");
}
