'use client';
import { forwardRef } from 'react';
import { PythonCode, codeBlockStyle } from './highlight.tsx';
import { formatMs, type TurnView as TurnReplay } from './replay.ts';
import { ToolOutput } from './tool-output.tsx';
import { ToolStatusBadge } from './badges.tsx';
import type { ToolCallRecord, StoredTurn } from '../../contracts/trajectory.ts';

const RED = '\u001b[31m',
  DIM = '\u001b[90m',
  RESET = '\u001b[0m';

/** The terminal text of a call: stdout, stderr in red, then exit code and error type dimmed. */
export function terminalText(tool: ToolCallRecord): string {
  if (tool.status === 'parse_error') return `${RED}${tool.text}${RESET}`;
  const parts: string[] = [];
  // Older rows may lack the raw result: the formatted text the model saw is the next best thing.
  if (tool.stdout === undefined && tool.stderr === undefined) parts.push(tool.text);
  else {
    if (tool.stdout) parts.push(tool.stdout.replace(/\n$/, ''));
    if (tool.stderr) parts.push(`${RED}${tool.stderr.replace(/\n$/, '')}${RESET}`);
  }
  const tail = [tool.exitCode !== undefined && tool.exitCode !== null ? `exit ${tool.exitCode}` : null, tool.errorType]
    .filter(Boolean)
    .join(' · ');
  if (tail) parts.push(`${DIM}[${tail}]${RESET}`);
  return parts.length ? parts.join('\n') : `${DIM}(no output)${RESET}`;
}

interface Props {
  turn: StoredTurn;
  /** The replay's view of this turn; absent when the whole trajectory is shown. */
  replay?: TurnReplay;
  /** Prefix for accessible names when two traces share the page ("A", "B"). */
  side?: string;
  current?: boolean;
}

/** One turn: the assistant's text, its parsed tool call, the tool's output in a terminal, status and latency. */
export const TurnView = forwardRef<HTMLElement, Props>(function TurnView({ turn, replay, side, current }, ref) {
  const name = `${side ? `${side} ` : ''}turn ${turn.index + 1}`;
  const generating = replay?.generating ?? false;
  const text = replay ? turn.text.slice(0, replay.shownChars) : turn.text;
  const phase = replay?.tool ?? (turn.tool ? 'done' : 'none');
  return (
    <article
      ref={ref}
      className="panel"
      aria-label={name}
      style={{ marginBottom: 12, borderColor: current ? 'var(--accent)' : undefined }}
    >
      <header className="row" style={{ justifyContent: 'space-between', marginBottom: 6 }}>
        <strong>Turn {turn.index + 1}</strong>
        <span className="muted">
          {turn.absent?.tokens ? '—' : turn.tokens} tokens · generated in{' '}
          {turn.absent?.timing ? '—' : formatMs(turn.genFinishedAt - turn.genStartedAt)} · engine {turn.engineFinish}
        </span>
      </header>
      <div style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', fontSize: 13.5 }}>
        {text}
        {generating && (
          <span aria-hidden="true" style={{ color: 'var(--accent)' }}>
            ▍
          </span>
        )}
        {!text && !generating && <span className="muted">(empty)</span>}
      </div>
      {!generating && <ToolCall turn={turn} name={name} />}
      {!generating && turn.tool && phase !== 'pending' && phase !== 'none' && (
        <ToolResult tool={turn.tool} name={name} phase={phase} />
      )}
    </article>
  );
});

function ToolCall({ turn, name }: { turn: StoredTurn; name: string }) {
  const p = turn.parse;
  if (p.kind === 'none')
    return (
      <p className="muted" style={{ margin: '8px 0 0' }}>
        No tool call in this turn.
      </p>
    );
  if (p.kind === 'parse_error') {
    return (
      <section aria-label={`${name} tool call`} style={{ marginTop: 10 }}>
        <div className="row" style={{ marginBottom: 4 }}>
          <strong>Tool call</strong>
          <ToolStatusBadge status="parse_error" />
        </div>
        <p className="error" style={{ margin: '0 0 4px' }}>
          {p.message}
        </p>
        <pre
          style={{ ...codeBlockStyle, whiteSpace: 'pre-wrap' }}
          role="region"
          aria-label={`${name} unparsed call`}
          tabIndex={0}
        >
          {p.raw}
        </pre>
      </section>
    );
  }
  return (
    <section aria-label={`${name} tool call`} style={{ marginTop: 10 }}>
      <div className="row" style={{ marginBottom: 4 }}>
        <strong>Tool call</strong>
        <code className="muted">{p.name}</code>
      </div>
      <PythonCode code={p.arguments.code} label={`${name} code`} />
      {p.arguments.input && (
        <>
          <div className="muted" style={{ margin: '6px 0 2px' }}>
            stdin
          </div>
          <pre style={codeBlockStyle} role="region" aria-label={`${name} stdin`} tabIndex={0}>
            {p.arguments.input}
          </pre>
        </>
      )}
    </section>
  );
}

function ToolResult({
  tool,
  name,
  phase,
}: {
  tool: ToolCallRecord;
  name: string;
  phase: 'queued' | 'running' | 'done';
}) {
  return (
    <section aria-label={`${name} tool output`} style={{ marginTop: 10 }}>
      <div className="row" style={{ marginBottom: 4 }}>
        <strong>Output</strong>
        {phase === 'done' ? (
          <ToolStatusBadge status={tool.status} />
        ) : (
          <span className="badge running" role="status">
            {phase}…
          </span>
        )}
        {phase === 'done' && (
          <span className="muted">
            ran {formatMs(tool.durationMs)} · queued {formatMs(tool.queueMs)} · round trip{' '}
            {tool.absent?.timing ? '—' : formatMs(tool.finishedAt - tool.queuedAt)} ·{' '}
            {tool.absent?.tokens ? '—' : tool.tokens} tokens
            {!tool.appended && <span className="error"> · not appended (over the length budget)</span>}
          </span>
        )}
        {phase === 'done' && tool.session && <SessionMark session={tool.session} />}
      </div>
      {phase === 'done' && (
        <>
          <ToolOutput text={terminalText(tool)} label={`${name} tool output terminal`} />
          <details style={{ marginTop: 4 }}>
            <summary className="muted">What the model saw</summary>
            <pre
              style={{ ...codeBlockStyle, whiteSpace: 'pre-wrap' }}
              role="region"
              tabIndex={0}
              aria-label={`${name} tool response text`}
            >
              {tool.appendedText || tool.text}
            </pre>
          </details>
        </>
      )}
    </section>
  );
}

/** A call of a `trajectory` session (recipe tool.session): whether it opened the interpreter, and whether it ended it. */
function SessionMark({ session }: { session: NonNullable<ToolCallRecord['session']> }) {
  const text = [
    session.new ? 'new session' : 'session continued',
    session.ended && 'session ended: its state is gone',
  ].filter(Boolean);
  return (
    <span className={`badge${session.ended ? ' error' : ''}`} title="the trajectory's calls share one interpreter">
      {text.join(' · ')}
    </span>
  );
}
