//! Renders a parsed template against the run's input: the system block into the instructions,
//! everything else into the message, under the page's limits on time, memory and size.
//!
//! Time: the engine reads no clock. The caller passes a closure in [`RenderLimits::expired`]
//! (`|| started.elapsed() >= limit`), which the render asks every [`CLOCK_CHECK_STEPS`] steps;
//! without one, only the charge and size limits bound the work.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use auto_doc::Issue;
use serde_json::Value as Json;

use crate::ast::{Branch, Comparison, Condition, Expr, Literal, Logic, Node, Operand, Term};
use crate::filters::{self, Budget, FilterError};
use crate::value::{Text, Value, compare, contains, equals};
use crate::{
    CLOCK_CHECK_STEPS, REASONING_ROOTS, RENDER_CHARGE_MAX, RENDER_TIME_MS_MAX, RENDERED_CHARS_MAX,
    Template,
};

mod loops;
mod path;

/// The limits of one render.
pub struct RenderLimits<'c> {
    /// Asked every [`CLOCK_CHECK_STEPS`] steps; true ends the render with
    /// [`RenderErrorKind::TimeLimit`]. The caller measures [`RENDER_TIME_MS_MAX`] with it.
    pub expired: Option<&'c dyn Fn() -> bool>,
    /// Characters and items filters and ranges may charge: [`RENDER_CHARGE_MAX`].
    pub charge_max: u64,
    /// Characters of the instructions, and of the message: [`RENDERED_CHARS_MAX`].
    pub rendered_chars_max: usize,
}

impl std::fmt::Debug for RenderLimits<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderLimits")
            .field("expired", &self.expired.is_some())
            .field("charge_max", &self.charge_max)
            .field("rendered_chars_max", &self.rendered_chars_max)
            .finish()
    }
}

impl<'c> RenderLimits<'c> {
    /// The page's limits, with the caller's clock.
    pub fn new(expired: &'c dyn Fn() -> bool) -> Self {
        Self {
            expired: Some(expired),
            ..Self::default()
        }
    }
}

impl Default for RenderLimits<'_> {
    /// The page's limits without a clock.
    fn default() -> Self {
        Self {
            expired: None,
            charge_max: RENDER_CHARGE_MAX,
            rendered_chars_max: RENDERED_CHARS_MAX,
        }
    }
}

/// What a template renders to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The system block's text, when the template has one.
    pub system: Option<String>,
    /// Everything outside the system block.
    pub message: String,
}

/// Why a render stopped. Each ends the run as invalid_input (reasoning page, How a run ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenderErrorKind {
    /// The template reads a field the input does not have, outside a condition or `default`.
    MissingField,
    /// The template reads a name before the tag that creates it.
    UndefinedVariable,
    /// A filter rejects its value or arguments.
    FilterRejected,
    /// The render took longer than [`RENDER_TIME_MS_MAX`].
    TimeLimit,
    /// Filters and ranges charged more than [`RENDER_CHARGE_MAX`].
    ChargeLimit,
    /// The instructions are longer than [`RENDERED_CHARS_MAX`].
    InstructionsTooLong,
    /// The message is longer than [`RENDERED_CHARS_MAX`].
    MessageTooLong,
    /// The message is empty or only white space.
    MessageEmpty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderError {
    /// Line in the template, counted from 1.
    pub line: u32,
    pub kind: RenderErrorKind,
    pub text: String,
    /// `/input/<field>` for a missing field.
    pub field_pointer: Option<String>,
}

impl RenderError {
    fn new(line: u32, kind: RenderErrorKind, text: impl Into<String>) -> Self {
        Self {
            line,
            kind,
            text: text.into(),
            field_pointer: None,
        }
    }

    /// The error as an issue of the document whose template starts after `line_offset` lines.
    pub fn to_issue(&self, line_offset: u32) -> Issue {
        let path = self.field_pointer.clone().unwrap_or_default();
        Issue::at_line(
            self.line.saturating_add(line_offset),
            path,
            self.text.clone(),
        )
    }
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Line {}: {}", self.line, self.text)
    }
}

impl std::error::Error for RenderError {}

/// Renders a reasoning template: `input` is the run's input, `today` and `now` the run's start.
pub fn render(
    template: &Template,
    input: &Json,
    today: &str,
    now: &str,
    limits: &RenderLimits<'_>,
) -> Result<Rendered, RenderError> {
    let today = Json::String(today.to_string());
    let now = Json::String(now.to_string());
    let roots = [
        (REASONING_ROOTS[0], input),
        (REASONING_ROOTS[1], &today),
        (REASONING_ROOTS[2], &now),
    ];
    render_with_roots(template, &roots, limits)
}

/// [`render`] for a host whose templates read other variables.
pub fn render_with_roots(
    template: &Template,
    roots: &[(&str, &Json)],
    limits: &RenderLimits<'_>,
) -> Result<Rendered, RenderError> {
    let mut renderer = Renderer::new(roots, limits);
    // Room for the template's own text (capped: the message's limit is in characters).
    renderer
        .message
        .reserve(template.text_bytes.min(limits.rendered_chars_max));
    let mut last_line = 1;
    renderer.nodes(&template.nodes, &mut last_line)?;
    let message = std::mem::take(&mut renderer.message);
    if message.trim().is_empty() {
        return Err(RenderError::new(
            last_line,
            RenderErrorKind::MessageEmpty,
            "The message renders empty",
        ));
    }
    Ok(Rendered {
        system: renderer.system.take(),
        message,
    })
}

/// The render's own maps, keyed by the template's names: hashed with a multiply and a rotate
/// (the Fx hash) rather than SipHash, since a render looks names up at every step and its keys
/// come from the template (a cycle's group name may come from the input, but a render's steps
/// and time are bounded).
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub(crate) enum Flow {
    Normal,
    Break,
    Continue,
}

pub(crate) struct Renderer<'a, 'c> {
    pub(crate) roots: FastMap<&'c str, &'a Json>,
    vars: FastMap<&'a str, Value<'a>>,
    counters: FastMap<&'a str, i64>,
    /// The variables of the loops the render is in, innermost last.
    pub(crate) loops: Vec<loops::LoopScope<'a>>,
    cycles: FastMap<String, usize>,
    pub(crate) continue_offsets: FastMap<&'a str, usize>,
    ifchanged: Option<String>,
    budget: Budget,
    /// The arguments of the filter call being made, kept from call to call.
    args: Vec<Value<'a>>,
    steps: u64,
    limits: &'c RenderLimits<'c>,
    system: Option<String>,
    in_system: bool,
    message: String,
    system_counted: Counted,
    message_counted: Counted,
}

/// How much of a rendered text has had its characters counted. Counting is put off while the
/// text has at most as many bytes as the limit has characters (it cannot be over then), and
/// then done once for each byte, so the limit costs nothing for most renders.
#[derive(Debug, Clone, Copy, Default)]
struct Counted {
    bytes: usize,
    chars: usize,
    /// Characters counted against the limit that are not in this text (the message around an
    /// `ifchanged` body while it renders apart).
    base: usize,
}

impl Counted {
    /// Whether `text`, whose first `self.bytes` bytes were counted, holds at most `max`
    /// characters with the base.
    fn within(&mut self, text: &str, max: usize) -> bool {
        if self.base.saturating_add(text.len()) <= max {
            return true;
        }
        self.count(text);
        self.base.saturating_add(self.chars) <= max
    }

    fn count(&mut self, text: &str) {
        self.chars += text[self.bytes..].chars().count();
        self.bytes = text.len();
    }
}

impl<'a, 'c> Renderer<'a, 'c> {
    fn new(roots: &'c [(&'c str, &'a Json)], limits: &'c RenderLimits<'c>) -> Self {
        Renderer {
            roots: roots.iter().copied().collect(),
            vars: FastMap::default(),
            counters: FastMap::default(),
            loops: Vec::new(),
            cycles: FastMap::default(),
            continue_offsets: FastMap::default(),
            ifchanged: None,
            budget: Budget {
                charged: 0,
                max: limits.charge_max,
                now_seconds: roots
                    .iter()
                    .find(|(name, _)| *name == "now")
                    .and_then(|(_, now)| now.as_str())
                    .and_then(filters::date::seconds_of),
            },
            args: Vec::new(),
            steps: 0,
            limits,
            system: None,
            in_system: false,
            message: String::new(),
            system_counted: Counted::default(),
            message_counted: Counted::default(),
        }
    }

    pub(crate) fn step(&mut self, line: u32) -> Result<(), RenderError> {
        self.steps += 1;
        if self.steps.is_multiple_of(CLOCK_CHECK_STEPS)
            && let Some(expired) = self.limits.expired
            && expired()
        {
            let text = format!("The template took longer than {RENDER_TIME_MS_MAX} ms to render");
            return Err(RenderError::new(line, RenderErrorKind::TimeLimit, text));
        }
        Ok(())
    }

    pub(crate) fn charge(&mut self, items: u64, line: u32) -> Result<(), RenderError> {
        self.budget
            .charge(items)
            .map_err(|e| self.filter_error(e, line))
    }

    fn filter_error(&self, error: FilterError, line: u32) -> RenderError {
        match error {
            FilterError::Invalid(text) => {
                RenderError::new(line, RenderErrorKind::FilterRejected, text)
            }
            FilterError::Charge => RenderError::new(
                line,
                RenderErrorKind::ChargeLimit,
                format!(
                    "Filters and ranges used more than {} characters or items",
                    self.limits.charge_max
                ),
            ),
        }
    }

    /// The text being written (the instructions or the message) and how much of it is counted.
    fn sink(&mut self) -> (&mut String, &mut Counted) {
        if self.in_system {
            (
                self.system.get_or_insert_with(String::new),
                &mut self.system_counted,
            )
        } else {
            (&mut self.message, &mut self.message_counted)
        }
    }

    /// After a write: the text it went to is within the limit, or the render stops. (What was
    /// written past the limit goes with the render.)
    fn check_size(&mut self, line: u32) -> Result<(), RenderError> {
        let max = self.limits.rendered_chars_max;
        let in_system = self.in_system;
        let (text, counted) = self.sink();
        if counted.within(text, max) {
            return Ok(());
        }
        Err(if in_system {
            RenderError::new(
                line,
                RenderErrorKind::InstructionsTooLong,
                format!("The instructions render longer than {max} characters"),
            )
        } else {
            RenderError::new(
                line,
                RenderErrorKind::MessageTooLong,
                format!("The message renders longer than {max} characters"),
            )
        })
    }

    pub(crate) fn write(&mut self, text: &str, line: u32) -> Result<(), RenderError> {
        self.sink().0.push_str(text);
        self.check_size(line)
    }

    pub(crate) fn write_value(&mut self, value: &Value<'a>, line: u32) -> Result<(), RenderError> {
        if let Value::Str(s) = value {
            return self.write(s, line);
        }
        // Printed in place; a value's text stops growing a little past four bytes for each
        // character the limit allows, as it did printed apart.
        let cap = self
            .limits
            .rendered_chars_max
            .saturating_mul(4)
            .saturating_add(4);
        let (out, _) = self.sink();
        let start = out.len();
        value.render_into_from(out, start, cap);
        self.check_size(line)
    }

    pub(crate) fn nodes(
        &mut self,
        nodes: &'a [Node],
        last_line: &mut u32,
    ) -> Result<Flow, RenderError> {
        for node in nodes {
            match self.node(node, last_line)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    fn node(&mut self, node: &'a Node, last_line: &mut u32) -> Result<Flow, RenderError> {
        self.step(*last_line)?;
        match node {
            Node::Text { line, text } => {
                // A limit reached while writing text names the line the text starts on.
                *last_line = *line;
                self.write(text, *line)?;
            }
            Node::Output { line, expr } => {
                *last_line = *line;
                let value = self.expr(expr, *line, false)?;
                self.write_value(&value, *line)?;
            }
            Node::Assign { line, name, expr } => {
                *last_line = *line;
                let value = self.expr(expr, *line, false)?;
                self.vars.insert(name, value);
            }
            Node::If {
                line,
                branches,
                otherwise,
            } => {
                *last_line = *line;
                return self.if_node(branches, otherwise, *line, last_line);
            }
            Node::Case {
                line,
                subject,
                whens,
            } => {
                *last_line = *line;
                return self.case(subject, whens, *line, last_line);
            }
            Node::For {
                line,
                header,
                body,
                otherwise,
            } => {
                *last_line = *line;
                return self.for_loop(header, body, otherwise, *line, last_line);
            }
            Node::Tablerow { line, header, body } => {
                *last_line = *line;
                return self.tablerow(header, body, *line, last_line);
            }
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
            Node::Cycle {
                line,
                group,
                values,
            } => self.cycle(group.as_ref(), values, *line)?,
            Node::Increment { name } => {
                let counter = self.counters.entry(name).or_insert(0);
                let shown = *counter;
                *counter += 1;
                self.write(&shown.to_string(), *last_line)?;
            }
            Node::Decrement { name } => {
                let counter = self.counters.entry(name).or_insert(0);
                *counter -= 1;
                let shown = *counter;
                self.write(&shown.to_string(), *last_line)?;
            }
            Node::IfChanged { body } => return self.ifchanged(body, last_line),
            Node::System { line, body } => {
                *last_line = *line;
                self.in_system = true;
                self.system.get_or_insert_with(String::new);
                let flow = self.nodes(body, last_line);
                self.in_system = false;
                return flow;
            }
        }
        Ok(Flow::Normal)
    }

    fn if_node(
        &mut self,
        branches: &'a [Branch],
        otherwise: &'a [Node],
        line: u32,
        last_line: &mut u32,
    ) -> Result<Flow, RenderError> {
        for branch in branches {
            if self.condition(&branch.condition, line)? != branch.unless {
                return self.nodes(&branch.body, last_line);
            }
        }
        self.nodes(otherwise, last_line)
    }

    fn case(
        &mut self,
        subject: &'a Operand,
        whens: &'a [(Option<Vec<Operand>>, Vec<Node>)],
        line: u32,
        last_line: &mut u32,
    ) -> Result<Flow, RenderError> {
        let subject = self.operand(subject, line, false)?;
        let mut matched = false;
        for (values, body) in whens {
            let render = match values {
                // A body renders once however many of its values match.
                Some(values) => {
                    let mut hit = false;
                    for value in values {
                        if equals(&subject, &self.operand(value, line, false)?) {
                            hit = true;
                            break;
                        }
                    }
                    hit
                }
                None => !matched,
            };
            if render {
                matched |= values.is_some();
                match self.nodes(body, last_line)? {
                    Flow::Normal => {}
                    flow => return Ok(flow),
                }
            }
        }
        Ok(Flow::Normal)
    }

    fn ifchanged(&mut self, body: &'a [Node], last_line: &mut u32) -> Result<Flow, RenderError> {
        // The body renders apart, its characters counted on top of the message's.
        self.message_counted.count(&self.message);
        let base = self.message_counted.base + self.message_counted.chars;
        let saved_message = std::mem::take(&mut self.message);
        let saved_counted = std::mem::replace(
            &mut self.message_counted,
            Counted {
                base,
                ..Counted::default()
            },
        );
        let was_system = std::mem::replace(&mut self.in_system, false);
        let flow = self.nodes(body, last_line);
        self.in_system = was_system;
        let rendered = std::mem::replace(&mut self.message, saved_message);
        self.message_counted = saved_counted;
        let flow = flow?;
        if self.ifchanged.as_deref() != Some(rendered.as_str()) {
            self.write(&rendered, *last_line)?;
            self.ifchanged = Some(rendered);
        }
        Ok(flow)
    }

    fn cycle(
        &mut self,
        group: Option<&'a Operand>,
        values: &'a [Operand],
        line: u32,
    ) -> Result<(), RenderError> {
        let key = match group {
            Some(group) => format!(
                "group:{}",
                self.operand(group, line, true)?.to_text().as_ref() as &str
            ),
            None => format!("values:{values:?}"),
        };
        // As Ruby Liquid: a group shared by cycles of different lengths goes on from where it
        // was, and starts again after its last value.
        let index = self.cycles.entry(key).or_insert(0);
        let at = *index;
        *index = if at + 1 >= values.len() { 0 } else { at + 1 };
        if let Some(value) = values.get(at) {
            let value = self.operand(value, line, false)?;
            self.write_value(&value, line)?;
        }
        Ok(())
    }

    /// A condition; a missing field reads as nil here.
    pub(crate) fn condition(
        &mut self,
        condition: &'a Condition,
        line: u32,
    ) -> Result<bool, RenderError> {
        // `and` and `or` group from the right: fold from the last term back.
        let mut result = false;
        for (i, term) in condition.terms.iter().enumerate().rev() {
            let value = self.term(term, line)?;
            result = match condition.logic.get(i) {
                None => value,
                Some(Logic::And) => value && result,
                Some(Logic::Or) => value || result,
            };
        }
        Ok(result)
    }

    fn term(&mut self, term: &'a Term, line: u32) -> Result<bool, RenderError> {
        let left = self.operand(&term.left, line, true)?;
        let mut result = match &term.compare {
            None => left.is_truthy(),
            Some((op, right)) => {
                let right = self.operand(right, line, true)?;
                match op {
                    Comparison::Eq => equals(&left, &right),
                    Comparison::Ne => !equals(&left, &right),
                    Comparison::Contains => contains(&left, &right),
                    Comparison::Lt => compare(&left, &right).is_some_and(|o| o.is_lt()),
                    Comparison::Le => compare(&left, &right).is_some_and(|o| o.is_le()),
                    Comparison::Gt => compare(&left, &right).is_some_and(|o| o.is_gt()),
                    Comparison::Ge => compare(&left, &right).is_some_and(|o| o.is_ge()),
                }
            }
        };
        if term.negated % 2 == 1 {
            result = !result;
        }
        Ok(result)
    }

    /// An expression with its filters. Under `default`, a missing field reads as nil.
    pub(crate) fn expr(
        &mut self,
        expr: &'a Expr,
        line: u32,
        lenient: bool,
    ) -> Result<Value<'a>, RenderError> {
        let lenient = lenient || expr.filters.iter().any(|f| f.name == "default");
        let mut value = self.operand(&expr.operand, line, lenient)?;
        for call in &expr.filters {
            self.step(line)?;
            // The arguments go in a list the render keeps, so a call makes none. (An operand
            // has no filters, so nothing below uses the list while it is taken.)
            let mut args = std::mem::take(&mut self.args);
            args.clear();
            for arg in &call.args {
                args.push(self.operand(arg, line, lenient)?);
            }
            let named = call
                .named
                .iter()
                .map(|(k, a)| Ok((k.as_str(), self.operand(a, line, lenient)?)))
                .collect::<Result<Vec<_>, RenderError>>()?;
            let result = filters::apply(&call.name, value, &args, &named, &mut self.budget);
            args.clear();
            self.args = args;
            value = result.map_err(|e| self.filter_error(e, line))?;
        }
        Ok(value)
    }

    pub(crate) fn operand(
        &mut self,
        operand: &'a Operand,
        line: u32,
        lenient: bool,
    ) -> Result<Value<'a>, RenderError> {
        match operand {
            Operand::Literal(literal) => Ok(match literal {
                Literal::Nil => Value::Nil,
                Literal::Bool(b) => Value::Bool(*b),
                Literal::Int(i) => Value::Int(*i),
                Literal::Float(f) => Value::Float(*f),
                Literal::Str(s) => Value::Str(Text::Borrowed(s)),
                Literal::Empty => Value::Empty,
                Literal::Blank => Value::Blank,
            }),
            Operand::Range(start, end) => {
                let start = self.range_bound(start, line, lenient)?;
                let end = self.range_bound(end, line, lenient)?;
                // Charged before any item is made: a huge range fails at once.
                self.charge(crate::value::range_len(start, end), line)?;
                Ok(Value::Range(start, end))
            }
            Operand::Path { root, segments } => self.path(root, segments, line, lenient),
        }
    }

    fn range_bound(
        &mut self,
        operand: &'a Operand,
        line: u32,
        lenient: bool,
    ) -> Result<i64, RenderError> {
        // LiquidJS reads a bound that is not a number as 0.
        let value = self.operand(operand, line, lenient)?;
        let number = filters::to_number(&value).as_f64();
        Ok(number.trunc().clamp(i64::MIN as f64, i64::MAX as f64) as i64)
    }
}
