//! Values across the sandbox's edge without JSON text in between: a JSON value goes in as the
//! value `JSON.parse` would make of its text, and the value the code gives comes out as the
//! JSON value the page's rules make of it, those of `JSON.stringify` held stricter.
//!
//! Written here rather than taken from a serde bridge because the rules are the workflow page's
//! own: `undefined` is null at the top and as a member, only plain objects, arrays, primitives
//! and what a `toJSON` gives may leave, a value nests at most 512 levels, and what leaves is
//! bounded by the size of its JSON text, counted exactly as `JSON.stringify` would write it.
//! Going straight from one value to the other skips writing and reading that text on both
//! sides, which was most of an evaluation's cost.
//!
//! A proxy is the one thing this side does not walk: its traps are the code's own, so a value
//! that holds one is read by the prelude's converter instead, through its JSON text. (Getters
//! read before the proxy was met are read again there; both reads are within the evaluation.)

use rquickjs::Type;
use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::object::Property;
use rquickjs::{Array, Atom, Ctx, Function, Object, Persistent, Value};
use serde_json::{Map, Number, Value as JsonValue};

use crate::budget::{VALUE_DEPTH_MAX, VALUE_TEXT_BYTES_MAX};
use crate::freeze::{freeze_object, prevent_extensions};
use crate::inputs::{InputCache, identity};
use crate::plain::{Plain, PlainShapes};

/// Why a value did not come out.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The code threw while the value was read (a getter, a `toJSON`); the exception is pending.
    Thrown(rquickjs::Error),
    /// JSON cannot carry it, in the words of an expression error.
    Cannot(String),
    /// Its JSON text would be larger than [`VALUE_TEXT_BYTES_MAX`].
    TooLarge,
}

impl From<rquickjs::Error> for Refusal {
    fn from(error: rquickjs::Error) -> Self {
        Self::Thrown(error)
    }
}

/// Why the walk stopped: a refusal, or a proxy that the prelude's converter must read.
enum Stop {
    Refused(Refusal),
    Proxy,
}

impl From<Refusal> for Stop {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<rquickjs::Error> for Stop {
    fn from(error: rquickjs::Error) -> Self {
        Self::Refused(Refusal::Thrown(error))
    }
}

/// A container of a frozen tree: its parent (none for the root) and where it sits in it (an
/// array's index, or an object's member in order).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub parent: Option<u32>,
    pub position: usize,
}

/// How [`to_js`] builds a tree to keep: members read-only, every container frozen, and each
/// container's node and identity noted in the order they were opened.
pub(crate) struct Frozen<'a> {
    pub nodes: &'a mut Vec<Node>,
    pub identities: &'a mut Vec<u64>,
}

/// The JavaScript value of `value`, as `JSON.parse` makes it of the value's text: objects with
/// the context's `Object.prototype` and their members defined (so a member named `__proto__`
/// is a member), arrays, numbers, strings, booleans and null. A value nesting deeper than
/// [`VALUE_DEPTH_MAX`] levels is a `RangeError`. The walk keeps its own stack, so a deep value
/// costs no thread stack. With `frozen`, the value is built frozen, as [`Frozen`] says. The
/// explicit stack and the value's kinds share one loop, which is why it is long.
pub(crate) fn to_js<'js>(
    ctx: &Ctx<'js>,
    value: &JsonValue,
    mut frozen: Option<&mut Frozen<'_>>,
) -> rquickjs::Result<Value<'js>> {
    /// A container being built, with what is left of its members.
    enum Open<'a, 'js> {
        Array(
            Array<'js>,
            std::iter::Enumerate<std::slice::Iter<'a, JsonValue>>,
        ),
        Object(Object<'js>, std::iter::Enumerate<serde_json::map::Iter<'a>>),
    }
    /// Where a value goes in its container.
    enum Slot<'a> {
        Index(usize),
        Name(usize, &'a str),
    }
    impl Slot<'_> {
        fn position(&self) -> usize {
            match self {
                Slot::Index(position) | Slot::Name(position, _) => *position,
            }
        }
    }
    // Each open container with where it goes and its node (when frozen).
    let mut stack: Vec<(Open<'_, 'js>, Option<Slot<'_>>, u32)> = Vec::new();
    let (mut value, mut slot) = (value, None);
    loop {
        // Enter the value: a leaf is made at once, a container opened.
        let open = match value {
            JsonValue::Array(items) => Some(Open::Array(
                Array::new(ctx.clone())?,
                items.iter().enumerate(),
            )),
            JsonValue::Object(members) => Some(Open::Object(
                Object::new(ctx.clone())?,
                members.iter().enumerate(),
            )),
            _ => None,
        };
        let mut made = match open {
            Some(open) => {
                if stack.len() >= VALUE_DEPTH_MAX {
                    return Err(rquickjs::Exception::throw_range(ctx, &nests_too_deep()));
                }
                let mut node = 0;
                if let Some(frozen) = frozen.as_deref_mut() {
                    node = u32::try_from(frozen.nodes.len()).unwrap_or(u32::MAX);
                    frozen.nodes.push(Node {
                        parent: stack.last().map(|(_, _, parent)| *parent),
                        position: slot.as_ref().map_or(0, Slot::position),
                    });
                    frozen.identities.push(0);
                }
                stack.push((open, slot.take(), node));
                None
            }
            None => Some((leaf_to_js(ctx, value)?, slot.take())),
        };
        // Hand what was made to its container, then find the next value, closing the
        // containers that are done.
        loop {
            let Some((open, _, _)) = stack.last_mut() else {
                return Ok(made.map_or_else(|| Value::new_null(ctx.clone()), |(v, _)| v));
            };
            match (&*open, made.take()) {
                (Open::Array(array, _), Some((member, Some(Slot::Index(index))))) => {
                    array.set(index, member)?;
                }
                (Open::Object(object, _), Some((member, Some(Slot::Name(_, name))))) => {
                    let property = if frozen.is_some() {
                        Property::from(member).enumerable()
                    } else {
                        Property::from(member)
                            .writable()
                            .enumerable()
                            .configurable()
                    };
                    object.prop(name, property)?;
                }
                _ => {}
            }
            let next = match open {
                Open::Array(_, items) => items.next().map(|(i, item)| (item, Slot::Index(i))),
                Open::Object(_, members) => members
                    .next()
                    .map(|(i, (name, member))| (member, Slot::Name(i, name.as_str()))),
            };
            if let Some((child, at)) = next {
                (value, slot) = (child, Some(at));
                break;
            }
            let (done, at, node) = stack.pop().expect("the stack was not empty above");
            let done = match done {
                Open::Array(array, _) => {
                    let array = array.into_value();
                    if frozen.is_some() {
                        freeze_object(ctx, &array)?;
                    }
                    array
                }
                Open::Object(object, _) => {
                    let object = object.into_value();
                    if frozen.is_some() {
                        prevent_extensions(ctx, &object)?;
                    }
                    object
                }
            };
            if let Some(frozen) = frozen.as_deref_mut()
                && let Some(slot) = frozen.identities.get_mut(node as usize)
            {
                *slot = identity(&done);
            }
            made = Some((done, at));
        }
    }
}

fn leaf_to_js<'js>(ctx: &Ctx<'js>, value: &JsonValue) -> rquickjs::Result<Value<'js>> {
    Ok(match value {
        JsonValue::Bool(b) => Value::new_bool(ctx.clone(), *b),
        JsonValue::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Value::new_int(ctx.clone(), i),
            None => Value::new_float(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        },
        JsonValue::String(s) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
        JsonValue::Null | JsonValue::Array(_) | JsonValue::Object(_) => {
            Value::new_null(ctx.clone())
        }
    })
}

fn nests_too_deep() -> String {
    format!("The value nests deeper than {VALUE_DEPTH_MAX} levels")
}

/// Where a member sits in its parent, for a `toJSON` and for the words of a refusal. A
/// member's name is not copied here: it is the name its parent, the last container open, is
/// reading.
#[derive(Clone, Copy, Debug)]
enum Key {
    Top,
    Index(usize),
    Member,
}

impl Key {
    fn text(self, open: &[Reading<'_>]) -> String {
        match self {
            Key::Top => String::new(),
            Key::Index(index) => index.to_string(),
            Key::Member => match open.last().map(|reading| &reading.walk) {
                Some(Walk::Members {
                    pending: Some(name),
                    ..
                }) => name.clone(),
                _ => String::new(),
            },
        }
    }

    /// ` (at "name")`, or nothing at the top.
    fn at(self, open: &[Reading<'_>]) -> String {
        match self {
            Key::Top => String::new(),
            other => format!(
                " (at {})",
                serde_json::to_string(&other.text(open)).unwrap_or_default()
            ),
        }
    }
}

/// A container being read: its object, where the walk is in it, and what it holds so far.
struct Reading<'js> {
    object: Object<'js>,
    walk: Walk<'js>,
}

enum Walk<'js> {
    Array {
        array: Array<'js>,
        length: f64,
        next: usize,
        items: Vec<JsonValue>,
    },
    Members {
        names: std::vec::IntoIter<Atom<'js>>,
        pending: Option<String>,
        members: Map<String, JsonValue>,
    },
}

/// What entering a value made: the value itself, or a container opened for reading.
enum Entered<'js> {
    Leaf(JsonValue),
    Opened(Reading<'js>),
}

/// Reads the value the code gave into a JSON value, counting its JSON text as it goes. The walk
/// keeps its own stack, so a value of 512 levels costs no thread stack.
pub(crate) struct Outgoing<'c, 'js> {
    /// The kept inputs, whose frozen objects are read from what they were built from.
    inputs: Option<&'c InputCache>,
    ctx: Ctx<'js>,
    /// What marks plain data: the walk's `Object.prototype`, and the quick read's shapes.
    shapes: PlainShapes,
    /// Whether the quick read of plain data is tried first.
    read_plain: bool,
    /// The prelude's `kindOf`: "a Map", "an object that is not plain".
    kind_of: &'c Persistent<Function<'static>>,
    /// The prelude's `toJsonText`, for a value that holds a proxy.
    to_json_text: &'c Persistent<Function<'static>>,
    to_json: Atom<'js>,
    length: Atom<'js>,
    /// Bytes of the JSON text so far.
    bytes: usize,
}

impl<'c, 'js> Outgoing<'c, 'js> {
    pub(crate) fn new(
        ctx: &Ctx<'js>,
        inputs: Option<&'c InputCache>,
        shapes: PlainShapes,
        read_plain: bool,
        kind_of: &'c Persistent<Function<'static>>,
        to_json_text: &'c Persistent<Function<'static>>,
    ) -> rquickjs::Result<Self> {
        Ok(Self {
            inputs,
            ctx: ctx.clone(),
            shapes,
            read_plain,
            kind_of,
            to_json_text,
            to_json: Atom::from_predefined(ctx.clone(), PredefinedAtom::ToJSON),
            length: Atom::from_predefined(ctx.clone(), PredefinedAtom::Length),
            bytes: 0,
        })
    }

    /// The JSON value of `value`.
    pub(crate) fn convert(&mut self, value: Value<'js>) -> Result<JsonValue, Refusal> {
        if let Some((json, bytes)) = self
            .read_plain
            .then(|| Plain::new(&self.ctx, self.shapes, self.inputs, self.bytes).read(&value))
            .flatten()
        {
            self.bytes = bytes;
            return Ok(json);
        }
        match self.walk(value.clone()) {
            Ok(json) => Ok(json),
            Err(Stop::Refused(refusal)) => Err(refusal),
            Err(Stop::Proxy) => {
                let to_json_text = self.to_json_text.clone().restore(&self.ctx)?;
                let text: rquickjs::String = to_json_text.call((value,))?;
                let text = text.to_string()?;
                if text.len() > VALUE_TEXT_BYTES_MAX {
                    return Err(Refusal::TooLarge);
                }
                crate::sandbox::parse_json(&text)
                    .map_err(|error| Refusal::Cannot(error.to_string()))
            }
        }
    }

    fn walk(&mut self, value: Value<'js>) -> Result<JsonValue, Stop> {
        let mut stack: Vec<Reading<'js>> = Vec::new();
        let mut next = Some((value, Key::Top));
        loop {
            let mut made = match next.take() {
                Some((value, key)) => match self.enter(value, key, &stack, true)? {
                    Entered::Leaf(json) => Some(json),
                    Entered::Opened(reading) => {
                        stack.push(reading);
                        None
                    }
                },
                None => None,
            };
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(made.unwrap_or(JsonValue::Null));
                };
                match &mut top.walk {
                    Walk::Array { items, .. } => items.extend(made.take()),
                    Walk::Members {
                        pending, members, ..
                    } => {
                        if let (Some(name), Some(member)) = (pending.take(), made.take()) {
                            members.insert(name, member);
                        }
                    }
                }
                if let Some(child) = self.next_child(top)? {
                    next = Some(child);
                    break;
                }
                let done = stack.pop().expect("the stack was not empty above");
                made = Some(match done.walk {
                    Walk::Array { items, .. } => JsonValue::Array(items),
                    Walk::Members { members, .. } => JsonValue::Object(members),
                });
            }
        }
    }

    /// The next member of the container being read, counting the text between members.
    fn next_child(
        &mut self,
        reading: &mut Reading<'js>,
    ) -> Result<Option<(Value<'js>, Key)>, Stop> {
        match &mut reading.walk {
            Walk::Array {
                array,
                length,
                next,
                ..
            } => {
                // An array's length is a whole number below 2^32; the text's bound ends a long
                // one.
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "indexes stay below 2^32, exact in a double"
                )]
                if (*next as f64) >= *length {
                    return Ok(None);
                }
                if *next > 0 {
                    self.count(1)?;
                }
                let index = *next;
                *next += 1;
                Ok(Some((array.get(index)?, Key::Index(index))))
            }
            Walk::Members {
                names,
                pending,
                members,
            } => {
                let Some(atom) = names.next() else {
                    return Ok(None);
                };
                // Through a string, whose text is read whole and checked: rquickjs's
                // `Atom::to_string` stops at a NUL and takes the rest as UTF-8 unchecked.
                let name = atom.to_js_string()?.to_string().map_err(|_| {
                    Stop::Refused(Refusal::Cannot(
                        "TypeError: JSON cannot carry a name that is not Unicode text, such as a lone surrogate"
                            .to_owned(),
                    ))
                })?;
                self.count(quoted_len(&name) + 1 + usize::from(!members.is_empty()))?;
                let member: Value<'js> = reading.object.get(atom)?;
                *pending = Some(name);
                Ok(Some((member, Key::Member)))
            }
        }
    }

    fn count(&mut self, bytes: usize) -> Result<(), Refusal> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > VALUE_TEXT_BYTES_MAX {
            return Err(Refusal::TooLarge);
        }
        Ok(())
    }

    fn cannot(kind: &str, key: Key, open: &[Reading<'_>]) -> Stop {
        Stop::Refused(Refusal::Cannot(format!(
            "TypeError: JSON cannot carry {kind}{}",
            key.at(open)
        )))
    }

    /// A leaf's JSON value, or a container opened; `toJSON` is called first unless the value
    /// is what a `toJSON` gave.
    fn enter(
        &mut self,
        value: Value<'js>,
        key: Key,
        open: &[Reading<'js>],
        call_to_json: bool,
    ) -> Result<Entered<'js>, Stop> {
        if value.is_proxy() {
            return Err(Stop::Proxy);
        }
        let json = match value.type_of() {
            Type::Uninitialized | Type::Undefined | Type::Null => {
                self.count(4)?;
                JsonValue::Null
            }
            Type::Bool => {
                let b = value.as_bool().unwrap_or_default();
                self.count(if b { 4 } else { 5 })?;
                JsonValue::Bool(b)
            }
            Type::Int => {
                let i = value.as_int().unwrap_or_default();
                self.count(decimal_len(i64::from(i)))?;
                JsonValue::from(i)
            }
            Type::Float => {
                let (number, bytes) = number_of(value.as_float().unwrap_or(f64::NAN));
                self.count(bytes)?;
                number
            }
            Type::String => {
                let text = value
                    .as_string()
                    .map(rquickjs::String::to_string)
                    .transpose()
                    .map_err(|_| {
                        Stop::Refused(Refusal::Cannot(format!(
                            "TypeError: JSON cannot carry a string that is not Unicode text, such as a lone surrogate{}",
                            key.at(open)
                        )))
                    })?
                    .unwrap_or_default();
                self.count(quoted_len(&text))?;
                JsonValue::String(text)
            }
            Type::BigInt => return Err(Self::cannot("a BigInt", key, open)),
            Type::Symbol => return Err(Self::cannot("a symbol", key, open)),
            Type::Function | Type::Constructor => {
                return Err(Self::cannot("a function", key, open));
            }
            Type::Module | Type::Unknown => {
                return Err(Self::cannot("an object that is not plain", key, open));
            }
            Type::Array | Type::Object | Type::Exception | Type::Promise | Type::Proxy => {
                let Some(object) = value.into_object() else {
                    return Err(Self::cannot("an object that is not plain", key, open));
                };
                return self.open(object, key, open, call_to_json);
            }
        };
        Ok(Entered::Leaf(json))
    }

    fn open(
        &mut self,
        object: Object<'js>,
        key: Key,
        open: &[Reading<'js>],
        call_to_json: bool,
    ) -> Result<Entered<'js>, Stop> {
        // A kept input's object is frozen, holds no function (so no `toJSON`) and no proxy, and
        // its prototype is frozen: its value is what it was built from.
        if let Some((source, measure)) = self
            .inputs
            .and_then(|inputs| inputs.source(identity(object.as_value())))
        {
            // As it is when it reads back the same, fits and nests within bounds; else read
            // as the walk reads, for the same value or the same refusal.
            if measure.fits(open.len(), self.bytes) {
                self.bytes += measure.bytes;
                return Ok(Entered::Leaf(source.clone()));
            }
            return Ok(Entered::Leaf(self.normalized(source, open.len())?));
        }
        if call_to_json {
            let to_json: Value<'js> = object.get(self.to_json.clone())?;
            if let Some(to_json) = to_json.as_function() {
                let replaced: Value<'js> = to_json.call((This(object.clone()), key.text(open)))?;
                return self.enter(replaced, key, open, false);
            }
        }
        if open.iter().any(|reading| reading.object == object) {
            return Err(Stop::Refused(Refusal::Cannot(
                "TypeError: circular reference".to_owned(),
            )));
        }
        if open.len() >= VALUE_DEPTH_MAX {
            return Err(Stop::Refused(Refusal::Cannot(format!(
                "RangeError: {}",
                nests_too_deep()
            ))));
        }
        self.count(2)?;
        let walk = match object.clone().into_array() {
            Some(array) => {
                let length: f64 = object.get(self.length.clone())?;
                Walk::Array {
                    array,
                    length,
                    next: 0,
                    // Room for what the length says, up to what a reader would not miss.
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        reason = "a length is a whole number below 2^32, clamped first"
                    )]
                    items: Vec::with_capacity(length.clamp(0.0, 4096.0) as usize),
                }
            }
            None => {
                if object
                    .get_prototype()
                    .is_some_and(|p| identity(p.as_value()) != self.shapes.object_prototype())
                {
                    let kind_of = self.kind_of.clone().restore(&self.ctx)?;
                    let kind: String = kind_of.call((object,))?;
                    return Err(Self::cannot(&kind, key, open));
                }
                let names = object
                    .keys::<Atom<'js>>()
                    .collect::<rquickjs::Result<Vec<_>>>()?;
                Walk::Members {
                    members: Map::with_capacity(names.len()),
                    names: names.into_iter(),
                    pending: None,
                }
            }
        };
        Ok(Entered::Opened(Reading { object, walk }))
    }
}

impl Outgoing<'_, '_> {
    /// `value`, which a kept input was built from, as the walk would read its frozen tree back
    /// at `depth` open containers: numbers as the engine holds them, names in the engine's
    /// order, the same text counted and the same depth refused. Keeps its own stack.
    fn normalized(&mut self, value: &JsonValue, depth: usize) -> Result<JsonValue, Refusal> {
        enum Open<'a> {
            Array(std::slice::Iter<'a, JsonValue>, Vec<JsonValue>),
            Object(
                std::vec::IntoIter<(&'a String, &'a JsonValue)>,
                Map<String, JsonValue>,
                Option<String>,
            ),
        }
        let mut stack: Vec<Open<'_>> = Vec::new();
        let mut next = Some(value);
        loop {
            let mut made = None;
            match next.take() {
                Some(JsonValue::Array(items)) => {
                    self.open_at(depth + stack.len())?;
                    stack.push(Open::Array(items.iter(), Vec::with_capacity(items.len())));
                }
                Some(JsonValue::Object(members)) => {
                    self.open_at(depth + stack.len())?;
                    // The engine keeps array-index names first, in ascending order, then the
                    // rest in the order they were written.
                    let mut ordered: Vec<(&String, &JsonValue)> = members.iter().collect();
                    if ordered.iter().any(|(name, _)| array_index(name).is_some()) {
                        ordered
                            .sort_by_key(|(name, _)| array_index(name).map_or((1, 0), |i| (0, i)));
                    }
                    stack.push(Open::Object(
                        ordered.into_iter(),
                        Map::with_capacity(members.len()),
                        None,
                    ));
                }
                Some(leaf) => made = Some(self.normalized_leaf(leaf)?),
                None => {}
            }
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(made.unwrap_or(JsonValue::Null));
                };
                match top {
                    Open::Array(items, out) => {
                        out.extend(made.take());
                        if let Some(item) = items.next() {
                            if !out.is_empty() {
                                self.count(1)?;
                            }
                            next = Some(item);
                            break;
                        }
                    }
                    Open::Object(members, out, pending) => {
                        if let (Some(name), Some(member)) = (pending.take(), made.take()) {
                            out.insert(name, member);
                        }
                        if let Some((name, member)) = members.next() {
                            self.count(quoted_len(name) + 1 + usize::from(!out.is_empty()))?;
                            *pending = Some(name.clone());
                            next = Some(member);
                            break;
                        }
                    }
                }
                made = Some(match stack.pop().expect("the stack was not empty above") {
                    Open::Array(_, out) => JsonValue::Array(out),
                    Open::Object(_, out, _) => JsonValue::Object(out),
                });
            }
        }
    }

    fn normalized_leaf(&mut self, value: &JsonValue) -> Result<JsonValue, Refusal> {
        Ok(match value {
            JsonValue::Bool(b) => {
                self.count(if *b { 4 } else { 5 })?;
                JsonValue::Bool(*b)
            }
            JsonValue::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                Some(i) => {
                    self.count(decimal_len(i64::from(i)))?;
                    JsonValue::from(i)
                }
                None => {
                    let (number, bytes) = number_of(n.as_f64().unwrap_or(f64::NAN));
                    self.count(bytes)?;
                    number
                }
            },
            JsonValue::String(text) => {
                self.count(quoted_len(text))?;
                JsonValue::String(text.clone())
            }
            JsonValue::Null | JsonValue::Array(_) | JsonValue::Object(_) => {
                self.count(4)?;
                JsonValue::Null
            }
        })
    }

    /// A container opened at `depth`: refused past [`VALUE_DEPTH_MAX`], then counted.
    fn open_at(&mut self, depth: usize) -> Result<(), Refusal> {
        if depth >= VALUE_DEPTH_MAX {
            return Err(Refusal::Cannot(format!("RangeError: {}", nests_too_deep())));
        }
        self.count(2)
    }
}

/// The index `name` stands for when it is an array index: the canonical decimal text of a
/// whole number below 2^32 - 1.
pub(crate) fn array_index(name: &str) -> Option<u32> {
    if name.is_empty() || name.len() > 10 || (name.len() > 1 && name.starts_with('0')) {
        return None;
    }
    if !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse::<u32>().ok().filter(|i| *i < u32::MAX)
}

/// The bytes of `text` as a JSON string: quotes, and the escapes `JSON.stringify` writes.
pub(crate) fn quoted_len(text: &str) -> usize {
    /// What each byte adds to its own one byte: `\"`-style escapes one, `\u00XX` five.
    const EXTRA: [u8; 256] = {
        let mut extra = [0u8; 256];
        let mut byte = 0;
        while byte < 0x20 {
            extra[byte] = 5;
            byte += 1;
        }
        extra[b'"' as usize] = 1;
        extra[b'\\' as usize] = 1;
        extra[b'\n' as usize] = 1;
        extra[b'\r' as usize] = 1;
        extra[b'\t' as usize] = 1;
        extra[0x08] = 1;
        extra[0x0c] = 1;
        extra
    };
    let escapes: usize = text
        .bytes()
        .map(|byte| usize::from(EXTRA[usize::from(byte)]))
        .sum();
    text.len() + 2 + escapes
}

pub(crate) fn decimal_len(i: i64) -> usize {
    let digits = i
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |l| l as usize + 1);
    digits + usize::from(i < 0)
}

/// A double as JSON: whole numbers of at most 2^53 as integers, numbers JSON lacks (NaN, the
/// infinities) as null, others as `JSON.stringify` writes them read back, with the length of
/// that text.
pub(crate) fn number_of(f: f64) -> (JsonValue, usize) {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if !f.is_finite() {
        return (JsonValue::Null, 4);
    }
    if f.fract() == 0.0 && f.abs() <= EXACT {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a whole number within 2^53 is exact as an i64"
        )]
        let i = f as i64;
        return (JsonValue::from(i), decimal_len(i));
    }
    let text = js_number_text(f);
    let number = serde_json::from_str::<Number>(&text).map_or(JsonValue::Null, JsonValue::Number);
    (number, text.len())
}

/// `Number.prototype.toString` of a finite double: its shortest digits, written plainly from
/// 10^-6 to 10^21 and with an exponent outside (ECMA-262, Number::toString).
fn js_number_text(f: f64) -> String {
    let scientific = format!("{:e}", f.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    // The page's n: the value is 0.d1d2...dk times 10^n.
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let sign = if f < 0.0 { "-" } else { "" };
    let body = if k <= n && n <= 21 {
        format!(
            "{digits}{}",
            "0".repeat(usize::try_from(n - k).unwrap_or(0))
        )
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(usize::try_from(n).unwrap_or(0));
        format!("{whole}.{fraction}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(usize::try_from(-n).unwrap_or(0)))
    } else {
        let e = n - 1;
        let e_sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{e_sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{e_sign}{}", e.abs())
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (f, text) in [
            (0.1, "0.1"),
            (-1.5, "-1.5"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (0.000_001, "0.000001"),
            (123_456.789, "123456.789"),
            (1.152_921_504_606_847e18, "1152921504606847000"),
            (-2.5e300, "-2.5e+300"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(js_number_text(f), text, "{f}");
        }
    }

    #[test]
    fn whole_numbers_within_2_53_are_integers() {
        assert_eq!(number_of(-0.0).0, JsonValue::from(0));
        assert_eq!(
            number_of(9_007_199_254_740_992.0).0,
            JsonValue::from(1_i64 << 53)
        );
        assert_eq!(number_of(f64::NAN), (JsonValue::Null, 4));
        let (big, bytes) = number_of(1.152_921_504_606_847e18);
        assert_eq!(big, JsonValue::from(1_152_921_504_606_847_000_u64));
        assert_eq!(bytes, 19);
    }

    #[test]
    fn strings_count_their_escapes() {
        assert_eq!(quoted_len("plain"), 7);
        assert_eq!(quoted_len("a\"b\\c\n"), 2 + 6 + 3);
        assert_eq!(quoted_len("\u{1}"), 2 + 6);
        assert_eq!(quoted_len("é"), 2 + 2);
    }
}
