// Which test files take the time (pure: scripts/test.mjs feeds it what the parts reported).

/** Per spec file, the summed times of Playwright's list-reporter lines (`  ✓  3 e2e/x.spec.ts:13:1 › title (5.9s)`,
 *  `✘` for a failure; times in ms, s or m). The e2e server's start is nobody's. */
export function playwrightFileTimes(out) {
  const ms = new Map();
  for (const raw of out.split('\n')) {
    const l = raw.replace(/\u001b\[[0-9;]*m/g, '');
    const m = l.match(/^\s*[✓✘-]\s+\d+ (?:\[[^\]]*\] › )?(\S+?\.spec\.ts):\d+:\d+ › .*\(([\d.]+)(ms|s|m)\)\s*$/);
    if (!m) continue;
    const scale = { ms: 1, s: 1000, m: 60_000 }[m[3]];
    ms.set(m[1], (ms.get(m[1]) ?? 0) + Number(m[2]) * scale);
  }
  return [...ms].map(([file, t]) => ({ file, ms: Math.round(t) }));
}

/** The `n` slowest files over every part ([{part, files: [{file, ms}]}]), slowest first; a file run by two parts
 *  (the integration files, once per database) counts once per part. */
export function slowestFiles(parts, n) {
  return parts
    .flatMap((p) => p.files.map((f) => ({ part: p.part, file: f.file, ms: f.ms })))
    .sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file))
    .slice(0, n);
}
