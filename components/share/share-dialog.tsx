'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { formatTime } from '../ui/format.ts';
import type { ShareTargetInput } from '../../contracts/share.ts';
import { describeTarget, listRunId, sameTarget } from './share-target.ts';
import { EXPIRY_OPTIONS, expirySeconds, shareUrl, type ExpiryChoice } from './share-link.ts';

export type ShareDialogProps = ShareTargetInput & {
  open: boolean;
  onClose: () => void;
  /** Prefills the new link's label. */
  defaultLabel?: string;
};

const SCOPE_WORD = { run: 'run', step: 'step', trajectory: 'trajectory', compare: 'comparison' } as const;

/**
 * Create, copy, list and revoke read-only links to one run, one step of a run, one trajectory or a comparison.
 * A link's URL is shown once, right after it is made (only a hash of its token is kept); the list shows every
 * link to the same thing, live or not, each with a Revoke button.
 */
export function ShareDialog(props: ShareDialogProps) {
  const { open, onClose, defaultLabel } = props;
  const want: ShareTargetInput = { scope: props.scope, target: props.target } as ShareTargetInput;
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [label, setLabel] = useState(defaultLabel ?? '');
  const [expiry, setExpiry] = useState<ExpiryChoice>('7d');
  const [created, setCreated] = useState<{ id: string; url: string; expiresAt: string | Date | null } | null>(null);
  const [copy, setCopy] = useState<'idle' | 'copied' | 'failed'>('idle');
  const urlBox = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    } else if (!open && d.open) d.close();
  }, [open]);

  const runId = listRunId(want);
  const links = useQuery(trpc.share.list.queryOptions({ runId, limit: 500 }, { enabled: open }));
  const mine = (links.data ?? []).filter((l) => sameTarget(want, l));
  const refreshList = () => queryClient.invalidateQueries({ queryKey: trpc.share.list.pathKey() });

  const create = useMutation(
    trpc.share.create.mutationOptions({
      onSuccess: (res) => {
        setCreated({ id: res.id, url: shareUrl(window.location.origin, res.path), expiresAt: res.expiresAt });
        setCopy('idle');
        void refreshList();
      },
    }),
  );
  const revoke = useMutation(trpc.share.revoke.mutationOptions({ onSuccess: () => void refreshList() }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const l = label.trim();
    create.mutate({ ...want, label: l || undefined, expiresInSeconds: expirySeconds(expiry) } as Parameters<
      typeof create.mutate
    >[0]);
  };

  const copyUrl = async () => {
    if (!created) return;
    try {
      if (!navigator.clipboard?.writeText) throw new Error('no clipboard');
      await navigator.clipboard.writeText(created.url);
      setCopy('copied');
    } catch {
      // Without the async clipboard (plain http, or permission denied), select the text for the user to copy.
      urlBox.current?.select();
      let ok = false;
      try {
        ok = document.execCommand('copy');
      } catch {
        ok = false;
      }
      setCopy(ok ? 'copied' : 'failed');
    }
  };

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

      <form onSubmit={submit} className="share-form">
        <label>
          Label
          <input
            type="text"
            value={label}
            maxLength={200}
            onChange={(e) => setLabel(e.target.value)}
            placeholder="optional, e.g. for the reading group"
            aria-label="Link label"
          />
        </label>
        <label>
          Expires
          <select value={expiry} onChange={(e) => setExpiry(e.target.value as ExpiryChoice)} aria-label="Link expiry">
            {EXPIRY_OPTIONS.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create link'}
        </button>
      </form>
      {create.error && (
        <p className="error" role="alert">
          Could not create the link: {create.error.message}
        </p>
      )}

      {created && (
        <div className="panel share-created" aria-label="New link">
          <div className="row">
            <input
              ref={urlBox}
              type="text"
              readOnly
              value={created.url}
              aria-label="Share URL"
              onFocus={(e) => e.currentTarget.select()}
              className="share-url"
            />
            <button type="button" onClick={() => void copyUrl()}>
              Copy link
            </button>
            <a href={created.url} target="_blank" rel="noreferrer">
              Open
            </a>
          </div>
          <p className="muted" role="status" aria-live="polite" style={{ margin: '6px 0 0' }}>
            {copy === 'copied'
              ? 'Copied to the clipboard. '
              : copy === 'failed'
                ? 'Could not copy: select the URL and copy it yourself. '
                : ''}
            This URL is shown only now;{' '}
            {created.expiresAt ? `it expires ${formatTime(created.expiresAt)}` : 'it does not expire'}.
          </p>
        </div>
      )}

      <h3 className="share-h3">Links to this {word}</h3>
      {links.error ? (
        <p className="error" role="alert">
          Could not list links: {links.error.message}
        </p>
      ) : !links.data ? (
        <p className="muted" role="status">
          Loading links…
        </p>
      ) : mine.length === 0 ? (
        <p className="muted">No links yet.</p>
      ) : (
        <div className="share-list">
          <table aria-label="Share links">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {mine.map((l) => {
                const name = l.label ?? l.id;
                return (
                  <tr key={l.id} data-link-id={l.id}>
                    <td>
                      {l.label ?? <span className="muted">(no label)</span>}{' '}
                      {created?.id === l.id && <span className="badge ok">new</span>}
                    </td>
                    <td>{formatTime(l.createdAt)}</td>
                    <td>{l.expiresAt ? formatTime(l.expiresAt) : 'never'}</td>
                    <td>
                      <span
                        className={`badge ${l.state === 'active' ? 'ok' : l.state === 'expired' ? 'warn' : 'cancelled'}`}
                      >
                        {l.state}
                      </span>
                    </td>
                    <td>
                      {l.state === 'active' && (
                        <button
                          type="button"
                          className="danger"
                          onClick={() => revoke.mutate({ id: l.id })}
                          disabled={revoke.isPending && revoke.variables?.id === l.id}
                          aria-label={`Revoke link ${name}`}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {revoke.error && (
        <p className="error" role="alert">
          Could not revoke the link: {revoke.error.message}
        </p>
      )}
    </dialog>
  );
}
