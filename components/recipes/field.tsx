'use client';
import { useState, type ReactNode } from 'react';
import { useDesigner } from './context.tsx';
import { defaultText, type Catalogue, type FieldDef } from './fields.ts';
import { getPath } from './path.ts';

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** What typed text means: empty → unset (or null), a number → the number, anything else stays text (an error). */
function parseNumberText(text: string, nullable: boolean): unknown {
  const t = text.trim();
  if (t === '') return nullable ? null : undefined;
  return NUMBER_RE.test(t) ? Number(t) : text;
}

function showValue(v: unknown): string {
  return v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A number box that keeps what was typed ("1e-3") while it still means the spec's value. */
function NumberInput({
  value,
  nullable,
  onValue,
  ...rest
}: { value: unknown; nullable: boolean; onValue: (v: unknown) => void } & Omit<
  React.InputHTMLAttributes<HTMLInputElement>,
  'value' | 'onChange'
>) {
  const [draft, setDraft] = useState(showValue(value));
  const [seen, setSeen] = useState(value);
  if (!Object.is(seen, value)) {
    setSeen(value);
    if (!Object.is(parseNumberText(draft, nullable), value)) setDraft(showValue(value));
  }
  return (
    <input
      {...rest}
      type="text"
      inputMode="decimal"
      value={draft}
      onChange={(e) => {
        setDraft(e.target.value);
        onValue(parseNumberText(e.target.value, nullable));
      }}
    />
  );
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('.');
  return i < 0 ? '' : path.slice(0, i);
}

/** One catalogue field at `base + k`: label, control, one-line help, its validation errors. */
export function Field({ cat, k, base = '' }: { cat: Catalogue; k: string; base?: string }) {
  const f = cat[k];
  const { spec, set, errors, resolved, modelKind } = useDesigner();
  if (!f) return <p className="error">Unknown field {k}</p>;
  const path = base + k;
  const id = `f-${path}`;
  const value = getPath(spec, path);
  // A discriminator also owns the errors of its object ("stages.1.dataFilter", "model").
  const errs = [...(errors.get(path) ?? []), ...(f.kind === 'variant' ? (errors.get(parentOf(path)) ?? []) : [])];
  const r = getPath(resolved, path);
  const placeholder =
    value === undefined && r !== undefined && r !== null && typeof r !== 'object'
      ? String(r)
      : defaultText(f, modelKind);
  const described = `${id}-help${errs.length ? ` ${id}-err` : ''}`;
  const common = { id, 'aria-describedby': described, 'aria-invalid': errs.length > 0 || undefined };

  if (f.kind === 'families' || f.kind === 'difficulty')
    return <ChoiceSet f={f} id={id} value={value} errs={errs} onValue={(v) => set(path, v)} />;
  // A checkbox carries its label inside; every other control has one beside it.
  const labelled = f.kind !== 'bool' && f.kind !== 'toggle';
  const control = <Control f={f} path={path} value={value} common={common} placeholder={placeholder} set={set} />;
  return (
    <div className={`field${errs.length ? ' invalid' : ''}${f.kind === 'textarea' ? ' wide' : ''}`}>
      {labelled && <label htmlFor={id}>{f.label}</label>}
      {control}
      <div id={`${id}-help`} className="field-help">
        {f.help}
      </div>
      {errs.length > 0 && (
        <div id={`${id}-err`} className="field-error">
          {errs.join('; ')}
        </div>
      )}
    </div>
  );
}

type Common = { id: string; 'aria-describedby': string; 'aria-invalid': true | undefined };
interface ControlProps {
  f: FieldDef;
  path: string;
  value: unknown;
  common: Common;
  placeholder: string;
  set: (path: string, value: unknown) => void;
}

/** The input of one field by its kind (not the families and difficulty sets, which are their own part). */
function Control(props: ControlProps): ReactNode {
  const { f, path, value, common, placeholder, set } = props;
  switch (f.kind) {
    case 'int':
    case 'number':
      return (
        <NumberInput
          {...common}
          value={value}
          nullable={!!f.nullable}
          placeholder={placeholder}
          onValue={(v) => set(path, v)}
        />
      );
    case 'text':
      return (
        <input
          {...common}
          type="text"
          value={showValue(value)}
          placeholder={placeholder}
          onChange={(e) => set(path, e.target.value === '' && f.def !== undefined ? undefined : e.target.value)}
        />
      );
    case 'list': {
      const shown = Array.isArray(value) ? value.join(', ') : showValue(value);
      return (
        <input
          {...common}
          type="text"
          value={shown}
          placeholder={placeholder}
          onChange={(e) => {
            const items = e.target.value
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean);
            set(path, items.length === 0 && f.def !== undefined ? undefined : items);
          }}
        />
      );
    }
    case 'textarea':
      return (
        <textarea
          {...common}
          rows={2}
          value={showValue(value)}
          placeholder={placeholder}
          onChange={(e) => set(path, e.target.value === '' ? undefined : e.target.value)}
        />
      );
    case 'select':
    case 'variant':
      return <SelectControl {...props} />;
    case 'fixed':
      return <input {...common} type="text" readOnly value={showValue(value ?? f.def ?? '')} className="fixed" />;
    case 'bool':
    case 'toggle':
      return <CheckControl {...props} />;
  }
  return null;
}

/** A select of the field's options; a variant's select replaces its whole object with the chosen variant's. */
function SelectControl({ f, path, value, common, placeholder, set }: ControlProps) {
  const opts = f.options ?? [];
  const current = f.aliases?.[showValue(value)] ?? showValue(value);
  const extra = current !== '' && !opts.includes(current) ? [current] : [];
  return (
    <select
      {...common}
      value={current}
      onChange={(e) => {
        const v = e.target.value;
        if (f.kind === 'variant') set(parentOf(path), structuredClone(f.variants?.[v] ?? { kind: v }));
        else set(path, v === '' ? undefined : v);
      }}
    >
      {(current === '' || f.kind === 'select') && f.def !== undefined && (
        <option value="">default ({placeholder})</option>
      )}
      {current === '' && f.def === undefined && (
        <option value="" disabled>
          choose…
        </option>
      )}
      {[...opts, ...extra].map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

/** A checkbox: a bool field's value, or a toggle's object on (its `on` value) or off. */
function CheckControl({ f, path, value, common, set }: ControlProps) {
  const checked =
    f.kind === 'bool' ? (typeof value === 'boolean' ? value : f.def === 'true') : value !== undefined && value !== null;
  return (
    <label className="check">
      <input
        {...common}
        type="checkbox"
        checked={checked}
        onChange={(e) =>
          set(
            path,
            f.kind === 'bool' ? e.target.checked : e.target.checked ? structuredClone(f.on) : (f.off ?? undefined),
          )
        }
      />
      {f.label}
    </label>
  );
}

/** Families / difficulty levels: a set of checkboxes; nothing ticked = the default. */
function ChoiceSet({
  f,
  id,
  value,
  errs,
  onValue,
}: {
  f: FieldDef;
  id: string;
  value: unknown;
  errs: string[];
  onValue: (v: unknown) => void;
}) {
  const numeric = f.kind === 'difficulty';
  const chosen: string[] = Array.isArray(value)
    ? value.map(String)
    : value === undefined || value === null
      ? []
      : [String(value)];
  const toggle = (o: string, on: boolean) => {
    const next = (f.options ?? []).filter((x) => (x === o ? on : chosen.includes(x)));
    onValue(next.length === 0 ? undefined : numeric ? next.map(Number) : next);
  };
  return (
    <fieldset
      className={`field wide choice${errs.length ? ' invalid' : ''}`}
      id={id}
      tabIndex={-1}
      aria-describedby={`${id}-help`}
    >
      <legend>{f.label}</legend>
      <div className="choice-options">
        {(f.options ?? []).map((o) => (
          <label key={o} className="check">
            <input
              type="checkbox"
              checked={chosen.includes(o)}
              onChange={(e) => toggle(o, e.target.checked)}
              aria-label={`${f.label}: ${o}`}
            />
            {o}
          </label>
        ))}
        {chosen.length === 0 && <span className="muted">default: {defaultText(f, 'embedded')}</span>}
      </div>
      <div id={`${id}-help`} className="field-help">
        {f.help}
      </div>
      {errs.length > 0 && <div className="field-error">{errs.join('; ')}</div>}
    </fieldset>
  );
}
