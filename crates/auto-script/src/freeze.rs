//! The deep freeze that ends a sandbox's preparation: every object reachable from the roots,
//! through prototypes and through the value, getter and setter of every own property, string
//! or symbol keyed, is frozen.
//!
//! The walk reads each property's descriptor into a plain C struct with QuickJS's
//! `JS_GetOwnProperty`, where the same walk in JavaScript made a descriptor object for each
//! property and a key array for each object: most of a fresh sandbox's cost. rquickjs has no
//! descriptor API (its property iterators call getters), hence the direct calls.
#![allow(unsafe_code)]

use std::collections::HashSet;
use std::ffi::c_void;
use std::mem::MaybeUninit;

use rquickjs::{Ctx, Error, Result, Value, qjs};

/// Freezes every object reachable from `roots` (see the module's documentation).
pub(crate) fn freeze_reachable<'js>(ctx: &Ctx<'js>, roots: Vec<Value<'js>>) -> Result<()> {
    let raw = ctx.as_raw().as_ptr();
    // Every value walked is kept until the walk ends, so no object in `seen` can be freed and
    // its address reused by another while the walk runs.
    let mut walked: Vec<Value<'js>> = Vec::with_capacity(1024);
    let mut seen: HashSet<*mut c_void> = HashSet::with_capacity(1024);
    let mut pending = roots;
    while let Some(item) = pending.pop() {
        let Some(object) = item.as_object() else {
            continue;
        };
        let value = item.as_raw();
        // SAFETY: `value` is an object (checked above), so its pointer is its `JSObject`.
        let pointer = unsafe { qjs::JS_VALUE_GET_PTR(value) };
        if !seen.insert(pointer) {
            continue;
        }
        // SAFETY: `raw` is the live context `ctx` stands for, and `value` an object of it that
        // `item` keeps alive across the call.
        if unsafe { qjs::JS_FreezeObject(raw, value) } < 0 {
            return Err(Error::Exception);
        }
        if let Some(prototype) = object.get_prototype() {
            pending.push(prototype.into_value());
        }
        push_properties(ctx, value, &mut pending)?;
        walked.push(item);
    }
    Ok(())
}

/// Pushes onto `pending` the value, getter and setter of every own property of `object` that
/// is an object.
fn push_properties<'js>(
    ctx: &Ctx<'js>,
    object: qjs::JSValue,
    pending: &mut Vec<Value<'js>>,
) -> Result<()> {
    let raw = ctx.as_raw().as_ptr();
    let mut table: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
    let mut count: u32 = 0;
    let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SYMBOL_MASK) as i32;
    // SAFETY: `raw` is live and `object` an object of it, alive across the call. On success
    // the table holds `count` entries, allocated by the context, and is freed below with
    // `JS_FreePropertyEnum`, which frees the atoms too.
    if unsafe { qjs::JS_GetOwnPropertyNames(raw, &raw mut table, &raw mut count, object, flags) }
        < 0
    {
        return Err(Error::Exception);
    }
    let mut outcome = Ok(());
    for index in 0..count as usize {
        // SAFETY: `index` is below `count`, the table's length.
        let atom = unsafe { (*table.add(index)).atom };
        let mut descriptor = MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
        // SAFETY: `raw` is live, `object` an object of it and `atom` one of its own keys, kept
        // by the table. When `JS_GetOwnProperty` gives 1 it has filled the descriptor: its
        // value, getter and setter are each a new reference (or undefined), which `from_raw`
        // takes over so that dropping the `Value` frees it.
        let found = unsafe { qjs::JS_GetOwnProperty(raw, descriptor.as_mut_ptr(), object, atom) };
        if found < 0 {
            outcome = Err(Error::Exception);
            break;
        }
        if found == 0 {
            continue;
        }
        // SAFETY: `JS_GetOwnProperty` gave 1, so it filled the descriptor.
        let descriptor = unsafe { descriptor.assume_init() };
        for member in [descriptor.value, descriptor.getter, descriptor.setter] {
            // SAFETY: see above: each is a reference the descriptor owns.
            let member = unsafe { Value::from_raw(ctx.clone(), member) };
            if member.is_object() {
                pending.push(member);
            }
        }
    }
    // SAFETY: the table and its `count` atoms came from `JS_GetOwnPropertyNames` above and
    // are freed once.
    unsafe { qjs::JS_FreePropertyEnum(raw, table, count) };
    outcome
}

/// Freezes `value`, an object of `ctx`, as `Object.freeze` does: a kept input's array (see
/// inputs.rs), without a call into JavaScript.
pub(crate) fn freeze_object(ctx: &Ctx<'_>, value: &Value<'_>) -> Result<()> {
    apply(ctx, value, qjs::JS_FreezeObject)
}

/// Makes `value`, an object of `ctx`, non-extensible, as `Object.preventExtensions` does: a kept
/// input's object, whose members were defined read-only, is then frozen.
pub(crate) fn prevent_extensions(ctx: &Ctx<'_>, value: &Value<'_>) -> Result<()> {
    apply(ctx, value, qjs::JS_PreventExtensions)
}

/// Calls `operation`, one of QuickJS's integrity calls, on `value` when it is an object.
fn apply(
    ctx: &Ctx<'_>,
    value: &Value<'_>,
    operation: unsafe extern "C" fn(*mut qjs::JSContext, qjs::JSValue) -> std::os::raw::c_int,
) -> Result<()> {
    if !value.is_object() {
        return Ok(());
    }
    // SAFETY: `ctx` is live and `value` an object of it, which the borrow keeps alive across
    // the call; the integrity calls take no reference.
    if unsafe { operation(ctx.as_raw().as_ptr(), value.as_raw()) } < 0 {
        return Err(Error::Exception);
    }
    Ok(())
}
