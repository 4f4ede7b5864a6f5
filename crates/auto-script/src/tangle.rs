//! Bounds on the shapes that make the compiler's work multiply, checked before it reads a text.
//!
//! The compiler (oxc's parser) reads TypeScript by trying readings and going back: at a `<` it
//! tries type arguments (`f<T>(x)`), and at a `(` that opens a `[` or `{` it tries arrow
//! parameters (`({ a }) => a`), whose type annotations it tries too. The tries nest, and what
//! sits inside is read again for each reading of each level around it:
//!
//! - about three times the work a level for a `<`: 12 levels of `({[0<` in 60 bytes took a
//!   second, 20 would take hours;
//! - about twice for annotations: 650 bytes of `[(G:([` and `({[` took 9 seconds and 4.6 GB;
//! - 340 bytes of `(s = d<F ... (syd = (s = ...`, defaults around `<`, took 5 seconds.
//!
//! The fuzz target found all three. A save that never ends, or that takes the server's memory, is
//! what the document's 2 seconds are for, but they are tested between checks and cannot stop
//! one parse, and the parser has no bound of its own. So a text is read here first, in one
//! pass (strings, template text, comments and regular expressions skipped, brackets counted):
//!
//! - a `<` inside more than [`ANGLE_NESTING_MAX`] open brackets is refused where it stands;
//! - a grouping `(` that may open arrow parameters (before a name, a `[`, a `{` or `...`) inside
//!   more than [`ARROW_HEADS_MAX`] others is refused where it stands. A call's parenthesis
//!   (after a name or a closing bracket) is no such head.
//!
//! At the bounds the worst texts we know of check in a fraction of a second.
//!
//! The scan tells a regular expression from a division as the language does in the common
//! case: a `/` after a name, a number, a string or a closing bracket divides; elsewhere (and
//! after a word such as `return`) it starts a regular expression. Where that guess is wrong,
//! brackets are counted that are not there, which can only refuse sooner.

use crate::position::ScriptProblem;

/// The open brackets (`(`, `[`, `{` and a template's `${`) a `<` may sit inside.
pub const ANGLE_NESTING_MAX: usize = 16;

/// The grouping parentheses that may open arrow parameters (before a name, a `[`, a `{` or
/// `...`) that a `(` of the same kind may sit inside.
pub const ARROW_HEADS_MAX: usize = 6;

/// Refusal of such a parenthesis inside more than [`ARROW_HEADS_MAX`] others.
pub const ARROW_HEADS_TOO_DEEP: &str = "A `(` that may open arrow parameters (before a name, a `[`, a `{` or `...`) may sit inside at most 6 others: TypeScript reads each as possible arrow parameters, each one around multiplies the readings, and the check must end in time.";

/// What `open` holds for a grouping parenthesis that may open arrow parameters.
const HEAD: u8 = b'h';

/// Words after which an expression starts, so that a `(` after them groups and a `/` starts a
/// regular expression.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "as",
    "await",
    "case",
    "delete",
    "do",
    "else",
    "extends",
    "in",
    "instanceof",
    "keyof",
    "new",
    "of",
    "return",
    "satisfies",
    "throw",
    "typeof",
    "void",
    "yield",
];

/// Whether the first thing after `at`, past white space, may start a parameter: a name, a
/// `[`, a `{` or `...`.
fn next_is_parameter_start(bytes: &[u8], at: usize) -> bool {
    bytes[at.min(bytes.len())..]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(
            |&b| matches!(b, b'[' | b'{' | b'.' | b'_' | b'$' | b'a'..=b'z' | b'A'..=b'Z' | 0x80..),
        )
}

/// Refusal of a `<` inside more than [`ANGLE_NESTING_MAX`] open brackets.
pub const ANGLE_TOO_DEEP: &str = "A `<` may sit inside at most 16 open brackets: each bracket around it multiplies the readings TypeScript tries, and the check must end in time.";

/// The first `<` of `source` inside more than [`ANGLE_NESTING_MAX`] open brackets, as a
/// problem at its place.
pub(crate) fn too_tangled(source: &str) -> Option<ScriptProblem> {
    let bytes = source.as_bytes();
    // Open brackets; `$` stands for a template's `${`, whose `}` returns to the template text.
    let mut open: Vec<u8> = Vec::new();
    // How many of `open` are parentheses that may open arrow parameters.
    let mut heads = 0;
    // Whether the last thing read ends an operand, so that a `/` after it divides.
    let mut after_operand = false;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            b'\'' | b'"' => {
                at = string_end(bytes, at + 1, byte);
                after_operand = true;
                continue;
            }
            b'`' => {
                (at, after_operand) = template_text(bytes, at + 1, &mut open);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = bytes[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |end| at + end);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = source[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 2);
                continue;
            }
            b'/' if !after_operand => {
                at = regex_end(bytes, at + 1);
                after_operand = true;
                continue;
            }
            b'(' if !after_operand && next_is_parameter_start(bytes, at + 1) => {
                if heads >= ARROW_HEADS_MAX {
                    return Some(ScriptProblem::at_offset(source, at, ARROW_HEADS_TOO_DEEP));
                }
                heads += 1;
                open.push(HEAD);
                after_operand = false;
            }
            b'(' | b'[' | b'{' => {
                open.push(byte);
                after_operand = false;
            }
            b'}' if open.last() == Some(&b'$') => {
                open.pop();
                (at, after_operand) = template_text(bytes, at + 1, &mut open);
                continue;
            }
            b')' | b']' | b'}' => {
                if open.pop() == Some(HEAD) {
                    heads -= 1;
                }
                after_operand = true;
            }
            b'<' => {
                if open.len() > ANGLE_NESTING_MAX {
                    return Some(ScriptProblem::at_offset(source, at, ANGLE_TOO_DEEP));
                }
                after_operand = false;
            }
            b'_' | b'$' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | 0x80.. => {
                let end = bytes[at..]
                    .iter()
                    .position(|&b| {
                        !(b == b'_' || b == b'$' || b.is_ascii_alphanumeric() || b >= 0x80)
                    })
                    .map_or(bytes.len(), |length| at + length);
                // A word after which an expression starts leaves no operand: `typeof (`, `return
                // /re/`.
                after_operand = !EXPRESSION_KEYWORDS.contains(&&source[at..end]);
                at = end;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => after_operand = false,
        }
        at += 1;
    }
    None
}

/// Where a string that opened before `at` with `quote` ends: past its closing quote, or at
/// the end of its line or text.
fn string_end(bytes: &[u8], mut at: usize, quote: u8) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' => return at,
            b if b == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Reads template text from `at`: where the scan goes on, and whether it goes on after an
/// operand (the template ended) or inside a `${`, which opens a bracket.
fn template_text(bytes: &[u8], at: usize, open: &mut Vec<u8>) -> (usize, bool) {
    let (next, substitution) = template_end(bytes, at);
    if substitution {
        open.push(b'$');
    }
    (next, !substitution)
}

/// Where template text that starts at `at` ends, and whether it ends at a `${` (past it) rather
/// than at its closing backquote (past it) or the end of the text.
fn template_end(bytes: &[u8], mut at: usize) -> (usize, bool) {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'`' => return (at + 1, false),
            b'$' if bytes.get(at + 1) == Some(&b'{') => return (at + 2, true),
            _ => at += 1,
        }
    }
    (bytes.len(), false)
}

/// Where a regular expression whose body starts at `at` ends: past its closing `/` and flags,
/// or at the end of its line or text.
fn regex_end(bytes: &[u8], mut at: usize) -> usize {
    let mut in_class = false;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' => return at,
            b'[' => {
                in_class = true;
                at += 1;
            }
            b']' => {
                in_class = false;
                at += 1;
            }
            b'/' if !in_class => {
                at += 1;
                while at < bytes.len() && bytes[at].is_ascii_alphabetic() {
                    at += 1;
                }
                return at;
            }
            _ => at += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}a < b{}", "(".repeat(levels), ")".repeat(levels))
    }

    #[test]
    fn a_less_than_inside_16_brackets_passes_and_inside_17_is_refused_where_it_stands() {
        assert_eq!(too_tangled(&nested(ANGLE_NESTING_MAX)), None);
        let problem = too_tangled(&nested(ANGLE_NESTING_MAX + 1)).expect("refused");
        assert_eq!(problem.text, ANGLE_TOO_DEEP);
        assert_eq!((problem.line, problem.column), (1, 20));
    }

    #[test]
    fn brackets_in_strings_templates_comments_and_regular_expressions_are_not_counted() {
        let deep = "(".repeat(40);
        for text in [
            format!("'{deep}' < 'a'"),
            format!("\"{deep}\" < \"a\""),
            format!("`{deep}` < `a`"),
            format!("/* {deep} */ 1 < 2"),
            format!("// {deep}\n1 < 2"),
            format!("/{}/.test('') < 2", "\\(".repeat(40)),
            format!("/[{deep}]/.test('') < 2"),
            format!("a / b / c < {}", "(1)".repeat(40)),
        ] {
            assert_eq!(too_tangled(&text), None, "{text}");
        }
    }

    #[test]
    fn a_parenthesis_that_may_open_parameters_inside_6_others_passes_and_inside_7_is_refused() {
        let heads = |levels: usize| format!("{}a{}", "({ a: ".repeat(levels), " })".repeat(levels));
        assert_eq!(too_tangled(&heads(ARROW_HEADS_MAX)), None);
        let problem = too_tangled(&heads(ARROW_HEADS_MAX + 1)).expect("refused");
        assert_eq!(problem.text, ARROW_HEADS_TOO_DEEP);
        assert_eq!((problem.line, problem.column), (1, 37));
        let defaults = |levels: usize| format!("{}1{}", "(s = ".repeat(levels), ")".repeat(levels));
        assert_eq!(too_tangled(&defaults(ARROW_HEADS_MAX)), None);
        assert!(too_tangled(&defaults(ARROW_HEADS_MAX + 1)).is_some());
        // After a word that starts an expression, a parenthesis groups.
        let typed = format!("{}a{}", "typeof ([".repeat(7), "])".repeat(7));
        assert!(too_tangled(&typed).is_some());
        // Parentheses around a number or another parenthesis may not open parameters.
        let arithmetic = format!("{}1{}", "((1 + ".repeat(10), "))".repeat(10));
        assert_eq!(too_tangled(&arithmetic), None);
    }

    #[test]
    fn a_call_s_parenthesis_is_no_head() {
        let calls = format!("{}a{}", "f({ a: [g([".repeat(20), "])] })".repeat(20));
        assert_eq!(too_tangled(&calls), None);
    }

    #[test]
    fn a_template_s_substitutions_are_brackets() {
        let text = format!("{}`${{a < b}}`{}", "(".repeat(16), ")".repeat(16));
        assert!(too_tangled(&text).is_some());
        let text = format!("{}`${{a}}` < b{}", "(".repeat(16), ")".repeat(16));
        assert_eq!(too_tangled(&text), None);
    }
}
