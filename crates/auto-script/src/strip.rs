//! TypeScript to JavaScript: types are stripped by the compiler's TypeScript transform and the
//! code printed again, so that what runs is the syntax tree the check accepted, never the text.
//!
//! A program also becomes a function body: its exports become the properties of the object the
//! body returns, and a line map takes each line of the printed code back to the program's, so an
//! error names the line the author wrote.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use oxc_allocator::Allocator;
use oxc_ast::ast::{Declaration, ExportDefaultDeclarationKind, Program, Statement};
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::GetSpan;
use oxc_transformer::{TransformOptions, Transformer};

use crate::check::{expression_source_type, program_source_type, too_long, wrap_expression};
use crate::depth::with_compiler_stack;
use crate::guard::{self, Edit};
use crate::position::ScriptProblem;

/// Stripped expressions kept per thread; past this many the cache starts again empty, so a
/// stream of distinct expressions cannot grow it without bound.
pub const STRIP_CACHE_ENTRIES_MAX: usize = 4_096;

/// The name under which a stripped program's body keeps its default export (reserved: see
/// [`guard::RESERVED_PREFIX`]).
const DEFAULT_EXPORT_BINDING: &str = "__auto_default_export__";

thread_local! {
    static STRIPPED_EXPRESSIONS: RefCell<HashMap<Box<str>, Rc<str>>> = RefCell::new(HashMap::new());
}

/// The JavaScript of one TypeScript expression, as an expression; cached per thread by source.
/// Text that is not one expression gives the compiler's first problem; [`crate::check_expression`]
/// reports them all.
pub fn strip_expression(source: &str) -> Result<Rc<str>, Vec<ScriptProblem>> {
    if let Some(hit) = STRIPPED_EXPRESSIONS.with(|cache| cache.borrow().get(source).cloned()) {
        return Ok(hit);
    }
    if let Some(problem) = too_long(source) {
        return Err(vec![problem]);
    }
    let stripped: Rc<str> = Rc::from(with_compiler_stack(source.len(), || {
        strip_expression_uncached(source)
    })?);
    STRIPPED_EXPRESSIONS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= STRIP_CACHE_ENTRIES_MAX {
            cache.clear();
        }
        cache.insert(Box::from(source), Rc::clone(&stripped));
    });
    Ok(stripped)
}

fn strip_expression_uncached(source: &str) -> Result<String, Vec<ScriptProblem>> {
    let allocator = Allocator::default();
    // Invariant: only text that parses as exactly one expression is wrapped, so the wrapper
    // holds one expression statement and nothing can escape the parentheses.
    if let Err(diagnostics) =
        Parser::new(&allocator, source, expression_source_type()).parse_expression()
    {
        return Err(diagnostics
            .into_vec()
            .iter()
            .take(1)
            .map(|d| problem_of(source, d))
            .collect());
    }
    let wrapped = wrap_expression(source);
    let guarded = guarded(&wrapped, expression_source_type(), |_, _| Vec::new())
        .map_err(|problems| problems.into_iter().map(reposition).collect::<Vec<_>>())?;
    let printed = transform_and_print(&guarded, expression_source_type(), false)
        .map_err(|problems| problems.into_iter().map(reposition).collect::<Vec<_>>())?;
    let code = printed.code.trim_end();
    Ok(code.strip_suffix(';').unwrap_or(code).to_owned())
}

/// `source` with every `catch` reporting to the sandbox and `more` edits applied, or the
/// problems that forbid running it (async code, imports, reserved names).
fn guarded(
    source: &str,
    source_type: oxc_span::SourceType,
    more: impl FnOnce(&str, &Program<'_>) -> Vec<Edit>,
) -> Result<String, Vec<ScriptProblem>> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if !parsed.diagnostics.is_empty() {
        return Err(parsed
            .diagnostics
            .into_vec()
            .iter()
            .take(1)
            .map(|d| problem_of(source, d))
            .collect());
    }
    let built = SemanticBuilder::new()
        .with_build_nodes(true)
        .build(&parsed.program);
    let findings = guard::forbidden(&built.semantic);
    if !findings.is_empty() {
        return Err(findings
            .into_iter()
            .map(|finding| ScriptProblem::at_offset(source, finding.offset as usize, finding.text))
            .take(1)
            .collect());
    }
    let mut edits = guard::catch_edits(&built.semantic, source);
    edits.extend(more(source, &parsed.program));
    Ok(guard::apply(source, edits))
}

/// A program as a function expression's source and the line map of its printed code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrippedProgram {
    /// `(function () { ... return { default: ..., name: ... }; })`, in JavaScript.
    pub factory: String,
    /// For each line of `factory`, counted from 0, the program's line, counted from 1, or 0
    /// where the line has no counterpart.
    pub lines: Vec<u32>,
}

impl StrippedProgram {
    /// The program's line for `factory_line`, a line of the factory counted from 1.
    pub fn program_line(&self, factory_line: u32) -> Option<u32> {
        let index = usize::try_from(factory_line.checked_sub(1)?).ok()?;
        self.lines.get(index).copied().filter(|&line| line > 0)
    }
}

/// The function a module becomes: its body is the module's, with `export` taken off each
/// declaration, and it returns the module's exports as an object's properties. The program
/// must have passed [`crate::check_program`]; a program that does not parse gives its first problem.
pub fn strip_program(source: &str) -> Result<StrippedProgram, Vec<ScriptProblem>> {
    if let Some(problem) = too_long(source) {
        return Err(vec![problem]);
    }
    with_compiler_stack(source.len(), || strip_program_within(source))
}

fn strip_program_within(source: &str) -> Result<StrippedProgram, Vec<ScriptProblem>> {
    let mut exports = Vec::new();
    let body = guarded(source, program_source_type(), |source, program| {
        let (edits, found) = export_edits(source, program);
        exports = found;
        edits
    })?;
    let properties: Vec<String> = exports
        .iter()
        .map(|(exported, local)| format!("{}: {local}", quote(exported)))
        .collect();
    // The body keeps the program's lines: edits replace text with text of no more lines.
    let function_source = format!(
        "(function () {{{body}\nreturn {{ {} }};\n}})",
        properties.join(", ")
    );
    let printed = transform_and_print(&function_source, program_source_type(), true)?;
    Ok(StrippedProgram {
        factory: printed.code,
        lines: printed.lines,
    })
}

/// The edits that take `export` off the module's declarations, and its exports as
/// (exported name, local name) pairs.
fn export_edits(source: &str, program: &Program<'_>) -> (Vec<Edit>, Vec<(String, String)>) {
    let mut edits: Vec<Edit> = Vec::new();
    let mut exports: Vec<(String, String)> = Vec::new();
    // Removed text leaves its line breaks behind, so every later line stays where it was.
    let removal = |start: u32, end: u32, text: &str| Edit {
        start,
        end,
        text: format!(
            "{text}{}",
            source
                .get(start as usize..end as usize)
                .unwrap_or_default()
                .chars()
                .filter(|c| *c == '\n')
                .collect::<String>()
        ),
    };
    for statement in &program.body {
        match statement {
            Statement::ExportDefaultDeclaration(export) => {
                let (start, end) = (export.span.start, export.declaration.span().start);
                let named = match &export.declaration {
                    ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                        function.id.as_ref()
                    }
                    ExportDefaultDeclarationKind::ClassDeclaration(class) => class.id.as_ref(),
                    _ => None,
                };
                if let Some(id) = named {
                    edits.push(removal(start, end, ""));
                    exports.push(("default".into(), id.name.to_string()));
                } else {
                    edits.push(removal(
                        start,
                        end,
                        &format!("const {DEFAULT_EXPORT_BINDING} = "),
                    ));
                    exports.push(("default".into(), DEFAULT_EXPORT_BINDING.into()));
                }
            }
            Statement::ExportDeclaration(export) => {
                edits.push(removal(
                    export.span.start,
                    export.declaration.span().start,
                    "",
                ));
                for name in runtime_names(&export.declaration) {
                    exports.push((name.clone(), name));
                }
            }
            Statement::ExportNamedDeclaration(export) => {
                edits.push(removal(export.span.start, export.span.end, ""));
                for specifier in &export.specifiers {
                    exports.push((specifier.exported.to_string(), specifier.local.to_string()));
                }
            }
            _ => {}
        }
    }
    (edits, exports)
}

/// The names a declaration binds at run time: none for a type or an interface.
fn runtime_names(declaration: &Declaration<'_>) -> Vec<String> {
    match declaration {
        Declaration::VariableDeclaration(variables) => variables
            .declarations
            .iter()
            .flat_map(|declarator| declarator.id.get_binding_identifiers())
            .map(|id| id.name.to_string())
            .collect(),
        Declaration::FunctionDeclaration(_)
        | Declaration::ClassDeclaration(_)
        | Declaration::TSEnumDeclaration(_)
        | Declaration::TSNamespaceDeclaration(_) => declaration
            .id()
            .map(|id| id.name.to_string())
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

fn quote(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_else(|_| "\"\"".to_owned())
}

struct Printed {
    code: String,
    lines: Vec<u32>,
}

/// Parses `source`, strips its types and prints it; with `map_lines`, also maps each printed
/// line back to a line of `source`.
fn transform_and_print(
    source: &str,
    source_type: oxc_span::SourceType,
    map_lines: bool,
) -> Result<Printed, Vec<ScriptProblem>> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if !parsed.diagnostics.is_empty() {
        return Err(parsed
            .diagnostics
            .into_vec()
            .iter()
            .take(1)
            .map(|d| problem_of(source, d))
            .collect());
    }
    let mut program = parsed.program;
    let scoping = SemanticBuilder::new()
        .build(&program)
        .semantic
        .into_scoping();
    let path = Path::new("script.ts");
    let transformed = Transformer::new(&allocator, path, &TransformOptions::default())
        .build_with_scoping(scoping, &mut program);
    if !transformed.diagnostics.is_empty() {
        return Err(transformed
            .diagnostics
            .iter()
            .take(1)
            .map(|d| problem_of(source, d))
            .collect());
    }
    let options = CodegenOptions {
        source_map_path: map_lines.then(|| path.to_path_buf()),
        ..CodegenOptions::default()
    };
    let printed = Codegen::new().with_options(options).build(&program);
    let mut lines = Vec::new();
    if let Some(map) = &printed.map {
        lines = vec![0_u32; printed.code.lines().count() + 1];
        for token in map.get_tokens() {
            if let Some(slot) = lines.get_mut(token.get_dst_line() as usize)
                && *slot == 0
            {
                *slot = token.get_src_line() + 1;
            }
        }
    }
    Ok(Printed {
        code: printed.code,
        lines,
    })
}

/// A problem found in the wrapped expression, moved back to the expression's own text: the
/// wrapper adds one character before the first line only.
fn reposition(problem: ScriptProblem) -> ScriptProblem {
    if problem.line == 1 {
        ScriptProblem {
            column: problem.column.saturating_sub(1).max(1),
            ..problem
        }
    } else {
        problem
    }
}

fn problem_of(source: &str, diagnostic: &OxcDiagnostic) -> ScriptProblem {
    let offset = diagnostic
        .labels
        .iter()
        .find(|label| label.primary())
        .or_else(|| diagnostic.labels.first())
        .map_or(0, |label| label.offset());
    ScriptProblem::at_offset(source, offset as usize, diagnostic.message.to_string())
}
