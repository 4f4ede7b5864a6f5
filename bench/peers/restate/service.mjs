// The workload as a Restate service: one handler whose three durable steps (`ctx.run`) each
// call a function {x} -> {x: x + 1}. Served with the SDK's default endpoint (HTTP/2,
// bidirectional), on the port given as the first argument.

// The SDK uses Promise.withResolvers (Node 22); Node 20 lacks it, so it is added here, as the
// standard defines it, before the SDK is loaded.
if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
const restate = await import("@restatedev/restate-sdk");

const addOne = (input) => ({ x: input.x + 1 });

const addThreeTimes = restate.service({
  name: "AddThreeTimes",
  handlers: {
    run: async (ctx, input) => {
      let data = input;
      data = await ctx.run("first", () => addOne(data));
      data = await ctx.run("second", () => addOne(data));
      data = await ctx.run("third", () => addOne(data));
      return data;
    },
  },
});

const port = Number(process.argv[2] ?? 9080);
await restate.serve({ services: [addThreeTimes], port });
