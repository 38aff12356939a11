'use client';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/lib/trpc.ts';

/** Change your own password: the current one is required; every other session of yours is signed out. */
export function ChangePasswordForm() {
  const trpc = useTRPC();
  const change = useMutation(trpc.auth.changePassword.mutationOptions());
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const mismatch = again !== '' && next !== again;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (mismatch) return;
    change.mutate(
      { currentPassword: current, newPassword: next },
      {
        onSuccess: () => {
          setCurrent('');
          setNext('');
          setAgain('');
        },
      },
    );
  };
  return (
    <form onSubmit={submit} aria-label="Change your password" className="panel" style={{ maxWidth: 420 }}>
      <p>
        <label htmlFor="current-password">Current password</label>
        <br />
        <input
          id="current-password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          style={{ width: '100%' }}
        />
      </p>
      <p>
        <label htmlFor="new-password">New password (10 characters or more)</label>
        <br />
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          maxLength={256}
          value={next}
          onChange={(e) => setNext(e.target.value)}
          style={{ width: '100%' }}
        />
      </p>
      <p>
        <label htmlFor="new-password-again">New password again</label>
        <br />
        <input
          id="new-password-again"
          type="password"
          autoComplete="new-password"
          required
          value={again}
          onChange={(e) => setAgain(e.target.value)}
          style={{ width: '100%' }}
        />
      </p>
      <button type="submit" disabled={change.isPending || mismatch}>
        Change password
      </button>
      {mismatch && (
        <p className="error" role="alert">
          newPassword: the two new passwords differ
        </p>
      )}
      {change.error && (
        <p className="error" role="alert">
          {change.error.message}
        </p>
      )}
      {change.data && <p role="status">Password changed; {change.data.endedSessions} other session(s) signed out.</p>}
    </form>
  );
}
