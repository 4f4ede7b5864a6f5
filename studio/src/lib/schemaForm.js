// From a JSON Schema to the fields of a form, and from the form back to a JSON value. The
// Studio draws a form for a run's input (input_schema) and for an answer in the inbox
// (output_schema); the server checks the value, and its issues come back with JSON pointers,
// which `placeIssues` puts beside the fields they name.

/**
 * @typedef {{
 *   pointer: string, key: string, label: string, description?: string, required: boolean,
 *   kind: 'object'|'string'|'text'|'number'|'integer'|'boolean'|'enum'|'array'|'json',
 *   format?: string, options?: Array<string|number|boolean|null>, default?: unknown,
 *   examples?: unknown[], minimum?: number, maximum?: number, minLength?: number,
 *   maxLength?: number, children?: Field[], item?: Field, nullable?: boolean, schema: any
 * }} Field
 */

const LONG_TEXT = /^(brief|text|body|message|review|note|notes|description|content|prompt|comment|comments|summary|details?|instructions?|question|answer|reason)$/i;

/** @param {string} segment */
export function escapePointer(segment) {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** @param {string} pointer @returns {string[]} */
export function splitPointer(pointer) {
  if (!pointer) return [];
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** @param {any} schema */
function mainType(schema) {
  let type = schema && schema.type;
  let nullable = false;
  if (Array.isArray(type)) {
    nullable = type.includes('null');
    const others = type.filter((t) => t !== 'null');
    type = others.length === 1 ? others[0] : others.length === 0 ? 'null' : undefined;
  }
  if (!type && schema && schema.properties) type = 'object';
  if (!type && schema && Array.isArray(schema.enum)) type = 'enum';
  return { type, nullable };
}

/** @param {string} key */
function labelOf(key) {
  if (!key) return 'Value';
  const words = key.replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The field a schema describes.
 * @param {any} schema
 * @param {{ pointer?: string, key?: string, required?: boolean, depth?: number }} [at]
 * @returns {Field}
 */
export function describe(schema, at = {}) {
  const pointer = at.pointer || '';
  const key = at.key || '';
  const depth = at.depth || 0;
  const s = schema && typeof schema === 'object' ? schema : {};
  const { type, nullable } = mainType(s);
  /** @type {Field} */
  const field = {
    pointer,
    key,
    label: s.title || labelOf(key),
    description: typeof s.description === 'string' ? s.description : undefined,
    required: !!at.required,
    kind: 'json',
    nullable,
    schema: s,
  };
  if (s.default !== undefined) field.default = s.default;
  if (Array.isArray(s.examples)) field.examples = s.examples;
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))) {
    field.kind = 'enum';
    field.options = s.enum;
    return field;
  }
  if (s.const !== undefined && ['string', 'number', 'boolean'].includes(typeof s.const)) {
    field.kind = 'enum';
    field.options = [s.const];
    return field;
  }
  switch (type) {
    case 'object': {
      if (depth > 6 || !s.properties || typeof s.properties !== 'object') {
        field.kind = 'json';
        return field;
      }
      const required = new Set(Array.isArray(s.required) ? s.required : []);
      field.kind = 'object';
      field.children = Object.keys(s.properties).map((name) =>
        describe(s.properties[name], {
          pointer: `${pointer}/${escapePointer(name)}`,
          key: name,
          required: required.has(name),
          depth: depth + 1,
        }),
      );
      return field;
    }
    case 'string':
      field.format = typeof s.format === 'string' ? s.format : undefined;
      if (typeof s.minLength === 'number') field.minLength = s.minLength;
      if (typeof s.maxLength === 'number') field.maxLength = s.maxLength;
      field.kind =
        (field.maxLength !== undefined && field.maxLength > 200) ||
        s.contentMediaType === 'text/markdown' ||
        (field.maxLength === undefined && LONG_TEXT.test(key))
          ? 'text'
          : 'string';
      return field;
    case 'number':
    case 'integer':
      field.kind = type;
      if (typeof s.minimum === 'number') field.minimum = s.minimum;
      if (typeof s.maximum === 'number') field.maximum = s.maximum;
      return field;
    case 'boolean':
      field.kind = 'boolean';
      return field;
    case 'array': {
      const items = s.items && typeof s.items === 'object' && !Array.isArray(s.items) ? s.items : null;
      if (!items || depth > 6) return field;
      const item = describe(items, { pointer: `${pointer}/-`, key: '', required: true, depth: depth + 1 });
      if (item.kind === 'json') return field;
      field.kind = 'array';
      field.item = item;
      return field;
    }
    default:
      return field;
  }
}

/**
 * The value a new form starts with: the schema's defaults, and an object for every object.
 * @param {Field} field
 * @returns {unknown}
 */
export function initialValue(field) {
  if (field.default !== undefined) return clone(field.default);
  switch (field.kind) {
    case 'object': {
      /** @type {Record<string, unknown>} */
      const out = {};
      for (const child of field.children || []) {
        const v = initialValue(child);
        if (v !== undefined) out[child.key] = v;
      }
      return out;
    }
    case 'boolean':
      return field.required ? false : undefined;
    case 'array':
      return field.required ? [] : undefined;
    case 'enum':
      return field.required && field.options && field.options.length === 1 ? field.options[0] : undefined;
    default:
      return undefined;
  }
}

/** @param {unknown} v */
function clone(v) {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

/**
 * The value at a pointer, or undefined.
 * @param {unknown} value @param {string} pointer
 */
export function getAt(value, pointer) {
  let cur = /** @type {any} */ (value);
  for (const seg of splitPointer(pointer)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[seg];
  }
  return cur;
}

/**
 * A copy of `value` with `next` at `pointer`; undefined removes the key (or the array item).
 * @param {unknown} value @param {string} pointer @param {unknown} next
 * @returns {unknown}
 */
export function setAt(value, pointer, next) {
  const segs = splitPointer(pointer);
  if (segs.length === 0) return next;
  const [head, ...rest] = segs;
  const restPointer = rest.map((s) => '/' + escapePointer(s)).join('');
  if (Array.isArray(value)) {
    const copy = value.slice();
    const index = head === '-' ? copy.length : Number(head);
    if (rest.length === 0 && next === undefined) {
      copy.splice(index, 1);
      return copy;
    }
    copy[index] = setAt(copy[index], restPointer, next);
    return copy;
  }
  /** @type {Record<string, unknown>} */
  const obj = value && typeof value === 'object' ? { ...(/** @type {any} */ (value)) } : {};
  if (rest.length === 0 && next === undefined) {
    delete obj[head];
    return obj;
  }
  const child = obj[head];
  const isIndex = rest.length > 0 && /^(\d+|-)$/.test(rest[0]);
  obj[head] = setAt(child === undefined ? (isIndex ? [] : {}) : child, restPointer, next);
  return obj;
}

/**
 * What a person typed into a field, as the JSON value to send. Numbers that do not parse stay
 * text, so the server names the issue beside the field.
 * @param {Field} field @param {string} text
 */
export function parseInput(field, text) {
  if (field.kind === 'number' || field.kind === 'integer') {
    if (text.trim() === '') return undefined;
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  if (field.kind === 'enum') {
    if (text === '') return undefined;
    const found = (field.options || []).find((o) => String(o) === text);
    return found === undefined ? text : found;
  }
  if (field.kind === 'string' || field.kind === 'text') {
    if (text === '' && !field.required) return undefined;
    if (field.format === 'date-time' && /^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(text)) return `${text}:00Z`;
    return text;
  }
  return text;
}

/**
 * The issues the form can see before sending: required fields left empty.
 * @param {Field} field @param {unknown} value
 * @returns {{ pointer: string, message: string }[]}
 */
export function missingRequired(field, value) {
  /** @type {{ pointer: string, message: string }[]} */
  const out = [];
  walk(field, value, true);
  return out;
  /** @param {Field} f @param {unknown} v @param {boolean} present */
  function walk(f, v, present) {
    if (!present) return;
    if (f.required && (v === undefined || v === '' || v === null)) {
      if (!(f.kind === 'object' && v !== undefined)) {
        out.push({ pointer: f.pointer, message: `${f.label} is required.` });
        return;
      }
    }
    if (f.kind === 'object' && v && typeof v === 'object') {
      for (const c of f.children || []) walk(c, /** @type {any} */ (v)[c.key], true);
    }
  }
}

/**
 * Puts each issue of a problem document beside the field it names: the issue's pointer, less
 * `prefix` (such as /answer or /input), or the nearest field above it. Issues that name no
 * field are `unplaced`.
 * @param {Array<{ pointer?: string, path?: string, message: string }>} issues
 * @param {string} prefix
 * @param {Field} root
 * @returns {{ byPointer: Map<string, string[]>, unplaced: string[] }}
 */
export function placeIssues(issues, prefix, root) {
  const pointers = new Set();
  collect(root);
  /** @param {Field} f */
  function collect(f) {
    pointers.add(f.pointer);
    for (const c of f.children || []) collect(c);
  }
  /** @type {Map<string, string[]>} */
  const byPointer = new Map();
  /** @type {string[]} */
  const unplaced = [];
  for (const issue of issues || []) {
    let p = issue.pointer || '';
    if (prefix && (p === prefix || p.startsWith(prefix + '/'))) p = p.slice(prefix.length);
    else if (prefix && issue.path) p = issue.path;
    else if (prefix) { unplaced.push(issue.message); continue; }
    // Array items: /tags/2 has no field of its own; the array's field takes it.
    let segs = splitPointer(p);
    for (;;) {
      const candidate = segs.map((s) => '/' + escapePointer(s)).join('');
      if (candidate !== '' && pointers.has(candidate)) {
        const list = byPointer.get(candidate) || [];
        list.push(issue.message);
        byPointer.set(candidate, list);
        break;
      }
      if (segs.length === 0) {
        unplaced.push(issue.message);
        break;
      }
      segs = segs.slice(0, -1);
    }
  }
  return { byPointer, unplaced };
}
