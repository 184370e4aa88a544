import type { FlintClient } from '@flint/client';
import { CloseCode, FILE_TEXT_KEY, readThread, type TurnInfo } from '@flint/protocol';
import { agentChars, createDatabase, FakeOpenAIServer, int, isDeleted, peopleText, propertyConfig, seededRandom, startPostgres, startRedis, type RunningService } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Y from 'yjs';
import { client, fileIdAt, openFile, until } from '../../test/clusterTesting';
import { createWorkspace, GatewayProcesses, type GatewayProcess } from '../../test/gatewayProcesses';

/**
 * Three real gateway processes on one PostgreSQL and one Redis (issue 25), clients spread
 * across them as a load balancer would: edits converge as on one gateway, a revoked link is
 * closed everywhere, and a gateway killed with SIGKILL while people type and the agent streams
 * loses nothing anyone saw and doubles nothing.
 */
let redis: RunningService;
let postgres: RunningService;
let model: FakeOpenAIServer;
let databases = 0;
const clusters: GatewayProcesses[] = [];

beforeAll(async () => {
  // One at a time, so that afterAll stops whichever started if another failed.
  redis = await startRedis();
  postgres = await startPostgres();
  model = await FakeOpenAIServer.start();
}, 60_000);
afterAll(async () => {
  for (const cluster of clusters) await cluster.stopAll();
  await Promise.all([redis?.stop(), postgres?.stop(), model?.close()]);
});

/** A cluster of its own: a fresh database, and a key prefix of its own in the shared Redis. */
function newCluster(): GatewayProcesses {
  const name = `cluster${databases++}`;
  const cluster = new GatewayProcesses({
    FLINT_DATABASE_URL: createDatabase(postgres, name),
    FLINT_REDIS_URL: redis.url,
    FLINT_REDIS_PREFIX: `${name}:`,
    FLINT_PROVIDER: 'openai-chat',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'cluster-test',
    FLINT_MODEL_FAST: 'fake-spark',
  });
  clusters.push(cluster);
  return cluster;
}

describe('three gateways on PostgreSQL and Redis', () => {
  it('clients on different gateways converge under seeded random edits, and a fresh load from the database equals them', async () => {
    const cluster = newCluster();
    const gateways = await Promise.all([cluster.start(), cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(gateways[0]!, 'Converge', 'demo');
    const clients = gateways.map((g) => client(() => g, workspaceId, token));
    const texts = await Promise.all(clients.map((c) => openFile(c, 'src/format.ts')));
    const { seed } = propertyConfig(1);
    const random = seededRandom(seed);
    for (let step = 0; step < 300; step++) {
      const text = texts[int(random, texts.length)]!;
      if (random() < 0.7 || text.length < 10) text.insert(int(random, text.length + 1), 'xyz{}();\n'[int(random, 9)]!);
      else text.delete(int(random, text.length - 3), 1 + int(random, 3));
      if (random() < 0.2) await new Promise((r) => setTimeout(r, int(random, 5)));
    }
    const same = () => texts.every((t) => t.toString() === texts[0]!.toString());
    await until(same, `seed ${seed}: convergence`, () => texts.map((t) => t.toString().slice(0, 200)).join('\n---\n'));
    const expected = texts[0]!.toString();
    for (const c of clients) c.destroy();
    // Every gateway down, then one new: what it loads is what the database holds.
    for (const g of gateways) await g.kill('SIGTERM');
    const fresh = await cluster.start();
    const reader = client(() => fresh, workspaceId, token);
    expect((await openFile(reader, 'src/format.ts')).toString(), `seed ${seed}`).toBe(expected);
    reader.destroy();
  }, 120_000);

  it('revoking a link on one gateway closes its sessions on the others with 4410', async () => {
    const cluster = newCluster();
    const [g1, g2, g3] = await Promise.all([cluster.start(), cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Revoke');
    const shared = await fetch(`${g2!.url}/api/workspaces/${workspaceId}/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ role: 'editor' }),
    });
    expect(shared.status).toBe(201);
    const { link, url } = (await shared.json()) as { link: { id: string }; url: string };
    const editorToken = new URL(url).hash.replace('#token=', '');
    const onG2 = client(() => g2!, workspaceId, editorToken);
    const onG3 = client(() => g3!, workspaceId, editorToken);
    await until(() => onG2.status.kind === 'open' && onG3.status.kind === 'open', 'both sessions open');
    const revoked = await fetch(`${g1!.url}/api/workspaces/${workspaceId}/links/${link.id}`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    });
    expect(revoked.status).toBe(204);
    await until(() => onG2.status.kind === 'closed' && onG3.status.kind === 'closed', 'sessions on the other gateways closed');
    expect([onG2.status, onG3.status].map((s) => (s.kind === 'closed' ? s.code : 0))).toEqual([CloseCode.LinkRevoked, CloseCode.LinkRevoked]);
    // And the link opens nowhere again.
    const again = client(() => g1!, workspaceId, editorToken);
    await until(() => again.status.kind === 'closed', 'a new session refused');
    for (const c of [onG2, onG3, again]) c.destroy();
  }, 60_000);

  it('a gateway killed while people type and the agent streams: the turn fails on the others, nothing seen is lost, nothing doubled', async () => {
    // A rewrite streaming for about two seconds, so the kill lands mid-turn.
    model.respondWith({ text: Array.from({ length: 40 }, (_, i) => `  agentLine${i}();\n`).join(''), tokensPerSecond: 100, chunkChars: 5 });
    const cluster = newCluster();
    const [g1, g2, g3] = await Promise.all([cluster.start(), cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Kill', 'demo');
    // Alice starts on g1 and, once it is gone, goes where a balancer would send her.
    const alice = client(() => (g1!.child.exitCode === null && g1!.child.signalCode === null ? g1! : g2!), workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    const carol = client(() => g3!, workspaceId, token);
    const [ta, tb, tc] = await Promise.all([alice, bob, carol].map((c) => openFile(c, 'src/format.ts')));
    const turnsSeen = new Map<FlintClient, TurnInfo[]>();
    for (const c of [bob, carol]) c.onTurn((turn) => turnsSeen.set(c, [...(turnsSeen.get(c) ?? []), turn]));
    const fileId = fileIdAt(alice, 'src/format.ts');
    const end = ta!.length;
    const prompted = await alice.prompt({ fileId, anchor: end - 30, head: end, instruction: 'rewrite' });
    expect(prompted.ok, JSON.stringify(prompted)).toBe(true);
    const typed: string[] = [];
    const random = seededRandom(propertyConfig(1).seed);
    const type = (text: Y.Text, who: string) => {
      const mark = `<${who}${typed.length}>`;
      typed.push(mark);
      text.insert(random() < 0.5 ? 0 : text.toString().indexOf('\n') + 1, mark);
    };
    // The agent's text reaches Carol, on a third gateway, while people type on all three.
    await until(() => tc!.toString().includes('agentLine2'), 'the agent streaming to g3');
    for (let i = 0; i < 30; i++) {
      type([ta!, tb!, tc!][i % 3]!, ['a', 'b', 'c'][i % 3]!);
      await new Promise((r) => setTimeout(r, 5));
    }
    const agentSeen = new Set([...agentChars(tb!.doc!), ...agentChars(tc!.doc!), ...agentChars(ta!.doc!)]);
    expect(tc!.toString(), 'killed mid-turn').not.toContain('agentLine39');
    // The agent's cursor, set on g1, is on Carol's screen on g3.
    const carolFile = carol.openDoc(fileId);
    const agentCursorOnCarol = () => [...carolFile.awareness.getStates().values()].some((state) => (state as { user?: { agent?: boolean } }).user?.agent === true);
    await until(agentCursorOnCarol, "the agent's cursor on g3");
    await g1!.kill('SIGKILL');
    type(ta!, 'a'); // while Alice has no gateway
    // The turn ends for the sessions on the surviving gateways, saying why.
    await until(() => [bob, carol].every((c) => turnsSeen.get(c)?.some((t) => t.status === 'failed')), 'the turn failing on g2 and g3', undefined, 15_000);
    const failed = turnsSeen.get(bob)!.find((t) => t.status === 'failed')!;
    await until(() => !agentCursorOnCarol(), "the gone gateway's agent cursor removed on g3");
    expect(failed.error?.message).toMatch(/gateway running this turn stopped/);
    await until(() => alice.status.kind === 'open', 'Alice back, on g2');
    const docs = [ta!, tb!, tc!];
    await until(
      () => docs.every((t) => t.toString() === ta!.toString()) && typed.every((m) => peopleText(ta!.doc!).includes(m)),
      'convergence',
      () => docs.map((t) => t.toString().slice(0, 300)).join('\n---\n'),
    );
    for (const mark of typed) expect(peopleText(ta!.doc!).split(mark), `${mark} once`).toHaveLength(2);
    const agentNow = agentChars(ta!.doc!);
    for (const id of agentSeen) expect(agentNow.has(id) || isDeleted(ta!.doc!, id), `agent character ${id}`).toBe(true);
    // What the survivors hold is in the database: a new gateway alone loads the same text.
    const expected = ta!.toString();
    for (const c of [alice, bob, carol]) c.destroy();
    await g2!.kill('SIGKILL');
    await g3!.kill('SIGKILL');
    const fresh = await cluster.start();
    const reader = client(() => fresh, workspaceId, token);
    expect((await openFile(reader, 'src/format.ts')).toString()).toBe(expected);
    reader.destroy();
  }, 120_000);

  it("a tab opening a file on another gateway sees the cursors already in it; a file deleted on one gateway ends the turn writing it on another", async () => {
    model.respondWith({ text: Array.from({ length: 40 }, (_, i) => `  slowLine${i}();\n`).join(''), tokensPerSecond: 60, chunkChars: 5 });
    const cluster = newCluster();
    const [g1, g2] = await Promise.all([cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Cursors', 'demo');
    const alice = client(() => g1!, workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    await openFile(alice, 'src/format.ts');
    const aliceFile = alice.getDoc(fileIdAt(alice, 'src/format.ts'))!;
    aliceFile.awareness.setLocalState({ user: { name: 'Alice', color: '#ff0000' }, selection: null });
    // Once another tab on g1 has her cursor, g1 has relayed it: Alice idles from then on.
    const watcher = client(() => g1!, workspaceId, token);
    await openFile(watcher, 'src/format.ts');
    const watched = watcher.getDoc(fileIdAt(watcher, 'src/format.ts'))!;
    const named = (states: Map<number, unknown>, name: string) => [...states.values()].some((state) => (state as { user?: { name?: string } }).user?.name === name);
    await until(() => named(watched.awareness.getStates(), 'Alice'), "Alice's cursor on g1");
    await openFile(bob, 'src/format.ts');
    const bobFile = bob.getDoc(fileIdAt(bob, 'src/format.ts'))!;
    await until(() => named(bobFile.awareness.getStates(), 'Alice'), "Alice's idle cursor on g2", undefined, 5_000); // well before a browser re-announces (every 15 s)

    // Bob's turn runs on g2; Alice deletes the file on g1.
    const fileId = fileIdAt(bob, 'src/format.ts');
    const turns: TurnInfo[] = [];
    bob.onTurn((turn) => turns.push(turn));
    const end = bobFile.doc.getText(FILE_TEXT_KEY).length;
    expect((await bob.prompt({ fileId, anchor: end - 20, head: end, instruction: 'rewrite' })).ok).toBe(true);
    await until(() => bobFile.doc.getText(FILE_TEXT_KEY).toString().includes('slowLine1'), 'the turn writing on g2');
    expect((await alice.request({ type: 'file.delete', path: 'src/format.ts' })).ok).toBe(true);
    await until(() => turns.some((turn) => turn.turnId && turn.status === 'cancelled'), 'the turn on g2 ending', () => JSON.stringify(turns.map((t) => t.status)));
    for (const c of [alice, bob, watcher]) c.destroy();
  }, 120_000);

  it('Redis restarts while people type on two gateways: what each typed meanwhile reaches the other once it is back', async () => {
    const cluster = newCluster();
    const [g1, g2] = await Promise.all([cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Outage', 'demo');
    const alice = client(() => g1!, workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    const [ta, tb] = await Promise.all([alice, bob].map((c) => openFile(c, 'src/format.ts')));
    ta!.insert(0, '// before\n');
    await until(() => tb!.toString().startsWith('// before'), 'an edit crossing');
    const port = redis.port;
    await redis.stop();
    ta!.insert(0, '// alice during the outage\n');
    tb!.insert(tb!.length, '// bob during the outage\n');
    // A balancer takes a gateway that cannot hear the others out of rotation meanwhile.
    const ready = async (g: GatewayProcess) => {
      const res = await fetch(`${g.url}/readyz`);
      return { status: res.status, body: (await res.json()) as { cluster?: { connected: boolean; gateways: number } } };
    };
    await until(async () => (await ready(g1!)).status === 503, 'g1 out of rotation');
    expect(await ready(g1!)).toMatchObject({ status: 503, body: { cluster: { connected: false } } });
    expect(tb!.toString()).not.toContain('alice during');
    redis = await startRedis({ port });
    const both = () => [ta!, tb!].every((t) => t.toString().includes('alice during') && t.toString().includes('bob during'));
    await until(() => both() && ta!.toString() === tb!.toString(), 'both edits on both gateways', () => `${ta}\n---\n${tb}`, 30_000);
    // And the cluster carries on as before.
    tb!.insert(0, '// after\n');
    await until(() => ta!.toString().startsWith('// after'), 'an edit crossing after the outage');
    expect(await ready(g1!)).toMatchObject({ status: 200, body: { cluster: { connected: true } } });
    for (const c of [alice, bob]) c.destroy();
  }, 120_000);

  it('the agent thread across gateways: a message sent on another gateway steers the turn where it runs; when that gateway dies the turn ends failed, said once', async () => {
    // A slow answer (~3 s), so the turn is still streaming when Bob steers and when g1 dies.
    model.respondWith({ text: Array.from({ length: 60 }, (_, i) => `Word${i} `).join(''), tokensPerSecond: 40, chunkChars: 6 });
    const cluster = newCluster();
    const [g1, g2, g3] = await Promise.all([cluster.start(), cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Thread', 'demo');
    const alice = client(() => g1!, workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    const carol = client(() => g3!, workspaceId, token);
    const threads = [alice, bob, carol].map((c) => c.openThread());
    await Promise.all(threads.map((t) => t.whenSynced()));
    const onCarol = () => readThread(threads[2]!.doc);
    const sent = await alice.threadSend({ text: 'Explain the project.' });
    expect(sent.ok, JSON.stringify(sent)).toBe(true);
    const turnId = sent.ok ? sent.turnId : '';
    await until(() => onCarol().messages.some((m) => m.kind === 'assistant' && m.text.includes('Word3')), 'the answer streaming to g3');
    const requestsBefore = model.requests.length;
    const steered = await bob.threadSend({ text: 'Shorter, please.' });
    expect(steered).toMatchObject({ ok: true, turnId });
    await until(() => onCarol().messages.some((m) => m.kind === 'user' && m.steer === true && m.text === 'Shorter, please.' && m.turnId === turnId), 'the steer in the thread');
    await until(() => model.requests.length > requestsBefore, 'the model asked again, by g1');
    expect(onCarol().turns.find((t) => t.turnId === turnId)).toMatchObject({ status: 'streaming', gateway: g1!.id });

    await g1!.kill('SIGKILL');
    const ended = () => onCarol().turns.find((t) => t.turnId === turnId);
    await until(() => ended()?.status === 'failed', 'the turn failing in the thread', undefined, 15_000);
    expect(ended()?.error?.message).toMatch(/gateway running this turn stopped/);
    // One survivor writes the notice, not each of them: once both have counted g1 gone and their
    // threads agree, there is one.
    const goneCounted = async (g: GatewayProcess) => /flint_cluster_gateways_gone_total\S* [1-9]/.test(await (await fetch(`${g.url}/metrics`)).text());
    await until(async () => (await goneCounted(g2!)) && (await goneCounted(g3!)), 'g2 and g3 both counting g1 gone');
    const noticesIn = (t: (typeof threads)[number]) => readThread(t.doc).messages.filter((m) => m.kind === 'notice' && /gateway running this turn stopped/.test(m.text));
    await until(() => noticesIn(threads[1]!).length > 0 && noticesIn(threads[1]!).length === noticesIn(threads[2]!).length, 'the notice on g2 and g3 alike');
    expect(noticesIn(threads[2]!)).toHaveLength(1);
    // And the thread takes a new message on a surviving gateway.
    const next = await bob.threadSend({ text: 'Again.' });
    expect(next.ok, JSON.stringify(next)).toBe(true);
    for (const c of [alice, bob, carol]) c.destroy();
  }, 120_000);
});
