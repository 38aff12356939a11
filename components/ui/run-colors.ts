/** One line colour per run (8 at most), chosen to stay apart on the dark background. */
export const RUN_COLORS = [
  '#6aa9ff',
  '#f0883e',
  '#3fb950',
  '#d2a8ff',
  '#f85149',
  '#e3b341',
  '#39c5cf',
  '#ff7bc0',
] as const;
export const runColor = (i: number) => RUN_COLORS[((i % RUN_COLORS.length) + RUN_COLORS.length) % RUN_COLORS.length];
