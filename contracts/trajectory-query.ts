/**
 * The rollout explorer's question to the store: which split, which trajectories (the filter) and in what order. One
 * shape for the explorer's form (components/explorer/), the trajectories router's input and the store's query.
 */
import { z } from 'zod';

export const TRAJECTORY_SPLITS = ['train', 'eval', 'all'] as const;
export type TrajectorySplitFilter = (typeof TRAJECTORY_SPLITS)[number];

export const TrajectoryFilterSchema = z.object({
  minReward: z.number().optional(),
  maxReward: z.number().optional(),
  selected: z.boolean().optional(),
  /** The verifier's verdict: right (true) or wrong (false). */
  correct: z.boolean().optional(),
  /** true: at least one tool call failed (toolErrors > 0); false: none did. */
  hasToolError: z.boolean().optional(),
  finishReason: z.string().min(1).max(100).optional(),
  /** Case-insensitive substring of the trajectory's content (prompt, turns, tool output, verdict). */
  search: z.string().min(1).max(500).optional(),
});
export type TrajectoryFilter = z.output<typeof TrajectoryFilterSchema>;

export const TRAJECTORY_SORTS = ['index', 'reward_desc', 'reward_asc', 'length_desc', 'length_asc'] as const;
export type TrajectorySort = (typeof TRAJECTORY_SORTS)[number];
