/**
 * Prompt template of the agentic rollout (docs/method.md §2). Pure: no I/O.
 *
 * Layout (ChatML, Qwen "hermes" tool style, as the Qwen2.5 chat template renders it):
 *
 *   <|im_start|>system\n{system}\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n
 *   You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{schema JSON}\n</tools>\n\n
 *   For each function call, return a json object with function name and arguments within <tool_call></tool_call>
 *   XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n
 *   <|im_start|>user\n{instruction}\nThis is the problem:\n{problem}<|im_end|>\n
 *   <|im_start|>assistant\n<reason>
 *
 * The schema JSON is written as Python's `json.dumps` does (", " and ": " separators, non-ASCII kept), which is what
 * the Qwen template's `tojson` gives, so a tokenizer-side render of the same tools matches byte for byte.
 *
 * A tool response is appended as a user turn, exactly as the Qwen2.5 template renders a `tool` message:
 *   <|im_end|>\n<|im_start|>user\n<tool_response>\n{text}\n</tool_response><|im_end|>\n<|im_start|>assistant\n<reason>
 * The leading `<|im_end|>\n` closes the assistant turn that stopped at `</tool_call>` (the engine stops on that
 * string, so the model never generated `<|im_end|>` itself). Everything in this string is appended by the rollout,
 * not generated: all of it is "tool tokens" (response mask 0, counted in the length budget).
 */
import type { PromptVariant } from '../../contracts/recipe.ts';

export interface TemplateSettings {
  /** Tool (function) name the model must call. Paper: execute_python_code_with_standard_io; released code: python_code_with_standard_io. */
  toolName: string;
  /** Name of the code argument (string, required). */
  codeArg: string;
  /** Name of the stdin argument (string, optional in parsing: missing means ""). */
  inputArg: string;
  /** Reasoning tag without brackets (paper text: reason; paper figure: think). */
  reasonTag: string;
  /** Answer tag without brackets. */
  answerTag: string;
  /** Tool-call and tool-response tags without brackets (hermes: tool_call / tool_response). */
  callTag: string;
  responseTag: string;
  /**
   * 'full': the paper's system prompt and tool description; 'compact': shorter texts, same tools block; 'minimal':
   * one system line naming the tool and no tools block (the embedded character-level model, whose context is a few
   * hundred tokens: the ~400-token tools block would dominate every forward pass and teach it nothing).
   */
  variant: PromptVariant;
  /** Replaces the system text before the `# Tools` section (null: the variant's text). */
  systemPrompt: string | null;
  /** Replaces the user instruction placed before the problem (null: the variant's text). */
  userInstruction: string | null;
  /** Replaces the whole tool schema object (null: built from the names above). */
  toolSchema: Record<string, unknown> | null;
  /**
   * Parser leniency: accept raw control characters (e.g. literal newlines) inside JSON strings by escaping them before
   * decoding. Off by default (the paper and vLLM's hermes parser use strict json.loads: such a call is a parse error).
   */
  lenientJson: boolean;
}

export const DEFAULT_TEMPLATE_SETTINGS: TemplateSettings = {
  toolName: 'execute_python_code_with_standard_io',
  codeArg: 'code',
  inputArg: 'input',
  reasonTag: 'reason',
  answerTag: 'answer',
  callTag: 'tool_call',
  responseTag: 'tool_response',
  variant: 'full',
  systemPrompt: null,
  userInstruction: null,
  toolSchema: null,
  lenientJson: false,
};

/** The compact variant (tiny embedded model): shorter system text and tool description; same layout and tags. */
export const COMPACT_TEMPLATE_SETTINGS: TemplateSettings = { ...DEFAULT_TEMPLATE_SETTINGS, variant: 'compact' };

/** The embedded tiny model's template: minimal variant, tool named `python`; calls and responses as in the paper. */
export const EMBEDDED_TEMPLATE_SETTINGS: TemplateSettings = {
  ...DEFAULT_TEMPLATE_SETTINGS,
  variant: 'minimal',
  toolName: 'python',
};

export function templateSettings(over: Partial<TemplateSettings> = {}): TemplateSettings {
  return { ...DEFAULT_TEMPLATE_SETTINGS, ...over };
}

export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';
export const ENDOFTEXT = '<|endoftext|>';

export const tag = {
  open: (name: string) => `<${name}>`,
  close: (name: string) => `</${name}>`,
};

/** The system text before `# Tools` (paper Fig. 3 for 'full'). */
export function systemText(s: TemplateSettings): string {
  if (s.systemPrompt != null) return s.systemPrompt;
  const r = s.reasonTag;
  const a = s.answerTag;
  if (s.variant === 'minimal')
    return `Tool: ${s.toolName}(${s.codeArg}, ${s.inputArg}). Answer: <${a}>\\boxed{}</${a}>`;
  if (s.variant === 'compact') {
    return `Think inside <${r}> </${r}>, then give the final answer inside <${a}> </${a}> as \\boxed{}. You may run Python code with the tool.`;
  }
  return (
    'A conversation between User and Assistant. The user asks a question, and the Assistant solves it. ' +
    'The Assistant first thinks about the reasoning process in the mind and then provides the user with the answer. ' +
    `The reasoning process and answer are enclosed within <${r}> </${r}> and <${a}> </${a}> tags, respectively, ` +
    `i.e., <${r}> reasoning process here </${r}><${a}> answer here </${a}>.`
  );
}

/** The user instruction placed before the problem (paper Fig. 3 for 'full'). */
export function userInstructionText(s: TemplateSettings): string {
  if (s.userInstruction != null) return s.userInstruction;
  const a = s.answerTag;
  if (s.variant === 'minimal') return '';
  if (s.variant === 'compact') return `Put the final answer inside <${a}> </${a}> as \\boxed{}.`;
  return (
    `You must put your answer inside <${a}> </${a}> tags, i.e., <${a}> answer here </${a}>. ` +
    'And your final answer will be extracted automatically by the \\boxed{} tag.'
  );
}

/** The tool's function schema (paper Fig. 3 for 'full'; descriptions shortened for 'compact'). */
export function toolSchema(s: TemplateSettings): Record<string, unknown> {
  if (s.toolSchema != null) return s.toolSchema;
  if (s.variant === 'compact') {
    return {
      type: 'function',
      function: {
        name: s.toolName,
        description: 'Run Python code; returns what it prints.',
        parameters: {
          type: 'object',
          properties: {
            [s.codeArg]: { type: 'string', description: 'Python code.' },
            [s.inputArg]: { type: 'string', description: 'Standard input.' },
          },
          required: [s.codeArg, s.inputArg],
        },
      },
    };
  }
  return {
    type: 'function',
    function: {
      name: s.toolName,
      description:
        'Execute Python code with standard input and capture standard output. This function takes a Python code string ' +
        'and an input string, provides the input string through standard input (stdin) to the code, and captures and ' +
        'returns any output produced through standard output (stdout). If the executed code raises an exception, the ' +
        'error message will be captured and returned instead.',
      parameters: {
        type: 'object',
        properties: {
          [s.codeArg]: {
            type: 'string',
            description:
              'A string containing Python code to be executed. The code can read from standard input using the input() function.',
          },
          [s.inputArg]: {
            type: 'string',
            description: 'A string that will be provided as standard input to the code when it calls input().',
          },
        },
        required: [s.codeArg, s.inputArg],
      },
      return: {
        type: 'string',
        description:
          'str: The output produced by the executed code through standard output. If an error occurs during execution, the error message will be returned.',
      },
    },
  };
}

/** JSON as Python's json.dumps(ensure_ascii=False) writes it: ", " and ": " separators, no indentation. */
export function pyJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'NaN';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(', ')}}`;
}

/** The `# Tools` section (Qwen2.5 hermes wording). */
export function toolsBlock(s: TemplateSettings): string {
  const c = s.callTag;
  return (
    '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
    `${pyJson(toolSchema(s))}\n</tools>\n\n` +
    `For each function call, return a json object with function name and arguments within <${c}></${c}> XML tags:\n` +
    `<${c}>\n{"name": <function-name>, "arguments": <args-json-object>}\n</${c}>`
  );
}

/** The assistant prefix every assistant turn starts with: `<|im_start|>assistant\n<reason>`. */
export function assistantPrefix(s: TemplateSettings): string {
  return `${IM_START}assistant\n${tag.open(s.reasonTag)}`;
}

/** The whole prompt, ending with the assistant prefix (generation continues right after `<reason>`). */
export function buildPrompt(problem: string, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): string {
  if (s.variant === 'minimal') {
    return `${IM_START}system\n${systemText(s)}${IM_END}\n${IM_START}user\n${problem}${IM_END}\n${assistantPrefix(s)}`;
  }
  return (
    `${IM_START}system\n${systemText(s)}\n\n${toolsBlock(s)}${IM_END}\n` +
    `${IM_START}user\n${userInstructionText(s)}\nThis is the problem:\n${problem}${IM_END}\n` +
    assistantPrefix(s)
  );
}

/**
 * What the rollout appends after an assistant turn that made a tool call (or a parse error): it closes the assistant
 * turn, gives the tool text as a user turn, and opens the next assistant turn with the reasoning prefix.
 */
export function toolResponseTurn(text: string, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): string {
  return (
    `${IM_END}\n${IM_START}user\n${tag.open(s.responseTag)}\n${text}\n${tag.close(s.responseTag)}${IM_END}\n` +
    assistantPrefix(s)
  );
}

/**
 * Stop strings for the engine: a turn ends at `</tool_call>` or at end-of-message. The engine must keep the stop
 * string in the output (vLLM `include_stop_str_in_output: true`, SGLang `no_stop_trim: true`); if it trims it, pass
 * `{ stopTrimmed: true }` to parseTurn. `<|im_end|>` / `<|endoftext|>` are usually the tokenizer's EOS already; they
 * are listed for engines that need them as strings.
 */
export function stopStrings(s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): string[] {
  return [tag.close(s.callTag), IM_END, ENDOFTEXT];
}
