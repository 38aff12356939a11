/**
 * ART's (OpenPipe) trajectory logs: `<art_path>/<project>/models/<model>/trajectories/{split}/{step:04d}.parquet`,
 * written by the backend's `_log` with write_trajectory_groups_parquet (src/art/utils/trajectory_logging.py): one row
 * per trajectory, `group_index` (the group's place in the file), `reward`, `messages: list<struct{role, content,
 * tool_calls, tool_call_id, trainable}>` and, as JSON text, `metrics`, `metadata`, `tools`, `group_metadata`,
 * `group_metrics`; `logs` and `group_logs` as lists of text. `tool_calls` is the OpenAI list as JSON text;
 * `trainable` is true for a model-sampled Choice, false for a message given as a dict. The split is the folder (ART's
 * default is `val`), the step the file name. ART keeps no ids: a trajectory is its file and row. Pure: the parquet is
 * read elsewhere, a row at a time, its JSON text columns parsed here.
 */
import type { ForeignMessage, Mapped } from '../../../contracts/foreign.ts';
import { asObject, chatMessage, type Json, jsonValue, num, optNum, problem, RecordError, rest } from './common.ts';

const JSON_COLUMNS = ['metrics', 'metadata', 'tools', 'group_metadata', 'group_metrics'];

export function mapArtRow(
  row: unknown,
  where: { file: string; line: number; split?: 'train' | 'eval'; step?: number },
): Mapped {
  try {
    const o = asObject(row, 'the row');
    const group = num(o, 'group_index');
    const reward = optNum(o, 'reward');
    const step = where.step ?? stepOfFile(where.file);
    if (step === undefined) throw new RecordError(`no step in the file name "${where.file}"`);
    const split = where.split ?? (/(^|\/)trajectories\/train\//.test(where.file) ? 'train' : 'eval');
    if (!Array.isArray(o.messages)) throw new RecordError('field "messages" is not a list');
    const extras: Json = {};
    const messages = o.messages.map((m, i): ForeignMessage => {
      const what = `messages[${i}]`;
      const struct = asObject(m, what);
      const { message, extra } = chatMessage(
        { ...struct, tool_calls: jsonValue(struct.tool_calls, `${what}.tool_calls`) },
        what,
      );
      const left = rest(extra, ['trainable']);
      if (Object.keys(left).length) extras[i] = left;
      return message.role === 'assistant' && struct.trainable === false ? { ...message, trainable: false } : message;
    });
    // The prompt ends at the first sampled message; a run that gave every message as a dict marks none.
    const sampled = o.messages.findIndex((m) => (m as Json).trainable === true);
    const firstAssistant = messages.findIndex((m) => m.role === 'assistant');
    const promptMessages = sampled >= 0 ? sampled : firstAssistant >= 0 ? firstAssistant : messages.length;
    const metadata: Json = rest(o, ['group_index', 'reward', 'messages']);
    for (const k of JSON_COLUMNS) if (metadata[k] !== undefined) metadata[k] = jsonValue(metadata[k], `field "${k}"`);
    if (Object.keys(extras).length) metadata.messageFields = extras;
    return {
      ok: true,
      trajectories: [
        {
          id: `${where.file}:${where.line}`,
          step,
          split,
          groupId: `group:${group}`,
          messages,
          promptMessages,
          ...(reward === undefined ? {} : { reward }),
          metadata,
          source: { file: where.file, line: where.line },
        },
      ],
    };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}

function stepOfFile(file: string): number | undefined {
  const m = /(\d+)\.parquet$/.exec(file);
  return m ? Number(m[1]) : undefined;
}
