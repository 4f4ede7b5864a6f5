// The expressions of crates/auto-script/benches/eval.rs in QuickJS compiled to WebAssembly
// (quickjs-emscripten) on Node: values in and out as JSON text, one reused context with a
// 64 MiB limit and an interrupt handler, and a fresh context per evaluation, bare and with
// everything reachable frozen, the isolation work the sandbox does to every context it prepares
// (its prelude itself needs a newer QuickJS than this package's). The bare fresh case does none
// of that work, so it costs less than the Rust one.
// Run: npm install && npm run bench
import { getQuickJS } from "quickjs-emscripten";

// The deep freeze the sandbox does in Rust once its prelude has run (crates/auto-script/src/freeze.rs).
const FREEZE = `(() => {
  const roots = [globalThis, Function.prototype];
  const seen = new Set();
  const pending = [...roots];
  while (pending.length > 0) {
    const item = pending.pop();
    if ((typeof item !== "object" && typeof item !== "function") || item === null || seen.has(item)) continue;
    seen.add(item);
    Object.freeze(item);
    pending.push(Object.getPrototypeOf(item));
    for (const key of Reflect.ownKeys(item)) {
      const { value, get, set } = Object.getOwnPropertyDescriptor(item, key);
      pending.push(value, get, set);
    }
  }
})()`;

const SPREAD = "({ ...$input, n: $data.n + 1 })";
const FILTER = "$data.items.filter((item) => item.price > 50)";
const input = { id: "brief-1", owner: "ada@example.com", n: 0 };
const data = { n: 41 };
const list = { items: Array.from({ length: 100 }, (_, i) => ({ id: i, name: `item ${i}`, price: i })) };
const DURATION_MS = 3_000;

const QuickJS = await getQuickJS();

function compile(vm, expression) {
  const source = `(function (inputText, dataText) { "use strict"; const $input = JSON.parse(inputText); ` +
    `const $data = JSON.parse(dataText); return JSON.stringify((${expression})); })`;
  return vm.unwrapResult(vm.evalCode(source));
}

function evaluateWith(vm, fn, inputValue, dataValue) {
  const a = vm.newString(JSON.stringify(inputValue));
  const b = vm.newString(JSON.stringify(dataValue));
  const result = vm.unwrapResult(vm.callFunction(fn, vm.undefined, a, b));
  const value = JSON.parse(vm.getString(result));
  result.dispose();
  a.dispose();
  b.dispose();
  return value;
}

function newRuntime() {
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(64 * 1024 * 1024);
  runtime.setInterruptHandler(() => false);
  return runtime;
}

function measure(name, once) {
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < DURATION_MS) {
    once();
    count += 1;
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`${name}: ${Math.round(count / seconds)} evaluations/s (${((seconds / count) * 1e6).toFixed(1)} us each)`);
}

const runtime = newRuntime();
const vm = runtime.newContext();
const spread = compile(vm, SPREAD);
const filter = compile(vm, FILTER);
measure("reused context/spread", () => evaluateWith(vm, spread, input, data));
measure("reused context/filter 100 items", () => evaluateWith(vm, filter, {}, list));
spread.dispose();
filter.dispose();
vm.dispose();

for (const [name, expression, inputValue, dataValue] of [
  ["spread", SPREAD, input, data],
  ["filter 100 items", FILTER, {}, list],
]) {
  measure(`fresh context/${name}`, () => {
    const fresh = runtime.newContext();
    const fn = compile(fresh, expression);
    evaluateWith(fresh, fn, inputValue, dataValue);
    fn.dispose();
    fresh.dispose();
  });
}
for (const [name, expression, inputValue, dataValue] of [
  ["spread", SPREAD, input, data],
  ["filter 100 items", FILTER, {}, list],
]) {
  measure(`fresh context, all frozen/${name}`, () => {
    const fresh = runtime.newContext();
    vm_eval(fresh, FREEZE).dispose();
    const fn = compile(fresh, expression);
    evaluateWith(fresh, fn, inputValue, dataValue);
    fn.dispose();
    fresh.dispose();
  });
}
runtime.dispose();

function vm_eval(vm, source) {
  return vm.unwrapResult(vm.evalCode(source));
}
