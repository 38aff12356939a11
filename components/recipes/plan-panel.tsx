'use client';
/**
 * The designer's Plan panel: the recipe as it is being edited, planned on a cluster preset in the browser
 * (contracts/plan.ts, the same functions as `npx toolsmith plan`), updated as fields change. Per RL stage: the
 * step time as bars of its phases, the bound phase highlighted; where the run's time goes (SFT, RL, evaluation, as
 * the CLI prints it); the run's steps, time, GPU-hours and storage.
 */
import { formatBytes, formatSeconds, type Phase, runPhaseLines, sessionLine, whyBound } from '../../contracts/plan.ts';
import type { Recipe } from '../../contracts/recipe.ts';
import { type Preset, usePlan } from './use-plan.ts';

const PHASE_COLOURS: Record<Phase, string> = {
  rollout: '#1f6feb',
  train: '#d29922',
  sync: '#8957e5',
  overhead: '#888888',
};

const secs = formatSeconds;

export function PlanPanel({ recipe }: { recipe: Recipe | null }) {
  const { preset, setPreset, paramsText, setParamsText, modelName, registeredParams, askParams, given, plan } =
    usePlan(recipe);
  return (
    <section className="panel" aria-label="Plan">
      <h2>Plan</h2>
      <p className="muted">
        What one RL step, the SFT stages, the evaluations and the whole run cost before launch, with the planner's
        stated defaults (<code>npx toolsmith plan --calibrate RUN</code> fits them on a run).
      </p>
      <p>
        <label>
          Cluster{' '}
          <select aria-label="Cluster" value={preset} onChange={(e) => setPreset(e.target.value as Preset)}>
            <option value="local">local (this machine, CPUs)</option>
            <option value="h200">h200 (1 × 8 H200)</option>
            <option value="report">report (8 × 8 MI300X)</option>
          </select>
        </label>
        {askParams && (
          <label>
            {' '}
            Parameters{' '}
            <input
              aria-label="Model parameters"
              value={paramsText}
              placeholder="e.g. 14.8e9"
              onChange={(e) => setParamsText(e.target.value)}
              size={10}
            />
          </label>
        )}
      </p>
      {modelName !== null && registeredParams !== null && (
        <p className="muted" role="note" aria-label="Model size">
          {modelName}: {(registeredParams / 1e9).toFixed(registeredParams < 1e8 ? 4 : 2)}B parameters (from the
          registry)
        </p>
      )}
      {askParams && (paramsText.trim() === '' || !(given >= 1)) && (
        <p className="error" role="alert">
          {paramsText.trim() === ''
            ? `Model parameters: "${modelName}" is not registered here — give its parameter count (e.g. 14.8e9), or fetch or import it on the Models page.`
            : `Model parameters: a positive number such as 14.8e9, not "${paramsText}".`}
        </p>
      )}
      {!recipe && <p className="muted">Fix the recipe's errors to see its plan.</p>}
      {plan && (
        <ul aria-label="Run phases">
          {runPhaseLines(plan).map((line) => (
            <li key={line}>{line.trim()}</li>
          ))}
        </ul>
      )}
      {plan && plan.stages.length === 0 && <p className="muted">No RL stage to plan.</p>}
      {plan && plan.stages.length > 0 && <PlanStages plan={plan} />}
    </section>
  );
}

type Plan = NonNullable<ReturnType<typeof usePlan>['plan']>;

/** Per RL stage: its step time and bound, the phase bars, why the bound phase bounds; the totals and assumptions. */
function PlanStages({ plan }: { plan: Plan }) {
  return (
    <>
      <table aria-label="Plan per stage">
        <thead>
          <tr>
            <th>stage</th>
            <th>step</th>
            <th>bound by</th>
            <th>tool calls</th>
          </tr>
        </thead>
        <tbody>
          {plan.stages.map((s) => (
            <tr key={s.name}>
              <td>{s.name}</td>
              <td>{secs(s.stepS)}</td>
              <td>
                <strong data-bound={s.boundBy} style={{ color: PHASE_COLOURS[s.boundBy] }}>
                  {s.boundBy}
                </strong>
              </td>
              <td>{Math.round(s.toolCalls).toLocaleString('en-US')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <PhaseBars plan={plan} />
      <ul aria-label="Why the bound phase bounds">
        {plan.stages.map((s) => (
          <li key={s.name}>{whyBound(s)}</li>
        ))}
        {plan.stages.flatMap((s) => {
          const line = sessionLine(s);
          return line ? [<li key={`${s.name}-sessions`}>{line}</li>] : [];
        })}
      </ul>
      <p role="note" aria-label="Plan totals">
        {plan.steps} RL steps in {secs(plan.phaseSeconds.rl)}, the run {secs(plan.runSeconds)} · bound by{' '}
        <strong>{plan.boundBy}</strong> · {plan.gpuHours.toFixed(0)} GPU-hours · {formatBytes(plan.storageBytes)} stored
      </p>
      <details>
        <summary>Assumptions and their sources</summary>
        <table aria-label="Plan assumptions">
          <tbody>
            {Object.entries(plan.constants).map(([name, k]) => (
              <tr key={name}>
                <td>
                  <code>{name}</code>
                </td>
                <td className="num">{Number(k.value.toPrecision(4))}</td>
                <td>
                  {k.source.kind}: {k.source.detail}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}

/** One bar per stage: its step time split into phases (synchronous sum; an async step overlaps them). */
function PhaseBars({ plan }: { plan: Plan }) {
  const width = 260;
  const longest = Math.max(...plan.stages.map((s) => s.rolloutS + s.trainS + s.syncS + s.overheadS));
  return (
    <svg role="img" aria-label="Step time by phase" width={width} height={plan.stages.length * 18 + 18}>
      {plan.stages.map((s, i) => {
        let x = 0;
        return (
          <g key={s.name} transform={`translate(0, ${i * 18})`}>
            {(['rollout', 'train', 'sync', 'overhead'] as const).map((p) => {
              const w =
                (width *
                  (p === 'rollout' ? s.rolloutS : p === 'train' ? s.trainS : p === 'sync' ? s.syncS : s.overheadS)) /
                longest;
              const rect = (
                <rect
                  key={p}
                  x={x}
                  y={2}
                  width={Math.max(0, w)}
                  height={14}
                  fill={PHASE_COLOURS[p]}
                  stroke={p === s.boundBy ? '#000' : 'none'}
                >
                  <title>{`${s.name}: ${p}`}</title>
                </rect>
              );
              x += w;
              return rect;
            })}
          </g>
        );
      })}
      <text x={0} y={plan.stages.length * 18 + 14} fontSize={10}>
        rollout · train · sync · other (the bound phase outlined)
      </text>
    </svg>
  );
}
