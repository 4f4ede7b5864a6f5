/**
 * The seq of the newest event of a playbook's log (its end), from probes of the listing after a
 * seq (`list_playbook_events?after=N&limit=L`): galloping, then a search that splits what is
 * left in `parallel + 1` parts a round, so a log of a million events takes a few rounds of small
 * requests. 0 for an empty log.
 *
 * `probe(after)` resolves to a boolean (does any event follow `after`?) or to the page the
 * listing answers, `{ events: [{ seq }], next }`: a page that is not full (`next` null) ends the
 * search at once, since its last seq is the end.
 *
 * The answer is a seq that some probe saw recorded (or `from`), so every event up to it was
 * recorded before the search ended (the log shows no seq before every smaller one): a listing
 * made after the search reflects at least those, and a stream from it misses nothing after.
 *
 * @param {(after: number) => Promise<boolean | { events: Array<{ seq: number }>, next?: string | null }>} probe
 * @param {{ from?: number, parallel?: number }} [options] `from`: a seq known to be recorded (the
 *   end is at least it, such as the last one seen before); `parallel`: probes sent at once.
 * @returns {Promise<number>}
 */
export async function findHead(probe, options = {}) {
  const parallel = Math.max(1, Math.floor(options.parallel || 1));
  let low = Math.max(0, Math.floor(options.from || 0)); // the end is at least low
  let high = Infinity; // no event followed high when it was probed
  let exact = null;
  /** @param {number} at */
  const ask = async (at) => {
    const answer = await probe(at);
    if (typeof answer === 'boolean') {
      if (answer) low = Math.max(low, at + 1);
      else high = Math.min(high, at);
      return;
    }
    const events = (answer && answer.events) || [];
    if (events.length === 0) {
      high = Math.min(high, at);
      return;
    }
    const last = Number(events[events.length - 1].seq);
    if (answer.next === null || answer.next === undefined) exact = Math.max(exact ?? 0, last);
    else low = Math.max(low, last);
  };
  await ask(low);
  let step = 1024;
  for (let round = 0; exact === null && low < high && round < 200; round++) {
    /** @type {number[]} */
    const points = [];
    if (high === Infinity) {
      for (let i = 0; i < parallel; i++) {
        points.push(low + step);
        step *= 4;
      }
    } else {
      for (let i = 1; i <= parallel; i++) {
        const at = low + Math.floor(((high - low) * i) / (parallel + 1));
        if (!points.includes(at)) points.push(at);
      }
    }
    await Promise.all(points.map(ask));
  }
  if (exact !== null) return Math.max(exact, low);
  return low;
}
