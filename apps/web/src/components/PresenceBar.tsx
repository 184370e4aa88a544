import type { CSSProperties } from 'react';
import { follow, usePresence, type PresenceUser } from '../stores/presenceStore';

export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? (words[0]?.[0] ?? '') + (words[1]?.[0] ?? '') : name.trim().slice(0, 2);
  return letters.toUpperCase() || '?';
}

export function Avatar({ user, className }: { user: Pick<PresenceUser, 'name' | 'color'>; className?: string }) {
  return (
    <span className={className ? `avatar ${className}` : 'avatar'} style={{ background: user.color }} aria-hidden="true">
      {initials(user.name)}
    </span>
  );
}

/** Everyone else in the workspace. Click a person to follow them; click again to stop. */
export function PresenceBar() {
  const peers = usePresence((s) => s.peers);
  const following = usePresence((s) => s.following);
  return (
    <div className="presence" role="group" data-testid="presence-list" aria-label="People in this workspace">
      {peers.map((peer) => {
        const isFollowed = peer.clientId === following;
        const where = peer.activeFile ? ` — in ${peer.activeFile}` : '';
        return (
          <button
            key={peer.clientId}
            type="button"
            className={isFollowed ? 'presence-item presence-item--following' : 'presence-item'}
            style={{ '--peer-color': peer.user.color } as CSSProperties}
            data-testid="presence-item"
            data-name={peer.user.name}
            data-following={isFollowed ? 'true' : undefined}
            aria-pressed={isFollowed}
            title={isFollowed ? `Following ${peer.user.name}${where}. Click to stop.` : `Follow ${peer.user.name}${where}`}
            onClick={() => follow(isFollowed ? null : peer.clientId)}
          >
            <Avatar user={peer.user} />
          </button>
        );
      })}
    </div>
  );
}
