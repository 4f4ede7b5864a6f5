//! Tokens to the tree. Blocks are built on an explicit stack of open tags, never by recursion,
//! so nesting is bounded by [`TAG_NESTING_MAX`] and not by the thread's stack.
//!
//! A problem in one tag is reported and the parser goes on with the next, so a save lists every
//! problem; a block tag whose arguments are wrong still opens its block, so that its end tag
//! does not report a second, confusing problem.

use crate::ast::{Branch, Condition, Expr, Literal, Loop, Node, Operand};
use crate::expr::{ExprParser, Tok, count_names};
use crate::lexer::{Token, TokenKind, tag_name, tokenize};
use crate::{TAG_NESTING_MAX, TEMPLATE_CHARS_MAX, TEMPLATE_NAMES_MAX, Template, TemplateProblem};

/// Parses a template. Every problem the parser finds is returned, in line order.
pub fn parse(source: &str) -> Result<Template, Vec<TemplateProblem>> {
    let parsed = parse_all(source);
    if parsed.problems.is_empty() {
        let text_bytes = text_bytes(&parsed.nodes);
        Ok(Template {
            nodes: parsed.nodes,
            text_bytes,
        })
    } else {
        Err(parsed.problems)
    }
}

/// The bytes of text the template writes at its top level: room the render makes at once.
fn text_bytes(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|node| match node {
            Node::Text { text, .. } => text.len(),
            _ => 0,
        })
        .sum()
}

/// What the checker needs beyond the tree.
pub(crate) struct Parsed {
    pub nodes: Vec<Node>,
    pub problems: Vec<TemplateProblem>,
}

pub(crate) fn parse_all(source: &str) -> Parsed {
    let chars = source.chars().count();
    if chars > TEMPLATE_CHARS_MAX {
        let text = format!(
            "The template has {chars} characters; at most {TEMPLATE_CHARS_MAX} are allowed"
        );
        return Parsed {
            nodes: Vec::new(),
            problems: vec![TemplateProblem::new(1, text)],
        };
    }
    let tokens = match tokenize(source) {
        Ok(tokens) => tokens,
        Err(problem) => {
            return Parsed {
                nodes: Vec::new(),
                problems: vec![problem],
            };
        }
    };
    let mut parser = Parser::default();
    for token in &tokens {
        if parser.too_deep {
            break;
        }
        parser.token(token);
    }
    parser.finish()
}

enum Open {
    If,
    Case(Operand),
    For(Box<Loop>),
    Tablerow(Box<Loop>),
    IfChanged,
    System,
}

enum Part {
    /// The condition of `if`, `elsif` or `unless`.
    Condition {
        unless: bool,
        condition: Condition,
    },
    /// Between `case` and its first `when`: ignored.
    CaseHead,
    When(Vec<Operand>),
    Else,
    /// After `else` in `if` and `unless`, further `else` and `elsif` are ignored, with their
    /// bodies (as Liquid does).
    Ignored,
    Body,
}

struct Frame {
    name: &'static str,
    line: u32,
    open: Open,
    parts: Vec<(Part, Vec<Node>)>,
    part: Part,
    body: Vec<Node>,
}

#[derive(Default)]
struct Parser {
    top: Vec<Node>,
    frames: Vec<Frame>,
    problems: Vec<TemplateProblem>,
    names: usize,
    names_reported: bool,
    comment_depth: usize,
    system_blocks: usize,
    too_deep: bool,
    /// Inside `{% liquid %}`: how many tags were open when it started. Its end tags may close
    /// only the tags it opened, and it must close them all.
    liquid_base: Option<usize>,
}

impl Parser {
    fn token(&mut self, token: &Token<'_>) {
        match token.kind {
            TokenKind::Text if self.comment_depth > 0 => {}
            TokenKind::Text => {
                if !token.text.is_empty() {
                    self.push(Node::Text {
                        line: token.line,
                        text: token.text.to_string(),
                    });
                }
            }
            TokenKind::Output if self.comment_depth > 0 => {}
            TokenKind::Output => {
                self.count(token.text, token.line);
                match parse_expr(token.text) {
                    Ok(expr) => self.push(Node::Output {
                        line: token.line,
                        expr,
                    }),
                    Err(e) => self.problem(token.line, format!("Invalid output: {e}")),
                }
            }
            TokenKind::Tag => {
                let (name, rest) = tag_name(token.text);
                if name == "liquid" && self.comment_depth == 0 {
                    self.count("liquid", token.line);
                    self.liquid(rest, token.line);
                } else {
                    self.tag(name, rest, token.line);
                }
            }
        }
    }

    /// `{% liquid %}`: one tag a line, with no delimiters.
    fn liquid(&mut self, body: &str, line: u32) {
        let base = self.frames.len();
        self.liquid_base = Some(base);
        for (offset, text) in body.split('\n').enumerate() {
            let mut text = text.trim();
            let line = line + offset as u32;
            // `liquid` inside `liquid` only adds a level; unwrap it without recursion.
            while tag_name(text).0 == "liquid" {
                self.count("liquid", line);
                text = tag_name(text).1.trim();
            }
            if text.is_empty() {
                continue;
            }
            let (name, rest) = tag_name(text);
            self.tag(name, rest, line);
        }
        self.liquid_base = None;
        while self.frames.len() > base && !self.too_deep {
            let frame = self
                .frames
                .pop()
                .expect("Invariant: more frames than the base");
            let text = format!(
                "{} is not closed with end{} inside the liquid tag",
                frame.name, frame.name
            );
            self.problem(frame.line, text);
        }
    }

    fn tag(&mut self, name: &str, rest: &str, line: u32) {
        if self.comment_depth > 0 {
            match name {
                "comment" | "doc" => self.comment_depth += 1,
                "endcomment" | "enddoc" => self.comment_depth -= 1,
                _ => {}
            }
            return;
        }
        if name == "#" {
            return;
        }
        self.count(name, line);
        self.count(rest, line);
        if let Err(text) = self.tag_inner(name, rest, line) {
            self.problem(line, text);
        }
    }

    /// One tag's words: one arm for each tag the page defines, side by side as the page lists
    /// them; that is why it is long.
    fn tag_inner(&mut self, name: &str, rest: &str, line: u32) -> Result<(), String> {
        let invalid = |e: String| format!("Invalid {name}: {e}");
        match name {
            "comment" | "doc" => self.comment_depth = 1,
            "raw" | "endraw" => {}
            "assign" => {
                // LiquidJS reads a name of word characters, so `assign 123 = x` creates `123`
                // (which only `["123"]` reads back; `123` is the number).
                let trimmed = rest.trim_start();
                let (mut p, target) = if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    let end = trimmed
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                        .unwrap_or(trimmed.len());
                    let p = ExprParser::new(&trimmed[end..]).map_err(invalid)?;
                    (p, trimmed[..end].to_string())
                } else {
                    let mut p = ExprParser::new(rest).map_err(invalid)?;
                    let target = p.ident().map_err(invalid)?;
                    (p, target)
                };
                if target.ends_with('?') {
                    return Err(invalid(format!("{target} cannot be assigned")));
                }
                p.expect(&Tok::Assign, "=").map_err(invalid)?;
                let expr = p.expr().map_err(invalid)?;
                p.expect_end().map_err(invalid)?;
                self.push(Node::Assign {
                    line,
                    name: target,
                    expr,
                });
            }
            "echo" => {
                let expr = parse_expr(rest).map_err(invalid)?;
                self.push(Node::Output { line, expr });
            }
            "if" | "unless" => {
                let condition = parse_condition(rest);
                let unless = name == "unless";
                let part = Part::Condition {
                    unless,
                    condition: condition.clone().unwrap_or_else(|_| never()),
                };
                self.open(if unless { "unless" } else { "if" }, line, Open::If, part)?;
                condition.map_err(invalid)?;
            }
            "elsif" => {
                let condition = parse_condition(rest);
                let part = Part::Condition {
                    unless: false,
                    condition: condition.clone().unwrap_or_else(|_| never()),
                };
                self.next_part(name, &["if", "unless"], part)?;
                condition.map_err(invalid)?;
            }
            "else" => {
                self.next_part(name, &["if", "unless", "case", "for"], Part::Else)?;
            }
            "case" => {
                let subject = parse_operand(rest);
                let open = Open::Case(subject.clone().unwrap_or(Operand::Literal(Literal::Nil)));
                self.open("case", line, open, Part::CaseHead)?;
                subject.map_err(invalid)?;
            }
            "when" => {
                let values = parse_when(rest);
                self.next_part(
                    name,
                    &["case"],
                    Part::When(values.clone().unwrap_or_default()),
                )?;
                values.map_err(invalid)?;
            }
            "for" | "tablerow" => {
                let header = parse_loop(rest, name == "tablerow");
                let fallback = || Loop {
                    variable: String::new(),
                    collection: Operand::Literal(Literal::Nil),
                    collection_text: String::new(),
                    continue_key: String::new(),
                    reversed: false,
                    limit: None,
                    offset: None,
                    offset_continue: false,
                    cols: None,
                };
                let boxed = Box::new(header.clone().unwrap_or_else(|_| fallback()));
                if name == "for" {
                    self.open("for", line, Open::For(boxed), Part::Body)?;
                } else {
                    self.open("tablerow", line, Open::Tablerow(boxed), Part::Body)?;
                }
                header.map_err(invalid)?;
            }
            "ifchanged" => self.open("ifchanged", line, Open::IfChanged, Part::Body)?,
            "system" => {
                if !self.frames.is_empty() {
                    self.problem(
                        line,
                        "The system block must sit at the top level, outside every other tag",
                    );
                }
                self.system_blocks += 1;
                if self.system_blocks == 2 {
                    self.problem(line, "A template has at most one system block");
                }
                self.open("system", line, Open::System, Part::Body)?;
                no_arguments(name, rest)?;
            }
            "break" => self.push(Node::Break),
            "continue" => self.push(Node::Continue),
            "cycle" => {
                let node = parse_cycle(rest, line).map_err(invalid)?;
                self.push(node);
            }
            "increment" | "decrement" => {
                let mut p = ExprParser::new(rest).map_err(invalid)?;
                let variable = p.ident().map_err(invalid)?;
                p.expect_end().map_err(invalid)?;
                let node = if name == "increment" {
                    Node::Increment { name: variable }
                } else {
                    Node::Decrement { name: variable }
                };
                self.push(node);
            }
            "include" | "render" | "layout" | "block" => {
                return Err(format!(
                    "The {name} tag is not available: a function is a single document"
                ));
            }
            "capture" => {
                return Err(
                    "The capture tag is not available; use assign with append instead".into(),
                );
            }
            _ if name.starts_with("end") => self.close(name, rest)?,
            "" => return Err("A tag needs a name".into()),
            _ => return Err(format!("Unknown tag {name}")),
        }
        Ok(())
    }

    fn open(
        &mut self,
        name: &'static str,
        line: u32,
        open: Open,
        part: Part,
    ) -> Result<(), String> {
        if self.frames.len() >= TAG_NESTING_MAX {
            self.too_deep = true;
            return Err(format!("Tags nest more than {TAG_NESTING_MAX} levels deep"));
        }
        self.frames.push(Frame {
            name,
            line,
            open,
            parts: Vec::new(),
            part,
            body: Vec::new(),
        });
        Ok(())
    }

    fn next_part(&mut self, name: &str, openers: &[&str], part: Part) -> Result<(), String> {
        let Some(frame) = self.frames.last_mut() else {
            return Err(format!("{name} is outside {}", openers[0]));
        };
        if !openers.contains(&frame.name) {
            return Err(format!(
                "{name} is inside {}, not {}",
                frame.name,
                openers.join(" or ")
            ));
        }
        let part = if matches!(frame.part, Part::Else | Part::Ignored) && frame.name != "case" {
            Part::Ignored
        } else {
            part
        };
        let body = std::mem::take(&mut frame.body);
        let done = std::mem::replace(&mut frame.part, part);
        frame.parts.push((done, body));
        Ok(())
    }

    fn close(&mut self, name: &str, rest: &str) -> Result<(), String> {
        let opener = &name[3..];
        if self
            .liquid_base
            .is_some_and(|base| self.frames.len() <= base)
        {
            return Err(format!(
                "{name} cannot close a tag opened outside the liquid tag"
            ));
        }
        let Some(frame) = self.frames.last() else {
            return Err(format!("{name} closes no open tag"));
        };
        if frame.name != opener {
            let known = [
                "if",
                "unless",
                "case",
                "for",
                "tablerow",
                "ifchanged",
                "system",
                "comment",
                "raw",
            ];
            if !known.contains(&opener) {
                return Err(format!("Unknown tag {name}"));
            }
            return Err(format!(
                "{name} does not close {}, opened on line {}",
                frame.name, frame.line
            ));
        }
        if name == "endsystem"
            && let Err(text) = no_arguments(name, rest)
        {
            // Reported, and the block still closes.
            self.problem(self.frames.last().map_or(1, |f| f.line), text);
        }
        let frame = self
            .frames
            .pop()
            .expect("Invariant: the last frame was just read");
        self.push(build(frame));
        Ok(())
    }

    fn push(&mut self, node: Node) {
        match self.frames.last_mut() {
            Some(frame) => frame.body.push(node),
            None => self.top.push(node),
        }
    }

    fn problem(&mut self, line: u32, text: impl Into<String>) {
        self.problems.push(TemplateProblem::new(line, text));
    }

    fn count(&mut self, markup: &str, line: u32) {
        self.names += count_names(markup);
        if self.names > TEMPLATE_NAMES_MAX && !self.names_reported {
            self.names_reported = true;
            self.problem(
                line,
                format!(
                    "The template uses more than {TEMPLATE_NAMES_MAX} names in its tags and outputs"
                ),
            );
        }
    }

    fn finish(mut self) -> Parsed {
        if self.comment_depth > 0 {
            self.problem(1, "comment is not closed with endcomment");
        }
        if !self.too_deep {
            while let Some(frame) = self.frames.pop() {
                self.problem(
                    frame.line,
                    format!("{} is not closed with end{}", frame.name, frame.name),
                );
            }
        }
        let mut problems = self.problems;
        problems.sort_by_key(|p| p.line);
        problems.dedup();
        Parsed {
            nodes: self.top,
            problems,
        }
    }
}

fn build(mut frame: Frame) -> Node {
    frame
        .parts
        .push((frame.part, std::mem::take(&mut frame.body)));
    let line = frame.line;
    let mut otherwise = Vec::new();
    let mut main = Vec::new();
    let mut branches = Vec::new();
    let mut whens = Vec::new();
    for (part, body) in frame.parts {
        match part {
            Part::Condition { unless, condition } => branches.push(Branch {
                unless,
                condition,
                body,
            }),
            Part::When(values) => whens.push((Some(values), body)),
            Part::Else if matches!(frame.open, Open::Case(_)) => whens.push((None, body)),
            Part::Else => otherwise = body,
            Part::Ignored => {}
            Part::Body => main = body,
            Part::CaseHead => {}
        }
    }
    match frame.open {
        Open::If => Node::If {
            line,
            branches,
            otherwise,
        },
        Open::Case(subject) => Node::Case {
            line,
            subject,
            whens,
        },
        Open::For(header) => Node::For {
            line,
            header,
            body: main,
            otherwise,
        },
        Open::Tablerow(header) => Node::Tablerow {
            line,
            header,
            body: main,
        },
        Open::IfChanged => Node::IfChanged { body: main },
        Open::System => Node::System { line, body: main },
    }
}

/// A condition that is never true, standing in for one that did not parse.
fn never() -> Condition {
    crate::ast::Condition {
        terms: vec![crate::ast::Term {
            negated: 0,
            left: Operand::Literal(Literal::Bool(false)),
            compare: None,
        }],
        logic: Vec::new(),
    }
}

fn no_arguments(name: &str, rest: &str) -> Result<(), String> {
    if rest.trim().is_empty() {
        Ok(())
    } else {
        Err(format!("The {name} tag takes no arguments"))
    }
}

fn parse_expr(markup: &str) -> Result<Expr, String> {
    let mut p = ExprParser::new(markup)?;
    if p.at_end() {
        return Ok(Expr {
            operand: Operand::Literal(Literal::Nil),
            filters: Vec::new(),
        });
    }
    let expr = p.expr()?;
    p.expect_end()?;
    Ok(expr)
}

fn parse_operand(markup: &str) -> Result<Operand, String> {
    let mut p = ExprParser::new(markup)?;
    let operand = p.operand()?;
    p.expect_end()?;
    Ok(operand)
}

fn parse_condition(markup: &str) -> Result<Condition, String> {
    let mut p = ExprParser::new(markup)?;
    let condition = p.condition()?;
    p.expect_end()?;
    Ok(condition)
}

/// `when a, b or c`. As LiquidJS reads it, anything else after a value is passed over up to
/// the next `or` (`when 'a' and 'b'` is `when 'a'`).
fn parse_when(markup: &str) -> Result<Vec<Operand>, String> {
    let mut p = ExprParser::new(markup)?;
    let mut values = vec![p.operand()?];
    loop {
        if p.eat(&Tok::Comma) || p.eat_word("or") {
            values.push(p.operand()?);
            continue;
        }
        if p.at_end() {
            return Ok(values);
        }
        p.skip_to_word("or");
    }
}

/// `item in collection reversed limit: 2 offset: 1` (and tablerow's `cols: 3`).
fn parse_loop(markup: &str, tablerow: bool) -> Result<Loop, String> {
    let mut p = ExprParser::new(markup)?;
    let variable = p.ident()?;
    if !p.eat_word("in") {
        return Err("expected in".into());
    }
    let collection = p.operand()?;
    let collection_text = collection_text(markup);
    let mut header = Loop {
        continue_key: format!("{variable}-{collection_text}"),
        variable,
        collection,
        collection_text,
        reversed: false,
        limit: None,
        offset: None,
        offset_continue: false,
        cols: None,
    };
    while !p.at_end() {
        if p.eat(&Tok::Comma) {
            continue;
        }
        if !tablerow && p.eat_word("reversed") {
            header.reversed = true;
            continue;
        }
        let key = p.ident()?;
        p.expect(&Tok::Colon, ":")?;
        match key.as_str() {
            "limit" => header.limit = Some(p.operand()?),
            "offset" if !tablerow && p.eat_word("continue") => header.offset_continue = true,
            "offset" => header.offset = Some(p.operand()?),
            "cols" if tablerow => header.cols = Some(p.operand()?),
            _ => return Err(format!("unknown option {key}")),
        }
    }
    Ok(header)
}

/// The collection of `item in collection limit: 2` as written: the first word after `in`, with
/// what parentheses hold.
fn collection_text(markup: &str) -> String {
    let after = markup
        .split_once(" in ")
        .map_or("", |(_, rest)| rest.trim_start());
    let mut depth = 0i32;
    let end = after
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth <= 0 && c.is_whitespace()
        })
        .map_or(after.len(), |(i, _)| i);
    after[..end].to_string()
}

/// `cycle 'a', 'b'` or `cycle group: 'a', 'b'`.
fn parse_cycle(markup: &str, line: u32) -> Result<Node, String> {
    let mut p = ExprParser::new(markup)?;
    let first = p.operand()?;
    let (group, mut values) = if p.eat(&Tok::Colon) {
        (Some(first), vec![p.operand()?])
    } else {
        (None, vec![first])
    };
    while p.eat(&Tok::Comma) {
        values.push(p.operand()?);
    }
    p.expect_end()?;
    Ok(Node::Cycle {
        line,
        group,
        values,
    })
}
