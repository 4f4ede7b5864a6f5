// A client of auto: the types generated from the server's OpenAPI document (`./api.js`, every
// operation and schema, through openapi-fetch), and the few things most programs do with them,
// written by hand here: save a definition, run it and wait for its ending, follow a run's
// events as they are recorded, and answer the requests in the inbox.
//
//   const auto = new Auto({ baseUrl: "http://127.0.0.1:8040", org: "acme", playbook: "main" });
//   const run = await auto.run("computation", "add-one", { x: 41 });
//   console.log(run.output);
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./api.js";

export type { components, paths };
type Schemas = components["schemas"];
export type RunOut = Schemas["RunOut"];
export type EventOut = Schemas["EventOut"];
export type RequestOut = Schemas["RequestOut"];
export type DefinitionOut = Schemas["DefinitionOut"];
export type DefinitionType = Schemas["DefinitionType"];
export type Problem = Schemas["Problem"];

/** The event types that end a run. */
export const ENDINGS: readonly string[] = ["run_succeeded", "run_rejected", "run_failed"];

/** A refusal of the server, with its problem document. */
export class AutoError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
  }
}

export interface Options {
  baseUrl: string;
  org: string;
  playbook: string;
  /** A key of the server's configuration; a server with no key takes none. */
  key?: string;
}

/** One playbook of one server. */
export class Auto {
  readonly api: Client<paths>;
  private readonly path: { org: string; pb: string };

  constructor(readonly options: Options) {
    const headers: Record<string, string> = options.key
      ? { Authorization: `Bearer ${options.key}` }
      : {};
    this.api = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/$/, ""), headers });
    this.path = { org: options.org, pb: options.playbook };
  }

  /** Saves version 1 of a definition. */
  async save(type: DefinitionType, name: string, source: string): Promise<DefinitionOut> {
    const { data, error } = await this.api.POST("/v1/orgs/{org}/playbooks/{pb}/definitions", {
      params: { path: this.path },
      body: { type, name, source, diagram: "none" },
    });
    return answered(data, error);
  }

  /** Runs a definition; with `wait` (the default), a run that goes on is followed to its end. */
  async run(
    type: DefinitionType,
    name: string,
    input: Record<string, unknown> = {},
    options: { runId?: string; wait?: boolean; timeoutMs?: number } = {},
  ): Promise<RunOut> {
    const { data, error } = await this.api.POST(
      "/v1/orgs/{org}/playbooks/{pb}/definitions/{type}/{name}/runs",
      {
        params: { path: { ...this.path, type, name } },
        body: options.runId === undefined ? { input } : { input, run_id: options.runId },
      },
    );
    const run = answered(data, error);
    if (options.wait !== false && run.status === "started") {
      return this.wait(run.run_id, options.timeoutMs);
    }
    return run;
  }

  async getRun(runId: string): Promise<RunOut> {
    const { data, error } = await this.api.GET("/v1/orgs/{org}/playbooks/{pb}/runs/{run_id}", {
      params: { path: { ...this.path, run_id: runId } },
    });
    return answered(data, error);
  }

  /** The run once it has ended: its events followed until the ending is recorded. */
  async wait(runId: string, timeoutMs = 300_000): Promise<RunOut> {
    const run = await this.getRun(runId);
    if (run.status !== "started") return run;
    for await (const event of this.follow(runId, { timeoutMs })) {
      if (ENDINGS.includes(event.type)) break;
    }
    return this.getRun(runId);
  }

  /**
   * The playbook's events in order as they are recorded (a run's, with `runId`), from the
   * server-sent events stream, resumed after the last one read when the connection drops;
   * ends when the caller stops reading or `timeoutMs` passes.
   */
  async *follow(
    runId?: string,
    options: { after?: number | "end"; timeoutMs?: number } = {},
  ): AsyncGenerator<EventOut> {
    const deadline = Date.now() + (options.timeoutMs ?? 300_000);
    let last = String(options.after ?? 0);
    const { org, pb } = this.path;
    while (Date.now() < deadline) {
      const query = new URLSearchParams({ after: last });
      if (runId !== undefined) query.set("run_id", runId);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
      try {
        const response = await fetch(
          `${this.options.baseUrl.replace(/\/$/, "")}/v1/orgs/${org}/playbooks/${pb}/events/stream?${query}`,
          { headers: this.headers(), signal: controller.signal },
        );
        if (response.status !== 200 || response.body === null) {
          throw new AutoError((await response.json()) as Problem);
        }
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        let data: string[] = [];
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let newline: number;
          while ((newline = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, newline).replace(/\r$/, "");
            buffer = buffer.slice(newline + 1);
            if (line.startsWith("id:")) last = line.slice(3).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).trim());
            else if (line === "" && data.length > 0) {
              const event = JSON.parse(data.join("\n")) as EventOut;
              data = [];
              yield event;
            }
          }
        }
      } catch (error) {
        if (error instanceof AutoError) throw error;
        if (controller.signal.aborted) return;
        await new Promise((done) => setTimeout(done, 200));
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
    }
  }

  /** The inbox: the requests of `status`, newest first. */
  async requests(status: Schemas["RequestStatus"] = "open"): Promise<RequestOut[]> {
    const { data, error } = await this.api.GET("/v1/orgs/{org}/playbooks/{pb}/requests", {
      params: { path: this.path, query: { status } },
    });
    return answered(data, error).requests;
  }

  /** Answers a request; an answer that misses what it asks for throws, and it stays open. */
  async answer(requestId: string, answer: unknown): Promise<RequestOut> {
    const { data, error } = await this.api.POST(
      "/v1/orgs/{org}/playbooks/{pb}/requests/{request_id}/answer",
      { params: { path: { ...this.path, request_id: requestId } }, body: { answer } },
    );
    return answered(data, error);
  }

  private headers(): Record<string, string> {
    return this.options.key ? { Authorization: `Bearer ${this.options.key}` } : {};
  }
}

function answered<T>(data: T | undefined, error: Problem | undefined): T {
  if (data === undefined) throw new AutoError(error as Problem);
  return data;
}
