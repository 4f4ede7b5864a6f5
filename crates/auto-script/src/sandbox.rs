//! The QuickJS sandbox expressions and computation programs run in: one runtime and one
//! prepared, deep-frozen context per thread, reused across evaluations, with the workflow
//! page's budgets of work, time and memory, the recorded clock, and JSON values in and out.
//!
//! Architecture invariant: nothing an evaluation does survives it. The context's intrinsics
//! are frozen, so are the inputs kept for the next evaluation (see inputs.rs), each expression
//! runs as a strict function whose `$` names are its parameters,
//! and a context that an evaluation left with queued promise jobs is thrown away and built anew
//! before the next one.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use foldhash::fast::RandomState;
use rquickjs::context::EvalOptions;
use rquickjs::context::intrinsic::{
    Date, Eval, Json, MapSet, Promise, Proxy, RegExp, RegExpCompiler, TypedArrays,
};
use rquickjs::function::Args;
use rquickjs::{Array, Context, Ctx, Function, Object, Persistent, Runtime, Value};
use serde_json::Value as JsonValue;

use crate::budget::{
    Allowance, BRIEF_PROGRAM_CHECKPOINTS_MAX, BRIEF_PROGRAM_TIME_MS_MAX, COMPILED_CACHE_BYTES_MAX,
    COMPILED_CACHE_ENTRIES_MAX, CodeKind, EXPRESSION_CHECKPOINTS_MAX, FOLD_CHECKPOINTS_MAX,
    FOLD_TIME_MS_MAX, INPUT_CHECKPOINTS_MAX, InputBudget, Limit, Meter, PROGRAM_CHECKPOINTS_MAX,
    PROGRAM_TIME_MS_MAX, SANDBOX_BYTES_MAX, SANDBOX_STACK_BYTES_MAX, ScriptError, Trip,
    memory_error, too_large_error, trip_error,
};
use crate::bytecode::run_prelude;
use crate::convert::{Outgoing, Refusal, to_js};
use crate::freeze::freeze_reachable;
use crate::guard::CAUGHT_HOOK;
use crate::inputs::InputCache;
use crate::plain::PlainShapes;
use crate::stack_top::entered;
use crate::strip::{StrippedProgram, strip_expression, strip_program};

const PRELUDE: &str = include_str!("prelude.js");
/// In the prelude's `state[1]`: a `catch` caught a memory overrun.
const SEEN_OUT_OF_MEMORY: u32 = 1;
/// In the prelude's `state[1]`: the code may have seen that an input is frozen (see inputs.rs).
const SEEN_OBSERVED: u32 = 2;
/// The global the prelude leaves the roots of the deep freeze in, for [`Sandbox::new`] to take.
const FREEZE_ROOTS: &str = "__freezeRoots";
const EXPRESSION_FILE: &str = "expression";
const PROGRAM_FILE: &str = "program";

struct CompiledProgram {
    factory: Persistent<Function<'static>>,
    lines: StrippedProgram,
}

/// One QuickJS runtime and its prepared context. Not `Send`: each thread keeps its own, as
/// [`evaluate`] and [`run_program`] do.
pub struct Sandbox {
    // Invariant: every `Persistent` is dropped before the runtime it belongs to, so these
    // fields come first (fields drop in declaration order).
    /// Compiled expressions by their text, each with the parameters it was compiled with;
    /// looked up at every evaluation, hence foldhash rather than SipHash (the maps are bounded,
    /// and foldhash is seeded per map).
    expressions: HashMap<String, (String, Persistent<Function<'static>>), RandomState>,
    inputs: InputCache,
    programs: HashMap<String, CompiledProgram, RandomState>,
    hooks: Hooks,
    /// Source bytes of what `expressions` and `programs` hold.
    cached_bytes: usize,
    context: Context,
    runtime: Runtime,
    meter: Rc<RefCell<Meter>>,
    /// Whether variables' values are kept from one evaluation to the next (see inputs.rs).
    keep_inputs: bool,
    /// Whether what the code gives back is read first as plain data (see plain.rs).
    read_plain: bool,
    /// Whether an expression that reads a member of a variable is answered from its JSON
    /// (see member.rs).
    read_members: bool,
    /// Set when an evaluation left something behind (queued promise jobs) that the freeze
    /// cannot cover; such a sandbox must be built anew.
    spoiled: bool,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("expressions", &self.expressions.len())
            .field("programs", &self.programs.len())
            .field("spoiled", &self.spoiled)
            .finish_non_exhaustive()
    }
}

/// Whose budget a call of a program's export runs within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportCall {
    /// A program's: [`PROGRAM_CHECKPOINTS_MAX`], [`PROGRAM_TIME_MS_MAX`].
    Program,
    /// One fold's: [`FOLD_CHECKPOINTS_MAX`], [`FOLD_TIME_MS_MAX`].
    Fold,
}

/// A program's budget.
fn program_allowance() -> Allowance {
    Allowance {
        checkpoints_max: PROGRAM_CHECKPOINTS_MAX,
        checkpoints_input_max: PROGRAM_CHECKPOINTS_MAX,
        time: Duration::from_millis(PROGRAM_TIME_MS_MAX),
        kind: CodeKind::Program,
    }
}

/// What one run calls: `function` with `inputs` and the clock at `now_ms`; for a program,
/// `export` names the export to call, `function` is the factory that returns the exports, and
/// `lines` maps its errors back to the program's lines.
#[derive(Clone, Copy)]
struct Code<'a> {
    function: &'a Persistent<Function<'static>>,
    export: &'a [&'a str],
    /// Whether the export is read as a value rather than called.
    read_value: bool,
    inputs: &'a [(&'a str, &'a JsonValue)],
    now_ms: i64,
    lines: Option<&'a StrippedProgram>,
}

struct Hooks {
    /// What the host and the code share: `[0]` the recorded time, `[1]` what the code did
    /// that the host must know ([`SEEN_OUT_OF_MEMORY`], [`SEEN_OBSERVED`]).
    state: Persistent<Array<'static>>,
    caught: Persistent<Function<'static>>,
    to_json_text: Persistent<Function<'static>>,
    describe_error: Persistent<Function<'static>>,
    kind_of: Persistent<Function<'static>>,
    /// What marks plain data in the context (`Object.prototype` and `Array.prototype`, which
    /// live as long as it), for the quick read and the walk of what the code gives back.
    shapes: PlainShapes,
}

impl Sandbox {
    /// A fresh sandbox: a runtime with the memory and stack limits, and a context prepared by
    /// the prelude (library trimmed, Date replaced, code from text blocked), read from the
    /// bytecode compiled once per process, then all of it frozen.
    pub fn new() -> Result<Self, ScriptError> {
        let unprepared =
            |_| ScriptError::runtime(Limit::Memory, "The sandbox could not be prepared.");
        let runtime = Runtime::new().map_err(unprepared)?;
        runtime.set_memory_limit(SANDBOX_BYTES_MAX);
        runtime.set_max_stack_size(SANDBOX_STACK_BYTES_MAX);
        let meter = Rc::new(RefCell::new(Meter::idle()));
        let handler_meter = Rc::clone(&meter);
        runtime.set_interrupt_handler(Some(Box::new(move || {
            handler_meter
                .try_borrow_mut()
                .map(|mut meter| meter.checkpoint())
                .unwrap_or(true)
        })));
        let context = Context::custom::<(
            Date,
            Eval,
            RegExpCompiler,
            RegExp,
            Json,
            Proxy,
            MapSet,
            TypedArrays,
            // Without the Promise intrinsic QuickJS aborts on `async`; the prelude deletes
            // the global instead.
            Promise,
        )>(&runtime)
        .map_err(unprepared)?;
        let hooks = context
            .with(|ctx| -> rquickjs::Result<Hooks> {
                let hooks: Object = run_prelude(&ctx, PRELUDE, "prelude")?.get()?;
                let globals = ctx.globals();
                let roots: Vec<Value> = globals.get(FREEZE_ROOTS)?;
                globals.remove(FREEZE_ROOTS)?;
                freeze_reachable(&ctx, roots)?;
                Ok(Hooks {
                    state: Persistent::save(&ctx, hooks.get::<_, Array>("state")?),
                    caught: Persistent::save(&ctx, hooks.get::<_, Function>("caught")?),
                    to_json_text: Persistent::save(&ctx, hooks.get::<_, Function>("toJsonText")?),
                    describe_error: Persistent::save(
                        &ctx,
                        hooks.get::<_, Function>("describeError")?,
                    ),
                    kind_of: Persistent::save(&ctx, hooks.get::<_, Function>("kindOf")?),
                    shapes: PlainShapes::of(
                        &ctx,
                        &hooks.get::<_, Value>("objectPrototype")?,
                        &hooks.get::<_, Value>("arrayPrototype")?,
                    )
                    .ok_or(rquickjs::Error::Unknown)?,
                })
            })
            .map_err(unprepared)?;
        Ok(Self {
            expressions: HashMap::default(),
            inputs: InputCache::default(),
            programs: HashMap::default(),
            hooks,
            cached_bytes: 0,
            context,
            runtime,
            meter,
            keep_inputs: true,
            read_plain: true,
            read_members: true,
            spoiled: false,
        })
    }

    /// Evaluates the TypeScript expression `expression` with `vars` (each name with its `$`)
    /// as its variables, `now_ms` (milliseconds since the epoch) as the clock, within the
    /// expression's budget and what is left of `budget`, which it charges.
    pub fn evaluate(
        &mut self,
        expression: &str,
        vars: &[(&str, &JsonValue)],
        now_ms: i64,
        budget: &mut InputBudget,
    ) -> Result<JsonValue, ScriptError> {
        let time_max = budget.time_max();
        if budget.time_used >= time_max {
            return Err(trip_error(Trip::Time, CodeKind::Expression));
        }
        if self.read_members
            && let Some(value) = crate::member::read(expression, vars)
        {
            return Ok(value);
        }
        let allowance = Allowance {
            checkpoints_max: EXPRESSION_CHECKPOINTS_MAX,
            checkpoints_input_max: INPUT_CHECKPOINTS_MAX.saturating_sub(budget.checkpoints_used),
            time: time_max - budget.time_used,
            kind: CodeKind::Expression,
        };
        let started = Instant::now();
        // Invariant: the meter counts this evaluation only, even when it fails to compile.
        *self.meter.borrow_mut() = Meter::idle();
        let function = self.compiled_expression(expression, vars);
        let keep = self.keep_inputs;
        let result = function.and_then(|function| {
            let code = Code {
                function: &function,
                export: &[],
                read_value: false,
                inputs: vars,
                now_ms,
                lines: None,
            };
            self.run(code, allowance, keep)
        });
        let checkpoints = self.meter.borrow().checkpoints;
        budget.checkpoints_used = budget.checkpoints_used.saturating_add(checkpoints);
        budget.time_used = budget.time_used.saturating_add(started.elapsed());
        result
    }

    /// Runs a computation program: its default export is called with `input`, with `now_ms`
    /// as the clock, within [`PROGRAM_CHECKPOINTS_MAX`], [`PROGRAM_TIME_MS_MAX`] and
    /// [`SANDBOX_BYTES_MAX`]. The program must have passed [`crate::check_program`].
    pub fn run_program(
        &mut self,
        program: &str,
        input: &JsonValue,
        now_ms: i64,
    ) -> Result<JsonValue, ScriptError> {
        self.run_program_within(program, input, now_ms, program_allowance())
    }

    /// Runs a computation program as [`Sandbox::run_program`] does, but within
    /// [`BRIEF_PROGRAM_CHECKPOINTS_MAX`] and [`BRIEF_PROGRAM_TIME_MS_MAX`]: `None` when a
    /// budget ran out, which says only that the program needs a thread where blocking is fine
    /// to run [`Sandbox::run_program`] on (memory included: what the caches of this sandbox
    /// hold counts against it). What it threw or gave is what a full run gives: a program is
    /// pure and its clock given.
    pub fn run_program_briefly(
        &mut self,
        program: &str,
        input: &JsonValue,
        now_ms: i64,
    ) -> Option<Result<JsonValue, ScriptError>> {
        let allowance = Allowance {
            checkpoints_max: BRIEF_PROGRAM_CHECKPOINTS_MAX,
            checkpoints_input_max: BRIEF_PROGRAM_CHECKPOINTS_MAX,
            time: Duration::from_millis(BRIEF_PROGRAM_TIME_MS_MAX),
            kind: CodeKind::Program,
        };
        match self.run_program_within(program, input, now_ms, allowance) {
            Err(ScriptError::Runtime { .. }) => None,
            ran => Some(ran),
        }
    }

    fn run_program_within(
        &mut self,
        program: &str,
        input: &JsonValue,
        now_ms: i64,
        allowance: Allowance,
    ) -> Result<JsonValue, ScriptError> {
        let (factory, lines) = self.compiled_program(program)?;
        let code = Code {
            function: &factory,
            export: &["default"],
            read_value: false,
            inputs: &[("$input", input)],
            now_ms,
            lines: Some(&lines),
        };
        self.run(code, allowance, false)
    }

    /// Reads the export `name` of a program as a value (a recall function's `initial`), within
    /// a program's budgets. A function's export is refused: its value is not data.
    pub fn read_export(
        &mut self,
        program: &str,
        name: &str,
        now_ms: i64,
    ) -> Result<JsonValue, ScriptError> {
        let (factory, lines) = self.compiled_program(program)?;
        let code = Code {
            function: &factory,
            export: &[name],
            read_value: true,
            inputs: &[],
            now_ms,
            lines: Some(&lines),
        };
        self.run(code, program_allowance(), false)
    }

    /// Calls the export `name` of a program with `args` (each name with its `$`, in order),
    /// within the budget of `call`: a program's, or one fold's ([`FOLD_CHECKPOINTS_MAX`],
    /// [`FOLD_TIME_MS_MAX`]).
    pub fn call_export(
        &mut self,
        program: &str,
        name: &str,
        args: &[(&str, &JsonValue)],
        now_ms: i64,
        call: ExportCall,
    ) -> Result<JsonValue, ScriptError> {
        let allowance = match call {
            ExportCall::Program => program_allowance(),
            ExportCall::Fold => Allowance {
                checkpoints_max: FOLD_CHECKPOINTS_MAX,
                checkpoints_input_max: FOLD_CHECKPOINTS_MAX,
                time: Duration::from_millis(FOLD_TIME_MS_MAX),
                kind: CodeKind::Fold,
            },
        };
        let (factory, lines) = self.compiled_program(program)?;
        let code = Code {
            function: &factory,
            export: &[name],
            read_value: false,
            inputs: args,
            now_ms,
            lines: Some(&lines),
        };
        self.run(code, allowance, false)
    }

    /// Whether variables' values are kept from one evaluation to the next, as frozen trees
    /// handed out again while a variable's value stays the same; on by default. Off, every
    /// evaluation builds its inputs anew. What code sees is the same either way: an evaluation
    /// that could tell a kept input from its own runs again on its own.
    pub fn keep_inputs(&mut self, keep: bool) {
        self.keep_inputs = keep;
        if !keep {
            self.inputs.clear();
        }
    }

    /// Whether what the code gives back is read first as plain data, through QuickJS's own
    /// calls, before the walk that reads any value; on by default. Off, every value goes through
    /// the walk. What comes back is the same either way: the quick read gives up, before any of
    /// the value's code runs, on anything but plain data.
    pub fn read_plain_first(&mut self, first: bool) {
        self.read_plain = first;
    }

    /// Whether an expression that only reads a member of one of its variables (`$data.x`) is
    /// answered from the variable's JSON, without running; on by default. What comes back is
    /// the same either way: the read leaves to the sandbox anything JavaScript could answer
    /// otherwise (see member.rs).
    pub fn read_members_first(&mut self, first: bool) {
        self.read_members = first;
    }

    /// The values, leaves and containers, that the kept inputs hold together (at most
    /// [`INPUT_CACHE_VALUES_MAX`](crate::INPUT_CACHE_VALUES_MAX)).
    pub fn kept_values(&self) -> usize {
        self.inputs.values()
    }

    /// Whether an evaluation left something behind that only a new sandbox clears.
    pub fn is_spoiled(&self) -> bool {
        self.spoiled
    }

    fn compiled_expression(
        &mut self,
        expression: &str,
        vars: &[(&str, &JsonValue)],
    ) -> Result<Persistent<Function<'static>>, ScriptError> {
        if let Some((parameters, function)) = self.expressions.get(expression)
            && same_parameters(parameters, vars)
        {
            return Ok(function.clone());
        }
        let mut parameters = String::new();
        for (index, (name, _)) in vars.iter().enumerate() {
            if !is_variable_name(name) {
                return Err(ScriptError::expression(format!(
                    "{name} is not a variable name"
                )));
            }
            if vars[..index].iter().any(|(other, _)| other == name) {
                return Err(ScriptError::expression(format!("{name} is given twice")));
            }
            if index > 0 {
                parameters.push_str(PARAMETER_SEPARATOR);
            }
            parameters.push_str(name);
        }
        let javascript = strip_expression(expression).map_err(|problems| {
            let text = problems.first().map_or_else(String::new, |p| {
                format!("Line {}, column {}: {}", p.line, p.column, p.text)
            });
            ScriptError::expression(text)
        })?;
        let source = format!(
            "(function ({parameters}) {{\n\"use strict\";\nreturn (\n{javascript}\n);\n}})"
        );
        let function = self.compile(&source, EXPRESSION_FILE)?;
        self.make_room(source.len());
        self.expressions
            .insert(expression.to_owned(), (parameters, function.clone()));
        Ok(function)
    }

    fn compiled_program(
        &mut self,
        program: &str,
    ) -> Result<(Persistent<Function<'static>>, StrippedProgram), ScriptError> {
        if let Some(compiled) = self.programs.get(program) {
            return Ok((compiled.factory.clone(), compiled.lines.clone()));
        }
        let stripped = strip_program(program).map_err(|problems| {
            let first = problems.first();
            ScriptError::Expression {
                message: first.map_or_else(String::new, |p| p.text.clone()),
                line: first.map(|p| p.line),
            }
        })?;
        let factory = self.compile(&stripped.factory, PROGRAM_FILE)?;
        self.make_room(stripped.factory.len());
        let compiled = CompiledProgram {
            factory: factory.clone(),
            lines: stripped.clone(),
        };
        self.programs.insert(program.to_owned(), compiled);
        Ok((factory, stripped))
    }

    /// Empties the compiled caches when one more entry of `bytes` would pass their bounds.
    fn make_room(&mut self, bytes: usize) {
        let entries = self.expressions.len() + self.programs.len();
        if entries >= COMPILED_CACHE_ENTRIES_MAX
            || self.cached_bytes.saturating_add(bytes) > COMPILED_CACHE_BYTES_MAX
        {
            self.forget_compiled();
        }
        self.cached_bytes = self.cached_bytes.saturating_add(bytes);
    }

    fn forget_compiled(&mut self) {
        self.expressions.clear();
        self.programs.clear();
        self.cached_bytes = 0;
    }

    /// Compiles `source`, a function expression, within a function whose one parameter is the
    /// hook every `catch` of the code calls first (see the guard module).
    fn compile(
        &self,
        source: &str,
        file: &str,
    ) -> Result<Persistent<Function<'static>>, ScriptError> {
        let outer = format!("(function ({CAUGHT_HOOK}) {{ \"use strict\"; return {source}; }})");
        entered(&self.context, |ctx| {
            let compiled = ctx
                .eval_with_options::<Function, _>(outer, options(file))
                .and_then(|outer| {
                    let caught = self.hooks.caught.clone().restore(&ctx)?;
                    outer.call::<_, Function>((caught,))
                });
            match compiled {
                Ok(function) => Ok(Persistent::save(&ctx, function)),
                Err(error) => Err(ScriptError::expression(exception_text(&ctx, error))),
            }
        })
    }

    /// Runs `code` and converts its value. With `keep`, inputs are taken from (and put in) the
    /// kept inputs, and an evaluation that could tell them from its own runs again on its own
    /// (see inputs.rs).
    fn run(
        &mut self,
        code: Code<'_>,
        allowance: Allowance,
        keep: bool,
    ) -> Result<JsonValue, ScriptError> {
        let started = Instant::now();
        let (result, rerun) = self.run_once(code, allowance, keep);
        if !rerun {
            return result;
        }
        // The code may have told kept inputs from its own, or ran out of memory while some were
        // kept: again on inputs of its own (see inputs.rs), with the time that is left.
        let allowance = Allowance {
            time: allowance.time.saturating_sub(started.elapsed()),
            ..allowance
        };
        self.run_once(code, allowance, false).0
    }

    /// One run of [`Self::run`]; the second part of the answer says whether it must run again.
    fn run_once(
        &mut self,
        code: Code<'_>,
        allowance: Allowance,
        keep: bool,
    ) -> (Result<JsonValue, ScriptError>, bool) {
        let Code {
            function,
            export,
            read_value,
            inputs,
            now_ms,
            lines,
        } = code;
        let had_kept = self.inputs.values() > 0;
        self.start_meter(allowance);
        let hooks = &self.hooks;
        let read_plain = self.read_plain;
        let meter = &self.meter;
        let kept = &mut self.inputs;
        // Kept inputs are tried for every container, and an attempt counts as use: building a
        // kept tree may fail where a plain one would not (memory that other kept values hold).
        let used_kept = keep
            && inputs
                .iter()
                .any(|(_, input)| matches!(input, JsonValue::Array(_) | JsonValue::Object(_)));
        let (outcome, seen) = entered(&self.context, |ctx| {
            let value = call_in(
                &ctx,
                hooks,
                function,
                (export, read_value),
                inputs,
                now_ms,
                keep.then_some(&mut *kept),
            )
            .map_err(Refusal::Thrown)
            .and_then(|value| {
                value_out(hooks, read_plain, used_kept.then_some(&*kept), &ctx, value)
            });
            let outcome = match value {
                Ok(value) => Ok(value),
                Err(Refusal::Thrown(error)) => {
                    Err(classify(hooks, meter, &ctx, error, allowance.kind, lines))
                }
                Err(Refusal::Cannot(message)) => Err(ScriptError::expression(message)),
                Err(Refusal::TooLarge) => Err(too_large_error(allowance.kind)),
            };
            // Read after any exception was taken, so the hook runs with none pending.
            let seen = seen(hooks, &ctx);
            let outcome = match outcome {
                Ok(_) if seen & SEEN_OUT_OF_MEMORY != 0 => Err(memory_error(allowance.kind)),
                other => other,
            };
            (outcome, seen)
        });
        self.meter.borrow_mut().active = false;
        if self.runtime.is_job_pending() {
            self.spoiled = true;
        }
        let out_of_memory = matches!(
            outcome,
            Err(ScriptError::Runtime {
                limit: Limit::Memory,
                ..
            })
        );
        if out_of_memory {
            // What the caches hold counts against the limit too: start again from the prelude.
            self.forget_compiled();
            self.inputs.clear();
            self.runtime.run_gc();
        }
        // Kept values take room in the sandbox's memory, so any code that ran out of it while
        // some were kept runs again without them.
        let rerun = (used_kept
            && (seen & SEEN_OBSERVED != 0
                || matches!(outcome, Err(ScriptError::Expression { .. }))))
            || (out_of_memory && had_kept);
        (outcome, rerun)
    }

    fn start_meter(&self, allowance: Allowance) {
        let mut meter = self.meter.borrow_mut();
        *meter = Meter {
            active: true,
            checkpoints: 0,
            checkpoints_max: allowance.checkpoints_max,
            checkpoints_input_max: allowance.checkpoints_input_max,
            deadline: Instant::now() + allowance.time,
            tripped: None,
        };
    }
}

/// What the code did that the host must know, as [`SEEN_OUT_OF_MEMORY`] and [`SEEN_OBSERVED`];
/// both when the hook could not say.
fn seen(hooks: &Hooks, ctx: &Ctx<'_>) -> u32 {
    hooks
        .state
        .clone()
        .restore(ctx)
        .and_then(|state| state.get::<u32>(1))
        .unwrap_or(SEEN_OUT_OF_MEMORY | SEEN_OBSERVED)
}

/// The JSON value of what the code gave; `inputs` are the kept inputs it was given, if any.
fn value_out<'js>(
    hooks: &Hooks,
    read_plain: bool,
    inputs: Option<&InputCache>,
    ctx: &Ctx<'js>,
    value: Value<'js>,
) -> Result<JsonValue, Refusal> {
    Outgoing::new(
        ctx,
        inputs,
        hooks.shapes,
        read_plain,
        &hooks.kind_of,
        &hooks.to_json_text,
    )?
    .convert(value)
}

/// An exception as the error it stands for: a budget the meter saw run out, memory, or an
/// error of the code itself.
fn classify(
    hooks: &Hooks,
    meter: &RefCell<Meter>,
    ctx: &Ctx<'_>,
    error: rquickjs::Error,
    kind: CodeKind,
    lines: Option<&StrippedProgram>,
) -> ScriptError {
    if let Some(trip) = meter.borrow().tripped {
        return trip_error(trip, kind);
    }
    if !matches!(error, rquickjs::Error::Exception) {
        return match error {
            rquickjs::Error::Allocation => memory_error(kind),
            other => ScriptError::expression(other.to_string()),
        };
    }
    let thrown = ctx.catch();
    if seen(hooks, ctx) & SEEN_OUT_OF_MEMORY != 0 {
        return memory_error(kind);
    }
    let description = hooks
        .describe_error
        .clone()
        .restore(ctx)
        .and_then(|describe| {
            let described: Object = describe.call((thrown,))?;
            Ok((
                described.get::<_, bool>("outOfMemory")?,
                described.get::<_, String>("message")?,
                described.get::<_, String>("stack")?,
            ))
        });
    if let Some(trip) = meter.borrow().tripped {
        return trip_error(trip, kind);
    }
    match description {
        Ok((true, _, _)) => memory_error(kind),
        Ok((false, message, stack)) => ScriptError::Expression {
            message,
            line: lines.and_then(|lines| program_line(&stack, lines)),
        },
        Err(_) => memory_error(kind),
    }
}

/// Sets the clock, builds the inputs and calls the code; gives the code's value.
fn call_in<'js>(
    ctx: &Ctx<'js>,
    hooks: &Hooks,
    function: &Persistent<Function<'static>>,
    (export, read_value): (&[&str], bool),
    inputs: &[(&str, &JsonValue)],
    now_ms: i64,
    mut kept: Option<&mut InputCache>,
) -> rquickjs::Result<Value<'js>> {
    #[expect(
        clippy::cast_precision_loss,
        reason = "times within 2^53 ms, 285,000 years, are exact"
    )]
    let now = now_ms as f64;
    let state = hooks.state.clone().restore(ctx)?;
    state.set(0, now)?;
    state.set(1, 0)?;
    let mut function = function.clone().restore(ctx)?;
    if let Some(name) = export.first() {
        let exports: Object = function.call(())?;
        let value: Value = exports.get(*name)?;
        if read_value {
            if value.is_function() {
                let message = format!("The {name} export is a function, not a value");
                return Err(
                    ctx.throw(rquickjs::String::from_str(ctx.clone(), &message)?.into_value())
                );
            }
            return Ok(value);
        }
        function = match value.into_function() {
            Some(function) => function,
            None => {
                let message = format!("The {name} export is not a function");
                return Err(
                    ctx.throw(rquickjs::String::from_str(ctx.clone(), &message)?.into_value())
                );
            }
        };
    }
    let mut args = Args::new(ctx.clone(), inputs.len());
    for (name, input) in inputs {
        let built = match kept.as_deref_mut() {
            Some(kept) => kept.get(ctx, name, input)?,
            None => None,
        };
        let value = match built {
            Some(value) => value,
            None => to_js(ctx, input, None)?,
        };
        args.push_arg(value)?;
    }
    function.call_arg(args)
}

fn options(file: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.backtrace_barrier = true;
    options.promise = false;
    options.filename = Some(file.to_owned());
    options
}

fn exception_text(ctx: &Ctx<'_>, error: rquickjs::Error) -> String {
    if !matches!(error, rquickjs::Error::Exception) {
        return error.to_string();
    }
    let thrown = ctx.catch();
    thrown
        .as_exception()
        .and_then(|exception| exception.message())
        .map_or_else(
            || "The code could not be compiled".to_owned(),
            |m| format!("SyntaxError: {m}"),
        )
}

/// The program's line of the innermost frame of `stack` that is in the program.
fn program_line(stack: &str, lines: &StrippedProgram) -> Option<u32> {
    let marker = format!("{PROGRAM_FILE}:");
    let start = stack.find(&marker)? + marker.len();
    let digits: String = stack[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    lines.program_line(digits.parse().ok()?)
}

const PARAMETER_SEPARATOR: &str = ", ";

/// Whether `parameters`, as compiled, are the names of `vars` in order.
fn same_parameters(parameters: &str, vars: &[(&str, &JsonValue)]) -> bool {
    let mut rest = parameters;
    for (index, (name, _)) in vars.iter().enumerate() {
        if index > 0 {
            match rest.strip_prefix(PARAMETER_SEPARATOR) {
                Some(after) => rest = after,
                None => return false,
            }
        }
        match rest.strip_prefix(name) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    rest.is_empty()
}

fn is_variable_name(name: &str) -> bool {
    let mut characters = name.chars();
    characters.next() == Some('$')
        && name.len() > 1
        && characters.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The converter's text as a value; the converter has already bounded its depth to
/// [`VALUE_DEPTH_MAX`], so the parser's own recursion limit is lifted.
pub(crate) fn parse_json(text: &str) -> Result<JsonValue, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut deserializer)
}

thread_local! {
    static SANDBOX: RefCell<Option<Sandbox>> = const { RefCell::new(None) };
}

/// Runs `work` with this thread's sandbox, building it first when there is none or when the
/// last evaluation spoiled it.
pub fn with_sandbox<R>(
    work: impl FnOnce(&mut Sandbox) -> Result<R, ScriptError>,
) -> Result<R, ScriptError> {
    SANDBOX.with(|slot| {
        let mut slot = slot.try_borrow_mut().map_err(|_| {
            ScriptError::expression("The sandbox is already evaluating on this thread")
        })?;
        if slot.as_ref().is_none_or(Sandbox::is_spoiled) {
            // Drop the old sandbox before building the new one, so two never hold memory.
            *slot = None;
            *slot = Some(Sandbox::new()?);
        }
        match slot.as_mut() {
            Some(sandbox) => work(sandbox),
            None => Err(ScriptError::runtime(
                Limit::Memory,
                "The sandbox could not be prepared.",
            )),
        }
    })
}

/// [`Sandbox::evaluate`] in this thread's sandbox.
pub fn evaluate(
    expression: &str,
    vars: &[(&str, &JsonValue)],
    now_ms: i64,
    budget: &mut InputBudget,
) -> Result<JsonValue, ScriptError> {
    with_sandbox(|sandbox| sandbox.evaluate(expression, vars, now_ms, budget))
}

/// [`Sandbox::run_program_briefly`] in this thread's sandbox: `None` when the program must run
/// again with [`run_program`] where blocking is fine, or when this thread's sandbox is busy.
pub fn run_program_briefly(
    program: &str,
    input: &JsonValue,
    now_ms: i64,
) -> Option<Result<JsonValue, ScriptError>> {
    let mut brief = None;
    let ran = with_sandbox(|sandbox| {
        brief = sandbox.run_program_briefly(program, input, now_ms);
        Ok(())
    });
    ran.ok().and(brief)
}

/// [`Sandbox::run_program`] in this thread's sandbox.
pub fn run_program(
    program: &str,
    input: &JsonValue,
    now_ms: i64,
) -> Result<JsonValue, ScriptError> {
    with_sandbox(|sandbox| sandbox.run_program(program, input, now_ms))
}
