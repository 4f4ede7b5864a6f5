// Output shapes (supplement §6): series, categories, table, text. The Studio draws one when
// the definition's output_schema is a shape's schema, or when the value has a shape's form.

/** @param {unknown} v */
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The shape of an output, or null.
 * @param {unknown} value
 * @param {any} [outputSchema]
 * @returns {'series'|'categories'|'table'|'text'|null}
 */
export function detectShape(value, outputSchema) {
  if (!isObj(value)) return null;
  const v = /** @type {any} */ (value);
  const hinted = shapeOfSchema(outputSchema);
  const fits = {
    series: () => Array.isArray(v.lines) && v.lines.every((l) => isObj(l) && Array.isArray(l.points) && l.points.every((p) => isObj(p) && 'x' in p && 'y' in p)),
    categories: () => Array.isArray(v.categories) && v.categories.every((c) => isObj(c) && typeof c.name === 'string' && (typeof c.value === 'number' || c.value === null)),
    table: () => Array.isArray(v.columns) && Array.isArray(v.rows) && v.columns.every((c) => isObj(c) && typeof c.name === 'string') && v.rows.every((r) => Array.isArray(r)),
    text: () => typeof v.text === 'string' && Object.keys(v).every((k) => k === 'text' || k === 'title'),
  };
  if (hinted && fits[hinted]()) return hinted;
  for (const shape of /** @type {const} */ (['series', 'categories', 'table', 'text'])) {
    if (fits[shape]()) return shape;
  }
  return null;
}

/**
 * The shape an output schema publishes, read from the properties it requires.
 * @param {any} schema
 * @returns {'series'|'categories'|'table'|'text'|null}
 */
export function shapeOfSchema(schema) {
  if (!isObj(schema)) return null;
  const props = isObj(schema.properties) ? schema.properties : {};
  if (props.lines) return 'series';
  if (props.categories) return 'categories';
  if (props.columns && props.rows) return 'table';
  if (props.text && Object.keys(props).every((k) => k === 'text' || k === 'title')) return 'text';
  return null;
}

/**
 * A series' points as the columns a line chart takes: one shared x (numbers, or dates as
 * seconds) and one y column per line, null where a line has no point at that x.
 * @param {{ lines: { name: string, points: { x: string|number, y: number }[] }[] }} series
 * @returns {{ xs: number[], ys: (number|null)[][], time: boolean, names: string[] }}
 */
export function seriesColumns(series) {
  const lines = series.lines || [];
  const time = lines.some((l) => l.points.some((p) => typeof p.x === 'string'));
  /** @param {string|number} x */
  const toX = (x) => (typeof x === 'number' ? x : Date.parse(/^\d{4}-\d\d(-\d\d)?$/.test(x) ? (x.length === 7 ? `${x}-01` : x) + 'T00:00:00Z' : x) / 1000);
  const set = new Set();
  for (const l of lines) for (const p of l.points) set.add(toX(p.x));
  const xs = /** @type {number[]} */ ([...set].filter((x) => Number.isFinite(x))).sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = lines.map((l) => {
    /** @type {(number|null)[]} */
    const col = new Array(xs.length).fill(null);
    for (const p of l.points) {
      const i = index.get(toX(p.x));
      if (i !== undefined) col[i] = typeof p.y === 'number' ? p.y : null;
    }
    return col;
  });
  return { xs, ys, time, names: lines.map((l) => l.name) };
}
