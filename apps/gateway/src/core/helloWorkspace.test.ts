/** Which close code a hello gets for a workspace that does not exist ([P7]). */
import { CloseCode, describeClose } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { generateId } from '../transport/systemRandom';
import { Harness, hello } from '../../test/testHarness';

describe('hello for a workspace', () => {
  it('[P7] a workspace that does not exist closes with WorkspaceNotFound, whatever the token', () => {
    const h = new Harness();
    const real = h.gateway.createWorkspace('Real', {});
    const missing = generateId('w');
    for (const token of [real.owner.token, 'not-a-real-token-at-all', '']) {
      const pair = h.openRaw();
      hello(pair, missing, token);
      h.flush();
      expect(pair.closeCode, token).toBe(CloseCode.WorkspaceNotFound);
    }
    expect(h.gateway.isRoomLoaded(missing)).toBe(false);
    expect(describeClose(CloseCode.WorkspaceNotFound)).toMatch(/does not exist/);
  });

  it('[P7] a workspace that exists still refuses a token that opens none of its links with Unauthorized', () => {
    const h = new Harness();
    const real = h.gateway.createWorkspace('Real', {});
    const other = h.gateway.createWorkspace('Other', {});
    for (const token of [other.owner.token, 'not-a-real-token-at-all']) {
      const pair = h.openRaw();
      hello(pair, real.workspaceId, token);
      h.flush();
      expect(pair.closeCode, token).toBe(CloseCode.Unauthorized);
    }
  });
});
