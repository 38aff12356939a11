'use client';
import { useEffect, useRef, useState } from 'react';
import type { Terminal } from '@xterm/xterm';
import { sanitizeTerminalText } from '../ui/terminal-text.ts';

const FONT_SIZE = 12;
const LINE_PX = 17;
const MIN_ROWS = 2;
const MAX_ROWS = 16;

/**
 * A read-only xterm pane showing one tool call's output. Not TerminalPane: that one is a fixed 360px log for
 * streaming; a trace has a pane per turn, so this one is as tall as its output (up to MAX_ROWS, then it scrolls)
 * and is written once. xterm touches `window`, so it is imported on the client only, after mount.
 */
export function ToolOutput({ text, label }: { text: string; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  const lines = text === '' ? 1 : text.replace(/\n$/, '').split('\n').length;
  const rows = Math.min(MAX_ROWS, Math.max(MIN_ROWS, lines));

  useEffect(() => {
    let disposed = false;
    let term: Terminal | null = null;
    let observer: ResizeObserver | null = null;
    import('@xterm/xterm')
      .then(({ Terminal }) => {
        const el = box.current;
        if (disposed || !el) return;
        term = new Terminal({
          cols: cols(el),
          rows,
          convertEol: true,
          disableStdin: true,
          cursorBlink: false,
          scrollback: 5000,
          fontSize: FONT_SIZE,
          theme: { background: '#000000', cursor: '#000000' },
        });
        term.open(el);
        // Model-written output: only colours survive (terminal-text.ts).
        term.write(sanitizeTerminalText(text.replace(/\n$/, '')));
        observer = new ResizeObserver(() => {
          const c = cols(el);
          if (term && c !== term.cols) term.resize(c, rows);
        });
        observer.observe(el);
        el.setAttribute('data-ready', 'true');
      })
      .catch(() => {
        // Without xterm (chunk load failure) the output is still shown, as plain text.
        if (!disposed) setFailed(true);
      });
    return () => {
      disposed = true;
      observer?.disconnect();
      term?.dispose();
    };
  }, [text, rows]);

  const plain = sanitizeTerminalText(text).replace(/\u001b\[[0-9;:]*m/g, '');
  if (failed)
    return (
      <pre
        role="log"
        aria-label={label}
        style={{
          background: '#000',
          borderRadius: 6,
          padding: 8,
          margin: 0,
          maxHeight: MAX_ROWS * LINE_PX,
          overflow: 'auto',
          whiteSpace: 'pre-wrap',
        }}
      >
        {plain}
      </pre>
    );
  return (
    <div role="log" aria-label={label} style={{ position: 'relative' }}>
      {/* xterm hides its rendered rows from assistive tech (they are padded, wrapped cells); this is what it reads. */}
      <pre style={SR_ONLY}>{plain}</pre>
      <div
        ref={box}
        data-testid="tool-xterm"
        style={{ background: '#000', borderRadius: 6, padding: 6, height: rows * LINE_PX + 12, overflow: 'hidden' }}
      />
    </div>
  );
}

const SR_ONLY = {
  position: 'absolute',
  width: 1,
  height: 1,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'pre',
  margin: 0,
} as const;

/** Columns of xterm's monospace cell that fit in the box (less padding and the scrollbar). */
function cols(el: HTMLElement): number {
  const probe = document.createElement('span');
  probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font-family:monospace;font-size:${FONT_SIZE}px`;
  probe.textContent = 'W'.repeat(50);
  document.body.appendChild(probe);
  const cell = probe.getBoundingClientRect().width / 50;
  probe.remove();
  const width = el.clientWidth - 12 - 14;
  return cell > 0 && width > 0 ? Math.max(20, Math.floor(width / cell)) : 80;
}
