//! The checks made when a template is saved: what the parser refuses, then the names the
//! template reads, the input fields it names, its filters, and that it writes some text
//! outside the system block.
//!
//! "Some text outside the system block" is decided statically: somewhere outside the block,
//! at any depth, there is an output (`{{ }}`, `echo`), text that is not only white space, or a
//! tag that always writes (`cycle`, `increment`, `decrement`, `tablerow`). Whether the message
//! actually renders empty for a given input is the render's check.

use std::collections::HashSet;

use crate::ast::{Condition, Expr, Loop, Node, Operand, Segment};
use crate::parser::parse_all;
use crate::{REASONING_ROOTS, TemplateProblem, filters};

/// What the save-time check knows of the function around the template.
#[derive(Debug, Clone, Default)]
pub struct CheckConfig {
    /// The input schema's properties, when it lists them and sets `additionalProperties:
    /// false`: then `input.<field>` must be one of them.
    pub input_fields: Option<Vec<String>>,
}

/// Every problem of a reasoning template, in line order; empty when it may be saved.
pub fn check(source: &str, config: &CheckConfig) -> Vec<TemplateProblem> {
    check_with_roots(source, config, &REASONING_ROOTS)
}

/// [`check`] for a host whose templates read other variables than a reasoning function's.
/// `input_fields` applies to the root named `input`, when there is one.
pub fn check_with_roots(
    source: &str,
    config: &CheckConfig,
    roots: &[&str],
) -> Vec<TemplateProblem> {
    let parsed = parse_all(source);
    let mut problems = parsed.problems;
    if !problems.is_empty() && parsed.nodes.is_empty() {
        return problems;
    }
    let mut created = HashSet::new();
    collect_created(&parsed.nodes, &mut created);
    let mut checker = Checker {
        roots,
        input_fields: config
            .input_fields
            .as_ref()
            .map(|f| f.iter().map(String::as_str).collect()),
        created,
        scope: Vec::new(),
        problems: Vec::new(),
    };
    checker.nodes(&parsed.nodes, 1);
    problems.append(&mut checker.problems);
    if problems.is_empty() && !writes_text(&parsed.nodes) {
        let line = first_system_line(&parsed.nodes).unwrap_or(1);
        problems.push(TemplateProblem::new(
            line,
            "The template must render some text outside the system block",
        ));
    }
    problems.sort_by_key(|p| p.line);
    let mut seen = HashSet::new();
    problems.retain(|p| seen.insert(p.clone()));
    problems
}

/// The names a template creates anywhere: a name assigned late may be read in a loop or after
/// a condition, so the check does not ask for document order; the render does.
fn collect_created(nodes: &[Node], created: &mut HashSet<String>) {
    for node in nodes {
        match node {
            Node::Assign { name, .. } | Node::Increment { name } | Node::Decrement { name } => {
                created.insert(name.clone());
            }
            Node::Cycle {
                group: Some(Operand::Path { root, segments }),
                ..
            } if segments.is_empty() => {
                created.insert(root.clone());
            }
            _ => {}
        }
        for_each_body(node, |body| collect_created(body, created));
    }
}

fn for_each_body(node: &Node, mut visit: impl FnMut(&[Node])) {
    match node {
        Node::If {
            branches,
            otherwise,
            ..
        } => {
            branches.iter().for_each(|b| visit(&b.body));
            visit(otherwise);
        }
        Node::Case { whens, .. } => whens.iter().for_each(|(_, body)| visit(body)),
        Node::For {
            body, otherwise, ..
        } => {
            visit(body);
            visit(otherwise);
        }
        Node::Tablerow { body, .. } | Node::IfChanged { body } | Node::System { body, .. } => {
            visit(body)
        }
        _ => {}
    }
}

struct Checker<'a> {
    roots: &'a [&'a str],
    input_fields: Option<HashSet<&'a str>>,
    created: HashSet<String>,
    /// Names a loop brings into scope for its body.
    scope: Vec<String>,
    problems: Vec<TemplateProblem>,
}

impl Checker<'_> {
    fn nodes(&mut self, nodes: &[Node], line: u32) {
        for node in nodes {
            self.node(node, line);
        }
    }

    fn node(&mut self, node: &Node, outer_line: u32) {
        match node {
            Node::Text { .. }
            | Node::Break
            | Node::Continue
            | Node::Increment { .. }
            | Node::Decrement { .. } => {}
            Node::Output { line, expr } | Node::Assign { line, expr, .. } => self.expr(expr, *line),
            Node::If {
                line,
                branches,
                otherwise,
            } => {
                for branch in branches {
                    self.condition(&branch.condition, *line);
                    self.nodes(&branch.body, *line);
                }
                self.nodes(otherwise, *line);
            }
            Node::Case {
                line,
                subject,
                whens,
            } => {
                self.operand(subject, *line);
                for (values, body) in whens {
                    values.iter().flatten().for_each(|v| self.operand(v, *line));
                    self.nodes(body, *line);
                }
            }
            Node::For {
                line,
                header,
                body,
                otherwise,
            } => {
                self.loop_header(header, *line);
                self.scoped(&[&header.variable, "forloop"], |c| c.nodes(body, *line));
                self.nodes(otherwise, *line);
            }
            Node::Tablerow { line, header, body } => {
                self.loop_header(header, *line);
                self.scoped(&[&header.variable, "tablerowloop"], |c| {
                    c.nodes(body, *line)
                });
            }
            Node::Cycle {
                line,
                group,
                values,
            } => {
                if let Some(Operand::Path { segments, .. }) = group
                    && !segments.is_empty()
                {
                    self.operand(group.as_ref().expect("Invariant: matched Some"), *line);
                }
                values.iter().for_each(|v| self.operand(v, *line));
            }
            Node::IfChanged { body } => self.nodes(body, outer_line),
            Node::System { line, body } => self.nodes(body, *line),
        }
    }

    fn scoped(&mut self, names: &[&str], visit: impl FnOnce(&mut Self)) {
        let depth = self.scope.len();
        self.scope.extend(names.iter().map(|n| n.to_string()));
        visit(self);
        self.scope.truncate(depth);
    }

    fn loop_header(&mut self, header: &Loop, line: u32) {
        self.operand(&header.collection, line);
        for option in [&header.limit, &header.offset, &header.cols]
            .into_iter()
            .flatten()
        {
            self.operand(option, line);
        }
    }

    fn condition(&mut self, condition: &Condition, line: u32) {
        for term in &condition.terms {
            self.operand(&term.left, line);
            if let Some((_, right)) = &term.compare {
                self.operand(right, line);
            }
        }
    }

    fn expr(&mut self, expr: &Expr, line: u32) {
        self.operand(&expr.operand, line);
        for filter in &expr.filters {
            if let Err(text) = filters::check_call(filter) {
                self.problems.push(TemplateProblem::new(line, text));
            }
            filter.args.iter().for_each(|a| self.operand(a, line));
            filter.named.iter().for_each(|(_, a)| self.operand(a, line));
        }
    }

    fn operand(&mut self, operand: &Operand, line: u32) {
        match operand {
            Operand::Literal(_) => {}
            Operand::Range(start, end) => {
                self.operand(start, line);
                self.operand(end, line);
            }
            Operand::Path { root, segments } => {
                self.root(root, segments, line);
                for segment in segments {
                    if let Segment::Index(index) = segment {
                        self.operand(index, line);
                    }
                }
            }
        }
    }

    fn root(&mut self, root: &str, segments: &[Segment], line: u32) {
        let known = self.scope.iter().any(|n| n == root) || self.created.contains(root);
        if known {
            return;
        }
        if !self.roots.contains(&root) {
            let roots = self.roots.join(", ");
            let text = format!(
                "Unknown variable {root}: a template reads only {roots} and the names it creates"
            );
            self.problems.push(TemplateProblem::new(line, text));
            return;
        }
        if root != "input" {
            return;
        }
        if let (Some(fields), Some(Segment::Key(field))) = (&self.input_fields, segments.first())
            && !fields.contains(field.as_str())
        {
            let text = format!("input.{field} is not a property of the input schema");
            self.problems.push(TemplateProblem::new(line, text));
        }
    }
}

/// Whether some node outside the system block may write text.
fn writes_text(nodes: &[Node]) -> bool {
    nodes.iter().any(|node| match node {
        Node::Text { text, .. } => !text.trim().is_empty(),
        Node::Output { .. }
        | Node::Cycle { .. }
        | Node::Increment { .. }
        | Node::Decrement { .. }
        | Node::Tablerow { .. } => true,
        Node::System { .. } => false,
        _ => {
            let mut found = false;
            for_each_body(node, |body| found = found || writes_text(body));
            found
        }
    })
}

fn first_system_line(nodes: &[Node]) -> Option<u32> {
    nodes.iter().find_map(|node| match node {
        Node::System { line, .. } => Some(*line),
        _ => None,
    })
}
