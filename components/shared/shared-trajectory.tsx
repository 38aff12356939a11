'use client';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import type { StoredTrajectoryContent, StoredTurn, ToolCallRow } from '../../contracts/trajectory.ts';
import { errorCode } from '../ui/error-code.ts';
import { SharedError, SharedNotFound } from './shared-states.tsx';
import { TokenPanel } from '../trace/token-panel.tsx';
import { ModeSwitch } from '../trace/mode-switch.tsx';
import { CorrectBadge } from '../trace/badges.tsx';
import { parseMode, type TraceMode } from '../trace/token-scale.ts';

/** One shared trajectory, turn by turn: reasoning, code, tool output (plain text), then the verdict. */
export function SharedTrajectory({ token, trajectoryId }: { token: string; trajectoryId: string }) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.share.view.trajectory.queryOptions(
      { token, trajectoryId },
      { retry: false, staleTime: Infinity, refetchOnWindowFocus: false },
    ),
  );
  const [mode, setMode] = useState<TraceMode>('turns');
  // After mounting, so the server's render and the first client render agree.
  useEffect(() => {
    setMode(parseMode(new URL(window.location.href).searchParams.get('view')));
  }, []);
  const tokens = useQuery(
    trpc.share.view.trajectoryTokens.queryOptions(
      { token, trajectoryId },
      { retry: false, staleTime: Infinity, refetchOnWindowFocus: false, enabled: mode === 'tokens' },
    ),
  );
  if (q.error)
    return errorCode(q.error) === 'NOT_FOUND' ? (
      <SharedNotFound />
    ) : (
      <SharedError what="the trajectory" message={q.error.message} retry={() => void q.refetch()} />
    );
  if (!q.data)
    return (
      <div className="panel empty" role="status">
        Loading trajectory…
      </div>
    );
  const t = q.data;
  const content = (t.content ?? {}) as Partial<StoredTrajectoryContent>;
  const turns = Array.isArray(content.turns) ? content.turns : [];
  const rows = t.toolCalls as ToolCallRow[];
  const verdict = content.verdict;
  return (
    <article className="share-traj" aria-label={`Trajectory ${t.id}`}>
      <h2>
        Trajectory <code>{t.id}</code>
      </h2>
      <p className="muted">
        step {t.step} · {t.split} · problem {t.problemId ?? '—'} · sample {t.sampleIndex} · reward {t.reward} ·{' '}
        {t.turns} turns · {t.toolCalls.length} tool calls ({t.toolErrors} errors) · {t.promptTokens} prompt +{' '}
        {t.responseTokens} response tokens · finish {t.finishReason}
      </p>
      {content.prompt !== undefined && (
        <details className="share-prompt">
          <summary>Prompt</summary>
          <pre className="share-pre" role="region" tabIndex={0} aria-label="Prompt text">
            {content.prompt}
          </pre>
        </details>
      )}
      <ModeSwitch mode={mode} onMode={setMode} />
      {turns.length === 0 && <div className="panel empty">This trajectory has no recorded turns.</div>}
      {mode === 'tokens' && turns.length > 0 && <TokenPanel turns={turns} query={tokens} />}
      {mode === 'turns' &&
        turns.map((turn, i) => (
          <SharedTurn key={i} turn={turn} n={i + 1} row={rows.find((r) => r.turn === (turn.index ?? i))} />
        ))}
      <section className="panel share-verdict" aria-label="Answer and verdict">
        <div className="row">
          <strong>Verdict</strong>
          <CorrectBadge correct={t.correct} />
          {verdict?.method && <span className="muted">method {verdict.method}</span>}
        </div>
        <pre className="share-pre">{verdict?.extracted ?? t.answer ?? '(no answer extracted)'}</pre>
        {verdict?.reason && <p className="muted">{verdict.reason}</p>}
        {content.error && <p className="error">Engine error: {content.error}</p>}
      </section>
    </article>
  );
}

function SharedTurn({ turn, n, row }: { turn: StoredTurn; n: number; row?: ToolCallRow }) {
  const code = turn.parse?.kind === 'call' ? turn.parse.arguments?.code : (turn.tool?.arguments?.code ?? row?.code);
  const tool = turn.tool;
  const status = tool?.status ?? row?.status;
  const stdout = tool?.stdout ?? row?.stdout;
  const stderr = tool?.stderr ?? row?.stderr;
  const output =
    stdout === undefined && stderr === undefined
      ? tool?.text
      : [stdout, stderr].filter(Boolean).join(stdout && stderr ? '\n' : '');
  return (
    <section className="panel share-turn" aria-label={`Turn ${n}`}>
      <header className="row" style={{ justifyContent: 'space-between' }}>
        <strong>Turn {n}</strong>
        <span className="muted">
          {turn.absent?.tokens ? '—' : (turn.tokens ?? '—')} tokens · engine {turn.engineFinish ?? '—'}
        </span>
      </header>
      <h4 className="share-h4">Reasoning</h4>
      <div className="share-text">{turn.text || <span className="muted">(empty)</span>}</div>
      {turn.parse?.kind === 'parse_error' && (
        <p className="error">Tool call could not be parsed: {turn.parse.message}</p>
      )}
      {code !== undefined && code !== '' && (
        <>
          <h4 className="share-h4">Code</h4>
          <pre className="share-pre share-code" aria-label={`Turn ${n} code`}>
            {code}
          </pre>
        </>
      )}
      {(tool || row) && (
        <>
          <h4 className="share-h4">
            Tool output {status && <span className={`badge ${status === 'ok' ? 'ok' : 'fail'}`}>{status}</span>}
            {tool?.durationMs != null && <span className="muted"> {Math.round(tool.durationMs)} ms</span>}
          </h4>
          <pre className="share-pre share-out" aria-label={`Turn ${n} tool output`}>
            {output || '(no output)'}
            {(row?.exitCode ?? tool?.exitCode) != null
              ? `\n[exit ${row?.exitCode ?? tool?.exitCode}${(row?.errorType ?? tool?.errorType) ? ` · ${row?.errorType ?? tool?.errorType}` : ''}]`
              : ''}
          </pre>
        </>
      )}
    </section>
  );
}
