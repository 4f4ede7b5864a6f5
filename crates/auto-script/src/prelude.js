// Prepares a fresh QuickJS context once: removes what the library lacks, puts in the fixed-clock,
// UTC-only Date, blocks code built from text, makes localeCompare read no locale, and names the
// roots from which the host then deep-freezes everything reachable (see freeze.rs), so that one
// evaluation can leave nothing for the next. It returns the host's hooks, which no global reaches.
(function () {
  "use strict";
  const global = globalThis;
  const {
    defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf, keys,
    prototype: ObjectPrototype,
  } = Object;
  const { construct } = Reflect;
  const stringify = JSON.stringify;
  const isArray = Array.isArray;
  const OriginalDate = Date;
  const originalParse = OriginalDate.parse;
  const originalGetTime = OriginalDate.prototype.getTime;
  const ThrowingMap = Map;
  const ErrorConstructor = Error;
  const InternalErrorPrototype = InternalError.prototype;
  const SuppressedErrorPrototype = SuppressedError.prototype;
  const VALUE_DEPTH_MAX = 512;

  // The four function prototypes, captured before their constructors go away.
  const functionPrototypes = [
    Function.prototype,
    getPrototypeOf(async function () {}),
    getPrototypeOf(function* () {}),
    getPrototypeOf(async function* () {}),
  ];
  // Prototypes no global reaches, so that the freeze below reaches them too.
  const hiddenRoots = [
    ...functionPrototypes,
    getPrototypeOf((async () => {})()),
    getPrototypeOf([][Symbol.iterator]()),
    getPrototypeOf(new Map()[Symbol.iterator]()),
    getPrototypeOf(new Set()[Symbol.iterator]()),
    getPrototypeOf(""[Symbol.iterator]()),
    getPrototypeOf(/a/g[Symbol.matchAll]("")),
    getPrototypeOf([].values().map((x) => x)),
    getPrototypeOf(Iterator.from({ next() { return { done: true, value: undefined }; } })),
    getPrototypeOf(Iterator.concat()),
    getPrototypeOf(Iterator.zip([])),
    getPrototypeOf(function () { return arguments; }()),
  ];

  // What the library lacks.
  for (const name of [
    "eval", "Function", "Promise", "WeakRef", "FinalizationRegistry", "queueMicrotask",
    "InternalError", "Atomics", "SharedArrayBuffer", "AsyncDisposableStack", "performance",
    "navigator", "console",
  ]) {
    delete global[name];
  }
  delete Math.random;
  delete Array.fromAsync;
  // These two are accessors that write the context's own state, which freezing cannot stop:
  // one expression could make every later error run its code. Plain values replace them.
  defineProperty(ErrorConstructor, "prepareStackTrace", { value: undefined, writable: false, configurable: false });
  defineProperty(ErrorConstructor, "stackTraceLimit", { value: 10, writable: false, configurable: false });

  // Code from text: every way to the Function constructor goes through these four.
  function blocked() {
    throw new TypeError("Function is absent: code cannot be built from text");
  }
  for (const prototype of functionPrototypes) {
    defineProperty(prototype, "constructor", {
      value: blocked, writable: false, enumerable: false, configurable: false,
    });
  }

  // Date: the recorded time, UTC only.
  // What the host and the code share, which no global reaches: [0] the recorded time, which
  // the host sets before each evaluation; [1] what the code did that the host must know, which
  // the host clears: 1, a catch caught a memory overrun; 2, the code may have seen that an
  // input is frozen (see inputs.rs).
  const state = [0, 0];
  const SEEN_OUT_OF_MEMORY = 1;
  const SEEN_OBSERVED = 2;
  const DATE_ONLY = /^(?:\d{4}|[+-]\d{6})(?:-\d{2}(?:-\d{2})?)?$/;
  const DATE_TIME_WITH_OFFSET =
    /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
  function parseDate(text) {
    if (DATE_ONLY.test(text) || DATE_TIME_WITH_OFFSET.test(text)) {
      return originalParse(text);
    }
    throw new RangeError(
      `Date reads a date alone, such as "2026-01-01", or a date and time with its offset, ` +
      `such as "2026-01-01T09:00:00Z", not ${stringify(text)}`,
    );
  }
  function FixedDate(...values) {
    if (new.target === undefined) {
      throw new TypeError("Date must be called with new: Date() would read the local time");
    }
    if (values.length > 1) {
      throw new TypeError(
        "A Date from several numbers reads the local time: use new Date(Date.UTC(...))",
      );
    }
    let ms;
    if (values.length === 0) {
      ms = state[0];
    } else if (typeof values[0] === "number") {
      ms = values[0];
    } else if (typeof values[0] === "string") {
      ms = parseDate(values[0]);
    } else if (values[0] instanceof OriginalDate) {
      ms = originalGetTime.call(values[0]);
    } else {
      throw new TypeError("new Date takes a number, a Date or a string");
    }
    return construct(OriginalDate, [ms], new.target);
  }
  const datePrototype = OriginalDate.prototype;
  const dateToJson = datePrototype.toJSON;
  defineProperty(FixedDate, "name", { value: "Date", configurable: true });
  FixedDate.prototype = datePrototype;
  defineProperty(datePrototype, "constructor", {
    value: FixedDate, writable: true, enumerable: false, configurable: true,
  });
  defineProperty(FixedDate, "now", {
    value: function now() { return state[0]; }, writable: true, configurable: true,
  });
  defineProperty(FixedDate, "parse", {
    value: function parse(text) { return parseDate(`${text}`); }, writable: true, configurable: true,
  });
  defineProperty(FixedDate, "UTC", { value: OriginalDate.UTC, writable: true, configurable: true });
  for (const name of [
    "getDate", "getDay", "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth",
    "getSeconds", "getTimezoneOffset", "getYear", "setDate", "setFullYear", "setHours",
    "setMilliseconds", "setMinutes", "setMonth", "setSeconds", "setYear", "toDateString",
    "toTimeString", "toLocaleDateString", "toLocaleTimeString", "toTemporalInstant",
  ]) {
    delete datePrototype[name];
  }
  for (const name of ["toString", "toLocaleString"]) {
    defineProperty(datePrototype, name, {
      value: {
        [name]() {
          throw new TypeError(`Date.prototype.${name} reads the local time: use toISOString()`);
        },
      }[name],
      writable: true, enumerable: false, configurable: true,
    });
  }
  defineProperty(global, "Date", { value: FixedDate, writable: true, enumerable: false, configurable: true });

  // Strings compare by UTF-16 code unit, with no locale.
  defineProperty(String.prototype, "localeCompare", {
    value: function localeCompare(that) {
      if (this === null || this === undefined) {
        throw new TypeError("String.prototype.localeCompare called on null or undefined");
      }
      const a = `${this}`;
      const b = `${that}`;
      return a < b ? -1 : a > b ? 1 : 0;
    },
    writable: true, enumerable: false, configurable: true,
  });

  // Inputs that stay the same from one evaluation to the next are built once and kept frozen
  // (see inputs.rs). Code that writes to one fails, and so does the evaluation, which is then
  // run again on inputs built for it alone; these are the ways code could see that an input is
  // frozen without failing, and each marks the evaluation as one to run again.
  const { apply } = Reflect;
  function observing(target, name) {
    const original = target[name];
    const wrapped = {
      [name](...values) {
        state[1] |= SEEN_OBSERVED;
        return apply(original, this, values);
      },
    }[name];
    defineProperty(wrapped, "length", { value: original.length });
    defineProperty(target, name, { value: wrapped, writable: true, enumerable: false, configurable: true });
  }
  for (const name of ["isFrozen", "isSealed", "isExtensible", "getOwnPropertyDescriptor", "getOwnPropertyDescriptors"]) {
    observing(Object, name);
  }
  for (const name of [
    "getOwnPropertyDescriptor", "isExtensible", "set", "defineProperty", "deleteProperty",
    "setPrototypeOf", "preventExtensions",
  ]) {
    observing(Reflect, name);
  }

  // Everything reachable from the global object and the hidden roots is frozen once this
  // returns, by the host (see freeze.rs), which takes the roots from this name and deletes it.
  defineProperty(global, "__freezeRoots", { value: [global, ...hiddenRoots], configurable: true });

  function kindOf(value) {
    if (typeof value !== "object") {
      return typeof value === "bigint" ? "a BigInt" : `a ${typeof value}`;
    }
    const prototype = getPrototypeOf(value);
    const constructor = prototype === null ? undefined : getOwnPropertyDescriptor(prototype, "constructor");
    const name = constructor && typeof constructor.value === "function" ? constructor.value.name : "";
    return name ? `a ${name}` : "an object that is not plain";
  }

  function cannotCarry(value, key) {
    return new TypeError(`JSON cannot carry ${kindOf(value)}${key === "" ? "" : ` (at ${stringify(key)})`}`);
  }

  function nestsTooDeep(value, ancestors) {
    return ancestors.indexOf(value) === -1
      ? new RangeError(`The value nests deeper than ${VALUE_DEPTH_MAX} levels`)
      : new TypeError("circular reference");
  }

  // Whether JSON.stringify can take `value` as it is: true when it holds only plain objects,
  // arrays, primitives and Dates, and no object member is undefined (which stringify would drop
  // rather than make null); false when the careful path must take it. Throws what JSON cannot
  // carry. Checking in JavaScript and then stringifying natively is several times faster than a
  // replacer, which the engine calls from C for every value.
  function isPlain(value, key, depth, ancestors) {
    switch (typeof value) {
      case "string":
      case "number":
      case "boolean":
        return true;
      case "undefined":
        return false;
      case "bigint":
      case "symbol":
      case "function":
        throw cannotCarry(value, key);
    }
    if (value === null) {
      return true;
    }
    const toJSON = value.toJSON;
    if (toJSON !== undefined) {
      return toJSON === dateToJson && getPrototypeOf(value) === datePrototype;
    }
    if (depth >= VALUE_DEPTH_MAX || ancestors.indexOf(value) !== -1) {
      throw nestsTooDeep(value, ancestors);
    }
    ancestors.push(value);
    let plain = true;
    if (isArray(value)) {
      for (let index = 0, length = value.length; index < length; index++) {
        const member = value[index];
        const type = typeof member;
        if (type !== "string" && type !== "number" && type !== "boolean" && type !== "undefined" &&
            !isPlain(member, `${index}`, depth + 1, ancestors)) {
          plain = false;
        }
      }
    } else {
      const prototype = getPrototypeOf(value);
      if (prototype !== ObjectPrototype && prototype !== null) {
        throw cannotCarry(value, key);
      }
      const names = keys(value);
      for (let index = 0, count = names.length; index < count; index++) {
        const member = value[names[index]];
        const type = typeof member;
        if (type !== "string" && type !== "number" && type !== "boolean" &&
            !isPlain(member, names[index], depth + 1, ancestors)) {
          plain = false;
        }
      }
    }
    ancestors.pop();
    return plain;
  }

  // The careful path: a replacer sees every value, makes undefined null and applies the rules.
  function toJsonTextCarefully(value) {
    const depths = new ThrowingMap();
    return stringify(value, function (key, member) {
      if (member === undefined) {
        return null;
      }
      const type = typeof member;
      if (type === "bigint" || type === "function" || type === "symbol") {
        throw cannotCarry(member, key);
      }
      if (type === "object" && member !== null) {
        const prototype = getPrototypeOf(member);
        if (!isArray(member) && prototype !== ObjectPrototype && prototype !== null) {
          throw cannotCarry(member, key);
        }
        const depth = (depths.get(this) ?? 0) + 1;
        if (depth > VALUE_DEPTH_MAX) {
          throw new RangeError(`The value nests deeper than ${VALUE_DEPTH_MAX} levels`);
        }
        depths.set(member, depth);
      }
      return member;
    });
  }

  function toJsonText(value) {
    const text = isPlain(value, "", 0, []) ? stringify(value) : toJsonTextCarefully(value);
    return text === undefined ? "null" : text;
  }

  // Memory overruns: QuickJS throws them as an InternalError that `try` could catch, so every
  // catch hands what it caught to `caught` first (see guard.rs), which notes the overrun and
  // throws it on. An error that a `using` disposal suppressed is looked into as well.
  function isOutOfMemory(value, depth) {
    if (typeof value !== "object" || value === null || depth > 32) {
      return false;
    }
    const prototype = getPrototypeOf(value);
    if (prototype === InternalErrorPrototype) {
      return value.message === "out of memory";
    }
    if (prototype === SuppressedErrorPrototype) {
      return isOutOfMemory(value.error, depth + 1) || isOutOfMemory(value.suppressed, depth + 1);
    }
    return false;
  }
  function caught(value) {
    // What a catch caught may be a write to a frozen input.
    state[1] |= SEEN_OBSERVED;
    if (isOutOfMemory(value, 0)) {
      state[1] |= SEEN_OUT_OF_MEMORY;
      throw value;
    }
  }

  // { outOfMemory, message, stack } of a thrown value. Only the engine makes an InternalError
  // (its constructor is no global), so one saying "out of memory" is the memory limit.
  function describeError(thrown) {
    try {
      if (typeof thrown === "object" && thrown !== null) {
        if (isOutOfMemory(thrown, 0)) {
          return { outOfMemory: true, message: "", stack: "" };
        }
        if (thrown instanceof ErrorConstructor) {
          const stack = thrown.stack;
          return { outOfMemory: false, message: `${thrown.name}: ${thrown.message}`, stack: typeof stack === "string" ? stack : "" };
        }
        return { outOfMemory: false, message: "A value that is not an Error was thrown", stack: "" };
      }
      if (typeof thrown === "string") {
        return { outOfMemory: false, message: thrown, stack: "" };
      }
      if (typeof thrown === "symbol" || typeof thrown === "function") {
        return { outOfMemory: false, message: `A ${typeof thrown} was thrown`, stack: "" };
      }
      return { outOfMemory: false, message: `${thrown}`, stack: "" };
    } catch {
      return { outOfMemory: false, message: "A value whose description failed was thrown", stack: "" };
    }
  }

  return freeze({
    state,
    caught: freeze(caught),
    toJsonText: freeze(toJsonText),
    describeError: freeze(describeError),
    kindOf: freeze(kindOf),
    objectPrototype: ObjectPrototype,
    arrayPrototype: Array.prototype,
  });
})()
