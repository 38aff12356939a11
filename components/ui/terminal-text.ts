/**
 * What may reach an xterm pane from untrusted text (tool output, stage names, errors, logs): SGR colour and style
 * sequences (`ESC [ … m`) are kept; everything else that would make the terminal do something rather than show
 * something is removed: OSC strings (OSC 8 hyperlinks, window titles, clipboard writes), DCS/SOS/PM/APC strings,
 * every other CSI sequence (cursor movement, erase, scroll regions, modes), other ESC sequences, C1 controls, and
 * C0 controls other than \n and \t. A lone \r becomes \n, so a line cannot be overwritten by what follows it.
 */

const ESC = 0x1b;
const BEL = 0x07;

/** Index just past a string sequence's terminator (BEL, ESC \ or C1 ST), or the end when it is unterminated. */
function skipString(s: string, i: number): number {
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === BEL || c === 0x9c) return i + 1;
    if (c === ESC && s.charCodeAt(i + 1) === 0x5c) return i + 2;
    // A new ESC also ends it (xterm aborts the string); drop only what came before.
    if (c === ESC) return i;
  }
  return i;
}

/** Index just past a CSI sequence's final byte (from the first parameter byte), and the sequence's body. */
function readCsi(s: string, i: number): { end: number; params: string; final: string } {
  const start = i;
  while (i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x3f) i++;
  const paramsEnd = i;
  while (i < s.length && s.charCodeAt(i) >= 0x20 && s.charCodeAt(i) <= 0x2f) i++;
  const intermediates = i > paramsEnd;
  const c = s.charCodeAt(i);
  const final = c >= 0x40 && c <= 0x7e ? s[i]! : '';
  return { end: final ? i + 1 : i, params: s.slice(start, paramsEnd), final: intermediates ? '' : final };
}

export function sanitizeTerminalText(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    if (c === ESC || c === 0x9b || c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
      // 7-bit ESC x, or its 8-bit C1 equivalent.
      const kind = c === ESC ? (s[i + 1] ?? '') : String.fromCharCode(c - 0x40);
      const next = c === ESC ? i + 2 : i + 1;
      if (kind === '[') {
        const csi = readCsi(s, next);
        // SGR only with plain numeric parameters: `ESC [ ? … m`-style private forms are something else.
        if (csi.final === 'm' && /^[0-9;:]*$/.test(csi.params) && csi.params.length <= 64)
          out += `\u001b[${csi.params}m`;
        i = csi.end;
      } else if (kind === ']' || kind === 'P' || kind === 'X' || kind === '^' || kind === '_') {
        i = skipString(s, next);
      } else if (c === ESC) {
        // Other escapes: intermediates (0x20–0x2f) then one final byte, e.g. ESC ( B, ESC 7, ESC c.
        let j = i + 1;
        while (j < s.length && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++;
        i = Math.min(s.length, j + 1);
      } else {
        i = next;
      }
      continue;
    }
    if (c === 0x0a || c === 0x09) {
      out += s[i];
      i++;
      continue;
    }
    if (c === 0x0d) {
      // \r\n is an ordinary line end; a lone \r (overwrite the line) becomes a new line.
      out += '\n';
      i += s.charCodeAt(i + 1) === 0x0a ? 2 : 1;
      continue;
    }
    if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) {
      i++;
      continue;
    }
    out += s[i];
    i++;
  }
  return out;
}
