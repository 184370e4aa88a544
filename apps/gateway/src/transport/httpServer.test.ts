import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Duplex } from 'node:stream';
import { FlintClient, type WebSocketLike } from '@flint/client';
import { CloseCode, encodeControl, FILE_TEXT_KEY, INDEX_ENTRIES_KEY, PROTOCOL_VERSION, type IndexEntry } from '@flint/protocol';
import { until } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Gateway } from '../core/Gateway';
import { defaultConfig } from '../core/GatewayConfig';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';

/** Real sockets on port 0: the transport's own behaviour (upgrade, origin, REST, text frames). */
let server: RunningServer;
let gateway: Gateway;
let base: string;

beforeAll(async () => {
  gateway = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom });
  server = await startServer({
    gateway,
    port: 0,
    host: '127.0.0.1',
    webRoot: '/nonexistent-web-root',
    allowedOrigins: null,
    publicUrl: null,
    log: () => {},
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.close());

function closeCodeOf(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.on('close', (code) => resolve(code)));
}

async function api(path: string, init: RequestInit & { token?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(base + path, { ...init, headers });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

async function createWorkspace() {
  const { body } = await api('/api/workspaces', { method: 'POST', body: JSON.stringify({ name: 'Real' }) });
  const url = new URL(String(body?.url));
  return { workspaceId: String(body?.workspaceId), token: url.hash.replace('#token=', '') };
}

describe('HTTP server and WebSocket transport', () => {
  it('serves health and Prometheus metrics', async () => {
    expect((await api('/healthz')).body).toMatchObject({ ok: true });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('# TYPE flint_sessions gauge');
  });

  it('says clearly when the web app is not built', async () => {
    const res = await fetch(`${base}/w/anything`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
  });

  it('creates, lists and revokes links over REST; revoking closes live sessions with LinkRevoked', async () => {
    const { workspaceId, token } = await createWorkspace();
    const created = await api(`/api/workspaces/${workspaceId}/links`, {
      method: 'POST',
      token,
      body: JSON.stringify({ role: 'viewer', expiresInMs: 3_600_000 }),
    });
    expect(created.status).toBe(201);
    const viewerUrl = new URL(String(created.body?.url));
    const viewerToken = viewerUrl.hash.replace('#token=', '');
    const linkId = String((created.body?.link as { id: string }).id);
    const listed = await api(`/api/workspaces/${workspaceId}/links`, { token });
    expect((listed.body?.links as Array<{ role: string }>).map((l) => l.role).sort()).toEqual(['owner', 'viewer']);
    expect(JSON.stringify(listed.body)).not.toContain(viewerToken);

    const viewer = new FlintClient({
      url: `ws://127.0.0.1:${server.port}/ws`,
      workspaceId,
      token: viewerToken,
      createSocket: (u) => new WebSocket(u) as unknown as WebSocketLike,
    });
    await until(() => viewer.status.kind === 'open', 'viewer to connect');
    const forbidden = await api(`/api/workspaces/${workspaceId}/links`, { method: 'POST', token: viewerToken, body: JSON.stringify({ role: 'editor' }) });
    expect(forbidden.status).toBe(403);
    const revoked = await api(`/api/workspaces/${workspaceId}/links/${linkId}`, { method: 'DELETE', token });
    expect(revoked.status).toBe(204);
    await until(() => viewer.status.kind === 'closed', 'viewer to be disconnected');
    expect(viewer.status).toMatchObject({ kind: 'closed', code: CloseCode.LinkRevoked });
    viewer.destroy();
  });

  it('[P15] over REST an editor link cannot manage links, the owner\'s least of all; the last owner link stays', async () => {
    const { workspaceId, token } = await createWorkspace();
    const listed = await api(`/api/workspaces/${workspaceId}/links`, { token });
    const ownerLinkId = String((listed.body?.links as Array<{ id: string }>)[0]?.id);
    const created = await api(`/api/workspaces/${workspaceId}/links`, { method: 'POST', token, body: JSON.stringify({ role: 'editor' }) });
    const editorToken = new URL(String(created.body?.url)).hash.replace('#token=', '');
    const byEditor = await api(`/api/workspaces/${workspaceId}/links/${ownerLinkId}`, { method: 'DELETE', token: editorToken });
    expect(byEditor).toMatchObject({ status: 403, body: { error: expect.stringMatching(/owner/) } });
    expect((await api(`/api/workspaces/${workspaceId}/links`, { token: editorToken })).status).toBe(403);
    const share = await api(`/api/workspaces/${workspaceId}/links`, { method: 'POST', token: editorToken, body: JSON.stringify({ role: 'viewer' }) });
    expect(share.status).toBe(403);
    const last = await api(`/api/workspaces/${workspaceId}/links/${ownerLinkId}`, { method: 'DELETE', token });
    expect(last).toMatchObject({ status: 409, body: { error: expect.stringMatching(/last owner link/) } });
    expect((await api(`/api/workspaces/${workspaceId}/links`, { token })).status).toBe(200);
  });

  it('answers bad REST input with a status and a sentence', async () => {
    const { workspaceId, token } = await createWorkspace();
    expect((await api(`/api/workspaces/${workspaceId}/links`)).status).toBe(401);
    expect((await api(`/api/workspaces/${workspaceId}/links`, { token: 'wrong' })).status).toBe(401);
    expect((await api('/api/workspaces/nope/links', { token })).status).toBe(404);
    const bad = await api(`/api/workspaces/${workspaceId}/links`, { method: 'POST', token, body: '{"role":"god"}' });
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringMatching(/role/) } });
    const notJson = await api(`/api/workspaces/${workspaceId}/links`, { method: 'POST', token, body: 'nope' });
    expect(notJson.status).toBe(400);
    const huge = await api('/api/workspaces', { method: 'POST', body: JSON.stringify({ name: 'x'.repeat(70_000) }) });
    expect(huge.status).toBe(413);
  });

  it('[P18] refuses a WebSocket from a foreign Origin before upgrading', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, { headers: { origin: 'https://evil.example' } });
    const status = await new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(403);
  });

  it('[P1] a text frame closes the socket with MalformedFrame', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`);
    await new Promise((r) => ws.on('open', r));
    const closed = closeCodeOf(ws);
    ws.send('{"type":"hello"}');
    expect(await closed).toBe(CloseCode.MalformedFrame);
  });

  it('[P12] a frame over maxFrameBytes closes with FrameTooLarge, however large', async () => {
    const { maxFrameBytes } = gateway.config.limits;
    for (const size of [maxFrameBytes + 1, maxFrameBytes * 8]) {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`);
      await new Promise((r) => ws.on('open', r));
      const closed = closeCodeOf(ws);
      ws.send(Buffer.alloc(size));
      expect(await closed).toBe(CloseCode.FrameTooLarge);
    }
  });

  it('[P12] a frame that announces gigabytes closes with FrameTooLarge before any of it is sent', async () => {
    const before = gateway.metrics.counter('flint_session_closes_total', { code: CloseCode.FrameTooLarge });
    const upgrade = request({
      host: '127.0.0.1',
      port: server.port,
      path: '/ws',
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64') },
    });
    upgrade.end();
    const socket = await new Promise<Duplex>((resolve) => upgrade.on('upgrade', (_res, s: Duplex) => resolve(s)));
    // FIN + binary, masked, a 64-bit length of 4 GiB, the mask key; then nothing of the payload.
    const header = Buffer.alloc(14);
    header[0] = 0x82;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(4n * 1024n ** 3n, 2);
    socket.write(header);
    const reply = await new Promise<Buffer>((resolve) => {
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length >= 4) resolve(received);
      });
    });
    socket.destroy();
    expect(reply[0]).toBe(0x88); // a close frame
    expect(reply.readUInt16BE(2)).toBe(CloseCode.FrameTooLarge);
    expect(gateway.metrics.counter('flint_session_closes_total', { code: CloseCode.FrameTooLarge })).toBe(before + 1);
  });

  it('two real clients edit the same file and converge', async () => {
    const { workspaceId, token } = await createWorkspace();
    const make = () =>
      new FlintClient({
        url: `ws://127.0.0.1:${server.port}/ws`,
        workspaceId,
        token,
        createSocket: (u) => new WebSocket(u) as unknown as WebSocketLike,
      });
    const a = make();
    const b = make();
    await until(() => a.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).has('README.md'), 'index sync');
    const entry = a.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get('README.md');
    const fileId = entry?.kind === 'file' ? entry.fileId : '';
    const ta = a.openDoc(fileId);
    const tb = b.openDoc(fileId);
    await Promise.all([ta.whenSynced(), tb.whenSynced()]);
    ta.doc.getText(FILE_TEXT_KEY).insert(0, 'from a\n');
    tb.doc.getText(FILE_TEXT_KEY).insert(0, 'from b\n');
    await until(() => ta.doc.getText(FILE_TEXT_KEY).toString() === tb.doc.getText(FILE_TEXT_KEY).toString() && ta.doc.getText(FILE_TEXT_KEY).length > 20, 'convergence');
    expect(ta.doc.getText(FILE_TEXT_KEY).toString()).toMatch(/from [ab]\nfrom [ab]\n# Real/);
    a.destroy();
    b.destroy();
  });

  it('a client whose socket fills up is held back, and catches up once the socket drains', async () => {
    // Its own gateway: documents may grow far past the default limit, so the traffic outgrows
    // what the kernel buffers for a socket nobody reads and the backlog reaches Node.
    const slowGateway = new Gateway({
      store: new SqliteStore(':memory:'),
      clock: systemClock, random: systemRandom,
      config: { slowClientBytes: 64 * 1024, limits: { ...defaultConfig.limits, maxDocBytes: 256 * 1024 * 1024 } },
    });
    const slowServer = await startServer({ gateway: slowGateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {} });
    const { workspaceId, owner } = slowGateway.createWorkspace('Slow', { 'a.ts': '' });
    let readerSocket: WebSocket | null = null;
    const make = (onSocket: (ws: WebSocket) => void = () => {}) =>
      new FlintClient({
        url: `ws://127.0.0.1:${slowServer.port}/ws`,
        workspaceId,
        token: owner.token,
        createSocket: (u) => {
          const ws = new WebSocket(u);
          onSocket(ws);
          return ws as unknown as WebSocketLike;
        },
      });
    const writer = make();
    const reader = make((ws) => (readerSocket = ws));
    await until(() => writer.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).has('a.ts') && reader.status.kind === 'open', 'index sync');
    const entry = writer.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get('a.ts');
    const fileId = entry?.kind === 'file' ? entry.fileId : '';
    const [mine, theirs] = [writer.openDoc(fileId), reader.openDoc(fileId)];
    await Promise.all([mine.whenSynced(), theirs.whenSynced()]);
    readerSocket!.pause();
    const text = mine.doc.getText(FILE_TEXT_KEY);
    const block = 'x'.repeat(600 * 1024);
    for (let i = 0; i < 60 && slowGateway.metrics.counter('flint_updates_held_back_total') === 0; i++) {
      text.insert(0, `${i}:${block}`);
      text.delete(0, text.length);
      await new Promise((r) => setTimeout(r, 5));
    }
    text.insert(0, 'the last word\n');
    expect(slowGateway.metrics.counter('flint_updates_held_back_total')).toBeGreaterThan(0);
    readerSocket!.resume();
    await until(() => theirs.doc.getText(FILE_TEXT_KEY).toString() === 'the last word\n', 'the reader to catch up');
    writer.destroy();
    reader.destroy();
    await slowServer.close();
  });

  it('[P6] a client on an old protocol version is closed with ProtocolVersion', async () => {
    const { workspaceId, token } = await createWorkspace();
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`);
    await new Promise((r) => ws.on('open', r));
    const closed = closeCodeOf(ws);
    ws.send(encodeControl({ type: 'hello', protocolVersion: PROTOCOL_VERSION - 1, workspaceId, token }));
    expect(await closed).toBe(CloseCode.ProtocolVersion);
  });
});
