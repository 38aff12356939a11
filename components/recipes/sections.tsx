'use client';
import type { ReactNode } from 'react';
import { useDesigner } from './context.tsx';
import { Field } from './field.tsx';
import { EVAL_SOURCE_FIELDS, RECIPE_FIELDS, SOURCE_KEYS, type Catalogue } from './fields.ts';
import { getPath } from './path.ts';

export function Section({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  return (
    <fieldset className="recipe-section" id={id}>
      <legend>{title}</legend>
      <div className="field-grid">{children}</div>
    </fieldset>
  );
}

/** The fields of a data source (generated or stored) at `base + prefix`. */
export function SourceFields({ cat, base, prefix = '' }: { cat: Catalogue; base: string; prefix?: string }) {
  const { spec } = useDesigner();
  const kind = getPath(spec, `${base}${prefix}kind`) === 'stored' ? 'stored' : 'generated';
  return (
    <>
      {SOURCE_KEYS[kind].map((k) => (
        <Field key={k} cat={cat} k={prefix + k} base={base} />
      ))}
    </>
  );
}

const F = RECIPE_FIELDS;

export function GeneralSection() {
  return (
    <Section title="General">
      <Field cat={F} k="name" />
      <Field cat={F} k="seed" />
      <Field cat={F} k="description" />
    </Section>
  );
}

export function ModelSection() {
  const { spec } = useDesigner();
  const embedded = getPath(spec, 'model.kind') !== 'model';
  const lora = getPath(spec, 'trainer.lora') != null;
  const openai = getPath(spec, 'engine.kind') === 'openai';
  return (
    <Section title="Model">
      <Field cat={F} k="model.kind" />
      {embedded ? (
        [
          'model.arch',
          'model.n_layer',
          'model.n_head',
          'model.n_kv_head',
          'model.n_embd',
          'model.block_size',
          'model.qk_norm_gain',
        ].map((k) => <Field key={k} cat={F} k={k} />)
      ) : (
        <Field cat={F} k="model.name" />
      )}
      <Field cat={F} k="tokenizer.kind" />
      {[
        'trainer.ranks',
        'trainer.nodes',
        'trainer.device',
        'trainer.microBatchTokens',
        'trainer.gradientCheckpointing',
        'trainer.lora',
      ].map((k) => (
        <Field key={k} cat={F} k={k} />
      ))}
      {lora &&
        ['trainer.lora.rank', 'trainer.lora.alpha', 'trainer.lora.dropout', 'trainer.lora.targetModules'].map((k) => (
          <Field key={k} cat={F} k={k} />
        ))}
      <Field cat={F} k="engine.kind" />
      {openai &&
        ['engine.urls', 'engine.model', 'engine.totalTokens', 'engine.timeoutMs', 'engine.weightSync'].map((k) => (
          <Field key={k} cat={F} k={k} />
        ))}
      {openai &&
        getPath(spec, 'engine.weightSync') != null &&
        [
          'engine.weightSync.mode',
          'engine.weightSync.dir',
          'engine.weightSync.onnx',
          'engine.weightSync.timeoutMs',
        ].map((k) => <Field key={k} cat={F} k={k} />)}
    </Section>
  );
}

export function TemplateSection() {
  const { spec } = useDesigner();
  const middle = getPath(spec, 'template.toolFormat.middle');
  return (
    <Section title="Template & tool">
      {[
        'template.toolName',
        'template.reasonTag',
        'template.answerTag',
        'template.variant',
        'template.toolFormat.style',
        'template.toolFormat.maxFieldChars',
        'template.toolFormat.middle',
      ].map((k) => (
        <Field key={k} cat={F} k={k} />
      ))}
      {middle != null &&
        ['template.toolFormat.middle.head', 'template.toolFormat.middle.tail'].map((k) => (
          <Field key={k} cat={F} k={k} />
        ))}
      {['tool.timeoutS', 'tool.memoryMb', 'tool.session'].map((k) => (
        <Field key={k} cat={F} k={k} />
      ))}
    </Section>
  );
}

export function EvalSection() {
  const { spec, set, errors } = useDesigner();
  const ev = getPath(spec, 'eval');
  const datasets = getPath(spec, 'eval.datasets');
  const list = Array.isArray(datasets) ? datasets : [];
  const listErrors = errors.get('eval.datasets');
  return (
    <Section title="Evaluation" id="recipe-eval">
      <Field cat={F} k="eval" />
      {ev != null && (
        <>
          <div className="wide">
            <h3 className="subhead">Datasets</h3>
            {list.length === 0 && <p className="muted">No evaluation datasets: add one (at least one is needed).</p>}
            {listErrors && <p className="field-error">{listErrors.join('; ')}</p>}
            {list.map((_, i) => (
              <div key={i} className="source-card">
                <div className="row">
                  <strong>Dataset {i + 1}</strong>
                  <button
                    type="button"
                    className="danger small"
                    aria-label={`Remove evaluation dataset ${i + 1}`}
                    onClick={() =>
                      set(
                        'eval.datasets',
                        list.filter((__, j) => j !== i),
                      )
                    }
                  >
                    Remove
                  </button>
                </div>
                <div className="field-grid">
                  <SourceFields cat={EVAL_SOURCE_FIELDS} base={`eval.datasets.${i}.`} />
                </div>
              </div>
            ))}
            <button
              type="button"
              className="small"
              onClick={() => set('eval.datasets', [...list, { kind: 'generated', split: 'test', n: 32, seed: 7 }])}
            >
              Add evaluation dataset
            </button>
          </div>
          {['eval.k', 'eval.temperature', 'eval.maxTokens', 'eval.maxTurns', 'eval.everySteps'].map((k) => (
            <Field key={k} cat={F} k={k} />
          ))}
        </>
      )}
    </Section>
  );
}
