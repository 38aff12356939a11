// Why a test part failed, in a few lines (scripts/test.mjs prints them last, where a CI log's tail shows them).

/** Why a part failed, short enough for the tail of a CI log: the node reporter's closing "failing tests" section
 *  without stack frames, or each Playwright failure's title, error, expected/received and source line. */
export function failureDetails(out) {
  const lines = out.includes('✖ failing tests:') ? nodeFailures(out) : playwrightFailures(out);
  const text = lines.join('\n');
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function nodeFailures(out) {
  const at = out.lastIndexOf('✖ failing tests:');
  const end = out.indexOf('ℹ tests', at);
  return out
    .slice(at, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.trim() && !/^\s+at /.test(l) && !l.includes('node:internal'))
    .slice(1);
}

// Playwright's list reporter closes with blocks "  1) file:line › title ───", the error, a "Call log:", a code frame
// whose failing line starts with ">", then attachments.
function playwrightFailures(out) {
  const kept = [];
  let block = null;
  for (const raw of out.split('\n')) {
    const l = raw.replace(/\u001b\[[0-9;]*m/g, '');
    if (l.startsWith('[WebServer]')) continue; // the e2e server's own output interleaves
    const head = l.match(/^\s+\d+\) (.*?)\s*─*$/);
    if (head) {
      block = { inLog: false };
      kept.push(head[1]);
    } else if (!block || !l.trim()) continue;
    else if (/^\s+attachment #|^\s+\d+ (failed|passed|flaky)|^\s+Retry #/.test(l)) block = null;
    else if (/^\s+Call log:/.test(l)) block.inLog = true;
    else if (/^\s+Error Context:/.test(l)) continue;
    else if (/^\s+>\s*\d+ \|/.test(l) || /^\s+at .*\.spec\.ts:\d+/.test(l)) kept.push(`  ${l.trim()}`);
    else if (!block.inLog && !/^\s+\d+ \||^\s+\|/.test(l)) kept.push(`  ${l.trim()}`);
  }
  return kept;
}

/** Why a part failed when its reporter named no failed test (it crashed, or was killed): how it ended and its
 *  last lines. */
export function crashDetails(out, code, signal) {
  const how = signal ? `signal ${signal}` : `exit code ${code}`;
  const tail = out.trimEnd().split('\n').slice(-15).join('\n');
  return `the part ended (${how}) without naming a failed test; its last lines:\n${tail}`;
}
