//! Every limit at its edge: the last value allowed passes, the first one past it is refused,
//! and hostile input is refused quickly and without a crash.

use std::cell::Cell;
use std::time::{Duration, Instant};

use auto_template::{
    CheckConfig, RENDER_CHARGE_MAX, RENDER_TIME_MS_MAX, RENDERED_CHARS_MAX, RenderErrorKind,
    RenderLimits, Rendered, TAG_NESTING_MAX, TEMPLATE_CHARS_MAX, TEMPLATE_NAMES_MAX, check, parse,
    render,
};
use serde_json::json;

fn problems(template: &str) -> Vec<String> {
    check(template, &CheckConfig::default())
        .into_iter()
        .map(|p| format!("Line {}: {}", p.line, p.text))
        .collect()
}

fn render_with(
    template: &str,
    input: serde_json::Value,
    limits: &RenderLimits<'_>,
) -> Result<Rendered, auto_template::RenderError> {
    let parsed = parse(template).expect("the template parses");
    render(
        &parsed,
        &input,
        "2026-04-01",
        "2026-04-01T09:30:00Z",
        limits,
    )
}

#[test]
fn template_length_at_the_edge() {
    let at_limit = "x".repeat(TEMPLATE_CHARS_MAX);
    assert!(problems(&at_limit).is_empty());
    // Characters, not bytes: 65,536 two-byte characters still pass.
    assert!(problems(&"é".repeat(TEMPLATE_CHARS_MAX)).is_empty());
    let past = "x".repeat(TEMPLATE_CHARS_MAX + 1);
    assert_eq!(
        problems(&past),
        vec!["Line 1: The template has 65537 characters; at most 65536 are allowed"]
    );
}

#[test]
fn names_at_the_edge() {
    // `{{ input.a }}` holds two names.
    let at_limit = "{{ input.a }}".repeat(TEMPLATE_NAMES_MAX / 2);
    assert!(problems(&at_limit).is_empty());
    let past = format!("{at_limit}\n{{{{ today }}}}");
    assert_eq!(
        problems(&past),
        vec!["Line 2: The template uses more than 1000 names in its tags and outputs"]
    );
    // Keywords and filters count too: `if`, `true`, `endif` and `upcase` are names; a number
    // and a string are not.
    // 497 * 2 + 3 + 3 = 1,000 names.
    let base = format!(
        "{}{{% if true %}}x{{% endif %}}{{{{ now | append: 'x' | upcase }}}}",
        "{{ input.a }}".repeat(497)
    );
    assert!(problems(&base).is_empty(), "{:?}", problems(&base));
    let past = base.replace("now |", "now | downcase |");
    assert_eq!(problems(&past).len(), 1);
}

#[test]
fn tag_nesting_at_the_edge() {
    let nested =
        |depth: usize| format!("{}x{}", "{%if 1%}".repeat(depth), "{%endif%}".repeat(depth));
    let nesting = "Line 1: Tags nest more than 2000 levels deep".to_string();
    // Two names a level: the name limit refuses such a template too, but not for its nesting.
    assert!(!problems(&nested(TAG_NESTING_MAX)).contains(&nesting));
    assert!(problems(&nested(TAG_NESTING_MAX + 1)).contains(&nesting));
}

#[test]
fn the_deepest_template_the_name_limit_allows_renders() {
    // `{% if 1 %}` and its end are two names: 500 levels is as deep as a saved template can
    // nest. It renders on a test thread's 2 MiB stack.
    let depth = TEMPLATE_NAMES_MAX / 2;
    let template = format!(
        "{}x{}",
        "{% if 1 %}".repeat(depth),
        "{% endif %}".repeat(depth)
    );
    assert!(problems(&template).is_empty());
    let rendered = render_with(&template, json!({}), &RenderLimits::default()).unwrap();
    assert_eq!(rendered.message, "x");
}

#[test]
fn hostile_nesting_is_refused_without_a_crash() {
    let started = Instant::now();
    let tags = "{%if 1%}".repeat(8_000);
    assert!(problems(&tags).contains(&"Line 1: Tags nest more than 2000 levels deep".to_string()));
    let parens = format!("{{{{ {}1..2{} }}}}", "(".repeat(20_000), ")".repeat(20_000));
    let found = problems(&parens);
    assert_eq!(
        found,
        vec!["Line 1: Invalid output: brackets and parentheses nest more than 64 levels deep"]
    );
    let brackets = format!("{{{{ input{} }}}}", "[input".repeat(10_000));
    assert!(!problems(&brackets).is_empty());
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn parentheses_at_the_edge() {
    // Each range adds one level; the operand inside it one more.
    let nested = |depth: usize| {
        let mut operand = "1".to_string();
        for _ in 0..depth {
            operand = format!("({operand}..2)");
        }
        format!("{{{{ {operand} | size }}}}")
    };
    assert!(
        problems(&nested(63)).is_empty(),
        "{:?}",
        problems(&nested(63))
    );
    let expected = "Line 1: Invalid output: brackets and parentheses nest more than 64 levels deep";
    assert_eq!(problems(&nested(64)), vec![expected]);
}

#[test]
fn charge_at_the_edge() {
    let max = RENDER_CHARGE_MAX;
    let at_limit = format!("{{% assign r = (1..{max}) %}}x");
    assert!(render_with(&at_limit, json!({}), &RenderLimits::default()).is_ok());
    let past = format!("{{% assign r = (1..{}) %}}x", max + 1);
    let error = render_with(&past, json!({}), &RenderLimits::default()).unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::ChargeLimit);
    assert_eq!(
        error.to_issue(0).message(),
        "Line 1: Filters and ranges used more than 5000000 characters or items"
    );
}

#[test]
fn a_huge_range_fails_before_it_is_made() {
    let started = Instant::now();
    let error = render_with(
        "x{% for i in (1..20000000) %}{{ i }}{% endfor %}",
        json!({}),
        &RenderLimits::default(),
    )
    .unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::ChargeLimit);
    let error = render_with(
        "{{ (1..9000000000000000000) | size }}",
        json!({}),
        &RenderLimits::default(),
    )
    .unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::ChargeLimit);
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn filters_charge_what_they_make() {
    // 100,000 characters doubled six times passes 5,000,000 characters on the sixth append.
    let template =
        "{% assign s = input.s %}{% for i in (1..6) %}{% assign s = s | append: s %}{% endfor %}x";
    let input = json!({ "s": "y".repeat(100_000) });
    let error = render_with(template, input.clone(), &RenderLimits::default()).unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::ChargeLimit);
    // A list repeating one long string cannot be joined into a huge string.
    let template = "{% assign l = (1..3000) | map: 'x' %}{% assign big = input.s | split: '' %}{{ input.l | join: input.s }}";
    let input = json!({ "s": "y".repeat(100_000), "l": vec![1; 3000] });
    let error = render_with(template, input, &RenderLimits::default()).unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::ChargeLimit);
}

#[test]
fn rendered_message_at_the_edge() {
    let input = json!({ "s": "x".repeat(RENDERED_CHARS_MAX) });
    let rendered = render_with("{{ input.s }}", input, &RenderLimits::default()).unwrap();
    assert_eq!(rendered.message.chars().count(), RENDERED_CHARS_MAX);
    let input = json!({ "s": "x".repeat(RENDERED_CHARS_MAX) });
    let error = render_with("{{ input.s }}!", input, &RenderLimits::default()).unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::MessageTooLong);
    assert_eq!(
        error.to_issue(0).message(),
        "Line 1: The message renders longer than 200000 characters"
    );
}

#[test]
fn rendered_instructions_at_the_edge() {
    let template = "{% system %}{{ input.s }}{% endsystem %}\nx";
    let input = json!({ "s": "é".repeat(RENDERED_CHARS_MAX) });
    let rendered = render_with(template, input, &RenderLimits::default()).unwrap();
    assert_eq!(rendered.system.unwrap().chars().count(), RENDERED_CHARS_MAX);
    let template = "{% system %}{{ input.s }}.{% endsystem %}\nx";
    let input = json!({ "s": "é".repeat(RENDERED_CHARS_MAX) });
    let error = render_with(template, input, &RenderLimits::default()).unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::InstructionsTooLong);
}

#[test]
fn time_at_the_edge() {
    // A fake clock: each question advances it one millisecond. The render asks every
    // CLOCK_CHECK_STEPS steps, so a loop of 1,000 steps asks a few times and stays under the
    // limit, and one long enough to ask RENDER_TIME_MS_MAX times is stopped.
    let asked = Cell::new(0u64);
    let expired = || {
        asked.set(asked.get() + 1);
        asked.get() >= RENDER_TIME_MS_MAX
    };
    let limits = RenderLimits::new(&expired);
    assert!(render_with("{% for i in (1..1000) %}{% endfor %}x", json!({}), &limits).is_ok());
    let error = render_with(
        "{% for i in (1..1000000) %}{% endfor %}x",
        json!({}),
        &limits,
    )
    .unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::TimeLimit);
    assert_eq!(
        error.to_issue(0).message(),
        "Line 1: The template took longer than 200 ms to render"
    );
}

#[test]
fn a_real_clock_stops_a_slow_render() {
    // A clock of 20 ms, a tenth of the bound: four million iterations take longer than that on
    // any machine these tests run on, where they may take less than the 200 ms of the bound.
    let bound = Duration::from_millis(RENDER_TIME_MS_MAX / 10);
    let started = Instant::now();
    let expired = || started.elapsed() >= bound;
    let limits = RenderLimits::new(&expired);
    let template = "{% for i in (1..2000) %}{% for j in (1..2000) %}{% endfor %}{% endfor %}x";
    let error = render_with(template, json!({}), &limits).unwrap_err();
    assert_eq!(error.kind, RenderErrorKind::TimeLimit);
    assert!(
        started.elapsed() < Duration::from_millis(RENDER_TIME_MS_MAX),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "{{",
        "{%",
        "{{ }}",
        "{% %}",
        "{%-",
        "-%}",
        "{{ 'a",
        "{% if %}",
        "{% for %}",
        "{% for x in %}",
        "{% case %}{% when %}",
        "{% endfor %}",
        "{% else %}",
        "{% liquid if\n%}",
        "{{ a[ }}",
        "{{ (1.. }}",
        "{{ x | }}",
        "{{ x | f: }}",
        "{% cycle %}",
        "{% assign %}",
        "{{ \"\\u12 }}",
        "{% raw %}",
        "{% comment %}",
        "{{ -- }}",
        "{{ 1e999 }}",
        "{% tablerow %}",
        "{% increment %}",
        "\u{0}{{\u{0}}}",
        "{{ input..a }}",
    ];
    for sample in samples {
        let _ = check(sample, &CheckConfig::default());
        if let Ok(parsed) = parse(sample) {
            let _ = render(
                &parsed,
                &json!({}),
                "2026-04-01",
                "2026-04-01T09:30:00Z",
                &RenderLimits::default(),
            );
        }
    }
}

#[test]
fn deep_input_renders_on_a_small_stack() {
    // The run allows input 512 levels deep; printing, comparing and writing it as JSON recurse
    // once a level.
    let mut deep = json!("leaf");
    for _ in 0..600 {
        deep = json!([deep]);
    }
    let input = json!({ "deep": deep, "again": deep });
    let template = "{{ input.deep }} {{ input.deep | json | size }} {% if input.deep == input.again %}same{% endif %}";
    let rendered = render_with(template, input, &RenderLimits::default()).unwrap();
    assert_eq!(rendered.message, "leaf 1206 same");
}
