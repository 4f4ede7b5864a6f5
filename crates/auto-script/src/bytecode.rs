//! The prelude as QuickJS bytecode: parsed once per process, then read into each new context,
//! which costs a fraction of parsing its text again (a fresh sandbox is built for every
//! evaluation that spoiled the last one, and for every thread).
//!
//! rquickjs offers bytecode for modules only, and reads even those through an `unsafe`
//! function; the prelude is a script whose value is the host's hooks, so this module calls
//! QuickJS's own `JS_Eval` (compile only), `JS_WriteObject`, `JS_ReadObject` and
//! `JS_EvalFunction` directly. The bytes read are only ever those this process wrote from
//! the prelude compiled in it, with the QuickJS it is linked with.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::sync::OnceLock;

use rquickjs::{Ctx, Error, Result, Value, qjs};

/// The prelude's bytecode, written by the first context of the process that needed it.
static PRELUDE_BYTECODE: OnceLock<Vec<u8>> = OnceLock::new();

/// Runs the script `source` (strict, global, named `file`, a backtrace barrier) in `ctx` and gives its value, from
/// the bytecode compiled the first time; `source` must be the same text at every call (the
/// prelude).
pub(crate) fn run_prelude<'js>(ctx: &Ctx<'js>, source: &str, file: &str) -> Result<Value<'js>> {
    let bytes = match PRELUDE_BYTECODE.get() {
        Some(bytes) => bytes,
        None => {
            let written = compile(ctx, source, file)?;
            PRELUDE_BYTECODE.get_or_init(|| written)
        }
    };
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is the live context `ctx` stands for. The bytes are what `compile` wrote
    // in this process with this same QuickJS, so they are well-formed bytecode for it: the
    // one input `JS_ReadObject`'s bytecode flag must be given. Its result is a new reference,
    // which `JS_EvalFunction` takes over (it frees the function).
    let result = unsafe {
        let function = qjs::JS_ReadObject(
            raw,
            bytes.as_ptr(),
            bytes.len() as qjs::size_t,
            qjs::JS_READ_OBJ_BYTECODE as i32,
        );
        if qjs::JS_IsException(function) {
            return Err(Error::Exception);
        }
        qjs::JS_EvalFunction(raw, function)
    };
    owned(ctx, result)
}

/// Compiles `source` in `ctx` without running it and writes the function as bytecode.
fn compile(ctx: &Ctx<'_>, source: &str, file: &str) -> Result<Vec<u8>> {
    let raw = ctx.as_raw().as_ptr();
    let source = CString::new(source)?;
    let file = CString::new(file)?;
    // As `EvalOptions` with `global`, `strict` and `backtrace_barrier` (which the bytecode
    // keeps), compiled only.
    let flags = qjs::JS_EVAL_TYPE_GLOBAL
        | qjs::JS_EVAL_FLAG_STRICT
        | qjs::JS_EVAL_FLAG_BACKTRACE_BARRIER
        | qjs::JS_EVAL_FLAG_COMPILE_ONLY;
    // SAFETY: `raw` is the live context `ctx` stands for; `source` and `file` are
    // NUL-terminated and outlive the call, and the length excludes the NUL, as `JS_Eval`
    // requires. The result is a new reference, which `owned` takes over.
    let function = unsafe {
        qjs::JS_Eval(
            raw,
            source.as_ptr(),
            source.as_bytes().len() as qjs::size_t,
            file.as_ptr(),
            flags as i32,
        )
    };
    let function = owned(ctx, function)?;
    let mut length = 0;
    // SAFETY: `raw` is live and `function` is a value of it, kept alive across the call;
    // `JS_WriteObject` gives a buffer of `length` bytes allocated by the context (or null,
    // with an exception pending), which is copied and then freed with the context's `js_free`.
    unsafe {
        let buffer = qjs::JS_WriteObject(
            raw,
            &raw mut length,
            function.as_raw(),
            qjs::JS_WRITE_OBJ_BYTECODE as i32,
        );
        if buffer.is_null() {
            return Err(Error::Exception);
        }
        let bytes = usize::try_from(length)
            .map(|length| std::slice::from_raw_parts(buffer, length).to_vec());
        qjs::js_free(raw, buffer.cast());
        bytes.map_err(|_| Error::Unknown)
    }
}

/// `value`, a new reference in `ctx`, as a [`Value`] that frees it, or the pending exception.
fn owned<'js>(ctx: &Ctx<'js>, value: qjs::JSValue) -> Result<Value<'js>> {
    // SAFETY: `value` comes from a QuickJS call on `ctx` that returns a new reference;
    // `from_raw` takes that reference over. An exception value holds no reference.
    unsafe {
        if qjs::JS_IsException(value) {
            return Err(Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), value))
    }
}
