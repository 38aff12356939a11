'use client';
/**
 * The designer's Plan panel (issue 30): the recipe as it is being edited, planned on a cluster preset in the browser
 * (contracts/plan.ts, the same functions as `npx toolsmith plan`), updated as fields change. Per RL stage: the
 * step time as bars of its phases, the bound phase highlighted; the run's steps, time, GPU-hours and storage.
 */
import { useMemo, useState } from 'react';
import {
  CLUSTER_PRESETS,
  DEFAULT_CONSTANTS,
  embeddedParams,
  formatBytes,
  formatSeconds,
  type Phase,
  parseCluster,
  planRun,
} from '../../contracts/plan.ts';
import type { Recipe } from '../../contracts/recipe.ts';

const PHASE_COLOURS: Record<Phase, string> = {
  rollout: '#1f6feb',
  train: '#d29922',
  sync: '#8957e5',
  overhead: '#888888',
};

const secs = formatSeconds;

export function PlanPanel({ recipe }: { recipe: Recipe | null }) {
  const [preset, setPreset] = useState<keyof typeof CLUSTER_PRESETS>('local');
  const [paramsText, setParamsText] = useState('14.8e9');
  const named = recipe?.model.kind === 'model';
  const params = recipe
    ? recipe.model.kind === 'embedded'
      ? embeddedParams(recipe.model)
      : Number(paramsText)
    : Number.NaN;
  const plan = useMemo(() => {
    if (!recipe || !Number.isFinite(params) || params < 1) return null;
    return planRun(recipe, params, parseCluster(CLUSTER_PRESETS[preset]), DEFAULT_CONSTANTS);
  }, [recipe, params, preset]);
  return (
    <section className="panel" aria-label="Plan">
      <h2>Plan</h2>
      <p className="muted">
        What one RL step and the run cost before launch, with the planner's stated defaults (
        <code>npx toolsmith plan --calibrate RUN</code> fits them on a run).
      </p>
      <p>
        <label>
          Cluster{' '}
          <select
            aria-label="Cluster"
            value={preset}
            onChange={(e) => setPreset(e.target.value as keyof typeof CLUSTER_PRESETS)}
          >
            <option value="local">local (this machine, CPUs)</option>
            <option value="h200">h200 (1 × 8 H200)</option>
            <option value="report">report (8 × 8 MI300X)</option>
          </select>
        </label>
        {named && (
          <label>
            {' '}
            Parameters{' '}
            <input
              aria-label="Model parameters"
              value={paramsText}
              onChange={(e) => setParamsText(e.target.value)}
              size={10}
            />
          </label>
        )}
      </p>
      {!recipe && <p className="muted">Fix the recipe's errors to see its plan.</p>}
      {recipe && !plan && <p className="muted">Give the model's parameter count.</p>}
      {plan && plan.stages.length === 0 && <p className="muted">No RL stage to plan.</p>}
      {plan && plan.stages.length > 0 && (
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
          <p aria-label="Plan totals">
            {plan.steps} RL steps in {secs(plan.runSeconds)} · bound by <strong>{plan.boundBy}</strong> ·{' '}
            {plan.gpuHours.toFixed(0)} GPU-hours · {formatBytes(plan.storageBytes)} stored
          </p>
        </>
      )}
    </section>
  );
}

/** One bar per stage: its step time split into phases (synchronous sum; an async step overlaps them). */
function PhaseBars({ plan }: { plan: ReturnType<typeof planRun> }) {
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
