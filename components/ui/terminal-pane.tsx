'use client';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import type { Terminal } from '@xterm/xterm';
import { sanitizeTerminalText } from './terminal-text.ts';

export interface TerminalHandle {
  writeLine(line: string): void;
  clear(): void;
}

const FONT_SIZE = 12;

/**
 * An xterm.js pane. xterm touches `window`, so it is imported on the client only; lines written before it is
 * ready are queued. `data-lines` counts lines written (handy for tests and for people reading the DOM).
 * The terminal is sized to its box (columns and rows follow the box's size), so long lines wrap inside the
 * pane instead of running out of it; `rows` is the size used until the box can be measured.
 */
export const TerminalPane = forwardRef<TerminalHandle, { label: string; rows?: number }>(function TerminalPane(
  { label, rows = 20 },
  ref,
) {
  const box = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const pending = useRef<string[]>([]);
  const count = useRef(0);

  useImperativeHandle(ref, () => ({
    writeLine(raw) {
      // The one way text enters this pane: untrusted, so only colours survive (terminal-text.ts).
      const line = sanitizeTerminalText(raw);
      count.current++;
      box.current?.setAttribute('data-lines', String(count.current));
      if (term.current) term.current.writeln(line);
      else pending.current.push(line);
    },
    clear() {
      count.current = 0;
      pending.current = [];
      term.current?.clear();
    },
  }));

  useEffect(() => {
    let disposed = false;
    let t: Terminal | null = null;
    let observer: ResizeObserver | null = null;
    import('@xterm/xterm').then(({ Terminal }) => {
      const el = box.current;
      if (disposed || !el) return;
      const size = fit(el) ?? { cols: 100, rows };
      t = new Terminal({
        ...size,
        convertEol: true,
        disableStdin: true,
        scrollback: 10000,
        fontSize: FONT_SIZE,
        theme: { background: '#000000' },
      });
      t.open(el);
      for (const line of pending.current) t.writeln(line);
      pending.current = [];
      term.current = t;
      observer = new ResizeObserver(() => {
        const next = fit(el);
        if (t && next && (next.cols !== t.cols || next.rows !== t.rows)) t.resize(next.cols, next.rows);
      });
      observer.observe(el);
      el.setAttribute('data-ready', 'true');
    });
    return () => {
      disposed = true;
      observer?.disconnect();
      t?.dispose();
      term.current = null;
    };
  }, [rows]);

  return <div ref={box} className="terminal-pane" role="log" aria-label={label} data-lines="0" />;
});

/** Columns and rows of xterm's monospace cell that fit in the box's content area (less the scrollbar). */
function fit(el: HTMLElement): { cols: number; rows: number } | null {
  const style = getComputedStyle(el);
  const width = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 14;
  const height = el.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  const probe = document.createElement('span');
  probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font-family:monospace;font-size:${FONT_SIZE}px;font-kerning:none;line-height:normal`;
  probe.textContent = 'W'.repeat(50);
  document.body.appendChild(probe);
  const rect = probe.getBoundingClientRect();
  probe.remove();
  const cell = { width: rect.width / 50, height: Math.ceil(rect.height) };
  if (!(width > 0 && height > 0 && cell.width > 0 && cell.height > 0)) return null;
  return { cols: Math.max(20, Math.floor(width / cell.width)), rows: Math.max(5, Math.floor(height / cell.height)) };
}
