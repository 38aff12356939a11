'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { ROLES, type Role } from '../../contracts/access.ts';
import { formatTime } from '../ui/format.ts';

/** The user list. */
function useUsers() {
  const trpc = useTRPC();
  return useQuery(trpc.admin.users.queryOptions());
}

/** The admin's user mutations; each refreshes the list, and removing asks first. */
function useUserMutations() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.users.queryKey() });
  const add = useMutation(trpc.admin.addUser.mutationOptions({ onSuccess: refresh }));
  const setRole = useMutation(trpc.admin.setRole.mutationOptions({ onSuccess: refresh }));
  const link = useMutation(trpc.admin.signInLink.mutationOptions());
  const disable = useMutation(trpc.admin.disableUser.mutationOptions({ onSuccess: refresh }));
  const enable = useMutation(trpc.admin.enableUser.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.admin.removeUser.mutationOptions({ onSuccess: refresh }));
  const confirmRemove = (email: string) => {
    if (
      window.confirm(
        `Remove ${email}? Their password, single sign-on link and API tokens are deleted; their runs and recipes stay, with them as author.`,
      )
    )
      remove.mutate({ email });
  };
  const error = add.error ?? setRole.error ?? link.error ?? disable.error ?? enable.error ?? remove.error;
  return { add, setRole, link, disable, enable, confirmRemove, error };
}

/**
 * Users and their roles; add one, change a role, make a one-time sign-in link to hand over, disable, enable or remove
 * (admins only). A role change, a disable or a removal ends the user's sessions and API tokens at once.
 */
export function UsersPanel() {
  const users = useUsers();
  const m = useUserMutations();
  const { add, link } = m;
  const [email, setEmail] = useState('');
  const [role, setNewRole] = useState<Role>('viewer');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate({ email, role }, { onSuccess: () => setEmail('') });
  };
  if (users.error)
    return (
      <div className="panel error" role="alert">
        Could not load users: {users.error.message}
      </div>
    );
  return (
    <section aria-label="Users" className="panel">
      <table>
        <thead>
          <tr>
            <th>Email</th>
            <th>Role</th>
            <th>Password</th>
            <th>Since</th>
            <th>Status</th>
            <th>Sign-in link</th>
            <th>Access</th>
          </tr>
        </thead>
        <tbody>
          {(users.data ?? []).map((u) => (
            <UserRow key={u.id} u={u} m={m} />
          ))}
        </tbody>
      </table>
      {link.data && (
        <p role="status">
          One-time sign-in link (valid 30 minutes, single use): <code>{link.data.url}</code>
        </p>
      )}
      <form onSubmit={submit} className="row" aria-label="Add a user" style={{ gap: 8, marginTop: 8 }}>
        <input
          aria-label="New user's email"
          type="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          placeholder="email"
        />
        <select aria-label="New user's role" value={role} onChange={(e) => setNewRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <button type="submit">Add user</button>
      </form>
      <p className="muted" style={{ fontSize: 12.5 }}>
        A role change, a disable or a removal signs the user out everywhere and revokes their API tokens.
      </p>
      {m.error && (
        <p className="error" role="alert">
          {m.error.message}
        </p>
      )}
    </section>
  );
}

type User = NonNullable<ReturnType<typeof useUsers>['data']>[number];

/** One user: the role select, the one-time link, disable or enable, and remove. */
function UserRow({ u, m }: { u: User; m: ReturnType<typeof useUserMutations> }) {
  return (
    <tr>
      <td>{u.email}</td>
      <td>
        <select
          aria-label={`Role of ${u.email}`}
          value={u.role}
          onChange={(e) => m.setRole.mutate({ email: u.email, role: e.target.value as Role })}
        >
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </td>
      <td>{u.hasPassword ? 'set' : '—'}</td>
      <td>{formatTime(u.createdAt)}</td>
      <td>{u.status}</td>
      <td>
        {u.status === 'active' && (
          <button type="button" onClick={() => m.link.mutate({ email: u.email })}>
            Make a one-time link for {u.email}
          </button>
        )}
      </td>
      <td className="row" style={{ gap: 4 }}>
        {u.status === 'active' ? (
          <button type="button" onClick={() => m.disable.mutate({ email: u.email })}>
            Disable {u.email}
          </button>
        ) : (
          <button type="button" onClick={() => m.enable.mutate({ email: u.email })}>
            Enable {u.email}
          </button>
        )}
        <button type="button" onClick={() => m.confirmRemove(u.email)}>
          Remove {u.email}
        </button>
      </td>
    </tr>
  );
}

/** API tokens (never their values) and revocation. New tokens come from `npx toolsmith token create`. */
export function TokensPanel() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const tokens = useQuery(trpc.admin.tokens.queryOptions());
  const revoke = useMutation(
    trpc.admin.revokeToken.mutationOptions({
      onSuccess: () => qc.invalidateQueries({ queryKey: trpc.admin.tokens.queryKey() }),
    }),
  );
  if (tokens.error)
    return (
      <div className="panel error" role="alert">
        Could not load API tokens: {tokens.error.message}
      </div>
    );
  const rows = tokens.data ?? [];
  return (
    <section aria-label="API tokens" className="panel">
      {rows.length === 0 ? (
        <p className="muted">
          No API tokens. Create one: <code>npx toolsmith token create --user EMAIL</code>.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Id</th>
              <th>User</th>
              <th>Name</th>
              <th>Created</th>
              <th>Expires</th>
              <th>Last used</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => {
              const state = t.revokedAt
                ? 'revoked'
                : t.expiresAt && new Date(t.expiresAt) < new Date()
                  ? 'expired'
                  : 'active';
              return (
                <tr key={t.id}>
                  <td>
                    <code>{t.id}</code>
                  </td>
                  <td>{t.user}</td>
                  <td>{t.name}</td>
                  <td>{formatTime(t.createdAt)}</td>
                  <td>{t.expiresAt ? formatTime(t.expiresAt) : 'never'}</td>
                  <td>{t.lastUsedAt ? formatTime(t.lastUsedAt) : '—'}</td>
                  <td>
                    {state === 'active' ? (
                      <button type="button" onClick={() => revoke.mutate({ id: t.id })}>
                        Revoke {t.id}
                      </button>
                    ) : (
                      state
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Every API mutation, newest first: who, what, on what, from where, allowed or refused. */
export function AuditPanel() {
  const trpc = useTRPC();
  const audit = useQuery(trpc.admin.audit.queryOptions({ limit: 100 }, { refetchInterval: 10_000 }));
  if (audit.error)
    return (
      <div className="panel error" role="alert">
        Could not load the audit log: {audit.error.message}
      </div>
    );
  return (
    <section aria-label="Audit log" className="panel">
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>Via</th>
            <th>Action</th>
            <th>Target</th>
            <th>Result</th>
            <th>From</th>
          </tr>
        </thead>
        <tbody>
          {(audit.data ?? []).map((a) => (
            <tr key={a.id}>
              <td>{formatTime(a.at)}</td>
              <td>{a.email ?? 'no one'}</td>
              <td>{a.via ?? '—'}</td>
              <td>
                <code>{a.action}</code>
              </td>
              <td>{a.target ?? '—'}</td>
              <td title={a.detail ?? undefined}>{a.ok ? 'ok' : 'refused'}</td>
              <td>{a.ip ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
