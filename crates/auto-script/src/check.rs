//! Save-time checks of TypeScript: an expression is exactly one expression, a program is one
//! module with a default export of a function, and every free name is one the library or the
//! place offers.
//!
//! The workflow page: "One that is not one expression, or that names what its place lacks, such
//! as $input in an if, is refused at its line with the compiler's words ... An expression is
//! checked for its syntax and its names, not its types." So only value references are checked:
//! a type annotation may name any type, since types are stripped before the code runs.

use std::time::{Duration, Instant};

use oxc_allocator::Allocator;
use oxc_ast::ast::{Declaration, ExportDefaultDeclarationKind, Expression, Program, Statement};
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::{GetSpan, SourceType};

use crate::depth::{SCRIPT_BYTES_MAX, with_compiler_stack};
use crate::guard;
use crate::library::is_library_global;
use crate::position::{ScriptProblem, locate_all};
use crate::tangle::too_tangled;

/// "A save allows the check 2 seconds of the server's wall-clock time; a document whose check
/// takes longer is refused invalid_input." (workflow page, "Expressions")
pub const DOCUMENT_CHECK_TIME_MS_MAX: u64 = 2_000;

/// Refusal of a text that parses as statements rather than one expression.
pub const NOT_ONE_EXPRESSION: &str = "An expression is one TypeScript expression, not statements.";
/// Refusal of a text longer than [`SCRIPT_BYTES_MAX`].
pub const TOO_LONG: &str = "The text is longer than the 65,536 bytes a document may hold.";
/// Refusal of an `import` or an `export ... from` in a program: the sandbox has no modules.
pub const NO_MODULES: &str = "A program cannot import: the sandbox has no modules.";
/// Refusal of a program without `export default`.
pub const NO_DEFAULT_EXPORT: &str =
    "The program needs a default export of a function: export default function (input) { ... }";
/// Refusal of a default export that is not a plain function.
pub const DEFAULT_EXPORT_NOT_FUNCTION: &str =
    "The default export must be a function that is neither async nor a generator.";

/// The `$` names a place in a document offers its expressions, such as `$data` and `$input`
/// in a task's body. Library globals are always offered.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    offered: &'a [&'a str],
}

impl<'a> Place<'a> {
    /// A place offering exactly `names`, each written with its `$`.
    pub const fn offering(names: &'a [&'a str]) -> Self {
        Self { offered: names }
    }

    /// Whether an expression at this place may read `name`.
    pub fn offers(&self, name: &str) -> bool {
        is_library_global(name) || self.offered.contains(&name)
    }
}

/// The TypeScript wording for a free name nobody offers.
pub fn cannot_find_name(name: &str) -> String {
    format!("Cannot find name '{name}'.")
}

/// Checks that `source` is one TypeScript expression whose free names `place` offers. Problems
/// come in source order, with positions in `source`; an empty list means the expression passes.
pub fn check_expression(source: &str, place: &Place<'_>) -> Vec<ScriptProblem> {
    if let Some(problem) = too_long(source) {
        return vec![problem];
    }
    with_compiler_stack(source.len(), || check_expression_within(source, place))
}

fn check_expression_within(source: &str, place: &Place<'_>) -> Vec<ScriptProblem> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, expression_source_type()).parse_expression();
    if let Err(diagnostics) = parsed {
        return not_one_expression(source).unwrap_or_else(|| {
            let found = diagnostics
                .into_vec()
                .iter()
                .map(|d| problem_of(d, 0))
                .collect();
            sorted(locate_all(source, found))
        });
    }
    // Invariant: `source` is one expression, so wrapping it in parentheses gives a program of
    // one expression statement; the line break keeps a trailing `//` comment from swallowing
    // the closing parenthesis. Offsets in the wrapper are one byte past those in `source`.
    let wrapped = wrap_expression(source);
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, expression_source_type()).parse();
    let mut found: Vec<Found> = parsed
        .diagnostics
        .into_vec()
        .iter()
        .map(|d| problem_of(d, WRAP_OFFSET))
        .collect();
    found.extend(check_names(&parsed.program, WRAP_OFFSET, |name| {
        place.offers(name)
    }));
    sorted(locate_all(source, found))
}

/// Checks that `source` is one module whose default export is a function, with no imports,
/// whose free names are the library's or among `offered_names`. Problems come in source order.
pub fn check_program(source: &str, offered_names: &[&str]) -> Vec<ScriptProblem> {
    check_module(source, offered_names, ModuleShape::DefaultFunction)
}

/// An export a module must have: its name, and whether it is a function (or else a value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequiredExport {
    pub name: &'static str,
    pub function: bool,
}

/// What a module must export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleShape<'a> {
    /// A default export of a function (a computation's program).
    DefaultFunction,
    /// These named exports (a recall function's `initial`, `fold` and `answer`).
    Exports(&'a [RequiredExport]),
}

/// The refusal of a module without the export `name`.
pub fn missing_export(name: &str) -> String {
    format!("The program does not export {name}.")
}

/// The refusal of an export `name` that must be a function and is something else.
pub fn export_not_function(name: &str) -> String {
    format!("The {name} export must be a function that is neither async nor a generator.")
}

/// The refusal of an export `name` that must be a value and is a function.
pub fn export_not_value(name: &str) -> String {
    format!("The {name} export must be a value, not a function.")
}

/// Checks that `source` is one module of `shape`, with no imports, whose free names are the
/// library's or among `offered_names`. Problems come in source order.
pub fn check_module(
    source: &str,
    offered_names: &[&str],
    shape: ModuleShape<'_>,
) -> Vec<ScriptProblem> {
    if let Some(problem) = too_long(source) {
        return vec![problem];
    }
    with_compiler_stack(source.len(), || {
        check_program_within(source, offered_names, shape)
    })
}

fn check_program_within(
    source: &str,
    offered_names: &[&str],
    shape: ModuleShape<'_>,
) -> Vec<ScriptProblem> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, program_source_type()).parse();
    let mut found: Vec<Found> = parsed
        .diagnostics
        .into_vec()
        .iter()
        .map(|d| problem_of(d, 0))
        .collect();
    if !found.is_empty() {
        return sorted(locate_all(source, found));
    }
    match shape {
        ModuleShape::DefaultFunction => found.extend(check_module_shape(&parsed.program)),
        ModuleShape::Exports(required) => {
            found.extend(check_named_exports(&parsed.program, required));
        }
    }
    found.extend(check_names(&parsed.program, 0, |name| {
        is_library_global(name) || offered_names.contains(&name)
    }));
    sorted(locate_all(source, found))
}

/// The refusal of a text longer than a document can be, if `source` is one.
/// A text the compiler must not read: longer than [`SCRIPT_BYTES_MAX`], or with a `<` too deep
/// in brackets to read in time (see `tangle.rs`).
pub(crate) fn too_long(source: &str) -> Option<ScriptProblem> {
    if source.len() > SCRIPT_BYTES_MAX {
        return Some(ScriptProblem {
            line: 1,
            column: 1,
            text: TOO_LONG.to_owned(),
        });
    }
    too_tangled(source)
}

/// The checks of one document, which together may take [`DOCUMENT_CHECK_TIME_MS_MAX`].
///
/// This is the one place where checking reads a clock, because the page bounds a save by the
/// server's wall-clock time. A single check is not interrupted: a document is at most 65,536
/// bytes, and no `<` sits deeper than 16 brackets (see `tangle.rs`), so one parse takes
/// milliseconds; the bound is tested between checks.
#[derive(Debug)]
pub struct DocumentCheck {
    started: Instant,
}

/// The checks of a document took longer than [`DOCUMENT_CHECK_TIME_MS_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "Checking the document's expressions took longer than 2 seconds; simplify them or try again."
)]
pub struct CheckTimedOut;

impl Default for DocumentCheck {
    fn default() -> Self {
        Self::start()
    }
}

impl DocumentCheck {
    /// Starts the clock of a document's checks.
    pub fn start() -> Self {
        Self {
            started: Instant::now(),
        }
    }

    /// [`check_expression`], unless the document's checks already took too long.
    pub fn check_expression(
        &mut self,
        source: &str,
        place: &Place<'_>,
    ) -> Result<Vec<ScriptProblem>, CheckTimedOut> {
        self.within_time()?;
        let problems = check_expression(source, place);
        self.within_time()?;
        Ok(problems)
    }

    /// [`check_program`], unless the document's checks already took too long.
    pub fn check_program(
        &mut self,
        source: &str,
        offered_names: &[&str],
    ) -> Result<Vec<ScriptProblem>, CheckTimedOut> {
        self.within_time()?;
        let problems = check_program(source, offered_names);
        self.within_time()?;
        Ok(problems)
    }

    fn within_time(&self) -> Result<(), CheckTimedOut> {
        if self.started.elapsed() > Duration::from_millis(DOCUMENT_CHECK_TIME_MS_MAX) {
            Err(CheckTimedOut)
        } else {
            Ok(())
        }
    }
}

/// Bytes the wrapper puts before an expression's text.
const WRAP_OFFSET: u32 = 1;

pub(crate) fn wrap_expression(source: &str) -> String {
    format!("({source}\n)")
}

/// Expressions are parsed as module code so they obey strict mode, as they run.
pub(crate) fn expression_source_type() -> SourceType {
    SourceType::ts().with_module(true)
}

pub(crate) fn program_source_type() -> SourceType {
    SourceType::ts().with_module(true)
}

/// When `source` is not one expression but parses as statements, the one problem to report:
/// at the first statement that is not an expression, or else at the second statement.
fn not_one_expression(source: &str) -> Option<Vec<ScriptProblem>> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, expression_source_type()).parse();
    if !parsed.diagnostics.is_empty() {
        return None;
    }
    let body = &parsed.program.body;
    let culprit = body
        .iter()
        .find(|statement| !matches!(statement, Statement::ExpressionStatement(_)))
        .or_else(|| body.get(1))?;
    Some(vec![ScriptProblem::at_offset(
        source,
        culprit.span().start as usize,
        NOT_ONE_EXPRESSION,
    )])
}

fn check_module_shape(program: &Program<'_>) -> Vec<Found> {
    let mut problems = Vec::new();
    let mut default_export = None;
    for statement in &program.body {
        match statement {
            Statement::ImportDeclaration(_)
            | Statement::ExportAllDeclaration(_)
            | Statement::ExportFromDeclaration(_)
            | Statement::TSImportEqualsDeclaration(_) => {
                problems.push(at(statement.span().start, NO_MODULES));
            }
            Statement::ExportDefaultDeclaration(export) => default_export = Some(export),
            _ => {}
        }
    }
    match default_export {
        None => problems.push(at(program.span.end, NO_DEFAULT_EXPORT)),
        Some(export) if !is_plain_function(&export.declaration) => {
            problems.push(at(
                export.declaration.span().start,
                DEFAULT_EXPORT_NOT_FUNCTION,
            ));
        }
        Some(_) => {}
    }
    problems
}

/// No imports, and each of `required` exported as what it must be. An export through a list
/// (`export { f as fold }`) is taken as it is; the runner checks what it names.
fn check_named_exports(program: &Program<'_>, required: &[RequiredExport]) -> Vec<Found> {
    let mut problems = Vec::new();
    // Each export found: its name, where, and whether it is a function (None: not known).
    let mut exported: Vec<(String, u32, Option<bool>)> = Vec::new();
    for statement in &program.body {
        match statement {
            Statement::ImportDeclaration(_)
            | Statement::ExportAllDeclaration(_)
            | Statement::ExportFromDeclaration(_)
            | Statement::TSImportEqualsDeclaration(_) => {
                problems.push(at(statement.span().start, NO_MODULES));
            }
            Statement::ExportDeclaration(export) => match &export.declaration {
                Declaration::FunctionDeclaration(function) => {
                    if let Some(id) = &function.id {
                        let plain = !function.r#async && !function.generator;
                        exported.push((id.name.to_string(), function.span.start, Some(plain)));
                    }
                }
                Declaration::VariableDeclaration(variables) => {
                    for declarator in &variables.declarations {
                        let function = declarator.init.as_ref().map(|init| {
                            let inner = init.get_inner_expression();
                            match inner {
                                Expression::ArrowFunctionExpression(_)
                                | Expression::FunctionExpression(_) => {
                                    is_plain_function_expression(inner)
                                }
                                _ => false,
                            }
                        });
                        for id in declarator.id.get_binding_identifiers() {
                            exported.push((
                                id.name.to_string(),
                                declarator.span.start,
                                Some(function.unwrap_or(false)),
                            ));
                        }
                    }
                }
                other => {
                    if let Some(id) = other.id() {
                        exported.push((id.name.to_string(), other.span().start, Some(false)));
                    }
                }
            },
            Statement::ExportNamedDeclaration(export) => {
                for specifier in &export.specifiers {
                    exported.push((specifier.exported.to_string(), specifier.span.start, None));
                }
            }
            _ => {}
        }
    }
    for export in required {
        match exported.iter().find(|(name, _, _)| name == export.name) {
            None => problems.push(at(program.span.end, missing_export(export.name))),
            Some((_, offset, Some(function))) if *function != export.function => {
                let text = if export.function {
                    export_not_function(export.name)
                } else {
                    export_not_value(export.name)
                };
                problems.push(at(*offset, text));
            }
            Some(_) => {}
        }
    }
    problems
}

/// A default export that may be a plain function: a function, an arrow, or a name (which may
/// name a function declared in the module; the runner checks what it is).
fn is_plain_function(declaration: &ExportDefaultDeclarationKind<'_>) -> bool {
    match declaration {
        ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
            !function.r#async && !function.generator
        }
        ExportDefaultDeclarationKind::ClassDeclaration(_)
        | ExportDefaultDeclarationKind::TSInterfaceDeclaration(_) => false,
        other => other
            .as_expression()
            .is_some_and(|e| is_plain_function_expression(e.get_inner_expression())),
    }
}

fn is_plain_function_expression(expression: &Expression<'_>) -> bool {
    match expression {
        Expression::ArrowFunctionExpression(arrow) => !arrow.r#async,
        Expression::FunctionExpression(function) => !function.r#async && !function.generator,
        Expression::Identifier(_) => true,
        _ => false,
    }
}

/// Every value reference that no scope of the program declares and `offered` refuses, each
/// occurrence at its own place. Semantic early errors (a name declared twice, `delete` of a
/// name in strict code, ...) come too.
fn check_names(
    program: &Program<'_>,
    offset_shift: u32,
    offered: impl Fn(&str) -> bool,
) -> Vec<Found> {
    let built = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .with_build_nodes(true)
        .build(program);
    let mut problems: Vec<Found> = built
        .diagnostics
        .into_vec()
        .iter()
        .map(|d| problem_of(d, offset_shift))
        .collect();
    let semantic = built.semantic;
    for finding in guard::forbidden(&semantic) {
        problems.push(at(
            finding.offset.saturating_sub(offset_shift),
            finding.text,
        ));
    }
    let scoping = semantic.scoping();
    for (name, references) in scoping.root_unresolved_references() {
        let name = name.as_str();
        if offered(name) || name.starts_with(guard::RESERVED_PREFIX) {
            continue;
        }
        for &reference_id in references {
            let reference = scoping.get_reference(reference_id);
            if reference.is_type() && !reference.is_value() {
                continue;
            }
            let span = semantic.nodes().get_node(reference.node_id()).span();
            let offset = span.start.saturating_sub(offset_shift);
            problems.push(at(offset, cannot_find_name(name)));
        }
    }
    problems
}

/// A problem found at a byte offset, located later with the others (see [`locate_all`]).
type Found = (u32, String);

fn at(offset: u32, text: impl Into<String>) -> Found {
    (offset, text.into())
}

/// A compiler diagnostic as a problem at its primary label, or its first, or the start.
fn problem_of(diagnostic: &OxcDiagnostic, offset_shift: u32) -> Found {
    let label = diagnostic
        .labels
        .iter()
        .find(|label| label.primary())
        .or_else(|| diagnostic.labels.first());
    let offset = label.map_or(0, |label| label.offset().saturating_sub(offset_shift));
    at(offset, diagnostic.message.to_string())
}

fn sorted(mut problems: Vec<ScriptProblem>) -> Vec<ScriptProblem> {
    problems.sort_by(|a, b| {
        (a.line, a.column)
            .cmp(&(b.line, b.column))
            .then_with(|| a.text.cmp(&b.text))
    });
    problems.dedup();
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_check_past_its_time_refuses_to_go_on() {
        let mut on_time = DocumentCheck::start();
        assert_eq!(
            on_time.check_expression("$data", &Place::offering(&["$data"])),
            Ok(vec![])
        );
        let started =
            Instant::now().checked_sub(Duration::from_millis(DOCUMENT_CHECK_TIME_MS_MAX + 1));
        let mut late = DocumentCheck {
            started: started.unwrap_or_else(Instant::now),
        };
        if started.is_some() {
            assert_eq!(
                late.check_expression("1", &Place::offering(&[])),
                Err(CheckTimedOut)
            );
            assert_eq!(
                late.check_program("export default () => 1", &[]),
                Err(CheckTimedOut)
            );
        }
    }
}
