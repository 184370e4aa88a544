import type { Role } from '@flint/protocol';
import { useConnection } from '../stores/connectionStore';

export function roleLabel(role: Role): string {
  switch (role) {
    case 'owner':
      return 'Owner';
    case 'editor':
      return 'Editor';
    case 'viewer':
      return 'Viewer';
  }
}

/** The role of this tab's link, named as the Share dialog names links: Owner, Editor, Viewer. */
export function RoleBadge() {
  const role = useConnection((s) => s.role);
  if (role === null) return null;
  return (
    <span
      className={`role-badge role-badge--${role}`}
      data-testid="role-badge"
      title={role === 'viewer' ? 'You are viewing: you can follow and read along, but not edit.' : `You joined as ${role}.`}
    >
      {roleLabel(role)}
    </span>
  );
}
