// A server-sent-events reader for fetch(): EventSource cannot send an Authorization header, so
// the Studio reads the stream itself. `createSseParser` follows the WHATWG "event stream
// interpretation" rules; `followStream` connects, parses, and reconnects with Last-Event-ID.

/**
 * @typedef {{ id: string, event: string, data: string, retry?: number }} SseMessage
 */

/**
 * A push parser: feed it decoded text in chunks of any size; it calls onMessage for each
 * message dispatched (at a blank line), and onComment for each comment line (`: keep-alive`).
 * @param {(message: SseMessage) => void} onMessage
 * @param {(comment: string) => void} [onComment]
 */
export function createSseParser(onMessage, onComment) {
  let buffer = '';
  let data = [];
  let hasData = false;
  let event = '';
  let lastId = '';
  /** @type {number | undefined} */
  let retry;
  let first = true;

  function dispatch() {
    if (hasData) {
      onMessage({ id: lastId, event: event || 'message', data: data.join('\n'), retry });
    }
    data = [];
    hasData = false;
    event = '';
    retry = undefined;
  }

  /** @param {string} line */
  function line(line) {
    if (line === '') {
      dispatch();
      return;
    }
    if (line[0] === ':') {
      if (onComment) onComment(line.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    switch (field) {
      case 'data':
        data.push(value);
        hasData = true;
        break;
      case 'event':
        event = value;
        break;
      case 'id':
        if (!value.includes('\0')) lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) retry = Number(value);
        break;
      default:
        break;
    }
  }

  return {
    /** @param {string} chunk */
    push(chunk) {
      if (first && chunk.length > 0) {
        first = false;
        if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      }
      buffer += chunk;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c === '\n' || c === '\r') {
          // A CR at the very end may be the first half of CRLF: wait for the next chunk.
          if (c === '\r' && i === buffer.length - 1) break;
          line(buffer.slice(start, i));
          if (c === '\r' && buffer[i + 1] === '\n') i++;
          start = i + 1;
        }
      }
      buffer = buffer.slice(start);
    },
    /** The stream ended: a message not closed by a blank line is dropped, as the spec says. */
    end() {
      if (buffer === '\r') line('');
      buffer = '';
      data = [];
      hasData = false;
      event = '';
    },
    /** The id of the last message seen, for Last-Event-ID. */
    get lastEventId() {
      return lastId;
    },
  };
}

/**
 * Follows an SSE endpoint with fetch(), reconnecting after a drop with the Last-Event-ID
 * header, until `signal` aborts or the server answers with a status that retrying cannot fix.
 * @param {{
 *   url: string,
 *   headers?: Record<string, string>,
 *   lastEventId?: string,
 *   signal?: AbortSignal,
 *   fetch?: typeof fetch,
 *   onMessage: (message: SseMessage) => void,
 *   onOpen?: () => void,
 *   onError?: (error: unknown) => void,
 *   onFatal?: (status: number, body: string) => void,
 *   retryMs?: number,
 *   maxRetryMs?: number,
 *   sleep?: (ms: number, signal?: AbortSignal) => Promise<void>,
 * }} options
 * @returns {Promise<void>} settles when following stops
 */
export async function followStream(options) {
  const doFetch = options.fetch || globalThis.fetch.bind(globalThis);
  const sleep = options.sleep || defaultSleep;
  let lastEventId = options.lastEventId || '';
  let delay = options.retryMs ?? 1000;
  const maxDelay = options.maxRetryMs ?? 15000;
  const signal = options.signal;
  while (!signal || !signal.aborted) {
    try {
      /** @type {Record<string, string>} */
      const headers = { accept: 'text/event-stream', ...(options.headers || {}) };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      const response = await doFetch(options.url, { headers, signal, cache: 'no-store' });
      if (!response.ok) {
        const body = await response.text().catch(() => '');
        if (response.status === 401 || response.status === 403 || response.status === 404 || response.status === 400 || response.status === 422) {
          if (options.onFatal) options.onFatal(response.status, body);
          return;
        }
        throw new Error(`the event stream answered ${response.status}`);
      }
      if (!response.body) throw new Error('the event stream has no body');
      if (options.onOpen) options.onOpen();
      delay = options.retryMs ?? 1000;
      const parser = createSseParser((message) => {
        if (message.id) lastEventId = message.id;
        if (message.retry !== undefined) delay = message.retry;
        options.onMessage(message);
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(decoder.decode(value, { stream: true }));
      }
      parser.push(decoder.decode());
      parser.end();
    } catch (error) {
      if (signal && signal.aborted) return;
      if (options.onError) options.onError(error);
    }
    if (signal && signal.aborted) return;
    await sleep(delay, signal);
    delay = Math.min(maxDelay, delay * 2);
  }
}

/** @param {number} ms @param {AbortSignal} [signal] */
function defaultSleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(timer); resolve(undefined); }, { once: true });
  });
}
