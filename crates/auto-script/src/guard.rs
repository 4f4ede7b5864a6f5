//! What the sandbox cannot let code do, found in the syntax tree: be async (Promise is absent),
//! import (there are no modules), use the runtime's reserved names, or catch the memory limit.
//!
//! QuickJS reports running out of memory as an `InternalError` that `try` can catch, but the
//! workflow page says a memory overrun is a runtime error "which the workflow's try can catch and
//! the expression cannot". So before code is stripped, every `catch` is made to hand what it
//! caught to the sandbox first, which notes an out-of-memory error and throws it on; and a `try`
//! with only `finally` gets such a `catch` too, since a `return` in `finally` would swallow it.
//! The edits add no line breaks, so lines stay where the author wrote them.

use oxc_ast::AstKind;
use oxc_ast::ast::{BindingPattern, TryStatement};
use oxc_semantic::Semantic;
use oxc_span::GetSpan;

use crate::check::NO_MODULES;

/// Refusal of `async`, `await` and `for await`: they need Promise, which is absent.
pub const NO_ASYNC: &str =
    "Promise is absent, so code cannot be async: write it without async and await.";
/// Refusal of a name in the runtime's reserved form.
pub const RESERVED_NAME: &str = "Names that start with __auto_ are the runtime's own.";

/// The start of every name the runtime adds to code.
pub(crate) const RESERVED_PREFIX: &str = "__auto_";
/// The sandbox's function that every `catch` calls first with what it caught.
pub(crate) const CAUGHT_HOOK: &str = "__auto_caught__";
const CAUGHT_BINDING: &str = "__auto_caught_error__";

/// One thing the code may not do, at a byte offset of the parsed text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    pub offset: u32,
    pub text: &'static str,
}

/// A replacement of the bytes `start..end` of a text (an insertion when they are equal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edit {
    pub start: u32,
    pub end: u32,
    pub text: String,
}

/// Async code, dynamic imports and reserved names, in source order.
pub(crate) fn forbidden(semantic: &Semantic<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for node in semantic.nodes().iter() {
        let offset = match node.kind() {
            AstKind::Function(function) if function.r#async => {
                Some((function.span.start, NO_ASYNC))
            }
            AstKind::ArrowFunctionExpression(arrow) if arrow.r#async => {
                Some((arrow.span.start, NO_ASYNC))
            }
            AstKind::AwaitExpression(expression) => Some((expression.span.start, NO_ASYNC)),
            AstKind::ForOfStatement(statement) if statement.r#await => {
                Some((statement.span.start, NO_ASYNC))
            }
            AstKind::ImportExpression(expression) => Some((expression.span.start, NO_MODULES)),
            _ => None,
        };
        if let Some((offset, text)) = offset {
            findings.push(Finding { offset, text });
        }
    }
    let scoping = semantic.scoping();
    for symbol in scoping.symbol_ids() {
        if scoping.symbol_name(symbol).starts_with(RESERVED_PREFIX) {
            findings.push(Finding {
                offset: scoping.symbol_span(symbol).start,
                text: RESERVED_NAME,
            });
        }
    }
    for (name, references) in scoping.root_unresolved_references() {
        if name.as_str().starts_with(RESERVED_PREFIX) {
            for &reference in references {
                let node = scoping.get_reference(reference).node_id();
                let offset = semantic.nodes().get_node(node).span().start;
                findings.push(Finding {
                    offset,
                    text: RESERVED_NAME,
                });
            }
        }
    }
    findings.sort_by_key(|finding| finding.offset);
    findings.dedup();
    findings
}

/// The edits that make every `catch` of `source` report what it caught to [`CAUGHT_HOOK`].
pub(crate) fn catch_edits(semantic: &Semantic<'_>, source: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    for node in semantic.nodes().iter() {
        if let AstKind::TryStatement(statement) = node.kind() {
            edits.extend(try_edits(statement, source));
        }
    }
    edits
}

fn try_edits(statement: &TryStatement<'_>, source: &str) -> Vec<Edit> {
    let insert = |at: u32, text: String| Edit {
        start: at,
        end: at,
        text,
    };
    let Some(handler) = &statement.handler else {
        // Only `finally`: catch, report and throw on, before `finally` runs.
        return vec![insert(
            statement.block.span.end,
            format!(
                " catch ({CAUGHT_BINDING}) {{ {CAUGHT_HOOK}({CAUGHT_BINDING}); throw {CAUGHT_BINDING}; }}"
            ),
        )];
    };
    let body_start = handler.body.span.start + 1;
    match &handler.param {
        None => {
            // `catch {` becomes `catch (binding) {`: the keyword is the clause's first 5 bytes.
            vec![
                insert(handler.span.start + 5, format!(" ({CAUGHT_BINDING})")),
                insert(body_start, format!(" {CAUGHT_HOOK}({CAUGHT_BINDING});")),
            ]
        }
        Some(parameter) => match &parameter.pattern {
            BindingPattern::BindingIdentifier(identifier) => {
                vec![insert(
                    body_start,
                    format!(" {CAUGHT_HOOK}({});", identifier.name),
                )]
            }
            pattern => {
                let span = pattern.span();
                let written = source
                    .get(span.start as usize..span.end as usize)
                    .unwrap_or_default();
                vec![
                    Edit {
                        start: span.start,
                        end: span.end,
                        text: CAUGHT_BINDING.to_owned(),
                    },
                    insert(
                        body_start,
                        format!(
                            " {CAUGHT_HOOK}({CAUGHT_BINDING}); let {written} = {CAUGHT_BINDING};"
                        ),
                    ),
                ]
            }
        },
    }
}

/// `source` with `edits` applied; edits must not overlap.
pub(crate) fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|edit| (edit.start, edit.end));
    let mut edited = String::with_capacity(source.len() + edits.len() * 48);
    let mut cursor = 0_usize;
    for edit in edits {
        let (start, end) = (edit.start as usize, edit.end as usize);
        if start < cursor || end > source.len() {
            continue;
        }
        edited.push_str(&source[cursor..start]);
        edited.push_str(&edit.text);
        cursor = end;
    }
    edited.push_str(&source[cursor..]);
    edited
}
