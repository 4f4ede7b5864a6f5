//! Every limit the pages put on schemas, inputs and answers, each quoting its page.

/// "At most 65,536 bytes as JSON" (reasoning page, "Answers that are JSON"). Measured on the
/// compact serialization of the schema.
pub const SCHEMA_BYTES_MAX: usize = 65_536;

/// "at most 64 nested levels of objects and lists" (reasoning page, "Answers that are JSON").
/// The root object of a schema is level 1.
pub const SCHEMA_DEPTH_MAX: usize = 64;

/// "at most 1,000 values in one enum" (reasoning page, "Answers that are JSON").
pub const ENUM_VALUES_MAX: usize = 1_000;

/// "An answer may nest at most 128 levels deep." (reasoning page, "Answers that are JSON").
/// An object or a list at the top is level 1; a scalar alone is level 0.
pub const ANSWER_DEPTH_MAX: usize = 128;

/// "A definition shows at most 100 warnings." (reasoning page, "Answers that are JSON").
pub const WARNINGS_MAX: usize = 100;

/// "It lists at most 20, then one line that counts the rest." (reasoning page, "Answers that
/// are JSON", on the issues of an input or an answer that does not match).
pub const VALIDATION_ISSUES_SHOWN_MAX: usize = 20;

/// Google: "very large or deeply nested schemas may be rejected" (reasoning page). Google
/// publishes no number; past this size we warn. Our own threshold, not the provider's.
pub const GOOGLE_SCHEMA_BYTES_WARN: usize = 16_384;

/// Google's caveat again, for depth: past this many nested levels of objects and lists we
/// warn. Our own threshold, not the provider's.
pub const GOOGLE_SCHEMA_DEPTH_WARN: usize = 32;

/// At most this many enum values are named in one validation message; the rest are counted.
pub const ENUM_VALUES_NAMED_MAX: usize = 10;

/// OpenAI, Structured Outputs, "Supported schemas": "A schema may have up to 5000 object
/// properties total, with up to 10 levels of nesting." Past these we warn.
pub const OPENAI_PROPERTIES_MAX: usize = 5_000;

/// OpenAI's nesting limit (see [`OPENAI_PROPERTIES_MAX`]), counted in objects within objects.
pub const OPENAI_OBJECT_DEPTH_MAX: usize = 10;

/// OpenAI, Structured Outputs, "Supported schemas": "A schema may have up to 1000 enum values
/// across all enum properties." Past this we warn.
pub const OPENAI_ENUM_VALUES_MAX: usize = 1_000;

/// Anthropic, "Structured outputs", schema complexity limits: at most 24 optional parameters
/// across the strict schemas of a request. Past this we warn. (Read through a converter's
/// documentation that quotes the page; re-check against Anthropic's own.)
pub const ANTHROPIC_OPTIONAL_PROPERTIES_MAX: usize = 24;

/// Anthropic's other complexity limit: at most 16 parameters that use `anyOf` or a list of
/// types. Past this we warn.
pub const ANTHROPIC_UNION_SCHEMAS_MAX: usize = 16;
