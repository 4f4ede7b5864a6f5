//! Expressions inside `{{ }}` and tags: a small tokenizer, then a parser for operands,
//! filters and conditions. Nesting of brackets and parentheses is bounded by
//! [`EXPRESSION_NESTING_MAX`], checked before each step down, so no input can overflow the stack.

use crate::EXPRESSION_NESTING_MAX;
use crate::ast::{Comparison, Condition, Expr, FilterCall, Literal, Logic, Operand, Segment, Term};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Str(String),
    Int(i64),
    Float(f64),
    Dot,
    DotDot,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Pipe,
    Colon,
    Comma,
    Assign,
    Compare(Comparison),
}

/// The tokens of a piece of markup.
pub(crate) fn tokenize(markup: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = markup.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let (token, width) = match c {
            _ if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '"' | '\'' => string(&chars[i..])?,
            '.' if next == Some('.') => (Tok::DotDot, 2),
            '.' => (Tok::Dot, 1),
            '[' => (Tok::LBracket, 1),
            ']' => (Tok::RBracket, 1),
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            '|' => (Tok::Pipe, 1),
            ':' => (Tok::Colon, 1),
            ',' => (Tok::Comma, 1),
            '=' if next == Some('=') => (Tok::Compare(Comparison::Eq), 2),
            '=' => (Tok::Assign, 1),
            '!' if next == Some('=') => (Tok::Compare(Comparison::Ne), 2),
            '<' if next == Some('>') => (Tok::Compare(Comparison::Ne), 2),
            '<' if next == Some('=') => (Tok::Compare(Comparison::Le), 2),
            '<' => (Tok::Compare(Comparison::Lt), 1),
            '>' if next == Some('=') => (Tok::Compare(Comparison::Ge), 2),
            '>' => (Tok::Compare(Comparison::Gt), 1),
            _ if c.is_ascii_digit() || (c == '-' && next.is_some_and(|d| d.is_ascii_digit())) => {
                number(&chars[i..])
            }
            _ if c.is_alphabetic() || c == '_' => {
                let mut end = i + 1;
                while end < chars.len()
                    && (chars[end].is_alphanumeric() || chars[end] == '_' || chars[end] == '-')
                {
                    end += 1;
                }
                if chars.get(end) == Some(&'?') {
                    end += 1;
                }
                (Tok::Ident(chars[i..end].iter().collect()), end - i)
            }
            _ => return Err(format!("unexpected character {c}")),
        };
        tokens.push(token);
        i += width;
    }
    Ok(tokens)
}

/// A quoted string, with LiquidJS's escapes (`\n`, `\t`, `\"`, `\u00e9`, ...).
fn string(chars: &[char]) -> Result<(Tok, usize), String> {
    let quote = chars[0];
    let mut out = String::new();
    let mut i = 1;
    while i < chars.len() {
        match chars[i] {
            c if c == quote => return Ok((Tok::Str(out), i + 1)),
            '\\' if i + 1 < chars.len() => {
                let escaped = chars[i + 1];
                i += 2;
                match escaped {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    'u' => {
                        let hex: String = chars[i..].iter().take(4).collect();
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(c) if hex.len() == 4 => {
                                out.push(c);
                                i += 4;
                            }
                            _ => out.push('u'),
                        }
                    }
                    other => out.push(other),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("a string is not closed".to_string())
}

fn number(chars: &[char]) -> (Tok, usize) {
    let mut end = 1;
    while end < chars.len() && chars[end].is_ascii_digit() {
        end += 1;
    }
    let is_float =
        chars.get(end) == Some(&'.') && chars.get(end + 1).is_some_and(char::is_ascii_digit);
    if is_float {
        end += 1;
        while end < chars.len() && chars[end].is_ascii_digit() {
            end += 1;
        }
    }
    let text: String = chars[..end].iter().collect();
    let token = match text.parse::<i64>() {
        Ok(n) if !is_float => Tok::Int(n),
        _ => Tok::Float(text.parse::<f64>().unwrap_or(f64::NAN)),
    };
    (token, end)
}

/// How many names a piece of markup holds: every variable, property, filter and keyword.
pub(crate) fn count_names(markup: &str) -> usize {
    // The same words `tokenize` reads as names, found without building tokens: the parser
    // counts every tag and output, so this runs once per markup beside the real parse.
    let mut count = 0;
    let mut chars = markup.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let mut escaped = false;
                for d in chars.by_ref() {
                    if d == c && !escaped {
                        break;
                    }
                    escaped = d == '\\' && !escaped;
                }
            }
            _ if c.is_ascii_digit() => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                // A fraction: `1.5`, not a range's `1..`.
                let mut ahead = chars.clone();
                if ahead.next() == Some('.') && ahead.next().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                }
            }
            _ if c.is_alphabetic() || c == '_' => {
                count += 1;
                while chars
                    .peek()
                    .is_some_and(|d| d.is_alphanumeric() || *d == '_' || *d == '-')
                {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    count
}

pub(crate) struct ExprParser {
    tokens: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl ExprParser {
    pub(crate) fn new(markup: &str) -> Result<Self, String> {
        Ok(Self {
            tokens: tokenize(markup)?,
            pos: 0,
            depth: 0,
        })
    }

    pub(crate) fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    pub(crate) fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + ahead)
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    pub(crate) fn eat(&mut self, token: &Tok) -> bool {
        if self.peek() == Some(token) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(w)) if w == word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Passes over tokens up to the word `word` (left for the caller to eat) or the end.
    pub(crate) fn skip_to_word(&mut self, word: &str) {
        while !self.at_end() && !matches!(self.peek(), Some(Tok::Ident(w)) if w == word) {
            self.pos += 1;
        }
    }

    pub(crate) fn ident(&mut self) -> Result<String, String> {
        match self.tokens.get(self.pos) {
            Some(Tok::Ident(word)) => {
                self.pos += 1;
                Ok(word.clone())
            }
            other => Err(format!("expected a name, found {}", describe(other))),
        }
    }

    pub(crate) fn expect(&mut self, token: &Tok, what: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(format!("expected {what}, found {}", describe(self.peek())))
        }
    }

    pub(crate) fn expect_end(&self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            other => Err(format!("unexpected {}", describe(other))),
        }
    }

    /// An operand followed by its filters.
    pub(crate) fn expr(&mut self) -> Result<Expr, String> {
        let operand = self.operand()?;
        let mut filters = Vec::new();
        while self.eat(&Tok::Pipe) {
            filters.push(self.filter()?);
        }
        Ok(Expr { operand, filters })
    }

    fn filter(&mut self) -> Result<FilterCall, String> {
        let name = self
            .ident()
            .map_err(|_| format!("expected a filter name, found {}", describe(self.peek())))?;
        let mut call = FilterCall {
            name,
            args: Vec::new(),
            named: Vec::new(),
        };
        if !self.eat(&Tok::Colon) {
            return Ok(call);
        }
        loop {
            let is_named =
                matches!(self.peek(), Some(Tok::Ident(_))) && self.peek_at(1) == Some(&Tok::Colon);
            if is_named {
                let key = self.ident()?;
                self.pos += 1;
                call.named.push((key, self.operand()?));
            } else {
                call.args.push(self.operand()?);
            }
            if !self.eat(&Tok::Comma) {
                return Ok(call);
            }
        }
    }

    /// A literal, a variable with its path, or a range.
    pub(crate) fn operand(&mut self) -> Result<Operand, String> {
        if self.depth >= EXPRESSION_NESTING_MAX {
            return Err(format!(
                "brackets and parentheses nest more than {EXPRESSION_NESTING_MAX} levels deep"
            ));
        }
        self.depth += 1;
        let operand = self.operand_inner();
        self.depth -= 1;
        operand
    }

    fn operand_inner(&mut self) -> Result<Operand, String> {
        let token = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        let literal = match token {
            Some(Tok::Str(s)) => Literal::Str(s),
            Some(Tok::Int(n)) => Literal::Int(n),
            Some(Tok::Float(f)) => Literal::Float(f),
            Some(Tok::LParen) => {
                let start = self.operand()?;
                self.expect(&Tok::DotDot, "..")?;
                let end = self.operand()?;
                self.expect(&Tok::RParen, ")")?;
                return Ok(Operand::Range(Box::new(start), Box::new(end)));
            }
            Some(Tok::LBracket) => {
                self.pos -= 1;
                return self.path(String::new());
            }
            Some(Tok::Ident(word)) => match word.as_str() {
                "nil" | "null" => Literal::Nil,
                "true" => Literal::Bool(true),
                "false" => Literal::Bool(false),
                "empty" => Literal::Empty,
                "blank" => Literal::Blank,
                _ => return self.path(word),
            },
            other => {
                self.pos -= 1;
                return Err(format!(
                    "expected a value, found {}",
                    describe(other.as_ref())
                ));
            }
        };
        Ok(Operand::Literal(literal))
    }

    fn path(&mut self, root: String) -> Result<Operand, String> {
        let mut segments = Vec::new();
        loop {
            if self.eat(&Tok::Dot) {
                segments.push(Segment::Key(self.ident()?));
            } else if self.eat(&Tok::LBracket) {
                let index = self.operand()?;
                self.expect(&Tok::RBracket, "]")?;
                segments.push(match index {
                    Operand::Literal(Literal::Str(key)) => Segment::Key(key),
                    other => Segment::Index(other),
                });
            } else {
                break;
            }
        }
        if !root.is_empty() {
            return Ok(Operand::Path { root, segments });
        }
        // `["a b"].c`: the first bracket names the variable.
        match segments.first() {
            Some(Segment::Key(key)) => {
                let root = key.clone();
                segments.remove(0);
                Ok(Operand::Path { root, segments })
            }
            _ => Err("a variable in brackets must be named by a string".to_string()),
        }
    }

    /// A condition: terms joined by `and` and `or`.
    pub(crate) fn condition(&mut self) -> Result<Condition, String> {
        let mut terms = vec![self.term()?];
        let mut logic = Vec::new();
        loop {
            if self.eat_word("and") {
                logic.push(Logic::And);
            } else if self.eat_word("or") {
                logic.push(Logic::Or);
            } else {
                return Ok(Condition { terms, logic });
            }
            terms.push(self.term()?);
        }
    }

    fn term(&mut self) -> Result<Term, String> {
        let mut negated = 0;
        // `not` is an operator only when a value follows it.
        while matches!(self.peek(), Some(Tok::Ident(w)) if w == "not")
            && self.peek_at(1).is_some_and(starts_value)
        {
            self.pos += 1;
            negated += 1;
        }
        let left = self.operand()?;
        let compare = match self.peek() {
            Some(Tok::Compare(op)) => Some(*op),
            Some(Tok::Ident(w)) if w == "contains" => Some(Comparison::Contains),
            _ => None,
        };
        let compare = match compare {
            Some(op) => {
                self.pos += 1;
                Some((op, self.operand()?))
            }
            None => None,
        };
        Ok(Term {
            negated,
            left,
            compare,
        })
    }
}

fn starts_value(token: &Tok) -> bool {
    !matches!(
        token,
        Tok::Compare(_)
            | Tok::Pipe
            | Tok::Colon
            | Tok::Comma
            | Tok::Dot
            | Tok::RParen
            | Tok::RBracket
    ) && !matches!(token, Tok::Ident(w) if w == "and" || w == "or" || w == "contains")
}

fn describe(token: Option<&Tok>) -> String {
    match token {
        None => "the end".to_string(),
        Some(Tok::Ident(w)) => w.clone(),
        Some(Tok::Str(s)) => format!("\"{s}\""),
        Some(Tok::Int(n)) => n.to_string(),
        Some(Tok::Float(f)) => f.to_string(),
        Some(Tok::Dot) => ".".into(),
        Some(Tok::DotDot) => "..".into(),
        Some(Tok::LBracket) => "[".into(),
        Some(Tok::RBracket) => "]".into(),
        Some(Tok::LParen) => "(".into(),
        Some(Tok::RParen) => ")".into(),
        Some(Tok::Pipe) => "|".into(),
        Some(Tok::Colon) => ":".into(),
        Some(Tok::Comma) => ",".into(),
        Some(Tok::Assign) => "=".into(),
        Some(Tok::Compare(op)) => format!("{op:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick count agrees with the tokenizer on what is a name.
    #[test]
    fn count_names_agrees_with_the_tokenizer() {
        let samples = [
            "input.a | append: 'x y' | upcase",
            "for x in (1..input.n) limit: 2 reversed",
            "x == 1.5 and y-z != \"a\\\"b\" or not q?",
            "a[b['c']].d | default: nil, allow_false: true",
            "1e3 2.x -3 _a é9",
        ];
        for sample in samples {
            let tokens = tokenize(sample).unwrap();
            let names = tokens.iter().filter(|t| matches!(t, Tok::Ident(_))).count();
            assert_eq!(count_names(sample), names, "{sample}");
        }
    }
}
