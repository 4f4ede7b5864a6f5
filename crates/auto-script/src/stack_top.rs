//! QuickJS refuses code whose stack reaches past a limit below a top it records (the
//! sandbox's [`SANDBOX_STACK_BYTES_MAX`](crate::SANDBOX_STACK_BYTES_MAX)). rquickjs records the
//! top again on each entry into a context only with its `parallel` feature, which this runtime
//! does not use, so the top stayed where the thread made its sandbox: code run deeper in the
//! thread's stack than that, by more than the limit, failed with "Maximum call stack size
//! exceeded" (a workflow step run deep in a server's task did, in the Studio's browser test).
//! This module records it from the entry, with QuickJS's own `JS_UpdateStackTop`, and enters
//! on a stack grown for the purpose when the thread has less than the limit left, so the
//! limit QuickJS checks is always one the thread can give.
#![allow(unsafe_code)]

use rquickjs::{Context, Ctx, qjs};

use crate::SANDBOX_STACK_BYTES_MAX;

/// Stack besides the code's own that an entry takes: QuickJS's frames around the code, the
/// conversions of its inputs and value, and the host's hooks.
const ENTRY_STACK_BYTES: usize = 256 * 1024;

/// Enters `context` with QuickJS's stack measured from here.
pub(crate) fn entered<R>(context: &Context, f: impl for<'js> FnOnce(Ctx<'js>) -> R) -> R {
    let needed = SANDBOX_STACK_BYTES_MAX + ENTRY_STACK_BYTES;
    stacker::maybe_grow(needed, needed, || {
        context.with(|ctx| {
            // SAFETY: the context is entered on this thread, so its runtime is alive and held
            // by this thread until `with` returns.
            unsafe { qjs::JS_UpdateStackTop(qjs::JS_GetRuntime(ctx.as_raw().as_ptr())) };
            f(ctx)
        })
    })
}
