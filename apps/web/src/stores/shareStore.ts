import { create } from 'zustand';
import { createLink, listLinks, revokeLink, type LinkInfo } from '../api/workspaceApi';
import { useConnection } from './connectionStore';
import { usePresence } from './presenceStore';

interface ShareState {
  open: boolean;
  links: readonly LinkInfo[];
  loading: boolean;
  creating: boolean;
  /** The link made last in this dialog: its URL carries the token, shown this once. */
  created: { url: string; link: LinkInfo } | null;
  error: string | null;
}

export const useShare = create<ShareState>(() => ({
  open: false,
  links: [],
  loading: false,
  creating: false,
  created: null,
  error: null,
}));

function credentials(): { workspaceId: string; token: string } | null {
  const { workspaceId, token } = useConnection.getState();
  return workspaceId && token ? { workspaceId, token } : null;
}

export function openShareDialog(): void {
  useShare.setState({ open: true, created: null, error: null });
  void refreshLinks();
}

export function closeShareDialog(): void {
  useShare.setState({ open: false, created: null, error: null });
}

export async function refreshLinks(): Promise<void> {
  const auth = credentials();
  if (!auth) return;
  useShare.setState({ loading: true });
  const result = await listLinks(auth.workspaceId, auth.token);
  useShare.setState(result.ok ? { links: result.value, loading: false } : { error: result.message, loading: false });
}

/** Resolves to whether the link was made. */
export async function shareLink(role: 'owner' | 'editor' | 'viewer', expiresInMs: number | null, label: string): Promise<boolean> {
  const auth = credentials();
  if (!auth) return false;
  useShare.setState({ creating: true, error: null });
  const result = await createLink(auth.workspaceId, auth.token, { role, expiresInMs, ...(label.trim() ? { label: label.trim() } : {}) });
  if (!result.ok) {
    useShare.setState({ creating: false, error: result.message });
    return false;
  }
  useShare.setState({ creating: false, created: result.value });
  await refreshLinks();
  return true;
}

export async function revoke(linkId: string): Promise<void> {
  const auth = credentials();
  if (!auth) return;
  useShare.setState({ error: null });
  const result = await revokeLink(auth.workspaceId, auth.token, linkId, usePresence.getState().self.name);
  if (!result.ok) {
    useShare.setState({ error: result.message });
    return;
  }
  useShare.setState((state) => ({
    links: state.links.filter((link) => link.id !== linkId),
    created: state.created?.link.id === linkId ? null : state.created,
  }));
}
