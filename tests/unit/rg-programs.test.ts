// Tool calls for reasoning-gym's arithmetic families (workers/tasks/rg-programs.ts): one per family, with the questions
// as reasoning-gym 0.1.25 words them, each checked exactly against the answer; a question it cannot read, or a wrong
// answer, gives no call. (Every one of the stored rg-arithmetic dataset's 1,729 programs was also run in Python and
// printed its answer when this was written.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mulberry32 } from '../../workers/engines/sampling.ts';
import { demoText } from '../../workers/tasks/demos.ts';
import { workedDemo, workedSftDataset, type WorkedProblem } from '../../workers/tasks/gsm-demos.ts';
import { evalIntExpression, rgArithmeticCall } from '../../workers/tasks/rg-programs.ts';

test("exact integer arithmetic with Python's precedence and floor division", () => {
  assert.equal(evalIntExpression('-5943 * 5299 * 8760'), -275869543320n);
  assert.equal(evalIntExpression('( -371 + 154 + -594 - 888 * -746 )'), 661637n);
  assert.equal(evalIntExpression('-7 // 2'), -4n);
  assert.equal(evalIntExpression('7 // -2'), -4n);
  assert.equal(evalIntExpression('6 // 3 * 2'), 4n);
  assert.equal(evalIntExpression('99999999999999999 + 1'), 100000000000000000n);
  assert.equal(evalIntExpression('1 // 0'), null);
  assert.equal(evalIntExpression('2 ** 3'), null);
  assert.equal(evalIntExpression('7 / 2'), null);
  assert.equal(evalIntExpression('(1 + 2'), null);
  assert.equal(evalIntExpression('__import__("os")'), null);
});

test('one call per family, as reasoning-gym words the question', () => {
  const call = (family: string, question: string, answer: string) => rgArithmeticCall(family, question, answer)?.code;
  assert.equal(
    call('basic_arithmetic', 'Calculate ( -371 + 154 + -594 - 888 * -746 ).', '661637'),
    'print(( -371 + 154 + -594 - 888 * -746 ))',
  );
  assert.equal(call('basic_arithmetic', 'What is 84 / 4 - 3?', '18'), 'print(84 // 4 - 3)');
  assert.equal(
    call('chain_sum', 'State the final answer to the following arithmetic problem: 680 - 929 + 141 =', '-108'),
    'print(680 - 929 + 141)',
  );
  assert.equal(
    call(
      'products',
      'Solve the following multiplication: 680 * 929. Give only the result as your final answer.',
      '631720',
    ),
    'print(680 * 929)',
  );
  assert.equal(
    call(
      'gcd',
      'Find the Greatest Common Divisor (GCD) of these numbers: 561, 423. Give only the GCD as your final answer.',
      '3',
    ),
    'import math\nprint(math.gcd(561, 423))',
  );
  assert.equal(
    call('lcm', 'Find the Least Common Multiple (LCM) of these numbers: 33, 24', '264'),
    'import math\nprint(math.lcm(33, 24))',
  );
  assert.equal(
    call('count_bits', 'How many 1 bits are there in the binary representation of the number 24094966?', '16'),
    "print(bin(24094966).count('1'))",
  );
  const legs = rgArithmeticCall(
    'leg_counting',
    'Your task is to count how many legs there are in total when given a list of animals.\n\nNow, how many legs are there in total if you have 13 shrimps, 2 grasshoppers, 9 sheeps, 8 praying mantiss, 9 chickens?',
    '244',
  );
  assert.deepEqual(legs, {
    reason: 'Legs each: shrimp 10, grasshopper 6, sheep 4, praying mantis 6, chicken 2. Let me add them up in Python.',
    code: 'print(13 * 10 + 2 * 6 + 9 * 4 + 8 * 6 + 9 * 2)',
  });
});

test('no call where the program would not print the answer, or the question is not read', () => {
  assert.equal(rgArithmeticCall('products', 'Solve the following multiplication: 680 * 929.', '631721'), null);
  assert.equal(rgArithmeticCall('gcd', 'Find the GCD of these numbers: 0, 5', '5'), null);
  assert.equal(
    rgArithmeticCall('leg_counting', 'how many legs are there in total if you have 3 unicorns?', '12'),
    null,
  );
  assert.equal(rgArithmeticCall('count_bits', 'How many 1 bits?', '1'), null);
  assert.equal(rgArithmeticCall('dates', 'What day is it?', '3'), null);
  assert.equal(rgArithmeticCall('chain_sum', '2 + 2 =', '4.0'), null);
});

test("a reasoning-gym problem's demos: its family's call, a fix after a failing one, the dataset's answer", () => {
  const p: WorkedProblem = {
    id: 'g',
    question: 'Find the Least Common Multiple (LCM) of these numbers: 60, 12',
    answer: '60',
    family: 'lcm',
  };
  const tool = demoText(workedDemo(p, 'tool', mulberry32(1)));
  assert.match(tool, /Python's math\.lcm gives it\./);
  assert.match(tool, /math\.lcm\(60, 12\)/);
  assert.match(tool, /\\boxed\{60\}/);
  const recover = workedDemo(p, 'recover', mulberry32(2));
  assert.equal(recover.segments.filter((s) => s.kind === 'tool').length, 2);
  assert.match(demoText(recover), /\\boxed\{60\}/);
  const none: WorkedProblem = { id: 'x', question: 'How many 1 bits?', answer: '1', family: 'count_bits' };
  assert.throws(() => workedDemo(none, 'tool', mulberry32(1)), /has no program for a tool demo/);
  const demos = workedSftDataset([p, none], {
    n: 10,
    seed: 3,
    shares: { tool: 0.6, recover: 0, no_tool: 0, direct: 0.4 },
  });
  assert.equal(demos.filter((d) => d.kind === 'tool').length, 6);
  assert.ok(demos.filter((d) => d.kind === 'tool').every((d) => d.problem.id === 'g'));
});
