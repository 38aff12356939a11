'use client';
import { createContext, useContext } from 'react';
import type { ModelKind } from './fields.ts';
import type { Spec } from './path.ts';

/** What every form control of the designer reads: the spec, its setter, the validation errors by path. */
export interface DesignerState {
  spec: Spec;
  /** Set one path (undefined removes the key). */
  set: (path: string, value: unknown) => void;
  /** Replace the whole spec. */
  update: (fn: (spec: Spec) => Spec) => void;
  errors: Map<string, string[]>;
  /** The last valid parse (defaults filled in): its values are the placeholders of empty fields. */
  resolved: unknown;
  modelKind: ModelKind;
}

export const DesignerContext = createContext<DesignerState | null>(null);

export function useDesigner(): DesignerState {
  const s = useContext(DesignerContext);
  if (!s) throw new Error('useDesigner outside the recipe designer');
  return s;
}
