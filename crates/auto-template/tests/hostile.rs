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
