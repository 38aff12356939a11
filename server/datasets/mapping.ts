/**
 * Column mapping: which field of a record is the problem and which the answer, with auto-detection and the
 * verl conventions (prompt = list of chat messages, reward_model = {ground_truth, style}, extra_info = metadata).
 * Pure: no I/O.
 */
import { UserError } from '../../contracts/errors.ts';
import type { Row, SourceRow } from './parse.ts';

export const PROBLEM_CANDIDATES = ['problem', 'question', 'prompt'];
export const ANSWER_CANDIDATES = ['answer', 'solution', 'ground_truth', 'reward_model.ground_truth'];
const ID_CANDIDATES = ['id', 'uid', 'extra_info.index'];

export interface Mapping {
  problemField: string;
  answerField: string;
  idField?: string;
}

export interface MappedProblem {
  question: string;
  answer: string;
  externalId: string | null;
  metadata: Row | null;
  /** Where the record came from, for messages: "line 3" or "row 3". */
  where: string;
}

/** Value at a dotted path. A key that itself contains the dots (a flat CSV header "a.b") wins over nesting. */
export function getPath(data: unknown, path: string): unknown {
  if (data && typeof data === 'object' && !Array.isArray(data) && Object.hasOwn(data, path)) return (data as Row)[path];
  let cur: unknown = data;
  for (const part of path.split('.')) {
    if (cur === null || cur === undefined || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Row)[part];
  }
  return cur;
}

function hasPath(data: Row, path: string): boolean {
  return getPath(data, path) !== undefined;
}

/** Pick the fields: the ones given, else the first candidate present in the first records. */
export function resolveMapping(
  rows: SourceRow[],
  given: { problemField?: string; answerField?: string; idField?: string } = {},
): Mapping {
  const sample = rows.slice(0, 50).map((r) => r.data);
  const keys = [...new Set(sample.flatMap((d) => Object.keys(d)))];
  const detect = (candidates: string[]) => candidates.find((c) => sample.some((d) => hasPath(d, c)));
  const pick = (given: string | undefined, candidates: string[], what: 'problem' | 'answer') => {
    if (given) {
      if (rows.length > 0 && !sample.some((d) => hasPath(d, given))) {
        throw new UserError(
          `the ${what} field "${given}" is not in the file (its fields: ${keys.join(', ') || 'none'})`,
          { fix: `pass an existing field to --${what}-field`, field: `${what}Field` },
        );
      }
      return given;
    }
    const found = detect(candidates);
    if (!found) {
      throw new UserError(
        `cannot tell which field holds the ${what} (looked for ${candidates.join(', ')}; the file has ${keys.join(', ') || 'no fields'})`,
        {
          fix: `name it with --${what}-field FIELD (dotted paths such as reward_model.ground_truth work)`,
          field: `${what}Field`,
        },
      );
    }
    return found;
  };
  const problemField = pick(given.problemField, PROBLEM_CANDIDATES, 'problem');
  const answerField = pick(given.answerField, ANSWER_CANDIDATES, 'answer');
  const idField = given.idField ?? detect(ID_CANDIDATES);
  return { problemField, answerField, idField };
}

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}
const isChat = (v: unknown): v is ChatMessage[] =>
  Array.isArray(v) && v.length > 0 && v.every((m) => m && typeof m === 'object' && 'content' in m);

/** Problem text: a string, a number, or (verl) a list of chat messages, of which the last user message is the problem. */
function problemText(v: unknown): { text?: string; system?: string; reason?: string } {
  if (typeof v === 'string') return { text: v };
  if (typeof v === 'number' || typeof v === 'bigint') return { text: String(v) };
  if (isChat(v)) {
    const users = v.filter((m) => m.role === 'user');
    const last = users[users.length - 1];
    if (!last) return { reason: 'is a chat prompt with no user message' };
    if (typeof last.content !== 'string') return { reason: 'has a user message whose content is not text' };
    const system = v.find((m) => m.role === 'system');
    return { text: last.content, system: typeof system?.content === 'string' ? system.content : undefined };
  }
  if (v === null || v === undefined) return { reason: 'is missing' };
  return { reason: `is ${Array.isArray(v) ? 'a list' : typeof v}, not text or a list of chat messages` };
}

/** Answer text: a string or number; a one-element list is its element; other lists and objects become JSON. */
function answerText(v: unknown): { text?: string; reason?: string } {
  if (typeof v === 'string') return { text: v };
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return { text: String(v) };
  if (Array.isArray(v) && v.length === 1 && (typeof v[0] === 'string' || typeof v[0] === 'number'))
    return { text: String(v[0]) };
  if (v === null || v === undefined) return { reason: 'is missing' };
  return { text: JSON.stringify(v) };
}

/** Remove a dotted path from a deep copy; drop objects left empty. */
function without(data: Row, paths: string[]): Row {
  const copy = structuredClone(data) as Row;
  for (const p of paths) {
    if (Object.hasOwn(copy, p)) {
      delete copy[p];
      continue;
    }
    const parts = p.split('.');
    const chain: Row[] = [copy];
    let ok = true;
    for (const part of parts.slice(0, -1)) {
      const next = chain[chain.length - 1][part];
      if (!next || typeof next !== 'object' || Array.isArray(next)) {
        ok = false;
        break;
      }
      chain.push(next as Row);
    }
    if (!ok) continue;
    delete chain[chain.length - 1][parts[parts.length - 1]];
    for (let k = chain.length - 1; k > 0; k--)
      if (Object.keys(chain[k]).length === 0) delete chain[k - 1][parts[k - 1]];
  }
  return copy;
}

/**
 * Apply the mapping to every record. A missing or empty problem or answer is a UserError naming the file,
 * the line/row and the field.
 */
export function mapRows(rows: SourceRow[], mapping: Mapping, file: string): MappedProblem[] {
  return rows.map((r) => {
    const where = r.line !== undefined ? `line ${r.line}` : `row ${r.row}`;
    const fail = (field: string, reason: string) =>
      new UserError(
        `${file}, ${where}: the ${field === mapping.problemField ? 'problem' : 'answer'} field "${field}" ${reason}`,
        { fix: 'fix or remove that record, or choose another field with --problem-field / --answer-field', field },
      );
    const p = problemText(getPath(r.data, mapping.problemField));
    if (p.text === undefined) throw fail(mapping.problemField, p.reason!);
    if (p.text.trim() === '') throw fail(mapping.problemField, 'is empty');
    const a = answerText(getPath(r.data, mapping.answerField));
    if (a.text === undefined) throw fail(mapping.answerField, a.reason!);
    if (a.text.trim() === '') throw fail(mapping.answerField, 'is empty');
    const idValue = mapping.idField ? getPath(r.data, mapping.idField) : undefined;
    const externalId = typeof idValue === 'string' || typeof idValue === 'number' ? String(idValue) : null;
    const rest = without(r.data, [mapping.problemField, mapping.answerField]);
    if (p.system) rest.system_prompt = p.system;
    return {
      question: p.text,
      answer: a.text.trim(),
      externalId,
      metadata: Object.keys(rest).length ? rest : null,
      where,
    };
  });
}

/** Dedupe key: trimmed, whitespace collapsed. */
export function normaliseProblem(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/** Keep the first record of each normalised problem; count the rest, and how many of them had a different answer. */
export function dedupe<T extends { question: string; answer: string }>(
  items: T[],
): { kept: T[]; duplicates: number; conflicting: number } {
  const seen = new Map<string, T>();
  let duplicates = 0;
  let conflicting = 0;
  for (const it of items) {
    const key = normaliseProblem(it.question);
    const first = seen.get(key);
    if (first) {
      duplicates++;
      if (first.answer.trim() !== it.answer.trim()) conflicting++;
      continue;
    }
    seen.set(key, it);
  }
  return { kept: [...seen.values()], duplicates, conflicting };
}
