'use client';
import { useId } from 'react';
import type { ShareTargetInput } from '../../contracts/share.ts';
import { CreatedLinkPanel, LinksTable, NewLinkForm } from './share-links.tsx';
import { describeTarget } from './share-target.ts';
import { useModal, useShareDialog } from './use-share-dialog.ts';

export type ShareDialogProps = ShareTargetInput & {
  open: boolean;
  onClose: () => void;
  /** Prefills the new link's label. */
  defaultLabel?: string;
};

const SCOPE_WORD = {
  run: 'run',
  step: 'step',
  trajectory: 'trajectory',
  compare: 'comparison',
  traces: 'trace view',
} as const;

/**
 * Create, copy, list and revoke read-only links to one run, one step of a run, one trajectory or a comparison.
 * A link's URL is shown once, right after it is made (only a hash of its token is kept); the list shows every
 * link to the same thing, live or not, each with a Revoke button. The state is in use-share-dialog.ts.
 */
export function ShareDialog(props: ShareDialogProps) {
  const { open, onClose, defaultLabel } = props;
  const want: ShareTargetInput = { scope: props.scope, target: props.target } as ShareTargetInput;
  const ref = useModal(open);
  const titleId = useId();
  const s = useShareDialog(want, open, defaultLabel);
  const word = SCOPE_WORD[want.scope];
  return (
    <dialog ref={ref} className="share-dialog" aria-labelledby={titleId} onClose={onClose} onCancel={() => onClose()}>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h2 id={titleId} style={{ margin: 0 }}>
          Share this {word}
        </h2>
        <button type="button" onClick={onClose} aria-label="Close share dialog">
          Close
        </button>
      </div>
      <p className="muted" style={{ margin: '6px 0 12px' }}>
        Anyone with the link can view {describeTarget(want.scope, want.target)}, read-only, until it expires or is
        revoked.
      </p>
      <NewLinkForm s={s} />
      {s.create.error && (
        <p className="error" role="alert">
          Could not create the link: {s.create.error.message}
        </p>
      )}
      {s.created && <CreatedLinkPanel s={s} created={s.created} />}
      <h3 className="share-h3">Links to this {word}</h3>
      {s.links.error ? (
        <p className="error" role="alert">
          Could not list links: {s.links.error.message}
        </p>
      ) : !s.links.data ? (
        <p className="muted" role="status">
          Loading links…
        </p>
      ) : s.mine.length === 0 ? (
        <p className="muted">No links yet.</p>
      ) : (
        <LinksTable s={s} />
      )}
      {s.revoke.error && (
        <p className="error" role="alert">
          Could not revoke the link: {s.revoke.error.message}
        </p>
      )}
    </dialog>
  );
}
