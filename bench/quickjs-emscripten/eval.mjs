// The expressions of crates/auto-script/benches/eval.rs in QuickJS compiled to WebAssembly
// (quickjs-emscripten) on Node: values in and out as JSON text, one reused context with a
// 64 MiB limit and an interrupt handler, and a fresh context per evaluation. The fresh case
// runs no prelude (no freezing, no Date replacement), so it costs less than the Rust one.
// Run: npm install && npm run bench
import { getQuickJS } from "quickjs-emscripten";

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
runtime.dispose();
