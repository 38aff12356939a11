import fs from 'node:fs';
import readline from 'node:readline';
import type { Command } from './command.ts';
import { parseFlags } from './args.ts';
import { UserError } from '../contracts/errors.ts';

/** `npx toolsmith verify`: check answers with the reward verifier (workers/reward). */
export const verifyCommand: Command = {
  name: 'verify',
  summary: 'check a predicted answer (or whole response) against a gold answer with the reward verifier',
  usage: `--gold G --pred P | --jsonl FILE  [--mode answer|boxed] [--timeout-ms N] [--sympy] [--math-verify MODE] [--explain]

  --gold G --pred P   prints {"correct","method","extracted","reason"}; exits 0 when correct, 1 when not
  --jsonl FILE        reads lines {"gold","pred"} (FILE "-" = stdin), writes lines {"correct","method","extracted"}
  --mode              answer (default): \\boxed{} inside <answer>; boxed: the last \\boxed{} anywhere
  --sympy             start a one-interpreter sandbox for the sympy last resort
  --math-verify MODE  fallback (default, as the recipe): Math-Verify in the sandbox decides what the fast path
                      cannot; always: Math-Verify decides every pair; off: the fast path alone
  --explain           add "steps": each step of the cascade with its decision (extract, normalise, exact, numeric,
                      symbolic/sampling, sympy, math-verify, verdict); with --gold/--pred printed one per line after the JSON`,
  async run(args) {
    const f = parseFlags(args, {
      gold: 'string',
      pred: 'string',
      jsonl: 'string',
      mode: 'string',
      'timeout-ms': 'number',
      sympy: 'boolean',
      'math-verify': 'string',
      explain: 'boolean',
    });
    const mode = (f.mode ?? 'answer') as string;
    if (mode !== 'answer' && mode !== 'boxed') throw new UserError(`--mode must be answer or boxed, not "${mode}"`);
    const mathVerify = (f['math-verify'] ?? 'fallback') as string;
    if (!['off', 'fallback', 'always'].includes(mathVerify))
      throw new UserError(`--math-verify must be off, fallback or always, not "${mathVerify}"`);
    const single = f.gold !== undefined || f.pred !== undefined;
    if (single && f.jsonl !== undefined) throw new UserError('give either --gold/--pred or --jsonl, not both');
    if (!single && f.jsonl === undefined) throw new UserError('verify needs --gold G --pred P, or --jsonl FILE');
    if (single && (typeof f.gold !== 'string' || typeof f.pred !== 'string'))
      throw new UserError('--gold and --pred go together');
    const [{ verifierFromSettings }, { VerifierSettingsSchema }] = await Promise.all([
      import('../workers/handlers/verifier.ts'),
      import('../contracts/recipe.ts'),
    ]);
    let sandbox = null;
    if (f.sympy) {
      const { SandboxPool } = await import('../workers/sandbox/pool.ts');
      sandbox = await SandboxPool.start({ size: 1, log: () => {} });
    }
    const parsed = VerifierSettingsSchema.safeParse({
      mode,
      mathVerify,
      sympy: Boolean(f.sympy),
      ...(f['timeout-ms'] !== undefined ? { timeLimitMs: f['timeout-ms'] } : {}),
    });
    if (!parsed.success) throw new UserError(`--timeout-ms: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const settings = parsed.data;
    const verifier = verifierFromSettings(settings, sandbox, { explain: Boolean(f.explain) });
    try {
      if (single) {
        const r = await verifier.verify(f.gold as string, f.pred as string);
        console.log(JSON.stringify(r));
        for (const s of r.steps ?? []) console.log(`  ${s.step.padEnd(11)} ${s.detail}`);
        return r.correct ? 0 : 1;
      }
      const file = f.jsonl as string;
      if (file !== '-' && !fs.existsSync(file)) throw new UserError(`no such file: ${file}`);
      const input = file === '-' ? process.stdin : fs.createReadStream(file);
      const rl = readline.createInterface({ input, crlfDelay: Infinity });
      let n = 0;
      for await (const line of rl) {
        n++;
        if (line.trim() === '') continue;
        let row: { gold?: unknown; pred?: unknown };
        try {
          row = JSON.parse(line);
        } catch {
          throw new UserError(`${file}:${n}: not JSON`);
        }
        if (typeof row.gold !== 'string' || typeof row.pred !== 'string')
          throw new UserError(`${file}:${n}: needs string fields "gold" and "pred"`);
        const r = await verifier.verify(row.gold, row.pred);
        console.log(
          JSON.stringify({
            correct: r.correct,
            method: r.method,
            extracted: r.extracted,
            ...(r.steps ? { steps: r.steps } : {}),
          }),
        );
      }
      return 0;
    } finally {
      await verifier.close();
      await sandbox?.close();
    }
  },
};
