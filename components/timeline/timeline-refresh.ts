import type { StepTimeline } from '../../contracts/timeline.ts';

/** How often the newest step's timeline is asked for again while its phase times may still be on their way. */
export const TIMELINE_REFRESH_MS = 15_000;

/**
 * When to ask for a step's timeline again. A step's trajectories are stored before its `step` event (which carries
 * the phase times), so the newest step of a running run can answer "no phase times" a moment before it has them:
 * that answer is asked again until the phases arrive. A timeline with its phases is final; so is an older step's.
 */
export function timelineRefresh(timeline: StepTimeline | undefined, isNewestStep: boolean): number | false {
  if (!isNewestStep) return false;
  return timeline?.phasesRecorded ? false : TIMELINE_REFRESH_MS;
}

/** Whether a fetched timeline can be kept for good (see timelineRefresh). */
export const timelineIsFinal = (timeline: StepTimeline | undefined, isNewestStep: boolean) =>
  timeline !== undefined && timelineRefresh(timeline, isNewestStep) === false;
