'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useCallback, useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { formatTime } from '../ui/format.ts';
import { DesignerContext, type DesignerState } from './context.tsx';
import { JsonPane } from './json-pane.tsx';
import { RecipeActions } from './recipe-actions.tsx';
import { EvalSection, GeneralSection, ModelSection, TemplateSection } from './sections.tsx';
import { StagesSection } from './stages.tsx';
import { StageTimeline } from './stage-timeline.tsx';
import { ValidationSummary } from './validation-summary.tsx';
import { PlanPanel } from './plan-panel.tsx';
import { VersionDiff } from './version-diff.tsx';
import { errorsByPath, setPath, stableJson, type Spec } from './path.ts';
import { useDebounced } from '../ui/use-debounced.ts';

type Version = {
  id: string;
  name: string;
  version: number;
  parentId: string | null;
  note: string | null;
  createdAt: string | Date;
};

/** `/recipes/<name>?v=N` (a stored version) or `/recipes/new?template=embedded|micro` (a fresh recipe). */
export function RecipeDesigner({ name, version, template }: { name: string; version?: number; template?: string }) {
  if (name === 'new') return <NewRecipe template={template === 'micro' ? 'micro' : 'embedded'} />;
  return <StoredRecipeDesigner name={name} version={version} />;
}

function NewRecipe({ template }: { template: 'embedded' | 'micro' }) {
  const trpc = useTRPC();
  const defaults = useQuery(trpc.recipes.defaults.queryOptions(undefined, { staleTime: Infinity }));
  if (defaults.error)
    return (
      <div className="panel error" role="alert">
        Could not load the templates: {defaults.error.message}
      </div>
    );
  if (!defaults.data) return <div className="panel empty">Loading template…</div>;
  const tpl = defaults.data[template] as unknown as Spec;
  const initial = { ...structuredClone(tpl), name: `my-${String(tpl.name)}` };
  return (
    <div>
      <div className="row designer-title">
        <h1>New recipe</h1>
        <span className="muted">
          from template <strong>{String(tpl.name)}</strong> ·
        </span>
        <Link href={`/recipes/new?template=${template === 'micro' ? 'embedded' : 'micro'}`}>
          use {template === 'micro' ? 'embedded-arith' : 'micro'} instead
        </Link>
      </div>
      <Editor key={`new-${template}`} initial={initial} current={null} versions={[]} />
    </div>
  );
}

function StoredRecipeDesigner({ name, version }: { name: string; version?: number }) {
  const trpc = useTRPC();
  const router = useRouter();
  const recipe = useQuery(
    trpc.recipes.get.queryOptions({ name, version }, { retry: false, refetchOnWindowFocus: false }),
  );
  const versions = useQuery(trpc.recipes.versions.queryOptions({ name }, { retry: false }));
  if (recipe.error) {
    return (
      <div className="panel error" role="alert">
        <p>
          Could not load recipe “{name}”{version ? ` version ${version}` : ''}: {recipe.error.message}
        </p>
        <p>
          <Link href="/recipes">All recipes</Link> ·{' '}
          <Link href="/recipes/new?template=embedded">New from template</Link>
        </p>
      </div>
    );
  }
  if (!recipe.data) return <div className="panel empty">Loading recipe {name}…</div>;
  const r = recipe.data;
  const list: Version[] = versions.data ?? [];
  return (
    <div>
      <div className="row designer-title">
        <h1>{r.name}</h1>
        <label htmlFor="recipe-version" className="muted">
          Version
        </label>
        <select
          id="recipe-version"
          value={r.version}
          onChange={(e) => router.push(`/recipes/${encodeURIComponent(name)}?v=${e.target.value}`)}
        >
          {(list.length ? list : [r]).map((v) => (
            <option key={v.id} value={v.version}>
              v{v.version}
              {v === list[0] ? ' (latest)' : ''}
            </option>
          ))}
        </select>
        <span className="muted">
          of {list.length || '…'} · saved {formatTime(r.createdAt)}
        </span>
        <ParentLink parentId={r.parentId} versions={list} />
        {r.note && <span className="muted">· “{r.note}”</span>}
      </div>
      <Editor key={r.id} initial={r.spec as unknown as Spec} current={r} versions={list} />
    </div>
  );
}

function ParentLink({ parentId, versions }: { parentId: string | null; versions: Version[] }) {
  const trpc = useTRPC();
  const local = versions.find((v) => v.id === parentId);
  const remote = useQuery(
    trpc.recipes.get.queryOptions(
      { id: parentId ?? '' },
      { enabled: parentId !== null && !local && versions.length > 0, retry: false },
    ),
  );
  if (parentId === null) return <span className="muted">· no parent (first version)</span>;
  const p = local ?? remote.data;
  if (!p) return <span className="muted">· parent {parentId}</span>;
  return (
    <span className="muted">
      · parent{' '}
      <Link href={`/recipes/${encodeURIComponent(p.name)}?v=${p.version}`}>
        {p.name} v{p.version}
      </Link>
    </span>
  );
}

function Editor({ initial, current, versions }: { initial: Spec; current: Version | null; versions: Version[] }) {
  const trpc = useTRPC();
  const [spec, setSpec] = useState<Spec>(initial);
  const debounced = useDebounced(spec, 300);
  const validation = useQuery(
    trpc.recipes.validate.queryOptions(
      { spec: debounced },
      { placeholderData: keepPreviousData, staleTime: Infinity, refetchOnWindowFocus: false },
    ),
  );
  const v = validation.data;
  const errors = useMemo(() => (v && !v.ok ? v.errors : []), [v]);
  const errorMap = useMemo(() => errorsByPath(errors), [errors]);
  const settled = debounced === spec && !validation.isPlaceholderData && !validation.isFetching;
  const state = validation.error ? 'error' : !v || !settled ? 'pending' : v.ok ? 'ok' : 'invalid';

  const set = useCallback((path: string, value: unknown) => setSpec((s) => setPath(s, path, value)), []);
  const update = useCallback((fn: (s: Spec) => Spec) => setSpec((s) => fn(s)), []);
  const ctx: DesignerState = useMemo(
    () => ({
      spec,
      set,
      update,
      errors: errorMap,
      resolved: v?.ok ? v.recipe : null,
      modelKind: (spec.model as { kind?: unknown } | undefined)?.kind === 'model' ? 'model' : 'embedded',
    }),
    [spec, set, update, errorMap, v],
  );
  const initialJson = useMemo(() => stableJson(initial), [initial]);
  const dirty = current === null || stableJson(spec) !== initialJson;

  return (
    <DesignerContext.Provider value={ctx}>
      <StageTimeline spec={spec} />
      <div className="designer">
        <form className="designer-form" aria-label="Recipe form" onSubmit={(e) => e.preventDefault()} noValidate>
          <GeneralSection />
          <ModelSection />
          <TemplateSection />
          <StagesSection />
          <EvalSection />
        </form>
        <aside className="designer-side">
          <ValidationSummary state={state} errors={errors} error={validation.error?.message} />
          <PlanPanel recipe={v?.ok ? v.recipe : null} />
          <RecipeActions spec={spec} currentId={current?.id ?? null} dirty={dirty} valid={state === 'ok'} />
          <JsonPane spec={spec} onSpec={setSpec} />
        </aside>
      </div>
      {current && <VersionDiff currentId={current.id} versions={versions} />}
    </DesignerContext.Provider>
  );
}
