//! The library an expression or a program sees: the global names the sandbox keeps, which are
//! also the names the save-time check accepts without a place offering them.
//!
//! The workflow page: "The library is the language's own, ES2023 and more ... Absent:
//! Math.random, eval, Function, WeakRef, FinalizationRegistry, Promise, console, fetch, timers,
//! Intl, modules and every local-time method of Date." QuickJS has no console, fetch, timers or
//! Intl to begin with. Beyond the page, the sandbox also drops what QuickJS adds outside the
//! language or what needs threads or promises to be of use: `InternalError` (so that a thrown
//! value cannot pass for the engine's out-of-memory error), `queueMicrotask`, `Atomics`,
//! `SharedArrayBuffer`, `AsyncDisposableStack`, `performance` and `navigator`. A test checks
//! that this list is exactly the sandbox's global object.

/// Every global name of the sandbox, sorted.
pub const LIBRARY_GLOBALS: &[&str] = &[
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "DisposableStack",
    "Error",
    "EvalError",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "Iterator",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "String",
    "SuppressedError",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakSet",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "globalThis",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "undefined",
    "unescape",
];

/// Whether `name` is a global of the sandbox's library.
pub fn is_library_global(name: &str) -> bool {
    LIBRARY_GLOBALS.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_for_binary_search() {
        assert!(LIBRARY_GLOBALS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(is_library_global("Math"));
        assert!(!is_library_global("eval"));
    }
}
