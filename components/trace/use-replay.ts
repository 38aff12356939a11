'use client';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { stepBack, stepForward, type Speed, type Timeline } from './replay.ts';

const URL_EVERY_MS = 250;
const TICK_MS = 50;

/**
 * The replay clock over one or more timelines (two when comparing: one clock, so both traces are shown at the same
 * offset). The position is `null` until someone uses the controls or the URL names one: the page then shows the
 * whole trajectory and leaves the URL alone. The URL is written with history.replaceState, which Next's router
 * picks up without a server round trip (router.replace would refetch the page's RSC payload 4 times a second).
 */
export function useReplay(timelines: Timeline[], initialT: number | null, initialSpeed: Speed) {
  const duration = useMemo(() => Math.max(0, ...timelines.map((tl) => tl.duration)), [timelines]);
  const [pos, setPos] = useState<number | null>(initialT);
  const [speed, setSpeedState] = useState<Speed>(initialSpeed);
  const [playing, setPlaying] = useState(false);
  const t = pos === null ? duration : Math.min(Math.max(0, pos), duration);

  const tRef = useRef(t);
  tRef.current = t;
  const speedRef = useRef(speed);
  speedRef.current = speed;
  const active = pos !== null;

  // Playback: advance by wall time × speed; stop at the end. Ticks are TICK_MS apart, not every frame: each tick
  // re-renders every visible turn, and 20 updates a second is smooth enough for text appearing.
  useEffect(() => {
    if (!playing) return;
    let last = performance.now();
    const id = setInterval(() => {
      const now = performance.now();
      const next = tRef.current + (now - last) * speedRef.current;
      last = now;
      if (next >= duration) {
        setPos(duration);
        setPlaying(false);
      } else setPos(next);
    }, TICK_MS);
    return () => clearInterval(id);
  }, [playing, duration]);

  // The URL carries the position: every URL_EVERY_MS while playing, at once after a pause, step, seek or speed change.
  useEffect(() => {
    if (!active || duration === 0) return;
    if (!playing) {
      writeUrl(tRef.current, speedRef.current);
      return;
    }
    const id = setInterval(() => writeUrl(tRef.current, speedRef.current), URL_EVERY_MS);
    return () => clearInterval(id);
  }, [active, playing, duration, playing ? 0 : t, speed]);

  const play = useCallback(() => {
    if (duration <= 0) return;
    if (tRef.current >= duration) setPos(0);
    else setPos(tRef.current);
    setPlaying(true);
  }, [duration]);
  const pause = useCallback(() => {
    setPos(tRef.current);
    setPlaying(false);
  }, []);
  const seek = useCallback((x: number) => setPos(Math.min(Math.max(0, x), duration)), [duration]);
  // With two traces a step stops at the nearer boundary of either, so neither trace's turn is skipped.
  const forward = useCallback(() => {
    setPlaying(false);
    const now = tRef.current;
    setPos(Math.min(duration, ...timelines.map((tl) => (now < tl.duration ? stepForward(tl, now) : Infinity))));
  }, [timelines, duration]);
  const back = useCallback(() => {
    setPlaying(false);
    const now = tRef.current;
    setPos(Math.max(0, ...timelines.map((tl) => stepBack(tl, now))));
  }, [timelines]);
  const setSpeed = useCallback((s: Speed) => {
    setSpeedState(s);
    setPos(tRef.current);
  }, []);

  return { t, duration, playing, speed, active, play, pause, seek, forward, back, setSpeed };
}

function writeUrl(t: number, speed: Speed) {
  const url = new URL(window.location.href);
  url.searchParams.set('t', String(Math.round(t)));
  if (speed === 1) url.searchParams.delete('speed');
  else url.searchParams.set('speed', String(speed));
  if (url.href !== window.location.href) window.history.replaceState(window.history.state, '', url);
}
