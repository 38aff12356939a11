'use client';
import { useState } from 'react';
import { useDesigner } from './context.tsx';
import { Field } from './field.tsx';
import { RL_FIELDS, SFT_FIELDS, newStage, stageNames } from './fields.ts';
import { getPath, movePath, setPath } from './path.ts';
import { SourceFields } from './sections.tsx';

const SFT_GROUPS: [string, string[]][] = [
  [
    'Demonstrations',
    [
      'data.kind',
      'data.task',
      'data.n',
      'data.seed',
      'data.shares.tool',
      'data.shares.recover',
      'data.shares.no_tool',
      'data.shares.direct',
      'data.families',
      'data.difficulty',
    ],
  ],
  ['Optimisation', ['epochs', 'lr', 'warmupRatio', 'schedule', 'batch', 'maxLength', 'maxSteps']],
];

const RL_GROUPS: [string, string[]][] = [
  [
    'Rollouts',
    ['steps', 'promptsPerStep', 'rolloutsPerPrompt', 'keep', 'temperature', 'maxResponseTokens', 'maxTurns'],
  ],
  [
    'GRPO-RoC',
    [
      'roc.enabled',
      'roc.positiveSelection',
      'roc.minPerSign',
      'roc.dropEqualReward',
      'epsLow',
      'epsHigh',
      'dualClip',
      'tis.mode',
      'tis.cap',
    ],
  ],
  [
    'Groups with a signal',
    [
      'dynamicSampling.enabled',
      'dynamicSampling.maxGenBatches',
      'curriculum.enabled',
      'curriculum.minSamples',
      'curriculum.windowSteps',
    ],
  ],
  ['Optimiser', ['lr', 'warmupSteps', 'resetOptimizer']],
];

function SftFields({ base }: { base: string }) {
  return (
    <>
      {SFT_GROUPS.map(([title, keys]) => (
        <div key={title} className="stage-group">
          <h4 className="subhead">{title}</h4>
          <div className="field-grid">
            {keys.map((k) => (
              <Field key={k} cat={SFT_FIELDS} k={k} base={base} />
            ))}
          </div>
        </div>
      ))}
    </>
  );
}

function RlFields({ base }: { base: string }) {
  const { spec } = useDesigner();
  const hard = getPath(spec, `${base}dataFilter.kind`) === 'hard';
  const ownTool = getPath(spec, `${base}tool`) !== undefined;
  return (
    <>
      <div className="stage-group">
        <h4 className="subhead">Prompts</h4>
        <div className="field-grid">
          <SourceFields cat={RL_FIELDS} base={base} prefix="data." />
          <Field cat={RL_FIELDS} k="dataFilter.kind" base={base} />
          {hard && <Field cat={RL_FIELDS} k="dataFilter.k" base={base} />}
          {hard && <Field cat={RL_FIELDS} k="dataFilter.dropSolved" base={base} />}
        </div>
      </div>
      {RL_GROUPS.map(([title, keys]) => (
        <div key={title} className="stage-group">
          <h4 className="subhead">{title}</h4>
          <div className="field-grid">
            {keys.map((k) => (
              <Field key={k} cat={RL_FIELDS} k={k} base={base} />
            ))}
          </div>
        </div>
      ))}
      <div className="stage-group">
        <h4 className="subhead">Tool</h4>
        <div className="field-grid">
          <Field cat={RL_FIELDS} k="tool" base={base} />
          {ownTool &&
            ['tool.timeoutS', 'tool.memoryMb', 'tool.session'].map((k) => (
              <Field key={k} cat={RL_FIELDS} k={k} base={base} />
            ))}
        </div>
      </div>
    </>
  );
}

function StageCard({ index, count }: { index: number; count: number }) {
  const { spec, update, errors } = useDesigner();
  const [open, setOpen] = useState(true);
  const base = `stages.${index}.`;
  const type = getPath(spec, `${base}type`);
  const name = String(getPath(spec, `${base}name`) ?? '');
  const label = `stage ${index + 1}${name ? ` (${name})` : ''}`;
  const ownErrors = errors.get(`stages.${index}`);
  return (
    <section className={`stage-card ${type === 'rl' ? 'rl' : 'sft'}`} aria-label={`Stage ${index + 1}`}>
      <div className="stage-head">
        <button
          type="button"
          className="small"
          aria-expanded={open}
          aria-label={`${open ? 'Collapse' : 'Expand'} ${label}`}
          onClick={() => setOpen(!open)}
        >
          {open ? '▾' : '▸'}
        </button>
        <strong>
          {index + 1}. {name || '(unnamed)'}
        </strong>
        <span className="badge">{String(type ?? '?')}</span>
        <span className="spacer" />
        <button
          type="button"
          className="small"
          disabled={index === 0}
          aria-label={`Move ${label} up`}
          onClick={() => update((s) => movePath(s, 'stages', index, index - 1))}
        >
          ↑
        </button>
        <button
          type="button"
          className="small"
          disabled={index === count - 1}
          aria-label={`Move ${label} down`}
          onClick={() => update((s) => movePath(s, 'stages', index, index + 1))}
        >
          ↓
        </button>
        <button
          type="button"
          className="small danger"
          aria-label={`Remove ${label}`}
          onClick={() => update((s) => setPath(s, `stages.${index}`, undefined))}
        >
          Remove
        </button>
      </div>
      {ownErrors && <p className="field-error">{ownErrors.join('; ')}</p>}
      {open && (
        <div className="stage-body">
          <div className="field-grid">
            <Field cat={type === 'rl' ? RL_FIELDS : SFT_FIELDS} k="name" base={base} />
            <Field cat={type === 'rl' ? RL_FIELDS : SFT_FIELDS} k="type" base={base} />
          </div>
          {type === 'sft' && <SftFields base={base} />}
          {type === 'rl' && <RlFields base={base} />}
          {type !== 'sft' && type !== 'rl' && (
            <p className="field-error">
              Unknown stage type {JSON.stringify(type)}: fix it in the JSON view or remove the stage.
            </p>
          )}
        </div>
      )}
    </section>
  );
}

/** The ordered stages: add SFT / RL, remove, move up / down, each stage's fields. */
export function StagesSection() {
  const { spec, update, errors } = useDesigner();
  const stages = Array.isArray(spec.stages) ? spec.stages : [];
  const add = (type: 'sft' | 'rl') =>
    update((s) => setPath(s, 'stages', [...(Array.isArray(s.stages) ? s.stages : []), newStage(type, stageNames(s))]));
  const listErrors = errors.get('stages');
  return (
    <fieldset className="recipe-section" id="recipe-stages">
      <legend>Stages</legend>
      {listErrors && (
        <p className="field-error" id="f-stages">
          {listErrors.join('; ')}
        </p>
      )}
      {stages.length === 0 && (
        <div className="empty">
          No stages yet. A recipe needs at least one: add an SFT stage (format and tool calling), then RL stages
          (GRPO-RoC).
        </div>
      )}
      {stages.map((_, i) => (
        <StageCard key={i} index={i} count={stages.length} />
      ))}
      <div className="row">
        <button type="button" onClick={() => add('sft')}>
          Add SFT stage
        </button>
        <button type="button" onClick={() => add('rl')}>
          Add RL stage
        </button>
      </div>
    </fieldset>
  );
}
