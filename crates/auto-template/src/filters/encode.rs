//! Filters that encode: HTML, URLs, base64 and JSON, and `default`, `raw` and `inspect`,
//! each as LiquidJS writes it.

use std::fmt::Write as _;

use serde_json::Value as Json;

use super::{Args, Budget, FilterError, Result};
use crate::value::{VALUE_DEPTH_MAX, Value, format_number};

pub(super) fn apply<'a>(
    name: &str,
    input: &Value<'a>,
    args: &Args<'_, 'a>,
    budget: &mut Budget,
) -> Result<Option<Value<'a>>> {
    let text = || input.to_text();
    let value: Result<Value<'a>> = match name {
        "default" => Ok(default(input, args)),
        "raw" => Ok(input.clone()),
        "escape" | "xml_escape" => Ok(Value::string(escape_html(&text()))),
        "escape_once" => Ok(Value::string(escape_html(&unescape_html(&text())))),
        "newline_to_br" => Ok(Value::string(
            text().replace("\r\n", "\n").replace('\n', "<br />\n"),
        )),
        "strip_html" => Ok(Value::string(strip_html(&text()))),
        "url_encode" => Ok(Value::string(
            percent_encode(&text(), COMPONENT_SAFE).replace("%20", "+"),
        )),
        "cgi_escape" => Ok(Value::string(
            percent_encode(&text(), "-_.~").replace("%20", "+"),
        )),
        "uri_escape" => Ok(Value::string(percent_encode(&text(), URI_SAFE))),
        "url_decode" => percent_decode(&text().replace('+', " ")).map(Value::string),
        "slugify" => Ok(Value::string(slugify(&text(), args))),
        "base64_encode" => Ok(Value::string(base64_encode(
            text().as_bytes(),
            STANDARD,
            true,
        ))),
        "base64_url_safe_encode" => Ok(Value::string(base64_encode(
            text().as_bytes(),
            URL_SAFE,
            true,
        ))),
        "base64_decode" => base64_decode(&text(), false).map(Value::string),
        "base64_url_safe_decode" => base64_decode(&text(), true).map(Value::string),
        "json" | "jsonify" | "inspect" => json(input, args, budget),
        _ => return Ok(None),
    };
    value.map(Some)
}

/// `default`: the argument for nil, false, an empty string and an empty list; with
/// `allow_false: true`, false stays.
fn default<'a>(input: &Value<'a>, args: &Args<'_, 'a>) -> Value<'a> {
    let fallback = || args.get(0).cloned().unwrap_or(Value::Nil);
    match input {
        Value::Str(s) if s.is_empty() => fallback(),
        _ if input.is_array() && input.len_items() == Some(0) => fallback(),
        Value::Bool(false) if args.named("allow_false").is_some_and(Value::is_truthy) => {
            Value::Bool(false)
        }
        Value::Empty | Value::Blank => fallback(),
        _ if !input.is_truthy() => fallback(),
        _ => input.clone(),
    }
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // The characters replaced are ASCII: copy the runs between them whole.
    let mut from = 0;
    for (at, byte) in s.bytes().enumerate() {
        let entity = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&#34;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[from..at]);
        out.push_str(entity);
        from = at + 1;
    }
    out.push_str(&s[from..]);
    out
}

fn unescape_html(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Removes tags, and whole `script` and `style` elements and comments, in one pass.
fn strip_html(s: &str) -> String {
    let mut blocks: Vec<(&str, &str)> = vec![
        ("<script", "</script>"),
        ("<style", "</style>"),
        ("<!--", "-->"),
        ("<", ">"),
    ];
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        let Some(lt) = s[i..].find('<').map(|p| p + i) else {
            out.push_str(&s[i..]);
            return out;
        };
        out.push_str(&s[i..lt]);
        let mut next = None;
        let mut k = 0;
        while k < blocks.len() {
            let (opener, closer) = blocks[k];
            if !s[lt..].starts_with(opener) {
                k += 1;
                continue;
            }
            match s[lt + opener.len()..].find(closer) {
                Some(e) => {
                    next = Some(lt + opener.len() + e + closer.len());
                    break;
                }
                // No closer anywhere after: this kind can never close again.
                None => {
                    blocks.remove(k);
                }
            }
        }
        match next {
            Some(n) => i = n,
            None => {
                out.push_str(&s[lt..]);
                return out;
            }
        }
    }
    out
}

const COMPONENT_SAFE: &str = "-_.!~*'()";
const URI_SAFE: &str = "-_.!~*'();/?:@&=+$,#[]";

fn percent_encode(s: &str, safe: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || safe.as_bytes().contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn percent_decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                return Err(FilterError::Invalid(
                    "url_decode: the text is not a valid URL encoding".into(),
                ));
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| FilterError::Invalid("url_decode: the text does not decode to UTF-8".into()))
}

fn slugify<'a>(s: &str, args: &Args<'_, 'a>) -> String {
    let mode = args
        .get(0)
        .map_or_else(|| "default".to_string(), |m| m.to_text().to_string());
    let cased = args.get(1).is_some_and(Value::is_truthy);
    let keep: Option<Box<dyn Fn(char) -> bool>> = match mode.as_str() {
        "none" => None,
        "raw" => Some(Box::new(|c: char| !c.is_whitespace())),
        "ascii" => Some(Box::new(|c: char| c.is_ascii_alphanumeric())),
        "pretty" => Some(Box::new(|c: char| {
            c.is_alphanumeric() || "._~!$&'()+,;=@".contains(c)
        })),
        _ => Some(Box::new(|c: char| c.is_alphanumeric())),
    };
    let slug = match keep {
        None => s.to_string(),
        Some(keep) => {
            let mut out = String::new();
            let mut dash = false;
            for c in s.chars() {
                if keep(c) {
                    out.push(c);
                    dash = false;
                } else if !dash {
                    out.push('-');
                    dash = true;
                }
            }
            out.trim_matches('-').to_string()
        }
    };
    if cased { slug } else { slug.to_lowercase() }
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64_encode(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(s: &str, url_safe: bool) -> Result<String> {
    let invalid = || FilterError::Invalid("invalid base64 provided to base64_decode".into());
    let cleaned: Vec<u8> = s.bytes().filter(|b| !b" \t\n\r\x0c".contains(b)).collect();
    let body = cleaned
        .strip_suffix(b"==")
        .or_else(|| cleaned.strip_suffix(b"="))
        .unwrap_or(&cleaned);
    if body.len() % 4 == 1 {
        return Err(invalid());
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in body {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' if !url_safe => 62,
            b'/' if !url_safe => 63,
            b'-' if url_safe => 62,
            b'_' if url_safe => 63,
            _ => return Err(invalid()),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `json`: `JSON.stringify(value, null, space)`.
fn json<'a>(input: &Value<'a>, args: &Args<'_, 'a>, budget: &mut Budget) -> Result<Value<'a>> {
    let indent = match args.get(0) {
        Some(Value::Str(s)) => s.chars().take(10).collect(),
        Some(other) => " ".repeat(super::to_number(other).as_f64().clamp(0.0, 10.0) as usize),
        None => String::new(),
    };
    let mut writer = JsonWriter {
        out: String::new(),
        indent: &indent,
        budget,
    };
    writer.value(input, 0)?;
    Ok(Value::string(writer.out))
}

struct JsonWriter<'w> {
    out: String,
    indent: &'w str,
    budget: &'w mut Budget,
}

impl JsonWriter<'_> {
    fn value(&mut self, value: &Value<'_>, depth: usize) -> Result<()> {
        if depth > VALUE_DEPTH_MAX {
            return Err(FilterError::Invalid(
                "json: the value nests too deeply".into(),
            ));
        }
        // Charged as it grows, so a list repeating a long string stops early.
        if self.out.len() as u64 > self.budget.max.saturating_sub(self.budget.charged) {
            return Err(FilterError::Charge);
        }
        match value {
            Value::Nil => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => crate::value::push_int(&mut self.out, *i),
            Value::Float(f) if f.is_finite() => self.out.push_str(&format_number(*f)),
            Value::Float(_) => self.out.push_str("null"),
            Value::Str(s) => self.string(s),
            Value::Empty | Value::Blank => self.out.push_str("\"\""),
            Value::Json(Json::Object(map)) => {
                self.out.push('{');
                for (i, (key, item)) in map.iter().enumerate() {
                    self.separator(i, depth + 1);
                    self.string(key);
                    self.out
                        .push_str(if self.indent.is_empty() { ":" } else { ": " });
                    self.value(&Value::from_json(item), depth + 1)?;
                }
                self.close('}', map.is_empty(), depth);
            }
            Value::Json(Json::Array(_)) | Value::Array(_) | Value::Range(..) => {
                self.out.push('[');
                let items = value.to_items();
                for (i, item) in items.iter().enumerate() {
                    self.separator(i, depth + 1);
                    self.value(item, depth + 1)?;
                }
                self.close(']', items.is_empty(), depth);
            }
            Value::Json(scalar) => self.value(&Value::from_json(scalar), depth)?,
        }
        Ok(())
    }

    fn string(&mut self, s: &str) {
        // As JSON.stringify (and serde_json) escape: quotes, backslashes and control
        // characters, all ASCII, so the runs between them are copied whole.
        self.out.push('"');
        let mut from = 0;
        for (at, byte) in s.bytes().enumerate() {
            let short = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..=0x1f => "",
                _ => continue,
            };
            self.out.push_str(&s[from..at]);
            if short.is_empty() {
                let _ = write!(self.out, "\\u{byte:04x}");
            } else {
                self.out.push_str(short);
            }
            from = at + 1;
        }
        self.out.push_str(&s[from..]);
        self.out.push('"');
    }

    fn separator(&mut self, index: usize, depth: usize) {
        if index > 0 {
            self.out.push(',');
        }
        self.newline(depth);
    }

    fn newline(&mut self, depth: usize) {
        if !self.indent.is_empty() {
            self.out.push('\n');
            (0..depth).for_each(|_| self.out.push_str(self.indent));
        }
    }

    fn close(&mut self, bracket: char, empty: bool, depth: usize) {
        if !empty {
            self.newline(depth);
        }
        self.out.push(bracket);
    }
}
