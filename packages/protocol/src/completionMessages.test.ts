import { describe, expect, it } from 'vitest';
import { Channel, decodeClientFrame, encodeControl, isDecodeError } from './frames';
import { asClientMessage, MAX_COMPLETION_OPEN_FILES, type ClientMessage } from './messages';

describe('completion messages', () => {
  it('[P25] [P27] [P28] round-trip through a control frame', () => {
    const messages: ClientMessage[] = [
      { type: 'complete.request', requestId: 3, fileId: 'f1', position: 'AQID', openFileIds: ['f2', 'f3'] },
      { type: 'complete.cancel', requestId: 3 },
      { type: 'complete.feedback', requestId: 3, outcome: 'shown', latencyMs: 41.5 },
    ];
    for (const message of messages) {
      const frame = decodeClientFrame(encodeControl(message));
      expect(isDecodeError(frame)).toBe(false);
      if (!isDecodeError(frame) && frame.channel === Channel.Control) expect(frame.message).toEqual(message);
    }
  });

  it('[P4] refuses mistyped or oversized fields', () => {
    const request = { type: 'complete.request', requestId: 1, fileId: 'f', position: 'p', openFileIds: [] };
    expect(asClientMessage(request)).not.toBeNull();
    expect(asClientMessage({ ...request, position: 7 })).toBeNull();
    expect(asClientMessage({ ...request, openFileIds: 'f2' })).toBeNull();
    expect(asClientMessage({ ...request, openFileIds: [1] })).toBeNull();
    expect(asClientMessage({ ...request, openFileIds: Array.from({ length: MAX_COMPLETION_OPEN_FILES + 1 }, (_, i) => `f${i}`) })).toBeNull();
    expect(asClientMessage({ type: 'complete.cancel', requestId: 1.5 })).toBeNull();
    const feedback = { type: 'complete.feedback', requestId: 1, outcome: 'shown', latencyMs: 5 };
    expect(asClientMessage({ ...feedback, outcome: 'liked' })).toBeNull();
    expect(asClientMessage({ ...feedback, latencyMs: -1 })).toBeNull();
    expect(asClientMessage({ ...feedback, latencyMs: Number.NaN })).toBeNull();
  });
});
