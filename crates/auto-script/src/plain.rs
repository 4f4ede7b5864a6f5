//! The quick read of what an evaluation gives back, when it is plain data.
//!
//! Most values an expression gives back are JSON-shaped already: plain objects and arrays of
//! strings, numbers, booleans and null. The walk in `convert.rs` reads any value as
//! `JSON.stringify` would, calling getters and `toJSON`, through rquickjs handles that each
//! take a reference to their value and their context; for a small object that is most of what
//! giving it back costs. This read takes the same value through QuickJS's own calls instead,
//! reading each property's descriptor (which runs no getter), and gives up, returning `None`,
//! at the first thing that is not plain data:
//!
//! - a getter or a setter, or an own `toJSON`;
//! - an object that is neither an ordinary object whose prototype is `Object.prototype` or
//!   null, nor an array whose prototype is `Array.prototype` (both frozen, so neither holds a
//!   `toJSON`): a proxy, a function, a Map, a Date, an instance of a class;
//! - a BigInt, a symbol, a string that is not Unicode text;
//! - a cycle, nesting past [`PLAIN_DEPTH_MAX`], text past the 16 MiB bound;
//! - anything QuickJS refuses (memory), whose exception it clears.
//!
//! It gives up before any of the value's own code could run, so giving up leaves no trace, and
//! the walk then reads the value from the start: the same value, or the same refusal. Where it
//! does not give up it gives what the walk gives: the same members in the same order, the same
//! numbers, and the same count of JSON text. A kept input's object is taken from what it was
//! built from, under the same conditions as the walk takes it.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use rquickjs::{Ctx, Value, qjs};
use serde_json::{Map, Value as JsonValue};

use crate::budget::VALUE_TEXT_BYTES_MAX;
use crate::convert::{decimal_len, number_of, quoted_len};
use crate::inputs::InputCache;

/// How deep this read follows a value before it leaves the rest to the walk, which keeps its
/// own stack: this read recurses, a frame a level.
pub(crate) const PLAIN_DEPTH_MAX: usize = 64;

/// What marks plain data in one context: the identities of its `Object.prototype` and
/// `Array.prototype`, which live as long as the context, and the classes of the two.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlainShapes {
    object_prototype: u64,
    array_prototype: u64,
    object_class: u32,
    array_class: u32,
    /// The atom `toJSON`, one of QuickJS's predefined atoms, which are never freed.
    to_json: qjs::JSAtom,
}

impl PlainShapes {
    /// The shapes of the context of `object_prototype` and `array_prototype`, which must be
    /// that context's `Object.prototype` and `Array.prototype`.
    pub(crate) fn of(
        ctx: &Ctx<'_>,
        object_prototype: &Value<'_>,
        array_prototype: &Value<'_>,
    ) -> Option<Self> {
        if !object_prototype.is_object() || !array_prototype.is_object() {
            return None;
        }
        let raw = ctx.as_raw().as_ptr();
        // SAFETY: both are live objects of `ctx`; `JS_GetClassID` only reads the object, and
        // `JS_NewAtom` reads a NUL-terminated text. `toJSON` is predefined, so the atom it
        // gives is a constant that needs no freeing.
        let (object_class, array_class, to_json) = unsafe {
            (
                qjs::JS_GetClassID(object_prototype.as_raw()),
                qjs::JS_GetClassID(array_prototype.as_raw()),
                qjs::JS_NewAtom(raw, c"toJSON".as_ptr()),
            )
        };
        Some(Self {
            object_prototype: address(object_prototype.as_raw()),
            array_prototype: address(array_prototype.as_raw()),
            object_class,
            array_class,
            to_json,
        })
    }
}

impl PlainShapes {
    /// The identity of the context's `Object.prototype`.
    pub(crate) fn object_prototype(self) -> u64 {
        self.object_prototype
    }
}

/// The address of the object `value` holds: its identity, as [`crate::inputs::identity`]
/// gives it.
fn address(value: qjs::JSValue) -> u64 {
    // SAFETY: reading the pointer of a value's union only reads bits; it is used as a number.
    unsafe { qjs::JS_VALUE_GET_PTR(value) as u64 }
}

/// One read of a value the code gave back.
pub(crate) struct Plain<'c> {
    raw: *mut qjs::JSContext,
    shapes: PlainShapes,
    inputs: Option<&'c InputCache>,
    /// Bytes of the JSON text so far.
    bytes: usize,
    /// The identities of the containers open, outermost first.
    open: Vec<u64>,
}

impl<'c> Plain<'c> {
    pub(crate) fn new(
        ctx: &Ctx<'_>,
        shapes: PlainShapes,
        inputs: Option<&'c InputCache>,
        bytes: usize,
    ) -> Self {
        Self {
            raw: ctx.as_raw().as_ptr(),
            shapes,
            inputs,
            bytes,
            open: Vec::new(),
        }
    }

    /// The JSON value of `value` and the bytes counted with it, or `None` where the walk must
    /// read it. `value` must belong to the context this read was made for.
    pub(crate) fn read(mut self, value: &Value<'_>) -> Option<(JsonValue, usize)> {
        let json = self.value(value.as_raw())?;
        Some((json, self.bytes))
    }

    fn count(&mut self, bytes: usize) -> Option<()> {
        self.bytes = self.bytes.saturating_add(bytes);
        (self.bytes <= VALUE_TEXT_BYTES_MAX).then_some(())
    }

    /// Gives up after a QuickJS call failed, clearing the exception it left.
    fn failed<T>(&self) -> Option<T> {
        // SAFETY: the context is live; the exception taken is a new reference, freed at once.
        unsafe {
            let exception = qjs::JS_GetException(self.raw);
            qjs::JS_FreeValue(self.raw, exception);
        }
        None
    }

    /// `value` is borrowed: this read neither keeps nor frees it.
    fn value(&mut self, value: qjs::JSValue) -> Option<JsonValue> {
        // SAFETY: reading a value's tag only reads bits.
        let tag = unsafe { qjs::JS_VALUE_GET_TAG(value) };
        match tag {
            qjs::JS_TAG_NULL | qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_UNINITIALIZED => {
                self.count(4)?;
                Some(JsonValue::Null)
            }
            qjs::JS_TAG_BOOL => {
                // SAFETY: the tag says the value is a boolean.
                let b = unsafe { qjs::JS_VALUE_GET_BOOL(value) };
                self.count(if b { 4 } else { 5 })?;
                Some(JsonValue::Bool(b))
            }
            qjs::JS_TAG_INT => {
                // SAFETY: the tag says the value is an int.
                let i = unsafe { qjs::JS_VALUE_GET_INT(value) };
                self.count(decimal_len(i64::from(i)))?;
                Some(JsonValue::from(i))
            }
            qjs::JS_TAG_FLOAT64 => {
                // SAFETY: the tag says the value is a double.
                let (number, bytes) = number_of(unsafe { qjs::JS_VALUE_GET_FLOAT64(value) });
                self.count(bytes)?;
                Some(number)
            }
            qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => {
                let text = self.text(value)?;
                self.count(quoted_len(&text))?;
                Some(JsonValue::String(text))
            }
            qjs::JS_TAG_OBJECT => self.object(value),
            _ => None,
        }
    }

    /// A string value's text, if it is Unicode text.
    fn text(&self, value: qjs::JSValue) -> Option<String> {
        let mut length: qjs::size_t = 0;
        // SAFETY: the context is live and `value` a string of it.
        let pointer = unsafe { qjs::JS_ToCStringLen2(self.raw, &raw mut length, value, false) };
        self.owned_text(pointer, length)
    }

    /// The Unicode text of the C string QuickJS gave, which this frees; `None` for text that is
    /// not Unicode or for no string at all (after a failure).
    fn owned_text(&self, pointer: *const std::ffi::c_char, length: qjs::size_t) -> Option<String> {
        if pointer.is_null() {
            return self.failed();
        }
        // SAFETY: a non-null pointer from QuickJS's string calls points to `length` bytes that
        // stay valid until `JS_FreeCString`, called once below after they are copied.
        unsafe {
            let text = usize::try_from(length).ok().and_then(|length| {
                let bytes = std::slice::from_raw_parts(pointer.cast::<u8>(), length);
                std::str::from_utf8(bytes).ok().map(str::to_owned)
            });
            qjs::JS_FreeCString(self.raw, pointer);
            text
        }
    }

    fn object(&mut self, value: qjs::JSValue) -> Option<JsonValue> {
        let identity = address(value);
        if let Some((source, measure)) = self.inputs.and_then(|inputs| inputs.source(identity)) {
            // As the walk takes a kept object; anything else is the walk's to read.
            if measure.fits(self.open.len(), self.bytes) {
                self.bytes += measure.bytes;
                return Some(source.clone());
            }
            return None;
        }
        if self.open.len() >= PLAIN_DEPTH_MAX || self.open.contains(&identity) {
            return None;
        }
        // SAFETY: `value` is a live object of the context; `JS_GetClassID` only reads it.
        let class = unsafe { qjs::JS_GetClassID(value) };
        let is_array = class == self.shapes.array_class;
        if !is_array && class != self.shapes.object_class {
            return None;
        }
        // SAFETY: for an object that is not a proxy (its class is checked above) this reads
        // the prototype from the object's shape and gives a new reference, freed at once.
        let prototype = unsafe {
            let prototype = qjs::JS_GetPrototype(self.raw, value);
            let identity = match qjs::JS_VALUE_GET_TAG(prototype) {
                qjs::JS_TAG_OBJECT => Some(address(prototype)),
                qjs::JS_TAG_NULL => None,
                _ => {
                    qjs::JS_FreeValue(self.raw, prototype);
                    return self.failed();
                }
            };
            qjs::JS_FreeValue(self.raw, prototype);
            identity
        };
        let plain = if is_array {
            prototype == Some(self.shapes.array_prototype)
        } else {
            prototype.is_none_or(|p| p == self.shapes.object_prototype)
        };
        if !plain {
            return None;
        }
        // SAFETY: a null descriptor asks only whether the own property exists; the atom is a
        // predefined one.
        match unsafe {
            qjs::JS_GetOwnProperty(self.raw, std::ptr::null_mut(), value, self.shapes.to_json)
        } {
            0 => {}
            found if found < 0 => return self.failed(),
            _ => return None,
        }
        self.count(2)?;
        self.open.push(identity);
        let made = if is_array {
            self.items(value)
        } else {
            self.members(value)
        };
        self.open.pop();
        made
    }

    /// The value of an own data property, or `None` for a getter or setter; `Some(None)` when
    /// there is no such property.
    fn own(&mut self, object: qjs::JSValue, atom: qjs::JSAtom) -> Option<Option<JsonValue>> {
        let mut descriptor = MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
        // SAFETY: the context is live, `object` an ordinary object or array of it and `atom`
        // a live atom. When the call gives 1 it has filled the descriptor, whose value, getter
        // and setter are each a new reference (or undefined), all freed below.
        let found =
            unsafe { qjs::JS_GetOwnProperty(self.raw, descriptor.as_mut_ptr(), object, atom) };
        if found < 0 {
            return self.failed();
        }
        if found == 0 {
            return Some(None);
        }
        // SAFETY: the call gave 1, so it filled the descriptor.
        let descriptor = unsafe { descriptor.assume_init() };
        let made = if descriptor.flags & qjs::JS_PROP_GETSET as i32 == 0 {
            self.value(descriptor.value).map(Some)
        } else {
            None
        };
        // SAFETY: the descriptor's three references are freed once, here.
        unsafe {
            qjs::JS_FreeValue(self.raw, descriptor.value);
            qjs::JS_FreeValue(self.raw, descriptor.getter);
            qjs::JS_FreeValue(self.raw, descriptor.setter);
        }
        made
    }

    fn items(&mut self, array: qjs::JSValue) -> Option<JsonValue> {
        let mut length: i64 = 0;
        // SAFETY: the context is live and `array` an array of it, whose length is an own
        // data property.
        if unsafe { qjs::JS_GetLength(self.raw, array, &raw mut length) } < 0 {
            return self.failed();
        }
        let length = u32::try_from(length).ok()?;
        let mut items = Vec::with_capacity(length.min(4096) as usize);
        for index in 0..length {
            if index > 0 {
                self.count(1)?;
            }
            // SAFETY: the context is live; the atom made is freed once, after its use.
            let atom = unsafe { qjs::JS_NewAtomUInt32(self.raw, index) };
            if atom == qjs::JS_ATOM_NULL {
                return self.failed();
            }
            let item = self.own(array, atom);
            // SAFETY: see above.
            unsafe { qjs::JS_FreeAtom(self.raw, atom) };
            // A hole reads as `undefined`: the prototypes above hold no indexes.
            items.push(match item? {
                Some(item) => item,
                None => {
                    self.count(4)?;
                    JsonValue::Null
                }
            });
        }
        Some(JsonValue::Array(items))
    }

    fn members(&mut self, object: qjs::JSValue) -> Option<JsonValue> {
        let mut table: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
        let mut count: u32 = 0;
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as i32;
        // SAFETY: the context is live and `object` an ordinary object of it. On success the
        // table holds `count` entries and is freed below with `JS_FreePropertyEnum`, which
        // frees its atoms too.
        if unsafe {
            qjs::JS_GetOwnPropertyNames(self.raw, &raw mut table, &raw mut count, object, flags)
        } < 0
        {
            return self.failed();
        }
        let made = self.members_of(object, table, count);
        // SAFETY: the table came from `JS_GetOwnPropertyNames` above and is freed once.
        unsafe { qjs::JS_FreePropertyEnum(self.raw, table, count) };
        made
    }

    fn members_of(
        &mut self,
        object: qjs::JSValue,
        table: *const qjs::JSPropertyEnum,
        count: u32,
    ) -> Option<JsonValue> {
        let mut members = Map::with_capacity(count as usize);
        for index in 0..count as usize {
            // SAFETY: `index` is below `count`, the table's length.
            let atom = unsafe { (*table.add(index)).atom };
            let name = self.name(atom)?;
            self.count(quoted_len(&name) + 1 + usize::from(!members.is_empty()))?;
            // A name the table gave that is gone would be a change no code made: give up.
            let member = self.own(object, atom)??;
            members.insert(name, member);
        }
        Some(JsonValue::Object(members))
    }

    /// A property name's text, if it is Unicode text.
    fn name(&self, atom: qjs::JSAtom) -> Option<String> {
        let mut length: qjs::size_t = 0;
        // SAFETY: the context is live and `atom` a live atom.
        let pointer = unsafe { qjs::JS_AtomToCStringLen(self.raw, &raw mut length, atom) };
        self.owned_text(pointer, length)
    }
}
