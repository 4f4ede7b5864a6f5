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
//! - 340 bytes of `(s = d<F ... (syd = (s = ...`, defaults around `<`, took 5 seconds;
//! - what follows a `<` is read as type arguments until the reading fails, and read again as
//!   a comparison: 4,000 bytes of `d<t<t<t...`, where every reading runs to the end, took
//!   4.5 seconds and 540 MB (the parser keeps what a failed reading built until it ends), and
//!   the 65,536 bytes a document may hold would take hours and all the memory there is.
//!
//! The fuzz target found all four, and texts that hid their brackets from the scan (below). A
//! save that never ends, or that takes the server's memory, is what the document's 2 seconds
//! are for, but they are tested between checks and cannot stop one parse, and the parser has
//! no bound of its own. So a text is read here first, in one pass (strings, template text,
//! comments and regular expressions skipped, brackets counted):
//!
//! - a `<` inside more than [`ANGLE_NESTING_MAX`] open brackets is refused where it stands;
//! - a grouping `(` that may open arrow parameters (before a name, a `[`, a `{` or `...`) inside
//!   more than [`ARROW_HEADS_MAX`] others is refused where it stands. A call's parenthesis
//!   (after a name or a closing bracket) is no such head;
//! - the bytes that the readings of every `<` as type arguments may cover, together, are at
//!   most [`SPECULATION_BYTES_MAX`]. A reading runs from its `<` to the first place where type
//!   arguments surely end: the `>` that closes them, a bracket closed that opened before the
//!   `<`, or, outside the brackets opened since, a token no type holds (`;`, `=` other than in
//!   `=>`, `&&`, `||`, `??`, an arithmetic operator, `-` before anything but a number, a `?`
//!   or `:` with no `extends` before it). Inside a bracket almost anything may sit (defaults,
//!   computed keys), so a reading goes on to its end. A `<` is read again for each reading of
//!   the arrow heads around it and of the earlier `<`s whose readings hold it inside a bracket,
//!   so its bytes count twice for each.
//!
//! The scan must see the brackets the compiler reads, so it ends strings, comments and regular
//! expressions where the compiler does (a carriage return or a line separator ends a line too),
//! takes the character after a `\` into a name as the compiler does (a backquote too), and
//! where a `/` may divide or start a regular expression it divides: read as code, a regular
//! expression only adds brackets that are not there.
//!
//! At the bounds the worst texts we know of check in a fraction of a second.
//!
//! A `/` after a name, a number, a string, a closing bracket, `++` or a non-null `!` divides;
//! after a reserved word such as `return`, or an operator, it starts a regular expression.

use crate::position::ScriptProblem;

/// The open brackets (`(`, `[`, `{` and a template's `${`) a `<` may sit inside.
pub const ANGLE_NESTING_MAX: usize = 16;

/// The grouping parentheses that may open arrow parameters (before a name, a `[`, a `{` or
/// `...`) that a `(` of the same kind may sit inside.
pub const ARROW_HEADS_MAX: usize = 6;

/// Refusal of such a parenthesis inside more than [`ARROW_HEADS_MAX`] others.
pub const ARROW_HEADS_TOO_DEEP: &str = "A `(` that may open arrow parameters (before a name, a `[`, a `{` or `...`) may sit inside at most 6 others: TypeScript reads each as possible arrow parameters, each one around multiplies the readings, and the check must end in time.";

/// The bytes the readings of a text's `<`s as type arguments may cover together (see the
/// module's comment for how they are counted): 4,096 bytes inside the most arrow heads there
/// may be, or 262,144 at the top. At the bound, `d<t<t...` with 512 `<`s, each read to the
/// end, checks in 0.15 s (release build); a comparison in real code is read for a few bytes
/// (`i < n;`, `(a < b)`).
pub const SPECULATION_BYTES_MAX: u64 = 262_144;

/// Refusal of a text whose `<`s give more than [`SPECULATION_BYTES_MAX`] bytes of readings.
pub const SPECULATION_TOO_LONG: &str = "What follows each `<` is read first as type arguments (`f<T>(x)`) until they surely end, then again as a comparison; with this `<` the readings pass 262,144 bytes together, and the check must end in time. End comparisons sooner, for instance in parentheses.";

/// What `open` holds for a grouping parenthesis that may open arrow parameters.
const HEAD: u8 = b'h';

/// Reserved words after which an expression starts, so that a `/` after them starts a regular
/// expression. Elsewhere a `/` divides: taken for a regular expression where it divides, the scan
/// would skip brackets the compiler reads, so where the language leaves it open (`of`, `as`,
/// which may be names) the scan takes it for a division and at worst counts brackets that are
/// not there.
const REGEX_KEYWORDS: &[&str] = &[
    "await",
    "case",
    "delete",
    "do",
    "else",
    "in",
    "instanceof",
    "new",
    "return",
    "throw",
    "typeof",
    "void",
    "yield",
];

/// Words after which an expression or a type starts, so that a `(` after them groups.
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

/// The first byte from `at` on that is not white space.
fn next_significant(bytes: &[u8], at: usize) -> Option<u8> {
    bytes[at.min(bytes.len())..]
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace())
}

/// Whether the first thing after `at`, past white space, may start a parameter: a name, a
/// `[`, a `{` or `...`.
fn next_is_parameter_start(bytes: &[u8], at: usize) -> bool {
    next_significant(bytes, at).is_some_and(
        |b| matches!(b, b'[' | b'{' | b'.' | b'_' | b'$' | b'a'..=b'z' | b'A'..=b'Z' | 0x80..),
    )
}

/// Refusal of a `<` inside more than [`ANGLE_NESTING_MAX`] open brackets.
pub const ANGLE_TOO_DEEP: &str = "A `<` may sit inside at most 16 open brackets: each bracket around it multiplies the readings TypeScript tries, and the check must end in time.";

/// The first `<` of `source` inside more than [`ANGLE_NESTING_MAX`] open brackets, as a
/// problem at its place. One scanner over the source's bytes, its states (strings, templates,
/// comments, regular expressions, brackets) in one loop: split, they would pass the scanner's
/// state back and forth, which is why it is long.
pub(crate) fn too_tangled(source: &str) -> Option<ScriptProblem> {
    let bytes = source.as_bytes();
    // Open brackets; `$` stands for a template's `${`, whose `}` returns to the template text.
    let mut open: Vec<u8> = Vec::new();
    // What the readings of `<` as type arguments run over, in text order.
    let mut marks = Marks::default();
    // How many of `open` are parentheses that may open arrow parameters.
    let mut heads = 0;
    // Whether the last thing read ends an operand, so that a `/` after it divides.
    let mut after_operand = false;
    // What the last thing read says of the next, beyond `after_operand`; white space and
    // comments leave it as it was.
    let mut previous = Previous::Other;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let before = std::mem::replace(&mut previous, Previous::Other);
        let head_may_open = !after_operand || before == Previous::Async;
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
                at += 2;
                while at < bytes.len() && !is_line_end(bytes, at) {
                    at += 1;
                }
                previous = before;
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = source[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 2);
                previous = before;
                continue;
            }
            b'/' if !after_operand && before != Previous::MayDivide => {
                at = regex_end(bytes, at + 1);
                after_operand = true;
                continue;
            }
            b'(' if head_may_open && next_is_parameter_start(bytes, at + 1) => {
                if heads >= ARROW_HEADS_MAX {
                    return Some(ScriptProblem::at_offset(source, at, ARROW_HEADS_TOO_DEEP));
                }
                heads += 1;
                open.push(HEAD);
                marks.push(Mark::new(at, MarkKind::Open));
                after_operand = false;
            }
            b'(' | b'[' | b'{' => {
                open.push(byte);
                marks.push(Mark::new(at, MarkKind::Open));
                after_operand = false;
            }
            b'}' if open.last() == Some(&b'$') => {
                open.pop();
                marks.push(Mark::new(at, MarkKind::Close));
                (at, after_operand) = template_text(bytes, at + 1, &mut open);
                continue;
            }
            b')' | b']' | b'}' => {
                if open.pop() == Some(HEAD) {
                    heads -= 1;
                }
                marks.push(Mark::new(at, MarkKind::Close));
                after_operand = true;
            }
            b'<' => {
                if open.len() > ANGLE_NESTING_MAX {
                    return Some(ScriptProblem::at_offset(source, at, ANGLE_TOO_DEEP));
                }
                after_operand = false;
                match bytes.get(at + 1) {
                    // `<=` and `<<=` compare or shift; no type starts with `=`.
                    Some(b'=') => marks.push(Mark::new(at, MarkKind::Stop)),
                    Some(b'<') if bytes.get(at + 2) == Some(&b'=') => {
                        marks.push(Mark::new(at, MarkKind::Stop));
                        at += 2;
                    }
                    // `<<` may open type arguments too (`f<<T>() => T>()`).
                    Some(b'<') => {
                        marks.push(Mark::angle(at, heads, open.len()));
                        at += 1;
                    }
                    _ => marks.push(Mark::angle(at, heads, open.len())),
                }
            }
            b'>' => {
                marks.push(Mark::new(at, MarkKind::RightAngle));
                after_operand = false;
            }
            b'=' => {
                match bytes.get(at + 1) {
                    Some(b'>') => at += 1,
                    _ => marks.push(Mark::new(at, MarkKind::Stop)),
                }
                after_operand = false;
            }
            b'+' | b'-' if bytes.get(at + 1) == Some(&byte) => {
                // `a++ / b` divides.
                marks.push(Mark::new(at, MarkKind::Stop));
                at += 1;
                after_operand = true;
            }
            b'\\' => {
                // An escape in a name, `\u0061` or `\u{61}`; the compiler takes any other
                // character after a `\` into the name too (and reports it), `\`` included.
                at += 1;
                if bytes.get(at) == Some(&b'u') && bytes.get(at + 1) == Some(&b'{') {
                    at += 2;
                    while at < bytes.len() && bytes[at].is_ascii_hexdigit() {
                        at += 1;
                    }
                    if bytes.get(at) == Some(&b'}') {
                        at += 1;
                    }
                } else {
                    at += bytes.get(at).map_or(0, |&b| utf8_width(b));
                }
                after_operand = true;
                continue;
            }
            b'-' => {
                // Only a negative number is a type.
                if !next_significant(bytes, at + 1).is_some_and(|b| b.is_ascii_digit() || b == b'.')
                {
                    marks.push(Mark::new(at, MarkKind::Stop));
                }
                after_operand = false;
            }
            b'?' if bytes.get(at + 1) != Some(&b'?') => {
                // After a type, a `?` before another type starts a conditional type, which
                // needs an `extends` before it; before anything else it marks the type
                // nullable. `?.` is no type.
                if !next_significant(bytes, at + 1).is_some_and(|b| b",>)]}:;=".contains(&b)) {
                    marks.push(Mark::new(at, MarkKind::Question));
                }
                after_operand = false;
            }
            b':' => {
                marks.push(Mark::new(at, MarkKind::Colon));
                after_operand = false;
            }
            b'&' | b'|' | b'?' if bytes.get(at + 1) == Some(&byte) => {
                marks.push(Mark::new(at, MarkKind::Stop));
                at += 1;
                after_operand = false;
            }
            b';' | b'+' | b'*' | b'/' | b'%' | b'^' | b'~' | b'#' | b'@' => {
                marks.push(Mark::new(at, MarkKind::Stop));
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
                let word = &source[at..end];
                if before == Previous::Dot {
                    // A member's name: `a.return / 2`, `a.typeof(b)`.
                    after_operand = true;
                } else {
                    after_operand = !EXPRESSION_KEYWORDS.contains(&word);
                    if word == "async" {
                        previous = Previous::Async;
                    } else if !after_operand && !REGEX_KEYWORDS.contains(&word) {
                        previous = Previous::MayDivide;
                    }
                }
                if word == "extends" {
                    marks.push(Mark::new(at, MarkKind::Extends));
                }
                at = end;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => previous = before,
            b'.' => {
                // A member's `.` or `?.`; `...` spreads, and after `1.` a word is an error.
                if bytes.get(at + 1) != Some(&b'.') && (at == 0 || bytes[at - 1] != b'.') {
                    previous = Previous::Dot;
                }
                after_operand = false;
            }
            // After an operand a `!` asserts it is not null (`a! / b` divides); before one, or in
            // `!=`, an expression follows.
            b'!' if after_operand && bytes.get(at + 1) != Some(&b'=') => {}
            _ => after_operand = false,
        }
        at += 1;
    }
    too_much_speculation(source, &marks.list)
}

/// What the last thing the scan read says of the next, beyond whether it ended an operand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Previous {
    Other,
    /// The word `async`, after which a `(` may open arrow parameters (`async (a) => a`) though
    /// a `/` divides.
    Async,
    /// A word after which an expression starts but a `/` may still divide (`of`, `as`: they
    /// may be names).
    MayDivide,
    /// A member's `.` (or `?.`), after which a word is a name.
    Dot,
}

/// The marks of a text from its first `<` on: a reading looks only forward from its `<`, and most
/// expressions hold none, so they make none.
#[derive(Default)]
struct Marks {
    list: Vec<Mark>,
}

impl Marks {
    fn push(&mut self, mark: Mark) {
        if !self.list.is_empty() || matches!(mark.kind, MarkKind::Angle { .. }) {
            self.list.push(mark);
        }
    }
}

/// A place the readings of `<` as type arguments care about.
#[derive(Clone, Copy)]
struct Mark {
    at: u32,
    kind: MarkKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MarkKind {
    /// A `<` that may open type arguments, inside `heads` arrow heads and `depth` brackets.
    Angle {
        heads: u8,
        depth: u8,
    },
    RightAngle,
    Open,
    Close,
    /// A token no type holds outside brackets.
    Stop,
    /// A `?` before what may start a type: a conditional type, which needs an `extends`.
    Question,
    /// A `:`, which only a conditional type holds outside brackets.
    Colon,
    /// The word `extends`.
    Extends,
}

impl Mark {
    fn angle(at: usize, heads: usize, depth: usize) -> Self {
        let small = |n: usize| u8::try_from(n).unwrap_or(u8::MAX);
        Self::new(
            at,
            MarkKind::Angle {
                heads: small(heads),
                depth: small(depth),
            },
        )
    }
    fn new(at: usize, kind: MarkKind) -> Self {
        // Texts are at most SCRIPT_BYTES_MAX long.
        Self {
            at: u32::try_from(at).unwrap_or(u32::MAX),
            kind,
        }
    }
}

/// The first `<` with which the readings as type arguments pass [`SPECULATION_BYTES_MAX`]
/// bytes together, as a problem at its place.
///
/// A reading's bytes count once for each way the parser may come to read them: twice for each
/// arrow head around the `<` (read as parameters, then as an expression), and twice for each
/// reading of an earlier `<` that holds this one inside a bracket opened since (in a bracket,
/// a type may hold an expression again: a default, a computed key). A `<` beside an earlier
/// one, outside such brackets, is part of the earlier reading's type and read as type
/// arguments only once that reading has failed, so it adds its bytes but multiplies nothing.
///
/// Each reading is walked once and the walks stop when the bound is passed; the readings
/// still open at a `<` each span more bytes than there are `<`s since, so there are few.
fn too_much_speculation(source: &str, marks: &[Mark]) -> Option<ScriptProblem> {
    let mut total: u64 = 0;
    // The readings still open: where each ends, and the brackets around its `<`.
    let mut readings: Vec<(u32, u8)> = Vec::new();
    for (index, mark) in marks.iter().enumerate() {
        let MarkKind::Angle { heads, depth } = mark.kind else {
            continue;
        };
        readings.retain(|&(end, _)| end > mark.at);
        let holding = readings
            .iter()
            .filter(|&&(_, around)| around < depth)
            .count();
        let ways = u32::from(heads).saturating_add(u32::try_from(holding).unwrap_or(u32::MAX));
        let end = reading_end(&marks[index + 1..])
            .unwrap_or(u32::try_from(source.len()).unwrap_or(u32::MAX));
        let bytes = u64::from(end - mark.at - 1);
        total = total.saturating_add(bytes.saturating_mul(1u64 << ways.min(40)));
        if total > SPECULATION_BYTES_MAX {
            return Some(ScriptProblem::at_offset(
                source,
                mark.at as usize,
                SPECULATION_TOO_LONG,
            ));
        }
        readings.push((end, depth));
    }
    None
}

/// Where a reading as type arguments surely ends, among the marks after its `<`: at the `>`
/// that closes them, a bracket that opened before them, or, outside brackets opened since, a
/// stop, or a `?` or `:` with no `extends` before it. `None`: it runs to the end of the text.
fn reading_end(after: &[Mark]) -> Option<u32> {
    let mut depth = 0usize;
    let mut angles = 1usize;
    let mut conditional = false;
    for mark in after {
        if depth > 0 {
            match mark.kind {
                MarkKind::Open => depth += 1,
                MarkKind::Close => depth -= 1,
                _ => {}
            }
            continue;
        }
        match mark.kind {
            MarkKind::Open => depth += 1,
            MarkKind::Angle { .. } => angles += 1,
            MarkKind::RightAngle => {
                angles -= 1;
                if angles == 0 {
                    return Some(mark.at);
                }
            }
            MarkKind::Extends => conditional = true,
            MarkKind::Question | MarkKind::Colon if conditional => {}
            MarkKind::Close | MarkKind::Stop | MarkKind::Question | MarkKind::Colon => {
                return Some(mark.at);
            }
        }
    }
    None
}

/// Where a string that opened before `at` with `quote` ends: past its closing quote, or at
/// the end of its line or text.
fn string_end(bytes: &[u8], mut at: usize, quote: u8) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' | b'\r' => return at,
            b if b == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The bytes of the UTF-8 character that starts with `first`.
fn utf8_width(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Whether a line ends at `at`: at a line feed, a carriage return, or a line or paragraph
/// separator (U+2028, U+2029), as the language ends comments and regular expressions. Ending
/// where the compiler goes on would hide brackets from the scan.
fn is_line_end(bytes: &[u8], at: usize) -> bool {
    match bytes[at] {
        b'\n' | b'\r' => true,
        0xE2 => matches!(bytes.get(at + 1..at + 3), Some([0x80, 0xA8 | 0xA9])),
        _ => false,
    }
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
            _ if is_line_end(bytes, at) => return at,
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

    /// `<` inside `heads` arrow heads, then a name of `bytes` bytes, then the heads closed.
    fn reading(heads: usize, bytes: usize) -> String {
        format!(
            "{}x<{}{}",
            "(a = ".repeat(heads),
            "b".repeat(bytes),
            ")".repeat(heads)
        )
    }

    #[test]
    fn readings_of_262144_bytes_pass_and_one_more_is_refused_at_its_less_than() {
        // Inside six heads each byte counts 64 times: 4,096 bytes are the bound.
        let heads = ARROW_HEADS_MAX;
        let at_bound = (SPECULATION_BYTES_MAX >> heads) as usize;
        assert_eq!(too_tangled(&reading(heads, at_bound)), None);
        let problem = too_tangled(&reading(heads, at_bound + 1)).expect("refused");
        assert_eq!(problem.text, SPECULATION_TOO_LONG);
        assert_eq!((problem.line, problem.column), (1, 32));
        // With no head around, many `<`s add up: each reads to the end of `d<t<t<t...`.
        let chain = |count: usize| format!("d{}", "<t".repeat(count));
        assert_eq!(too_tangled(&chain(512)), None);
        let problem = too_tangled(&chain(513)).expect("refused");
        assert_eq!(problem.text, SPECULATION_TOO_LONG);
    }

    #[test]
    fn a_reading_ends_where_type_arguments_surely_end() {
        let long = "b".repeat(70_000);
        // Each of these would read the long name 64 times over if it did not end first.
        for end in [
            ">", ")", "]", "}", ";", "=", "==", "&&", "||", "??", "+", "*", "/", "%", "^", "- b",
            "++", "? d : e", ": d", "?.d",
        ] {
            let text = format!("{}x< c {end} {long}{}", "(a = ".repeat(6), ")".repeat(6));
            assert_eq!(too_tangled(&text), None, "{end}");
        }
        // Inside brackets opened after the `<`, and past an arrow or a negative number, it
        // goes on.
        for inside in [
            "(c = 1; d)",
            "{ [c + 1]: d }",
            "() => c",
            "-1 | c",
            "extends d ? e : f",
            "?, d",
        ] {
            let text = format!("{}x< {inside} {long}{}", "(a = ".repeat(6), ")".repeat(6));
            assert!(too_tangled(&text).is_some(), "{inside}");
        }
        // `<=` and `<<=` open no reading.
        let text = format!("{}x <= c {long}{}", "(a = ".repeat(6), ")".repeat(6));
        assert_eq!(too_tangled(&text), None);
        let text = format!("{}x <<= c {long}{}", "(a = ".repeat(6), ")".repeat(6));
        assert_eq!(too_tangled(&text), None);
    }

    #[test]
    fn comparisons_of_real_code_are_read_for_a_few_bytes() {
        let body = "for (let i = 0; i < items.length; i++) {\n  if (items[i].n < limit && seen.size < 10) { total += items[i].n < 0 ? -items[i].n : items[i].n; }\n  const ok = a < b, big = (x << 2) < y;\n}\n";
        let program = format!(
            "export default function (items, limit) {{\n  let total = 0; const seen = new Set();\n{}  return total;\n}}\n",
            body.repeat(64_000 / body.len())
        );
        assert!(program.len() > 60_000 && program.len() < 65_536);
        assert_eq!(too_tangled(&program), None);
    }
}
