// Demonstrations from worked solutions (workers/tasks/gsm-demos.ts): GSM8K's calculator notes chained into a program
// that prints the final answer, refused where the notes do not reach it; each demo kind in the rStar2 format.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mulberry32 } from '../../workers/engines/sampling.ts';
import { demoText } from '../../workers/tasks/demos.ts';
import {
  calculatorProgram,
  evalArithmetic,
  solutionReasoning,
  workedDemo,
  workedSftDataset,
  type WorkedProblem,
} from '../../workers/tasks/gsm-demos.ts';

const NATALIA: WorkedProblem = {
  id: 'n',
  question:
    'Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?',
  answer: '72',
  solution:
    'Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72',
};

test('arithmetic of the notes: + - * / ** and parentheses; anything else is refused', () => {
  assert.equal(evalArithmetic('48/2'), 24);
  assert.equal(evalArithmetic('2*(3+4)-1'), 13);
  assert.equal(evalArithmetic('2**3*2'), 16);
  assert.equal(evalArithmetic('-3+5'), 2);
  assert.equal(evalArithmetic('1/0'), null);
  assert.equal(evalArithmetic('__import__("os")'), null);
  assert.equal(evalArithmetic('2x3'), null);
  assert.equal(evalArithmetic('(1+2'), null);
});

test("the notes chained into a program: an earlier result's number becomes its variable; it prints the answer", () => {
  assert.equal(calculatorProgram(NATALIA.solution!, '72'), 'v1 = 48/2\nv2 = 48+v1\nprint(round(v2))');
  // Notes that stop before the answer, a wrong note, no notes, a non-integer answer: no program.
  assert.equal(calculatorProgram('He has <<2*3=6>>6 and then 7 more.\n#### 13', '13'), null);
  assert.equal(calculatorProgram('<<2*3=7>>7\n#### 7', '7'), null);
  assert.equal(calculatorProgram('Just 5.\n#### 5', '5'), null);
  assert.equal(calculatorProgram('<<5/2=2.5>>2.5\n#### 2.5', '2.5'), null);
  // Thousands separators in notes, and notes after the answer is reached are left out.
  assert.equal(
    calculatorProgram('<<1,000*3=3,000>>3,000 then <<3000+1=3001>>\n#### 3000', '3000'),
    'v1 = 1000*3\nprint(round(v1))',
  );
  assert.equal(
    solutionReasoning(NATALIA.solution!),
    'Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether in April and May.',
  );
});

test("each kind in the rStar2 format, every answer the dataset's", () => {
  const rng = mulberry32(1);
  const tool = demoText(workedDemo(NATALIA, 'tool', rng));
  assert.match(
    tool,
    /<tool_call>\n\{"name": "python", "arguments": \{"code": "v1 = 48\/2\\nv2 = 48\+v1\\nprint\(round\(v2\)\)", "input": ""\}\}\n<\/tool_call>/,
  );
  assert.match(tool, /<tool_response>\n72\n/);
  assert.match(tool, /<answer>\\boxed\{72\}<\/answer><\|im_end\|>$/);
  const recover = workedDemo(NATALIA, 'recover', rng);
  assert.equal(recover.segments.filter((s) => s.kind === 'tool').length, 2);
  assert.equal(recover.segments[1]!.kind === 'tool' && recover.segments[1]!.expected.status, 'error');
  assert.match(
    demoText(workedDemo(NATALIA, 'no_tool', rng)),
    /<reason>Natalia sold 48\/2 = 24 clips in May\.[\s\S]*<\/reason>\n<answer>\\boxed\{72\}/,
  );
  const direct = demoText(workedDemo(NATALIA, 'direct', rng));
  assert.doesNotMatch(direct, /tool_call/);
  assert.match(direct, /\\boxed\{72\}/);
  assert.throws(
    () => workedDemo({ ...NATALIA, solution: 'no notes\n#### 72' }, 'tool', rng),
    /has no program for a tool demo/,
  );
});

test('a dataset of demos: exact counts per kind, tool demos only on problems with a program, deterministic', () => {
  const noNotes: WorkedProblem = { id: 'x', question: 'q?', answer: '5', solution: 'It is 5.\n#### 5' };
  const problems = [NATALIA, noNotes];
  const a = workedSftDataset(problems, {
    n: 20,
    seed: 3,
    shares: { tool: 0.5, recover: 0.2, no_tool: 0.2, direct: 0.1 },
  });
  const count = (k: string) => a.filter((d) => d.kind === k).length;
  assert.deepEqual([count('tool'), count('recover'), count('no_tool'), count('direct')], [10, 4, 4, 2]);
  for (const d of a.filter((d) => d.kind === 'tool' || d.kind === 'recover')) assert.equal(d.problem.id, 'n');
  const b = workedSftDataset(problems, {
    n: 20,
    seed: 3,
    shares: { tool: 0.5, recover: 0.2, no_tool: 0.2, direct: 0.1 },
  });
  assert.deepEqual(a.map(demoText), b.map(demoText));
  assert.throws(
    () => workedSftDataset([noNotes], { n: 4, seed: 1 }),
    /no problem of this dataset has a worked solution/,
  );
});
