'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import type { ShareTargetInput } from '../../contracts/share.ts';
import { EXPIRY_OPTIONS, type ExpiryChoice, expirySeconds, shareUrl } from './share-link.ts';
import { listRunId, sameTarget } from './share-target.ts';

export { EXPIRY_OPTIONS };
export type CopyState = 'idle' | 'copied' | 'failed';
export interface CreatedLink {
  id: string;
  url: string;
  expiresAt: string | Date | null;
}

/** Opens and closes the native dialog with `open`. */
export function useModal(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    } else if (!open && d.open) d.close();
  }, [open]);
  return ref;
}

/**
 * The share dialog's state: the new link's label and expiry, the links to the same thing (listed while open), the
 * link just made (its URL exists only now: only a hash of its token is kept), copying it, and revoking.
 */
export function useShareDialog(want: ShareTargetInput, open: boolean, defaultLabel?: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [label, setLabel] = useState(defaultLabel ?? '');
  const [expiry, setExpiry] = useState<ExpiryChoice>('7d');
  const [created, setCreated] = useState<CreatedLink | null>(null);
  const [copy, setCopy] = useState<CopyState>('idle');
  const urlBox = useRef<HTMLInputElement>(null);

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

  return { label, setLabel, expiry, setExpiry, submit, create, created, copy, copyUrl, urlBox, links, mine, revoke };
}

export type ShareDialogState = ReturnType<typeof useShareDialog>;
