import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitizeTerminalText as clean } from '../../components/ui/terminal-text.ts';

const ESC = '\u001b';

test('SGR colour and style sequences are kept as they are', () => {
  const s = `${ESC}[31mred${ESC}[0m ${ESC}[1;38;5;208mbold orange${ESC}[m ${ESC}[38:2:1:2:3mtruecolour${ESC}[0m`;
  assert.equal(clean(s), s);
});

test('an OSC 8 hyperlink loses the link and keeps its visible text (BEL and ST terminators, 8-bit OSC)', () => {
  assert.equal(clean(`see ${ESC}]8;;https://evil.example/${ESC}\\docs${ESC}]8;;${ESC}\\ now`), 'see docs now');
  assert.equal(clean(`${ESC}]8;id=1;https://evil.example/\u0007click${ESC}]8;;\u0007`), 'click');
  assert.equal(clean('\u009d8;;https://evil.example/\u009cclick\u009d8;;\u009c'), 'click');
  assert.doesNotMatch(clean(`${ESC}]8;;https://evil.example/\u0007x`), /evil/);
});

test('window-title, clipboard and unterminated OSC strings are removed whole', () => {
  assert.equal(clean(`a${ESC}]0;pwned title\u0007b`), 'ab');
  assert.equal(clean(`a${ESC}]52;c;ZXZpbA==\u0007b`), 'ab');
  assert.equal(clean(`a${ESC}]8;;https://evil.example/ and the rest`), 'a');
  assert.equal(clean(`a${ESC}P1$qm${ESC}\\b${ESC}_apc${ESC}\\c`), 'abc');
});

test('cursor movement, erase, scroll and mode sequences are removed; colour next to them survives', () => {
  const forged = `step 3 ok${ESC}[1A${ESC}[2K${ESC}[31mstep 2 FAILED${ESC}[0m${ESC}[10;1H${ESC}[J${ESC}[?25l${ESC}[?1049h${ESC}[3S${ESC}[6n`;
  assert.equal(clean(forged), `step 3 ok${ESC}[31mstep 2 FAILED${ESC}[0m`);
  assert.equal(clean(`x\u009b2Jy`), 'xy', '8-bit CSI');
  assert.equal(clean(`x${ESC}[?1m`), 'x', 'a private-marker "m" is not SGR');
});

test('other escape sequences (save/restore cursor, reset, charset, index) are removed', () => {
  assert.equal(clean(`a${ESC}7b${ESC}8c${ESC}cd${ESC}(0e${ESC}Mf${ESC}`), 'abcdef');
});

test('carriage-return and backspace overwrite tricks are neutralised; \\n, \\t and \\r\\n stay line ends', () => {
  assert.equal(clean('reward 0.0\rreward 1.0'), 'reward 0.0\nreward 1.0');
  assert.equal(clean('rm -rf /\b\b\b\b\b\b\b\bls'), 'rm -rf /ls');
  assert.equal(clean('a\r\nb\n\tc'), 'a\nb\n\tc');
  assert.equal(clean('bell\u0007 nul\u0000 del\u007f vt\u000b ff\u000c'), 'bell nul del vt ff');
});

test('ordinary text, Unicode and an empty string pass through', () => {
  for (const s of ['', 'plain text', 'λ x → x² 🙂', 'tab\tseparated']) assert.equal(clean(s), s);
});
