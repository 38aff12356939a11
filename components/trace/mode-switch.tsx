'use client';

import type { TraceMode } from './token-scale.ts';

export type { TraceMode };

/** Turns (the replay) or tokens (the token view); written to the URL as ?view=tokens so a link opens the same view. */
export function ModeSwitch({ mode, onMode }: { mode: TraceMode; onMode(m: TraceMode): void }) {
  const pick = (m: TraceMode) => {
    onMode(m);
    const u = new URL(window.location.href);
    if (m === 'tokens') u.searchParams.set('view', 'tokens');
    else u.searchParams.delete('view');
    window.history.replaceState(window.history.state, '', u);
  };
  return (
    <div className="row" role="group" aria-label="Trace view" style={{ gap: 4 }}>
      <button type="button" aria-pressed={mode === 'turns'} onClick={() => pick('turns')}>
        Turns
      </button>
      <button type="button" aria-pressed={mode === 'tokens'} onClick={() => pick('tokens')}>
        Tokens
      </button>
    </div>
  );
}
