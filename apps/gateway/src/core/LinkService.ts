import { CloseCode, type Role } from '@flint/protocol';
import type { LinkRecord, Store } from './ports/Store';
import type { Clock } from './ports/Clock';
import type { Random } from './ports/Random';
import { hashToken, sameHash } from './linkTokens';

export type AuthResult = { ok: true; link: LinkRecord } | { ok: false; closeCode: CloseCode; message: string };

export interface CreatedLink {
  link: LinkRecord;
  /** The capability. Returned once, at creation; only its hash is stored. */
  token: string;
}

export type LinkRequestResult<T> = { ok: true; value: T } | { ok: false; status: 400 | 401 | 403 | 404 | 409; message: string };

/** Link management is the owner's ([P15]): an editor link could otherwise lock the owner out. */
const notOwner = (action: string) => `Only the workspace's owner can ${action} links. Ask the owner.`;

/** Links are capabilities: a token opens one workspace with one role until revoked or expired. */
export class LinkService {
  private validity: (linkId: string) => boolean = () => true;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {}

  /**
   * Which link a token opens in a workspace, or why none ([P7]). A workspace that does not exist
   * is said so (4404) before any token is looked at. That tells whether an id exists, which is no
   * secret worth keeping: an id is a name, not a capability — it sits in the page's URL path, in
   * history and in logs — and random (72 bits), so probing for ids finds none; access takes the
   * 144-bit token. A user with a mistyped or stale link learns the workspace is not there, not
   * that their link is bad.
   */
  authenticate(workspaceId: string, token: string): AuthResult {
    if (!this.store.getWorkspace(workspaceId)) {
      return { ok: false, closeCode: CloseCode.WorkspaceNotFound, message: 'no such workspace' };
    }
    const tokenHash = hashToken(token);
    const link = this.store.findLinkByTokenHash(tokenHash);
    if (!link || link.workspaceId !== workspaceId || !sameHash(link.tokenHash, tokenHash)) {
      return { ok: false, closeCode: CloseCode.Unauthorized, message: 'unknown link' };
    }
    if (link.revokedAt !== null) return { ok: false, closeCode: CloseCode.LinkRevoked, message: 'link revoked' };
    if (link.expiresAt !== null && link.expiresAt <= this.clock.now()) {
      return { ok: false, closeCode: CloseCode.LinkExpired, message: 'link expired' };
    }
    return { ok: true, link };
  }

  /**
   * Whether the sessions a link opened may go on. A revocation closes them when it is announced;
   * this answers for the time an announcement may have been lost (the gateway's
   * `RevocationWatch`, which may read the store).
   */
  stillValid(linkId: string): boolean {
    return this.validity(linkId);
  }

  checkValidity(validity: (linkId: string) => boolean): void {
    this.validity = validity;
  }

  create(workspaceId: string, role: Role, label: string, expiresInMs: number | null): CreatedLink {
    const token = this.random.token();
    const now = this.clock.now();
    const link: LinkRecord = {
      id: this.random.id('l'),
      workspaceId,
      role,
      tokenHash: hashToken(token),
      label,
      createdAt: now,
      expiresAt: expiresInMs === null ? null : now + expiresInMs,
      revokedAt: null,
    };
    this.store.createLink(link);
    return { link, token };
  }

  /** Creates a link on behalf of the holder of `token` (REST), within what its role may share. */
  share(
    workspaceId: string,
    token: string,
    request: { role: Role; label: string; expiresInMs: number | null },
  ): LinkRequestResult<CreatedLink> {
    const auth = this.authenticate(workspaceId, token);
    if (!auth.ok) return { ok: false, status: 401, message: 'This link cannot share: it is invalid, expired or revoked.' };
    if (auth.link.role !== 'owner') return { ok: false, status: 403, message: notOwner('create') };
    return { ok: true, value: this.create(workspaceId, request.role, request.label, request.expiresInMs) };
  }

  /** Live links of a workspace (not revoked, not expired), for its owners. */
  list(workspaceId: string, token: string): LinkRequestResult<LinkRecord[]> {
    const auth = this.authenticate(workspaceId, token);
    if (!auth.ok) return { ok: false, status: 401, message: 'This link is invalid, expired or revoked.' };
    if (auth.link.role !== 'owner') return { ok: false, status: 403, message: notOwner('see the') };
    return { ok: true, value: this.live(workspaceId) };
  }

  /** Revokes a link, by an owner; never the last live owner link, which would leave no one to manage the workspace. */
  revoke(workspaceId: string, token: string, linkId: string): LinkRequestResult<LinkRecord> {
    const auth = this.authenticate(workspaceId, token);
    if (!auth.ok) return { ok: false, status: 401, message: 'This link is invalid, expired or revoked.' };
    const target = this.store.getLink(linkId);
    if (!target || target.workspaceId !== workspaceId) return { ok: false, status: 404, message: 'No such link.' };
    if (auth.link.role !== 'owner') return { ok: false, status: 403, message: notOwner('revoke') };
    if (target.role === 'owner' && !this.live(workspaceId).some((l) => l.role === 'owner' && l.id !== target.id)) {
      return {
        ok: false,
        status: 409,
        message: "This is the workspace's last owner link: without it no one could manage the workspace. Create another owner link first.",
      };
    }
    this.store.revokeLink(linkId, this.clock.now());
    return { ok: true, value: { ...target, revokedAt: this.clock.now() } };
  }

  private live(workspaceId: string): LinkRecord[] {
    const now = this.clock.now();
    return this.store.listLinks(workspaceId).filter((l) => l.revokedAt === null && (l.expiresAt === null || l.expiresAt > now));
  }
}
