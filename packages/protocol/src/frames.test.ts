import { describe, expect, it } from 'vitest';
import { CloseCode, describeClose, revokedReason, revokerOf, shouldReconnect } from './closeCodes';
import { Channel, decodeClientFrame, decodeServerFrame, encodeControl, encodeDocFrame, isDecodeError } from './frames';
import { asClientMessage } from './messages';
import { validatePath } from './paths';

describe('frames', () => {
  it('[P1][P3] a control message round-trips through its frame', () => {
    const frame = encodeControl({ type: 'file.rename', requestId: 7, from: 'a.ts', to: 'b/a.ts' });
    expect(frame[0]).toBe(Channel.Control);
    expect(decodeClientFrame(frame)).toEqual({
      channel: Channel.Control,
      message: { type: 'file.rename', requestId: 7, from: 'a.ts', to: 'b/a.ts' },
    });
  });

  it('[P2] a doc frame carries its doc id and payload', () => {
    const frame = encodeDocFrame(Channel.Awareness, 'fAbc', new Uint8Array([1, 2, 3]));
    const decoded = decodeServerFrame(frame);
    expect(isDecodeError(decoded)).toBe(false);
    expect(decoded).toMatchObject({ channel: Channel.Awareness, docId: 'fAbc' });
    if (!isDecodeError(decoded) && decoded.channel !== Channel.Control) expect([...decoded.payload]).toEqual([1, 2, 3]);
  });

  it('[P4] undecodable frames are values, never exceptions', () => {
    const bad: Array<[Uint8Array, string]> = [
      [new Uint8Array([]), 'empty'],
      [new Uint8Array([7]), 'unknown_channel'],
      [new Uint8Array([Channel.Control, 0xff, 0xfe]), 'bad_json'],
      [new TextEncoder().encode('\u0000{"type":"nope"}'), 'bad_message'],
      [new TextEncoder().encode('\u0000{"type":"hello","protocolVersion":"1","workspaceId":"w","token":"t"}'), 'bad_message'],
      [new Uint8Array([Channel.Sync, 0x85]), 'bad_doc_id'],
      [new Uint8Array([Channel.Sync, 0]), 'bad_doc_id'],
    ];
    for (const [bytes, error] of bad) expect(decodeClientFrame(bytes)).toEqual({ error });
  });

  it('[P4] control messages are checked field by field', () => {
    expect(asClientMessage({ type: 'ping', sentAt: 1 })).toEqual({ type: 'ping', sentAt: 1 });
    expect(asClientMessage({ type: 'ping', sentAt: Number.NaN })).toBeNull();
    expect(asClientMessage({ type: 'file.create', requestId: 1, path: 'a', kind: 'symlink' })).toBeNull();
    expect(asClientMessage({ type: '__proto__' })).toBeNull();
    expect(asClientMessage([])).toBeNull();
  });
});

describe('close codes', () => {
  it('[P17] permanent refusals are not retried; transient ones are', () => {
    expect(shouldReconnect(CloseCode.LinkRevoked)).toBe(false);
    expect(shouldReconnect(CloseCode.Forbidden)).toBe(false);
    expect(shouldReconnect(CloseCode.ProtocolVersion)).toBe(false);
    expect(shouldReconnect(CloseCode.RateLimited)).toBe(true);
    expect(shouldReconnect(CloseCode.GoingAway)).toBe(true);
    expect(shouldReconnect(1006)).toBe(true);
  });

  it('[P15] a revocation names who revoked the link, within the 123 bytes of a close reason', () => {
    expect(describeClose(CloseCode.LinkRevoked, revokedReason('the owner (“Laptop”)'))).toBe(
      'This link was revoked by the owner (“Laptop”). Ask the owner for a new link to rejoin.',
    );
    expect(describeClose(CloseCode.LinkRevoked, 'link revoked')).toContain("revoked by the workspace's owner.");
    const long = revokedReason('the owner (“' + '😀'.repeat(100) + '”)');
    expect(new TextEncoder().encode(long).length).toBeLessThanOrEqual(123);
    expect(revokerOf(long)).toMatch(/^the owner \(“(?:😀)+$/u);
    expect(revokerOf(undefined)).toBeNull();
  });

  it('every close code has a sentence for the user', () => {
    for (const code of Object.values(CloseCode)) expect(describeClose(code)).toMatch(/^[A-Z].+\.$/);
  });
});

describe('paths', () => {
  it('[P14] accepts ordinary relative paths', () => {
    for (const path of ['a.ts', 'src/app/main.tsx', '.gitignore', 'my file (1).md', 'ünïcode/名前.ts']) {
      expect(validatePath(path), path).toBeNull();
    }
  });

  it('[P14] refuses traversal, absolute paths, control characters and empty segments', () => {
    expect(validatePath('')).toBe('empty');
    expect(validatePath('../x')).toBe('traversal');
    expect(validatePath('a/./b')).toBe('traversal');
    expect(validatePath('/etc/passwd')).toBe('absolute');
    expect(validatePath('a\u0000b')).toBe('control_character');
    expect(validatePath('a\nb')).toBe('control_character');
    expect(validatePath('a\\b')).toBe('backslash');
    expect(validatePath('a//b')).toBe('empty_segment');
    expect(validatePath('a/')).toBe('empty_segment');
    expect(validatePath('x'.repeat(256))).toBe('segment_too_long');
    expect(validatePath('ab/'.repeat(400) + 'c')).toBe('too_long');
  });
});
