'use client';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { visibleRange } from './explorer-window.ts';

/**
 * A windowed list with a fixed row height: a spacer as tall as every row, and only the rows in view (plus
 * `overscan`) rendered, absolutely placed. `onRange` reports the rows in view so the caller loads their pages.
 */
export function VirtualRows({
  total,
  rowHeight,
  height,
  overscan = 10,
  renderRow,
  onRange,
  label,
}: {
  total: number;
  rowHeight: number;
  height: number;
  overscan?: number;
  label: string;
  renderRow: (index: number, style: React.CSSProperties) => ReactNode;
  onRange: (range: { start: number; end: number }) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const frame = useRef<number | null>(null);
  const { start, end } = visibleRange(scrollTop, height, rowHeight, total, overscan);
  useEffect(() => {
    onRange({ start, end });
  }, [start, end, onRange]);
  // A new query starts at the top.
  useEffect(() => {
    if (box.current && box.current.scrollTop > total * rowHeight) {
      box.current.scrollTop = 0;
      setScrollTop(0);
    }
  }, [total, rowHeight]);
  useEffect(
    () => () => {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    },
    [],
  );
  const rows: ReactNode[] = [];
  for (let i = start; i < end; i++)
    rows.push(renderRow(i, { position: 'absolute', top: i * rowHeight, height: rowHeight, left: 0, right: 0 }));
  return (
    <div
      ref={box}
      className="vlist"
      role="rowgroup"
      aria-label={label}
      tabIndex={0}
      style={{ height, overflowY: 'auto', position: 'relative' }}
      onScroll={(e) => {
        const top = e.currentTarget.scrollTop;
        if (frame.current !== null) cancelAnimationFrame(frame.current);
        frame.current = requestAnimationFrame(() => {
          frame.current = null;
          setScrollTop(top);
        });
      }}
    >
      <div style={{ height: total * rowHeight, position: 'relative' }}>{rows}</div>
    </div>
  );
}
