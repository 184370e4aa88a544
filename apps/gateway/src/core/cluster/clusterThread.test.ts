import { readThread, THREAD_DOC_ID } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelProvider, ModelRequest } from '../ports/ModelProvider';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain } from '../../../test/ScriptedProvider';
import { Harness } from '../../../test/testHarness';
import { MemoryBus, MemoryHub } from '../../../test/MemoryBus';

/** A model that says a word and then works until it is stopped. */
class Working implements ModelProvider {
  readonly kind = 'working';
  readonly requests: ModelRequest[] = [];

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.requests.push(request);
    return (async function* () {
      yield { type: 'text', text: 'Working' } as ModelEvent;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    })();
  }

  async close(): Promise<void> {}
}

describe('the agent thread on two gateways', () => {
  it('a message admitted on one gateway while a turn began on another steers that turn there, rather than starting a second', async () => {
    const hub = new MemoryHub();
    const store = new SqliteStore(':memory:');
    const provider = new Working();
    const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false, supportsTools: true });
    const [bus0, bus1] = [new MemoryBus(hub, 'g0'), new MemoryBus(hub, 'g1')];
    const [g0, g1] = [bus0, bus1].map((bus) => new Harness(store, {}, models, undefined, () => bus)) as [Harness, Harness];
    void bus0.start(g0.gateway.cluster);
    void bus1.start(g1.gateway.cluster);
    const ws = g0.gateway.createWorkspace('Race', { 'a.ts': 'x\n' });
    const settle = async () => {
      for (let round = 0; round < 30; round++) {
        g0.flush();
        g1.flush();
        await drain();
        if (hub.deliver() === 0) return;
      }
    };
    const alice = g0.client(ws.workspaceId, ws.owner.token);
    const bob = g1.client(ws.workspaceId, ws.owner.token);
    const threads = [alice.openThread(), bob.openThread()];
    await settle();

    // Bob's message starts a turn on g1; the news of it has not crossed yet when Alice's arrives on g0.
    const bobSent = bob.threadSend({ text: 'Write the tests.' });
    await drain();
    g1.flush();
    await drain();
    g1.flush();
    expect(provider.requests).toHaveLength(1);
    const aliceSent = alice.threadSend({ text: 'Only for format.ts.' });
    await drain();
    g0.flush(); // g0 takes Alice's message and admits it…
    hub.deliver(); // …while g1's turn record crosses
    await settle();
    const [bobResult, aliceResult] = await Promise.all([bobSent, aliceSent]);
    expect(bobResult.ok && aliceResult.ok).toBe(true);
    expect(aliceResult.ok && bobResult.ok && aliceResult.turnId).toBe(bobResult.ok ? bobResult.turnId : '');

    const thread = readThread(g0.gateway.document(ws.workspaceId, THREAD_DOC_ID)!);
    expect(thread.turns).toHaveLength(1);
    expect(thread.turns[0]).toMatchObject({ status: 'streaming', gateway: 'g1' });
    expect(thread.messages.filter((m) => m.kind === 'user').map((m) => [m.text, m.steer ?? false])).toEqual([
      ['Write the tests.', false],
      ['Only for format.ts.', true],
    ]);
    expect(threads.map((t) => readThread(t.doc).turns.length)).toEqual([1, 1]);
  });
});
