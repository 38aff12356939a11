'use client';
import { useState } from 'react';
import type { ShareTargetInput } from '../../contracts/share.ts';
import { ShareDialog } from './share-dialog.tsx';

export type ShareButtonProps = ShareTargetInput & {
  /** The button's text and accessible name; defaults to "Share run" / "Share step" / "Share trajectory" / "Share this comparison" / "Share these traces". */
  label?: string;
  /** Prefills the new link's label in the dialog. */
  linkLabel?: string;
  className?: string;
};

const DEFAULT_LABEL = {
  run: 'Share run',
  step: 'Share step',
  trajectory: 'Share trajectory',
  compare: 'Share this comparison',
  traces: 'Share these traces',
} as const;

/**
 * A button that opens the ShareDialog for one thing:
 *   <ShareButton scope="run" target={{ runId }} />
 *   <ShareButton scope="step" target={{ runId, step }} />
 *   <ShareButton scope="trajectory" target={{ trajectoryId }} />
 *   <ShareButton scope="compare" target={{ runIds }} />
 *   <ShareButton scope="traces" target={{ runIds, problemId }} />
 */
export function ShareButton(props: ShareButtonProps) {
  const [open, setOpen] = useState(false);
  const text = props.label ?? DEFAULT_LABEL[props.scope];
  const dialogProps = { scope: props.scope, target: props.target } as ShareTargetInput;
  return (
    <>
      <button type="button" className={props.className} onClick={() => setOpen(true)} aria-haspopup="dialog">
        {text}
      </button>
      {open && (
        <ShareDialog {...dialogProps} open={open} onClose={() => setOpen(false)} defaultLabel={props.linkLabel} />
      )}
    </>
  );
}
