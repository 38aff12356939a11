'use client';

type Issue = { path: string; message: string };

/** Every validation error, each a button that focuses its field. */
export function ValidationSummary({
  state,
  errors,
  error,
}: {
  state: 'pending' | 'ok' | 'invalid' | 'error';
  errors: Issue[];
  error?: string;
}) {
  const focus = (path: string) => {
    // The field itself, else the nearest enclosing one that is on the page ("stages.1.data" → its kind select).
    const parts = path.split('.');
    for (let n = parts.length; n > 0; n--) {
      const p = parts.slice(0, n).join('.');
      const el = document.getElementById(`f-${p}`) ?? document.getElementById(`f-${p}.kind`);
      if (el) {
        el.scrollIntoView({ block: 'center' });
        el.focus();
        return;
      }
    }
  };
  return (
    <section className={`validation ${state}`} aria-label="Validation" aria-live="polite">
      {state === 'pending' && <span className="muted">Checking…</span>}
      {state === 'ok' && <span className="badge ok">valid</span>}
      {state === 'error' && <span className="error">Could not validate: {error}</span>}
      {state === 'invalid' && (
        <>
          <span className="badge fail">
            {errors.length} error{errors.length === 1 ? '' : 's'}
          </span>
          <ul className="error-list">
            {errors.map((e, i) => (
              <li key={`${e.path}-${i}`}>
                <button type="button" className="rd-linkish" onClick={() => focus(e.path)}>
                  {e.path || '(recipe)'}
                </button>
                : {e.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
