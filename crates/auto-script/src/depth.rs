//! Room for the compiler's recursion: oxc parses, analyses, transforms and prints by recursive
//! descent, one frame per level of nesting, with no limit of its own, so `((((1))))` nested a
//! few thousand deep would overflow a thread's stack and abort the process. Scripts are bounded
//! by the document's size, and the compiler's work runs on a stack sized for its text's length
//! when the thread has less left.

/// "Source document: 65,536 bytes in UTF-8" (workflow page, "Limits"): no expression or
/// program can be longer than the document that holds it.
pub const SCRIPT_BYTES_MAX: usize = 65_536;

/// Stack the compiler's work may take for each byte of text: nesting one level deeper takes at
/// least one byte (`!`, `(`) and well under this much stack in every phase. The deepest texts of
/// [`SCRIPT_BYTES_MAX`] bytes (parentheses, brackets, unary operators, arrows) pass with it.
pub const COMPILER_STACK_BYTES_PER_TEXT_BYTE: usize = 4 * 1024;

/// Stack the compiler's work takes whatever the text.
pub const COMPILER_STACK_BYTES_BASE: usize = 256 * 1024;

/// Runs `work`, the compiler's work on a text of `text_bytes`, on this thread's stack when it
/// has room enough left, or else on a stack grown for it. A grown stack is reserved address
/// space; only the pages the recursion touches take memory.
pub(crate) fn with_compiler_stack<R>(text_bytes: usize, work: impl FnOnce() -> R) -> R {
    let needed = COMPILER_STACK_BYTES_BASE.saturating_add(
        text_bytes
            .min(SCRIPT_BYTES_MAX)
            .saturating_mul(COMPILER_STACK_BYTES_PER_TEXT_BYTE),
    );
    stacker::maybe_grow(needed, needed, work)
}
