'use client';
import { ShareButton } from '../share/share-button.tsx';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useMemo, useState, type FormEvent } from 'react';
import { useTRPCClient } from '@/lib/trpc.ts';
import { CompareView } from './compare-view.tsx';
import { buildTimeline, stateAt, type ReplayState, type Speed } from './replay.ts';
import { ReplayControls } from './replay-controls.tsx';
import { TraceHeader } from './trace-header.tsx';
import { TraceTurns } from './trace-turns.tsx';
import type { TokenRecordWire, TrajectoryDetail } from '../../contracts/trajectory.ts';
import { useReplay } from './use-replay.ts';
import { TokenPanel } from './token-panel.tsx';
import { ModeSwitch, type TraceMode } from './mode-switch.tsx';

/**
 * `trajectories.get` through the plain client, typed by ./types.ts: the inspector then does not depend on the
 * router's inferred type (which hides the stored JSON `content` behind an unknown/JsonValue type anyway).
 */
type TrajectoriesClient = {
  trajectories: {
    get: { query(input: { id: string }): Promise<TrajectoryDetail> };
    tokens: { query(input: { id: string }): Promise<{ record: TokenRecordWire | null }> };
  };
};

function useTrajectory(id: string | null) {
  const client = useTRPCClient() as unknown as TrajectoriesClient;
  return useQuery({
    queryKey: ['trajectories', 'get', id],
    queryFn: () => client.trajectories.get.query({ id: id as string }),
    enabled: id !== null,
    // A stored trajectory never changes.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
  });
}

/** The token record, fetched only once the token view is opened. */
function useTokens(id: string, enabled: boolean) {
  const client = useTRPCClient() as unknown as TrajectoriesClient;
  return useQuery({
    queryKey: ['trajectories', 'tokens', id],
    queryFn: () => client.trajectories.tokens.query({ id }),
    enabled,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
  });
}

const isNotFound = (e: unknown) => (e as { data?: { code?: string } } | null)?.data?.code === 'NOT_FOUND';

export interface TraceViewProps {
  id: string;
  compareId: string | null;
  initialT: number | null;
  initialSpeed: Speed;
  initialMode?: TraceMode;
}

/** The trace inspector: one trajectory turn by turn (or two side by side), with a replay of its recorded timeline. */
export function TraceView({ id, compareId, initialT, initialSpeed, initialMode = 'turns' }: TraceViewProps) {
  const main = useTrajectory(id);
  const [mode, setMode] = useState<TraceMode>(initialMode);
  const tokens = useTokens(id, mode === 'tokens' && !compareId);
  const other = useTrajectory(compareId);
  const timelines = useMemo(
    () => [main.data, other.data].filter((d): d is TrajectoryDetail => !!d).map((d) => buildTimeline(d.content)),
    [main.data, other.data],
  );
  const replay = useReplay(timelines, initialT, initialSpeed);

  if (main.isPending)
    return (
      <div className="panel empty" role="status">
        Loading trajectory {id}…
      </div>
    );
  if (main.error) return <LoadError id={id} error={main.error} retry={() => void main.refetch()} />;
  const a = main.data;
  const stateA = stateAt(timelines[0], replay.t);
  const b = compareId ? other.data : undefined;
  const stateB = b ? stateAt(timelines[1], replay.t) : null;

  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Trajectory {a.id}</h1>
        <div className="row">
          <ShareButton scope="trajectory" target={{ trajectoryId: a.id }} />
          <CompareForm id={id} compareId={compareId} />
        </div>
      </div>
      <ReplayControls
        t={replay.t}
        duration={replay.duration}
        playing={replay.playing}
        speed={replay.speed}
        status={describe(stateA, a.content.turns.length)}
        onPlayPause={replay.playing ? replay.pause : replay.play}
        onStepBack={replay.back}
        onStepForward={replay.forward}
        onSeek={replay.seek}
        onSpeed={replay.setSpeed}
      />
      {compareId && other.isPending && (
        <div className="panel empty" role="status">
          Loading trajectory {compareId} to compare…
        </div>
      )}
      {compareId && other.error && <LoadError id={compareId} error={other.error} retry={() => void other.refetch()} />}
      {b && stateB ? (
        <CompareView a={a} b={b} stateA={stateA} stateB={stateB} />
      ) : (
        <>
          <TraceHeader t={a} />
          <details style={{ margin: '12px 0' }}>
            <summary>
              Prompt <span className="muted">({a.promptTokens} tokens)</span>
            </summary>
            <pre
              className="panel"
              style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', maxHeight: 360, overflow: 'auto' }}
              role="region"
              tabIndex={0}
              aria-label="Prompt text"
            >
              {a.content.prompt}
            </pre>
          </details>
          <div className="row" style={{ justifyContent: 'space-between' }}>
            <h2>{mode === 'turns' ? 'Turns' : 'Tokens'}</h2>
            <ModeSwitch mode={mode} onMode={setMode} />
          </div>
          {mode === 'turns' ? (
            <TraceTurns t={a} state={stateA} playing={replay.playing} />
          ) : (
            <TokenPanel turns={a.content.turns} query={tokens} />
          )}
        </>
      )}
    </div>
  );
}

/** What the replay shows now, for the live status line. */
function describe(s: ReplayState, total: number): string {
  if (total === 0) return 'no turns to replay';
  if (s.finished) return `finished · ${total} turn${total === 1 ? '' : 's'}`;
  if (s.current < 0) return 'at the start';
  const where = `turn ${s.current + 1} of ${total}`;
  const view = s.turns[s.turns.length - 1];
  if (view.generating) return `${where} · generating`;
  if (s.toolRunning !== null) return `${where} · tool running`;
  return where;
}

function LoadError({ id, error, retry }: { id: string; error: unknown; retry(): void }) {
  if (isNotFound(error)) {
    return (
      <div className="panel empty" role="alert">
        <p>
          No trajectory with id <code>{id}</code>.
        </p>
        <Link href="/">Back to the dashboard</Link>
      </div>
    );
  }
  return (
    <div className="panel" role="alert">
      <p className="error">
        Could not load trajectory {id}: {error instanceof Error ? error.message : String(error)}
      </p>
      <button type="button" onClick={retry} aria-label={`Retry loading trajectory ${id}`}>
        Retry
      </button>
    </div>
  );
}

/** Pick another trajectory to put beside this one (?compare=); a real navigation, so it lands in history. */
function CompareForm({ id, compareId }: { id: string; compareId: string | null }) {
  const router = useRouter();
  const [value, setValue] = useState(compareId ?? '');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const other = value.trim();
    if (!other || other === id) return;
    router.push(`/trajectories/${encodeURIComponent(id)}?compare=${encodeURIComponent(other)}`);
  };
  return (
    <form className="row" onSubmit={submit} aria-label="Compare with another trajectory" style={{ gap: 6 }}>
      <label htmlFor="compare-id" className="muted">
        Compare with
      </label>
      <input
        id="compare-id"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        placeholder="trajectory id"
        style={{
          background: 'var(--panel)',
          color: 'var(--text)',
          border: '1px solid var(--line)',
          borderRadius: 4,
          padding: '5px 8px',
          font: 'inherit',
          width: 200,
        }}
      />
      <button type="submit" disabled={!value.trim() || value.trim() === id}>
        Compare
      </button>
      {compareId && (
        <Link href={`/trajectories/${encodeURIComponent(id)}`} aria-label="Close the comparison">
          Close comparison
        </Link>
      )}
    </form>
  );
}
