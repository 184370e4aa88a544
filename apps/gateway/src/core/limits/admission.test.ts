/**
 * The agent's admission through the limits port (here the in-memory one): the rate is per link,
 * and a request answers once admitted, without letting another request slip in between.
 */
import { Channel, decodeServerFrame, encodeControl, isDecodeError, readThread, THREAD_DOC_ID, type ServerMessage } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain, ScriptedProvider } from '../../../test/ScriptedProvider';
import { defaultConfig } from '../GatewayConfig';
import { fileIdOf, Harness, hello } from '../../../test/testHarness';

function setup(promptsPerMinute = defaultConfig.agent.promptsPerMinute) {
  const provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 32_000, supportsPrediction: false });
  const h = new Harness(new SqliteStore(':memory:'), { agent: { ...defaultConfig.agent, promptsPerMinute } }, models);
  const ws = h.gateway.createWorkspace('Limits', { 'a.ts': 'a\n', 'b.ts': 'b\n', 'c.ts': 'c\n', 'd.ts': 'd\n' });
  return { h, ws, provider };
}

/** A hand-written session, to send several requests in one go. */
function rawSession(ctx: ReturnType<typeof setup>) {
  const pair = ctx.h.openRaw();
  const results = new Map<number, Extract<ServerMessage, { type: 'result' }>>();
  pair.client.onmessage = (event) => {
    const frame = decodeServerFrame(new Uint8Array(event.data as ArrayBuffer));
    if (!isDecodeError(frame) && frame.channel === Channel.Control && frame.message.type === 'result') results.set(frame.message.requestId, frame.message);
  };
  hello(pair, ctx.ws.workspaceId, ctx.ws.owner.token);
  ctx.h.flush();
  const send = (text: string, requestId: number) =>
    pair.client.send(encodeControl({ type: 'thread.send', requestId, text, route: 'fast', mode: 'send', context: { mentions: [] } }));
  return { pair, results, send };
}

describe('admission through the limits', () => {
  it('one rate per link: its tabs share it, another link has its own', async () => {
    const ctx = setup(2); // bursts of 2
    const editor = ctx.h.gateway.links.create(ctx.ws.workspaceId, 'editor', 'Editor', null);
    const [tab1, tab2, other] = [ctx.ws.owner.token, ctx.ws.owner.token, editor.token].map((token) => ctx.h.client(ctx.ws.workspaceId, token));
    ctx.h.flush();
    const prompt = (client: typeof tab1, path: string) => ctx.h.answered(client!.prompt({ fileId: fileIdOf(client!, path), anchor: 0, head: 0, instruction: 'x' }));
    expect(await prompt(tab1, 'a.ts')).toMatchObject({ ok: true });
    expect(await prompt(tab2, 'b.ts')).toMatchObject({ ok: true });
    expect(await prompt(tab1, 'c.ts')).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(await prompt(other, 'd.ts')).toMatchObject({ ok: true });
  });

  it('a Stop sent right behind the message that starts a turn stops that turn', async () => {
    const ctx = setup();
    const session = rawSession(ctx);
    session.send('write tests', 1);
    session.pair.client.send(encodeControl({ type: 'thread.stop', requestId: 2 }));
    ctx.h.flush();
    await drain();
    ctx.h.flush();
    const started = session.results.get(1);
    expect(started).toMatchObject({ ok: true, turnId: expect.any(String) });
    expect(session.results.get(2)).toMatchObject({ ok: true, turnId: started!.ok ? started!.turnId : '' });
    const thread = readThread(ctx.h.gateway.document(ctx.ws.workspaceId, THREAD_DOC_ID)!);
    expect(thread.turns.map((turn) => turn.status)).toEqual(['cancelled']);
  });

  it('a second message sent with the first steers the turn the first starts, rather than starting another', async () => {
    const ctx = setup();
    const session = rawSession(ctx);
    session.send('write tests', 1);
    session.send('only for the parser', 2);
    ctx.h.flush();
    await drain();
    ctx.h.flush();
    const started = session.results.get(1);
    expect(started).toMatchObject({ ok: true, turnId: expect.any(String) });
    expect(session.results.get(2)).toMatchObject({ ok: true, turnId: started!.ok ? started!.turnId : '' });
    const thread = readThread(ctx.h.gateway.document(ctx.ws.workspaceId, THREAD_DOC_ID)!);
    expect(thread.turns).toHaveLength(1);
    expect(thread.messages.filter((message) => message.kind === 'user').map((message) => message.text)).toEqual(['write tests', 'only for the parser']);
  });
});
