/**
 * WebSocket close codes the gateway uses (SPEC.md §Close codes). 4000-4999 is the
 * application range; the last three digits mirror the HTTP status they resemble.
 */
export const CloseCode = {
  /** The server is shutting down or restarting; reconnect. */
  GoingAway: 1001,
  /** A frame could not be decoded, or a message arrived out of order. */
  MalformedFrame: 4400,
  /**
   * A replay workspace went back in time (issue 37): its documents were emptied and are written
   * again; drop what this tab holds (reload) and sync from nothing.
   */
  Rewound: 4205,
  /** The token does not open this workspace. */
  Unauthorized: 4401,
  /** The session tried something its role does not allow (a viewer writing). */
  Forbidden: 4403,
  /** The workspace does not exist (deleted, or a wrong link). */
  WorkspaceNotFound: 4404,
  /** No hello arrived in time. */
  HelloTimeout: 4408,
  /**
   * The client's updates build on changes the gateway never received, past what it holds for
   * a session; reconnect and sync from the start.
   */
  OutOfSync: 4409,
  /** The link was revoked. */
  LinkRevoked: 4410,
  /** The link expired. */
  LinkExpired: 4411,
  /** A frame was larger than `maxFrameBytes`. */
  FrameTooLarge: 4413,
  /** A document would grow past `maxDocBytes`. */
  DocumentTooLarge: 4414,
  /** The client speaks a protocol version the server does not. */
  ProtocolVersion: 4426,
  /** Too many messages per second from this connection. */
  RateLimited: 4429,
  /** Too many tabs open with this link, or from this address; retried later. */
  TooManySessions: 4430,
  /** A bug on the server. */
  Internal: 4500,
  /**
   * The gateway could not store a change (its database did not answer): nothing of it was
   * shown to anyone; reconnect, and the tab's sync sends it again.
   */
  StoreUnavailable: 4503,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

const permanent: ReadonlySet<number> = new Set([
  CloseCode.Unauthorized,
  CloseCode.Forbidden,
  CloseCode.WorkspaceNotFound,
  CloseCode.LinkRevoked,
  CloseCode.LinkExpired,
  CloseCode.DocumentTooLarge,
  CloseCode.ProtocolVersion,
  CloseCode.MalformedFrame,
  // What the tab holds is ahead of the replay: syncing it again would send it back (refused).
  CloseCode.Rewound,
]);

/**
 * Whether a client should reconnect after this close. Reconnecting after a permanent
 * refusal would only repeat it. A too-large frame is not permanent: the client sends its
 * updates in pieces that fit (`splitUpdate`), so what it resends after reconnecting fits.
 */
export function shouldReconnect(code: number): boolean {
  return !permanent.has(code);
}

const revokedPrefix = 'revoked by ';
/** What a WebSocket close reason may hold, in UTF-8 bytes. */
const maxReasonBytes = 123;

/**
 * The close reason of a revocation ([P15]): who revoked the link, in the words the gateway
 * knows (the revoking link's role and label), cut to what a close frame can carry.
 */
export function revokedReason(by: string): string {
  let bytes = revokedPrefix.length;
  let kept = '';
  for (const char of by) {
    const cp = char.codePointAt(0) ?? 0;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes > maxReasonBytes) break;
    kept += char;
  }
  return revokedPrefix + kept;
}

/** Who revoked the link, from a LinkRevoked close's reason; null when it does not say. */
export function revokerOf(reason: string | undefined): string | null {
  if (!reason?.startsWith(revokedPrefix)) return null;
  const by = reason.slice(revokedPrefix.length).trim();
  return by === '' ? null : by;
}

/**
 * The sentence a user sees for a close: what happened and what to do. `reason` is the close
 * frame's reason; only a revocation's is read (it names who revoked the link).
 */
export function describeClose(code: number, reason?: string): string {
  switch (code) {
    case CloseCode.Unauthorized:
      return 'This link is not valid for this workspace. Ask the owner for a new link.';
    case CloseCode.Forbidden:
      return 'This link is view-only, and the gateway refused a change. Ask for an editor link to edit.';
    case CloseCode.WorkspaceNotFound:
      return 'This workspace does not exist. Check the link, or create a new workspace.';
    case CloseCode.LinkRevoked:
      return `This link was revoked by ${revokerOf(reason) ?? "the workspace's owner"}. Ask the owner for a new link to rejoin.`;
    case CloseCode.LinkExpired:
      return 'This link has expired. Ask for a new link to rejoin.';
    case CloseCode.FrameTooLarge:
      return 'A change was too large to send in one piece; reconnecting to send it in smaller pieces. Your edits are kept in this tab.';
    case CloseCode.DocumentTooLarge:
      return 'This file reached the size limit, so the gateway stopped accepting changes to it. Split the file, then reload.';
    case CloseCode.ProtocolVersion:
      return 'This page is out of date with the gateway. Reload the page.';
    case CloseCode.RateLimited:
      return 'Too many messages too fast; reconnecting shortly.';
    case CloseCode.TooManySessions:
      return 'Too many tabs are open with this link; close some, or ask for a link of your own. Retrying.';
    case CloseCode.MalformedFrame:
      return 'The gateway could not read a message from this tab. Reload the page.';
    case CloseCode.OutOfSync:
      return 'This tab fell out of step with the gateway; reconnecting to catch up.';
    case CloseCode.HelloTimeout:
      return 'The connection did not identify itself in time; reconnecting.';
    case CloseCode.Rewound:
      return 'The replay went back in time; reloading its files.';
    case CloseCode.GoingAway:
      return 'The gateway is restarting; reconnecting.';
    case CloseCode.Internal:
      return 'The gateway hit an internal error; reconnecting.';
    case CloseCode.StoreUnavailable:
      return 'The gateway could not save changes just now; reconnecting. Your edits are kept in this tab and sent again.';
    default:
      return 'The connection to the gateway was lost; reconnecting.';
  }
}
