'use client';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import type { Terminal } from '@xterm/xterm';

export interface TerminalHandle { writeLine(line: string): void; clear(): void }

/**
 * An xterm.js pane. xterm touches `window`, so it is imported on the client only; lines written before it is
 * ready are queued. `data-lines` counts lines written (handy for tests and for people reading the DOM).
 */
export const TerminalPane = forwardRef<TerminalHandle, { label: string; rows?: number }>(function TerminalPane({ label, rows = 20 }, ref) {
  const box = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const pending = useRef<string[]>([]);
  const count = useRef(0);

  useImperativeHandle(ref, () => ({
    writeLine(line) {
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
    import('@xterm/xterm').then(({ Terminal }) => {
      if (disposed || !box.current) return;
      t = new Terminal({ rows, cols: 140, convertEol: true, disableStdin: true, scrollback: 10000, fontSize: 12, theme: { background: '#000000' } });
      t.open(box.current);
      for (const line of pending.current) t.writeln(line);
      pending.current = [];
      term.current = t;
      box.current.setAttribute('data-ready', 'true');
    });
    return () => {
      disposed = true;
      t?.dispose();
      term.current = null;
    };
  }, [rows]);

  return <div ref={box} className="terminal" role="log" aria-label={label} data-lines="0" />;
});
