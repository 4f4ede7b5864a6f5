//! Splits a template into text, `{{ output }}` and `{% tag %}` tokens, each with its line.
//!
//! The bodies of `raw` and `comment` are cut out here, since they may hold anything (an unclosed
//! `{{`, a tag that does not exist). Whitespace control (`{{-`, `-}}`, `{%-`, `-%}`) trims the
//! neighbouring text tokens once every token is known.

use crate::TemplateProblem;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Text,
    Output,
    Tag,
}

#[derive(Debug, Clone)]
pub(crate) struct Token<'s> {
    pub kind: TokenKind,
    /// Text: the text itself. Output and tag: the markup between the delimiters, without the
    /// `-` of whitespace control.
    pub text: &'s str,
    pub line: u32,
    trim_left: bool,
    trim_right: bool,
    /// The body of `raw`: whitespace control around it does not reach into it (LiquidJS).
    verbatim: bool,
}

/// The name of a tag: `#` for an inline comment, else its first word.
pub(crate) fn tag_name(markup: &str) -> (&str, &str) {
    let markup = markup.trim_start();
    if let Some(rest) = markup.strip_prefix('#') {
        return ("#", rest);
    }
    let end = markup
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(markup.len());
    (&markup[..end], &markup[end..])
}

struct Lexer<'s> {
    source: &'s str,
    pos: usize,
    line: u32,
    tokens: Vec<Token<'s>>,
}

/// Tokens of the whole template, or the first problem that stops the lexer (an unclosed
/// delimiter, a `raw` or `comment` without its end).
pub(crate) fn tokenize(source: &str) -> Result<Vec<Token<'_>>, TemplateProblem> {
    let mut lexer = Lexer {
        source,
        pos: 0,
        line: 1,
        tokens: Vec::new(),
    };
    lexer.run()?;
    let mut tokens = lexer.tokens;
    apply_whitespace_control(&mut tokens);
    Ok(tokens)
}

impl<'s> Lexer<'s> {
    fn run(&mut self) -> Result<(), TemplateProblem> {
        while self.pos < self.source.len() {
            let rest = &self.source[self.pos..];
            let Some(open) = find_open(rest) else {
                self.push_text(rest);
                break;
            };
            if open > 0 {
                self.push_text(&rest[..open]);
            }
            let is_output = rest[open..].starts_with("{{");
            // `push_text` moved the position to the delimiter.
            self.read_markup(is_output)?;
        }
        Ok(())
    }

    fn push_text(&mut self, text: &'s str) {
        self.tokens.push(Token {
            kind: TokenKind::Text,
            text,
            line: self.line,
            trim_left: false,
            trim_right: false,
            verbatim: false,
        });
        self.advance(text.len());
    }

    fn advance(&mut self, bytes: usize) {
        let passed = &self.source[self.pos..self.pos + bytes];
        self.line += passed.bytes().filter(|&b| b == b'\n').count() as u32;
        self.pos += bytes;
    }

    fn read_markup(&mut self, is_output: bool) -> Result<(), TemplateProblem> {
        let start_line = self.line;
        let rest = &self.source[self.pos..];
        let close = if is_output { "}}" } else { "%}" };
        let Some(end) = find_close(rest, close) else {
            let what = if is_output { "{{" } else { "{%" };
            return Err(TemplateProblem::new(
                start_line,
                format!("{what} is not closed with {close}"),
            ));
        };
        let mut inner = &rest[2..end];
        let trim_left = inner.starts_with('-');
        if trim_left {
            inner = &inner[1..];
        }
        let trim_right = inner.ends_with('-');
        if trim_right {
            inner = &inner[..inner.len() - 1];
        }
        let kind = if is_output {
            TokenKind::Output
        } else {
            TokenKind::Tag
        };
        self.tokens.push(Token {
            kind,
            text: inner,
            line: start_line,
            trim_left,
            trim_right,
            verbatim: false,
        });
        self.advance(end + 2);
        if !is_output {
            match tag_name(inner).0 {
                "raw" => self.read_raw_body(start_line)?,
                "comment" => self.skip_comment_body(start_line, "comment")?,
                "doc" => self.skip_comment_body(start_line, "doc")?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The body of `raw` up to its `endraw`, as one text token, then the `endraw` tag.
    fn read_raw_body(&mut self, start_line: u32) -> Result<(), TemplateProblem> {
        let rest = &self.source[self.pos..];
        let mut search = 0;
        while let Some(open) = rest[search..].find("{%").map(|i| i + search) {
            let Some(end) = rest[open..].find("%}").map(|i| i + open) else {
                break;
            };
            let inner = rest[open + 2..end].trim_matches('-');
            if inner.trim() == "endraw" {
                if open > 0 {
                    self.push_text(&rest[..open]);
                    if let Some(body) = self.tokens.last_mut() {
                        body.verbatim = true;
                    }
                }
                return self.read_markup(false);
            }
            search = open + 2;
        }
        Err(TemplateProblem::new(
            start_line,
            "raw is not closed with endraw",
        ))
    }

    /// Skips the body of `comment` (or `doc`) up to the end tag that matches it; they nest.
    fn skip_comment_body(
        &mut self,
        start_line: u32,
        open_name: &str,
    ) -> Result<(), TemplateProblem> {
        let close_name = format!("end{open_name}");
        let rest = &self.source[self.pos..];
        let mut depth = 1usize;
        let mut search = 0;
        while let Some(open) = rest[search..].find("{%").map(|i| i + search) {
            let Some(end) = rest[open..].find("%}").map(|i| i + open) else {
                break;
            };
            let inner = rest[open + 2..end].trim_matches('-');
            let name = tag_name(inner).0;
            if name == "raw" && open_name == "comment" {
                // A raw body inside a comment is opaque too.
                match rest[end..].find("endraw").map(|i| i + end) {
                    Some(endraw) => {
                        search = endraw;
                        continue;
                    }
                    None => break,
                }
            }
            if name == open_name {
                depth += 1;
            } else if name == close_name {
                depth -= 1;
                if depth == 0 {
                    self.advance(open);
                    // The end tag is kept so that its whitespace control applies.
                    return self.read_markup(false);
                }
            }
            // A tag left open inside the body (`{% assign x = y {% enddoc %}`) does not hide
            // the end tag: look at every `{%`.
            search = open + 2;
        }
        Err(TemplateProblem::new(
            start_line,
            format!("{open_name} is not closed with {close_name}"),
        ))
    }
}

fn find_open(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'{' && (bytes[i + 1] == b'{' || bytes[i + 1] == b'%') {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The offset of `close` after the opening delimiter, outside quoted strings; when a quote is
/// never closed, the first `close` at all (LiquidJS reads such a quote as a stray character).
fn find_close(text: &str, close: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let close = close.as_bytes();
    let mut quote: Option<u8> = None;
    for i in 2..bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q && bytes[i - 1] != b'\\' => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if bytes[i..].starts_with(close) => return Some(i),
            None => {}
        }
    }
    (2..bytes.len()).find(|&i| bytes[i..].starts_with(close))
}

fn apply_whitespace_control(tokens: &mut [Token<'_>]) {
    for i in 0..tokens.len() {
        if tokens[i].kind == TokenKind::Text {
            continue;
        }
        if tokens[i].trim_left
            && i > 0
            && tokens[i - 1].kind == TokenKind::Text
            && !tokens[i - 1].verbatim
        {
            tokens[i - 1].text = tokens[i - 1].text.trim_end();
        }
        if tokens[i].trim_right
            && i + 1 < tokens.len()
            && tokens[i + 1].kind == TokenKind::Text
            && !tokens[i + 1].verbatim
        {
            tokens[i + 1].text = tokens[i + 1].text.trim_start();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_counts_lines() {
        let tokens = tokenize("a\n{{ x }}\n{% if y -%}\n  b{% endif %}").unwrap();
        let kinds: Vec<_> = tokens.iter().map(|t| (t.kind, t.text, t.line)).collect();
        assert_eq!(
            kinds,
            vec![
                (TokenKind::Text, "a\n", 1),
                (TokenKind::Output, " x ", 2),
                (TokenKind::Text, "\n", 2),
                (TokenKind::Tag, " if y ", 3),
                (TokenKind::Text, "b", 3),
                (TokenKind::Tag, " endif ", 4),
            ]
        );
    }

    #[test]
    fn raw_and_comment_bodies() {
        let tokens =
            tokenize("{% raw %}{{ x {% endraw %}{% comment %}{{ {% endcomment %}z").unwrap();
        let texts: Vec<_> = tokens.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            vec![
                " raw ",
                "{{ x ",
                " endraw ",
                " comment ",
                " endcomment ",
                "z"
            ]
        );
    }

    #[test]
    fn unclosed_output() {
        let problem = tokenize("a\n{{ x").unwrap_err();
        assert_eq!(problem, TemplateProblem::new(2, "{{ is not closed with }}"));
    }
}
