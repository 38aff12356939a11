/**
 * A Hugging Face tokenizer on the rollout side: tokenizer.json through @huggingface/tokenizers and the chat template
 * of tokenizer_config.json through @huggingface/jinja, so TypeScript gives exactly the ids (and the prompt text)
 * that Python's tokenizers / transformers give for the same files (tests/integration/hf-tokenizer.test.ts).
 * Implements the engines' Tokenizer interface; a model directory in HF format holds both files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer as HfTokenizerCore } from '@huggingface/tokenizers';
import { UserError } from '../../contracts/errors.ts';
import type { Tokenizer } from './tokenizer.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

interface TokenizerConfig {
  chat_template?: string | { name: string; template: string }[];
  eos_token?: string | { content: string };
  [k: string]: unknown;
}

export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosId?: number;
  private readonly core: HfTokenizerCore;
  private readonly template: Template | null;

  constructor(
    tokenizerJson: Record<string, unknown>,
    readonly config: TokenizerConfig = {},
  ) {
    this.core = new HfTokenizerCore(tokenizerJson, config);
    const model = tokenizerJson.model as { vocab?: Record<string, number> | unknown[] } | undefined;
    const added = (tokenizerJson.added_tokens as { id: number }[] | undefined) ?? [];
    const base = Array.isArray(model?.vocab) ? model.vocab.length : Object.keys(model?.vocab ?? {}).length;
    this.vocabSize = Math.max(base, ...added.map((t) => t.id + 1));
    const eos = typeof config.eos_token === 'string' ? config.eos_token : config.eos_token?.content;
    const eosIds = eos ? this.core.encode(eos, { add_special_tokens: false }).ids : [];
    this.eosId = eosIds.length === 1 ? eosIds[0] : undefined;
    const t = Array.isArray(config.chat_template)
      ? config.chat_template.find((x) => x.name === 'default')?.template
      : config.chat_template;
    this.template = t ? new Template(t) : null;
  }

  /** tokenizer.json (+ tokenizer_config.json and chat_template.jinja when present) of a model directory. */
  static fromDir(dir: string): HfTokenizer {
    const file = path.join(dir, 'tokenizer.json');
    if (!fs.existsSync(file))
      throw new UserError(`${dir} has no tokenizer.json`, {
        fix: 'save the tokenizer with the model (tokenizer.save_pretrained)',
      });
    const files: Record<string, string> = { 'tokenizer.json': fs.readFileSync(file, 'utf8') };
    const cfgFile = path.join(dir, 'tokenizer_config.json');
    if (fs.existsSync(cfgFile)) files['tokenizer_config.json'] = fs.readFileSync(cfgFile, 'utf8');
    const templateFile = path.join(dir, 'chat_template.jinja');
    if (fs.existsSync(templateFile)) files['chat_template.jinja'] = fs.readFileSync(templateFile, 'utf8');
    return HfTokenizer.fromFiles(files);
  }

  /** From the files' texts (tokenizer.json, tokenizer_config.json, chat_template.jinja), as the trainer hands them over
   *  (its `tokenizer` method). */
  static fromFiles(files: Record<string, string>): HfTokenizer {
    if (!files['tokenizer.json']) throw new UserError('the model has no tokenizer.json');
    const config = files['tokenizer_config.json']
      ? (JSON.parse(files['tokenizer_config.json']) as TokenizerConfig)
      : {};
    // transformers 5 saves the template beside the config (chat_template.jinja) rather than in it.
    if (config.chat_template === undefined && files['chat_template.jinja'])
      config.chat_template = files['chat_template.jinja'];
    return new HfTokenizer(JSON.parse(files['tokenizer.json']), config);
  }

  /** The ids of `text` as it appears inside a prompt: no BOS/EOS added (the chat template writes its own tags). */
  encode(text: string): number[] {
    return this.core.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: number[]): string {
    // transformers 5 cleans up spaces before punctuation only when the config asks (its default is off; the
    // TypeScript library's default is on, which would turn "café  ," into "café ,").
    return this.core.decode(ids, {
      skip_special_tokens: false,
      clean_up_tokenization_spaces: this.config.clean_up_tokenization_spaces === true,
    });
  }

  get hasChatTemplate(): boolean {
    return this.template !== null;
  }

  /** The prompt text the model's chat template renders (what transformers' apply_chat_template(tokenize=False) gives). */
  renderChat(
    messages: ChatMessage[],
    opts: { addGenerationPrompt?: boolean; tools?: unknown[]; extra?: Record<string, unknown> } = {},
  ): string {
    if (!this.template)
      throw new UserError('this tokenizer has no chat_template', {
        fix: 'give the model a tokenizer_config.json with a chat_template',
      });
    return this.template.render({
      messages,
      tools: opts.tools,
      add_generation_prompt: opts.addGenerationPrompt ?? false,
      bos_token: '',
      eos_token:
        typeof this.config.eos_token === 'string' ? this.config.eos_token : (this.config.eos_token?.content ?? ''),
      ...opts.extra,
    });
  }
}
