/**
 * Records as prime-rl, rLLM and ART write them (the sources are named in tests/unit/imports-formats-more.test.ts's
 * header), shared by the mappers' unit tests and the importer's integration test.
 */
export const task = {
  type: 'MathTask',
  data: { question: 'What is 23*4?', answer: '92' },
  key: 'gsm8k-17',
  hash: 'h17',
};

/** One `Episode.to_record()` line: None fields left out (a root node has no `parent`), raw tensors excluded. */
export const primeEpisode = {
  id: 'ep-5c1e',
  env: { id: 'math-python', name: 'math' },
  task,
  group: { id: '7' },
  run: {
    type: 'train',
    id: 'run-1',
    name: 'qwen-math',
    work: { type: 'train', step: 42, policy: { start: 40, end: 41 } },
  },
  ok: true,
  errors: [],
  traces: [
    {
      version: 1,
      id: 'tr-0a',
      verifiers: { version: '0.3.1.dev59', commit: 'a60a606' },
      task,
      agent: { config: { id: 'react' }, name: 'agent', trainable: true },
      tools: [{ name: 'python', description: 'Run Python', parameters: { type: 'object' } }],
      nodes: [
        {
          message: { role: 'system', content: 'You may run Python.' },
          sampled: false,
          timestamp: 1760000000.25,
          token_ids: [1, 2],
          mask: [false, false],
          is_content: [false, true],
          logprobs: [],
        },
        {
          parent: 0,
          message: { role: 'user', content: [{ type: 'text', text: 'What is 23*4?' }] },
          sampled: false,
          timestamp: 1760000000.25,
          token_ids: [3, 4, 5],
          mask: [false, false, false],
          is_content: [false, true, true],
          logprobs: [],
        },
        {
          parent: 1,
          message: {
            role: 'assistant',
            content: 'Let me compute.',
            reasoning_content: 'multiply',
            tool_calls: [{ id: 'call_1', name: 'python', arguments: '{"code":"print(23*4)"}' }],
          },
          sampled: true,
          timestamp: 1760000001.5,
          // The generation-prompt scaffold (6) leads the sampled completion, masked.
          token_ids: [6, 10, 11],
          mask: [false, true, true],
          is_content: [false, true, true],
          logprobs: [-0.1, -0.2],
          advantages: [0.5, 0.5],
        },
        {
          parent: 2,
          message: { role: 'tool', tool_call_id: 'call_1', content: '92\n', name: 'python' },
          sampled: false,
          timestamp: 1760000002,
          token_ids: [20, 21],
          mask: [false, false],
          is_content: [false, true],
          logprobs: [],
        },
        {
          parent: 3,
          message: { role: 'assistant', content: 'The answer is 92.' },
          sampled: true,
          timestamp: 1760000003,
          token_ids: [6, 12],
          mask: [false, true],
          is_content: [false, true],
          logprobs: [-0.3],
          advantages: [0.5],
        },
      ],
      calls: [
        { node: 2, model: 'qwen', finish_reason: 'tool_calls', time: { start: 1760000000.3, end: 1760000001.5 } },
        { node: 4, model: 'qwen', finish_reason: 'stop', time: { start: 1760000002, end: 1760000003 } },
      ],
      request_rewrites: [],
      response_rewrites: [],
      rewards: { correct: { score: 1, weight: 1 }, format: { score: 0.5, weight: 0.2 }, judge: null },
      metrics: { num_tool_calls: 1 },
      info: { advantage: 0.5, source: 'gsm8k' },
      extra_usage: [],
      is_completed: true,
      ok: true,
      stop_condition: 'no_tool_calls',
      errors: [],
      timing: { start: 1760000000 },
    },
  ],
};
/** One EpisodeLogger document: a solver that called a tool, and a judge. */
export const rllmDoc = {
  training_step: 3,
  epoch: 0,
  episode_id: 'task-17:2',
  session_id: null,
  task: { question: 'What is 23*4?', ground_truth: '92' },
  task_hash: 'ab12cd34',
  is_correct: true,
  termination_reason: 'ENV_DONE',
  metrics: { solver_acc: 1 },
  metadata: {},
  timing: { total: 4.2 },
  trajectories: [
    {
      name: 'solver',
      uid: '0b7c9a52-solver',
      reward: null,
      num_steps: 2,
      timing: {},
      steps: [
        {
          observation: 'What is 23*4?',
          thought: '23*4',
          action: { tool: 'python' },
          reward: 0,
          done: false,
          model_response: 'Let me compute.',
          chat_completions: [
            { role: 'system', content: 'You may call python.' },
            { role: 'user', content: 'What is 23*4?' },
            {
              role: 'assistant',
              content: 'Let me compute.',
              reasoning: '23*4',
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'python', arguments: { code: 'print(23*4)' } } },
              ],
            },
          ],
          timing: { llm: 1.1 },
        },
        {
          observation: '92',
          thought: '',
          action: '92',
          reward: 1,
          done: true,
          model_response: 'The answer is 92.',
          chat_completions: [
            { role: 'system', content: 'You may call python.' },
            { role: 'user', content: 'What is 23*4?' },
            {
              role: 'assistant',
              content: 'Let me compute.',
              reasoning: '23*4',
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'python', arguments: { code: 'print(23*4)' } } },
              ],
            },
            { role: 'tool', content: '92\n', tool_call_id: 'call_1' },
            { role: 'assistant', content: 'The answer is 92.' },
          ],
          timing: { llm: 0.9 },
        },
      ],
    },
    {
      name: 'judge',
      uid: '0b7c9a52-judge',
      reward: 1,
      num_steps: 1,
      timing: {},
      steps: [
        {
          observation: null,
          thought: '',
          action: null,
          reward: 0,
          done: true,
          model_response: 'Correct.',
          chat_completions: [
            { role: 'user', content: 'Is 92 right for 23*4?' },
            { role: 'assistant', content: 'Correct.' },
          ],
          timing: {},
        },
      ],
    },
  ],
};
/** One parquet row as the reader decodes it: JSON columns are text, `tool_calls` is JSON text. */
export const artRow = {
  group_index: 2,
  group_metadata: null,
  group_metrics: '{"judge_score": 0.4}',
  group_logs: null,
  reward: 0.8,
  metrics: '{"correct": 1, "turns": 2}',
  metadata: '{"scenario_id": "s-9"}',
  tools: '[{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}]',
  logs: ['searched once'],
  messages: [
    { role: 'system', content: 'You are an email agent.', tool_calls: null, tool_call_id: null, trainable: false },
    { role: 'user', content: 'Find the invoice.', tool_calls: null, tool_call_id: null, trainable: false },
    {
      role: 'assistant',
      content: null,
      tool_calls:
        '[{"id":"call_a","type":"function","function":{"name":"search","arguments":"{\\"q\\":\\"invoice\\"}"}}]',
      tool_call_id: null,
      trainable: true,
    },
    { role: 'tool', content: '3 results', tool_calls: null, tool_call_id: 'call_a', trainable: false },
    { role: 'assistant', content: 'Found it.', tool_calls: null, tool_call_id: null, trainable: true },
  ],
};
