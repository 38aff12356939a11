'use client';
import { useState } from 'react';
import { parseSpecJson, specToJson, type Spec } from './path.ts';

/**
 * The spec as JSON, kept in sync both ways: a form edit rewrites the text; valid typed JSON replaces the spec;
 * invalid JSON shows the parse error and leaves the spec (and the form) as they were.
 */
export function JsonPane({ spec, onSpec }: { spec: Spec; onSpec: (s: Spec) => void }) {
  const [text, setText] = useState(() => specToJson(spec));
  const [textSpec, setTextSpec] = useState(spec);
  const [error, setError] = useState<string | null>(null);
  if (textSpec !== spec) {
    // The spec changed elsewhere (the form): show it.
    setTextSpec(spec);
    setText(specToJson(spec));
    setError(null);
  }
  return (
    <section className="json-pane" aria-label="Recipe JSON">
      <label htmlFor="recipe-json" className="json-label">
        JSON <span className="muted">(edit either side)</span>
      </label>
      <textarea
        id="recipe-json"
        spellCheck={false}
        value={text}
        aria-invalid={error !== null || undefined}
        aria-describedby={error ? 'recipe-json-error' : undefined}
        onChange={(e) => {
          setText(e.target.value);
          const r = parseSpecJson(e.target.value);
          if (!r.ok) {
            setError(r.error);
            return;
          }
          setError(null);
          setTextSpec(r.spec);
          onSpec(r.spec);
        }}
      />
      {error && (
        <p id="recipe-json-error" className="field-error" role="alert">
          Invalid JSON (the form keeps the last valid recipe): {error}
        </p>
      )}
    </section>
  );
}
