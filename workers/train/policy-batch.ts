/**
 * A trajectory as the trainer's input (pure): token ids of prompt + response, where the response starts, the
 * response mask (model tokens 1, tool tokens 0) and the rollout engine's logprobs aligned with the response.
 * Model tokens are the engine's own ids; tool text is tokenised as the engine saw it appended.
 */
import type { Tokenizer } from '../engines/tokenizer.ts';
import type { Trajectory } from '../../contracts/trajectory.ts';

export interface PolicySample {
  ids: number[];
  responseStart: number;
  responseMask: number[];
  /** Engine logprobs per response token (null on tool tokens, or everywhere when the engine gave none). */
  engineLogprobs: (number | null)[];
}

export function policySample(t: Trajectory, tok: Tokenizer): PolicySample {
  const ids = tok.encode(t.prompt);
  const responseStart = ids.length;
  const responseMask: number[] = [];
  const engineLogprobs: (number | null)[] = [];
  for (const turn of t.turns) {
    const m = turn.tokenIds ?? tok.encode(turn.text);
    ids.push(...m);
    for (let i = 0; i < m.length; i++) {
      responseMask.push(1);
      engineLogprobs.push(turn.logprobs?.[i] ?? null);
    }
    if (turn.tool?.appended) {
      const x = tok.encode(turn.tool.appendedText);
      ids.push(...x);
      for (let i = 0; i < x.length; i++) {
        responseMask.push(0);
        engineLogprobs.push(null);
      }
    }
  }
  return { ids, responseStart, responseMask, engineLogprobs };
}
