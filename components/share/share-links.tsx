'use client';
import { formatTime } from '../ui/format.ts';
import type { ExpiryChoice } from './share-link.ts';
import { EXPIRY_OPTIONS, type ShareDialogState } from './use-share-dialog.ts';

/** The new link's label and expiry, and the button that makes it. */
export function NewLinkForm({ s }: { s: ShareDialogState }) {
  return (
    <form onSubmit={s.submit} className="share-form">
      <label>
        Label
        <input
          type="text"
          value={s.label}
          maxLength={200}
          onChange={(e) => s.setLabel(e.target.value)}
          placeholder="optional, e.g. for the reading group"
          aria-label="Link label"
        />
      </label>
      <label>
        Expires
        <select value={s.expiry} onChange={(e) => s.setExpiry(e.target.value as ExpiryChoice)} aria-label="Link expiry">
          {EXPIRY_OPTIONS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={s.create.isPending}>
        {s.create.isPending ? 'Creating…' : 'Create link'}
      </button>
    </form>
  );
}

/** The link just made: its URL (shown only now), a copy button and how long it lives. */
export function CreatedLinkPanel({
  s,
  created,
}: {
  s: ShareDialogState;
  created: NonNullable<ShareDialogState['created']>;
}) {
  return (
    <section className="panel share-created" aria-label="New link">
      <div className="row">
        <input
          ref={s.urlBox}
          type="text"
          readOnly
          value={created.url}
          aria-label="Share URL"
          onFocus={(e) => e.currentTarget.select()}
          className="share-url"
        />
        <button type="button" onClick={() => void s.copyUrl()}>
          Copy link
        </button>
        <a href={created.url} target="_blank" rel="noreferrer">
          Open
        </a>
      </div>
      <p className="muted" role="status" aria-live="polite" style={{ margin: '6px 0 0' }}>
        {s.copy === 'copied'
          ? 'Copied to the clipboard. '
          : s.copy === 'failed'
            ? 'Could not copy: select the URL and copy it yourself. '
            : ''}
        This URL is shown only now;{' '}
        {created.expiresAt ? `it expires ${formatTime(created.expiresAt)}` : 'it does not expire'}.
      </p>
    </section>
  );
}

/** Every link to the same thing, live or not, each live one with a Revoke button. */
export function LinksTable({ s }: { s: ShareDialogState }) {
  return (
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
          {s.mine.map((l) => (
            <tr key={l.id} data-link-id={l.id}>
              <td>
                {l.label ?? <span className="muted">(no label)</span>}{' '}
                {s.created?.id === l.id && <span className="badge ok">new</span>}
              </td>
              <td>{formatTime(l.createdAt)}</td>
              <td>{l.expiresAt ? formatTime(l.expiresAt) : 'never'}</td>
              <td>
                <span className={`badge ${l.state === 'active' ? 'ok' : l.state === 'expired' ? 'warn' : 'cancelled'}`}>
                  {l.state}
                </span>
              </td>
              <td>
                {l.state === 'active' && (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => s.revoke.mutate({ id: l.id })}
                    disabled={s.revoke.isPending && s.revoke.variables?.id === l.id}
                    aria-label={`Revoke link ${l.label ?? l.id}`}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
