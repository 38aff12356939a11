/** The banner every shared page shows, and the designed state of a link that no longer opens anything. */
export function SharedBanner({ label, expiresAt }: { label?: string | null; expiresAt?: string | Date | null }) {
  const exp = expiresAt ? new Date(expiresAt) : null;
  return (
    <aside className="share-banner" aria-label="Read-only shared view">
      <strong>Read-only shared view</strong>
      {label && <span> · {label}</span>}
      <span className="muted">
        {' '}
        · {exp && !Number.isNaN(exp.getTime()) ? `link expires ${exp.toLocaleString()}` : 'link does not expire'}
      </span>
    </aside>
  );
}

export function SharedNotFound() {
  return (
    <div className="share-notfound panel" role="alert" aria-labelledby="share-nf-title">
      <div className="share-nf-icon" aria-hidden="true">
        ⛓
      </div>
      <h1 id="share-nf-title">This link doesn't open anything</h1>
      <p>The shared link has expired, was revoked by its owner, or never existed.</p>
      <p className="muted">Ask the person who shared it for a new link.</p>
    </div>
  );
}

export function SharedError({ what, message, retry }: { what: string; message: string; retry?: () => void }) {
  return (
    <div className="panel error" role="alert">
      Could not load {what}: {message}
      {retry && (
        <>
          {' '}
          <button type="button" onClick={retry}>
            Retry
          </button>
        </>
      )}
    </div>
  );
}
