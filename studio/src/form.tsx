import { useState } from 'preact/hooks';
import { describe, getAt, setAt, parseInput, initialValue, type Field } from './lib/schemaForm.js';

export { describe, initialValue };
export type { Field };

interface Props {
  field: Field;
  value: unknown;
  onChange: (value: unknown) => void;
  issues: Map<string, string[]>;
  idPrefix: string;
}

/** A form generated from a JSON Schema; the value is the JSON being built. */
export function SchemaForm({ field, value, onChange, issues, idPrefix }: Props) {
  if (field.kind === 'object') {
    return (
      <div class="form-fields">
        {(field.children || []).map((child) => (
          <FieldView key={child.pointer} field={child} root={value} onRoot={onChange} issues={issues} idPrefix={idPrefix} />
        ))}
        {(field.children || []).length === 0 && <p class="muted">It takes no fields.</p>}
      </div>
    );
  }
  return (
    <div class="form-fields">
      <FieldView field={field} root={value} onRoot={onChange} issues={issues} idPrefix={idPrefix} />
    </div>
  );
}

function FieldView({ field, root, onRoot, issues, idPrefix }: { field: Field; root: unknown; onRoot: (v: unknown) => void; issues: Map<string, string[]>; idPrefix: string }) {
  const id = `${idPrefix}${field.pointer.replace(/[^A-Za-z0-9_-]/g, '_') || '_root'}`;
  const value = getAt(root, field.pointer);
  const set = (v: unknown) => onRoot(setAt(root, field.pointer, v));
  const errors = issues.get(field.pointer) || [];
  const described = [field.description || field.minLength !== undefined || field.maxLength !== undefined || field.minimum !== undefined || field.maximum !== undefined || field.format ? `${id}-d` : '', errors.length ? `${id}-e` : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name: field.key, 'aria-describedby': described, 'aria-invalid': errors.length ? true : undefined, 'data-pointer': field.pointer } as const;
  const label = (
    <span class="label-text">
      {field.label}
      {field.required ? <span class="req" aria-hidden="true"> *</span> : <span class="opt"> (optional)</span>}
    </span>
  );
  const limits = [
    field.minLength !== undefined ? `at least ${field.minLength} characters` : '',
    field.maxLength !== undefined ? `at most ${field.maxLength} characters` : '',
    field.minimum !== undefined ? `from ${field.minimum}` : '',
    field.maximum !== undefined ? `up to ${field.maximum}` : '',
    field.format ? field.format : '',
  ].filter(Boolean).join(', ');
  const helpText = [field.description, limits && `(${limits})`].filter(Boolean).join(' ');
  const help = helpText && <small id={`${id}-d`} class="help">{helpText}</small>;
  const errs = errors.length > 0 && (
    <div id={`${id}-e`} class="field-error" role="alert">{errors.map((m, i) => <div key={i}>{m}</div>)}</div>
  );
  let control;
  switch (field.kind) {
    case 'object':
      return (
        <fieldset class={`field group ${errors.length ? 'invalid' : ''}`} data-pointer={field.pointer}>
          <legend>{label}</legend>
          {help}
          {errs}
          {(field.children || []).map((c) => <FieldView key={c.pointer} field={c} root={root} onRoot={onRoot} issues={issues} idPrefix={idPrefix} />)}
        </fieldset>
      );
    case 'enum': {
      const opts = field.options || [];
      if (opts.length <= 4) {
        return (
          <fieldset class={`field radios ${errors.length ? 'invalid' : ''}`} data-pointer={field.pointer} aria-describedby={described}>
            <legend>{label}</legend>
            {help}
            <div class="radio-row">
              {opts.map((o, i) => (
                <label key={i} class="radio">
                  <input type="radio" name={id} value={String(o)} checked={value === o} onChange={() => set(o)} aria-invalid={errors.length ? true : undefined} />
                  {String(o)}
                </label>
              ))}
              {!field.required && value !== undefined && <button type="button" class="link small" onClick={() => set(undefined)}>clear</button>}
            </div>
            {errs}
          </fieldset>
        );
      }
      control = (
        <select {...common} value={value === undefined ? '' : String(value)} onChange={(e) => set(parseInput(field, (e.target as HTMLSelectElement).value))}>
          <option value="">{field.required ? 'Choose…' : '(none)'}</option>
          {opts.map((o, i) => <option key={i} value={String(o)}>{String(o)}</option>)}
        </select>
      );
      break;
    }
    case 'boolean':
      return (
        <div class={`field check ${errors.length ? 'invalid' : ''}`} data-pointer={field.pointer}>
          <label>
            <input type="checkbox" {...common} checked={value === true} onChange={(e) => set((e.target as HTMLInputElement).checked)} />
            {label}
          </label>
          {help}
          {errs}
        </div>
      );
    case 'number':
    case 'integer':
      control = (
        <input type="text" inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'} {...common}
          value={value === undefined ? '' : String(value)}
          onInput={(e) => set(parseInput(field, (e.target as HTMLInputElement).value))} />
      );
      break;
    case 'text':
      control = <textarea rows={4} {...common} value={typeof value === 'string' ? value : ''} onInput={(e) => set(parseInput(field, (e.target as HTMLTextAreaElement).value))} />;
      break;
    case 'string': {
      const type = field.format === 'date' ? 'date' : field.format === 'email' ? 'email' : field.format === 'uri' ? 'url' : 'text';
      control = <input type={type} {...common} value={typeof value === 'string' ? value : ''} onInput={(e) => set(parseInput(field, (e.target as HTMLInputElement).value))} />;
      break;
    }
    case 'array':
      return <ArrayField field={field} value={value} set={set} root={root} onRoot={onRoot} issues={issues} idPrefix={idPrefix} label={label} help={help} errs={errs} />;
    default:
      control = <JsonInput common={common} value={value} set={set} />;
  }
  return (
    <div class={`field ${errors.length ? 'invalid' : ''}`} data-pointer={field.pointer}>
      <label for={id}>{label}</label>
      {help}
      {control}
      {errs}
    </div>
  );
}

function ArrayField({ field, value, set, issues, idPrefix, label, help, errs }: any) {
  const items: unknown[] = Array.isArray(value) ? value : [];
  const item: Field = field.item;
  return (
    <fieldset class="field group" data-pointer={field.pointer}>
      <legend>{label}</legend>
      {help}
      {items.map((v, i) => {
        const itemField = rebase(item, `${field.pointer}/${i}`, `${field.label} ${i + 1}`);
        return (
          <div class="array-item" key={i}>
            <ArrayItemEditor itemField={itemField} value={v} onChange={(nv) => { const copy = items.slice(); copy[i] = nv; set(copy); }} issues={issues} idPrefix={idPrefix} />
            <button type="button" class="small" onClick={() => set(items.filter((_, j) => j !== i))} aria-label={`Remove ${field.label} ${i + 1}`}>Remove</button>
          </div>
        );
      })}
      <button type="button" class="small" onClick={() => set([...items, initialValue(item)])}>Add {field.label.toLowerCase()}</button>
      {errs}
    </fieldset>
  );
}

// An array item is edited as a form of its own, whose root is the item.
function ArrayItemEditor({ itemField, value, onChange, issues, idPrefix }: { itemField: Field; value: unknown; onChange: (v: unknown) => void; issues: Map<string, string[]>; idPrefix: string }) {
  const local = rebase(itemField, '', itemField.label);
  const prefixed = new Map<string, string[]>();
  for (const [p, m] of issues) if (p.startsWith(itemField.pointer)) prefixed.set(p.slice(itemField.pointer.length), m);
  return <FieldView field={local} root={value} onRoot={onChange} issues={prefixed} idPrefix={`${idPrefix}${itemField.pointer.replace(/[^A-Za-z0-9_-]/g, '_')}`} />;
}

function rebase(field: Field, pointer: string, label: string): Field {
  const shift = (f: Field, p: string): Field => ({
    ...f,
    pointer: p,
    children: f.children?.map((c) => shift(c, `${p}/${c.pointer.split('/').pop()}`)),
  });
  return { ...shift(field, pointer), label };
}

function JsonInput({ common, value, set }: { common: any; value: unknown; set: (v: unknown) => void }) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2));
  const [bad, setBad] = useState(false);
  return (
    <>
      <textarea rows={4} class="mono" {...common} value={text} onInput={(e) => {
        const t = (e.target as HTMLTextAreaElement).value;
        setText(t);
        if (t.trim() === '') { setBad(false); set(undefined); return; }
        try { set(JSON.parse(t)); setBad(false); } catch { setBad(true); }
      }} />
      {bad && <small class="field-error">This is not JSON yet.</small>}
    </>
  );
}
