import fs from 'node:fs';
import path from 'node:path';
import type { Recipe } from '../../contracts/recipe.ts';
import { safetensorsTotals } from '../../server/models/registry.ts';
import { embeddedParams, type ModelSize } from './resources.ts';

/**
 * A model's parameter count and stored precision, read cheaply: the headers of its *.safetensors files (8 bytes and
 * a JSON header each, never the weights: the registry's safetensorsTotals), else its config.json's sizes. The
 * embedded model: from the recipe. null when neither can be read (the check is then skipped, and the trainer's own
 * errors speak).
 */
export async function modelSize(recipe: Recipe, modelDir: string | null): Promise<ModelSize | null> {
  if (recipe.model.kind === 'embedded') return { params: embeddedParams(recipe.model), dtype: 'fp32' };
  if (!modelDir) return null;
  const totals = await safetensorsTotals(modelDir).catch(() => null);
  if (totals?.parameters) return { params: totals.parameters, dtype: totals.dtype ?? 'unknown' };
  return fromConfig(modelDir);
}

function fromConfig(dir: string): ModelSize | null {
  try {
    const c = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<
      string,
      number | boolean | string | undefined
    >;
    const d = Number(c.hidden_size),
      L = Number(c.num_hidden_layers),
      V = Number(c.vocab_size);
    const h = Number(c.num_attention_heads),
      hk = Number(c.num_key_value_heads ?? c.num_attention_heads);
    const hd = Number(c.head_dim ?? d / h),
      ff = Number(c.intermediate_size ?? 4 * d);
    if (![d, L, V, h, hk, hd, ff].every((x) => Number.isFinite(x) && x > 0)) return null;
    const perLayer = d * h * hd * 2 + d * hk * hd * 2 + 3 * d * ff + 2 * d;
    const params = V * d * (c.tie_word_embeddings === false ? 2 : 1) + L * perLayer + d;
    return { params, dtype: String(c.torch_dtype ?? c.dtype ?? 'unknown') };
  } catch {
    return null;
  }
}
