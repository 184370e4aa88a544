/**
 * The owner's "connect a model" makes the gateway send a request to the URL they give (decision
 * 0031, "Addresses"): the answer never carries what the remote said (one fixed sentence per
 * failure class), link-local and metadata addresses and the gateway's own port are refused
 * before any byte is sent, loopback and private ranges only where the operator allows them (by
 * default, a gateway that listens on loopback: a laptop's Ollama keeps working), and redirects
 * are not followed. Real server on port 0, real loopback services behind.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { FakeOpenAIServer } from '@flint/test-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../index';
import { allowPrivateModelUrls, ModelAddressPolicy, RefusedAddressError, refusalSentence } from '../models/connect/modelAddressPolicy';
import { secretBox } from '../models/connect/secretBox';
import { checkFailureSentences, WorkspaceModels } from '../models/connect/WorkspaceModels';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';
import { createWorkspaceModelApi } from './workspaceModelApi';

const secret = 'INTERNAL-ONLY db_password=hunter2';
/** A loopback service that answers every request with `status` and a secret in its body. */
async function internalService(status: number, headers: Record<string, string> = {}): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message: secret, code: status === 401 ? 'invalid_api_key' : 'internal' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  services.push(server);
  return { server, port: (server.address() as { port: number }).port, hits: () => hits };
}

const services: Server[] = [];
let running: RunningServer | null = null;
let models: WorkspaceModels | null = null;
let fake: FakeOpenAIServer;
beforeAll(async () => {
  fake = await FakeOpenAIServer.start();
});
afterAll(async () => fake.close());
afterEach(async () => {
  await running?.close();
  await models?.close();
  running = null;
  for (const server of services.splice(0)) server.close();
});

/** A gateway wired as main.ts wires it, for a gateway listening on `listenHost` with `env`. */
async function gatewayListeningOn(listenHost: string, env: Record<string, string> = {}, checkTimeoutMs?: number) {
  const store = new SqliteStore(':memory:');
  const addresses = new ModelAddressPolicy({ allowPrivate: allowPrivateModelUrls(env, listenHost), gatewayPort: () => running?.port ?? null });
  models = new WorkspaceModels({ meta: { get: (k) => store.getMeta(k), set: (k, v) => store.setMeta(k, v) }, secrets: secretBox(randomBytes(32)), clock: systemClock, addresses, checkTimeoutMs });
  const gateway = createGateway({}, { store, clock: systemClock, random: systemRandom, models: models.router(() => null) });
  const api = createWorkspaceModelApi(gateway, { models, clock: systemClock, gatewayModel: () => null });
  running = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, routes: [api] });
  const created = gateway.createWorkspace('Probe');
  const connect = async (body: Record<string, unknown>) => {
    const res = await fetch(`http://127.0.0.1:${running!.port}/api/workspaces/${created.workspaceId}/model`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${created.owner.token}` },
      body: JSON.stringify({ kind: 'openai', apiKey: 'k', model: 'm', ...body }),
    });
    const text = await res.text();
    return { status: res.status, text, error: (JSON.parse(text) as { error?: string }).error };
  };
  return { connect, gatewayPort: running.port };
}

describe('what a failed check tells the owner', () => {
  it("never hands back an internal service's answer: one fixed sentence per failure class", async () => {
    const { connect } = await gatewayListeningOn('127.0.0.1');
    const broken = await internalService(500);
    const refused = await connect({ baseUrl: `http://127.0.0.1:${broken.port}/v1` });
    expect(broken.hits()).toBe(1);
    expect(refused.status).toBe(502);
    expect(refused.error).toBe(checkFailureSentences.notCompatible(`127.0.0.1:${broken.port}`));
    expect(refused.text).not.toContain('hunter2');
    expect(refused.text).not.toContain('HTTP 500');

    const keyed = await internalService(401);
    const key = await connect({ baseUrl: `http://127.0.0.1:${keyed.port}/v1` });
    expect(key.status).toBe(502);
    expect(key.error).toBe(checkFailureSentences.key(`127.0.0.1:${keyed.port}`));
    expect(key.text).not.toContain('hunter2');

    const down = await connect({ baseUrl: 'http://127.0.0.1:9/v1' });
    expect(down.status).toBe(502);
    expect(down.error).toBe(checkFailureSentences.unreachable('127.0.0.1:9'));

    const nowhere = await connect({ baseUrl: 'http://no-such-host.invalid/v1' });
    expect(nowhere.status).toBe(502);
    expect(nowhere.error).toBe(checkFailureSentences.unreachable('no-such-host.invalid'));
  });

  it('says a silent server timed out, and nothing more', async () => {
    const { connect } = await gatewayListeningOn('127.0.0.1', {}, 300);
    const silent = createServer(() => undefined);
    services.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const port = (silent.address() as { port: number }).port;
    const slow = await connect({ baseUrl: `http://127.0.0.1:${port}/v1` });
    silent.closeAllConnections();
    expect(slow.status).toBe(502);
    expect(slow.error).toBe(checkFailureSentences.timeout(`127.0.0.1:${port}`, 300));
  });

  it('follows no redirect', async () => {
    const { connect } = await gatewayListeningOn('127.0.0.1');
    const target = await internalService(200);
    const redirector = await internalService(307, { location: `http://127.0.0.1:${target.port}/v1/chat/completions` });
    const redirected = await connect({ baseUrl: `http://127.0.0.1:${redirector.port}/v1` });
    expect(redirector.hits()).toBe(1);
    expect(target.hits()).toBe(0);
    expect(redirected.status).toBe(502);
    expect(redirected.error).toBe(checkFailureSentences.notCompatible(`127.0.0.1:${redirector.port}`));
  });
});

describe('which addresses a connection may reach', () => {
  it('keeps a local Ollama working on a gateway that listens on loopback (the npm start default)', async () => {
    const { connect } = await gatewayListeningOn('127.0.0.1');
    fake.respondWith({ text: 'OK' });
    const ok = await connect({ kind: 'ollama', baseUrl: fake.baseUrl.replace(/\/v1$/, ''), apiKey: undefined, model: 'qwen2.5-coder:7b' });
    expect(ok.status).toBe(200);
    // By name too: localhost resolves to loopback.
    const byName = await connect({ kind: 'ollama', baseUrl: fake.baseUrl.replace('127.0.0.1', 'localhost'), apiKey: undefined, model: 'qwen2.5-coder:7b' });
    expect(byName.status).toBe(200);
  });

  it('refuses link-local and metadata addresses, and the gateway itself, whatever the operator allows, sending nothing', async () => {
    const { connect, gatewayPort } = await gatewayListeningOn('127.0.0.1', { FLINT_ALLOW_PRIVATE_MODEL_URLS: '1' });
    for (const host of ['169.254.169.254', '[fe80::1]', '100.100.100.200', '[::ffff:169.254.169.254]', '[fd00:ec2::254]']) {
      const refused = await connect({ baseUrl: `http://${host}/v1` });
      expect(refused.status, host).toBe(400);
      expect(refused.error).toBe(refusalSentence(new URL(`http://${host}`).host, 'link-local'));
    }
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      const itself = await connect({ baseUrl: `http://${host}:${gatewayPort}/v1` });
      expect(itself.status, host).toBe(400);
      expect(itself.error).toBe(refusalSentence(`${host}:${gatewayPort}`, 'gateway'));
    }
  });

  it('refuses loopback and private ranges on a gateway that listens beyond loopback, unless the operator allows them', async () => {
    const service = await internalService(500);
    const { connect } = await gatewayListeningOn('0.0.0.0');
    for (const host of [`127.0.0.1:${service.port}`, `localhost:${service.port}`, '[::1]:11434', '10.1.2.3', '172.20.0.1', '192.168.1.10', '[fd12::1]', '0.0.0.0:11434']) {
      const refused = await connect({ baseUrl: `http://${host}/v1` });
      expect(refused.status, host).toBe(400);
      expect(refused.error).toBe(refusalSentence(new URL(`http://${host}`).host, 'private'));
    }
    expect(service.hits()).toBe(0);
    await running!.close();
    running = null;

    const allowed = await gatewayListeningOn('0.0.0.0', { FLINT_ALLOW_PRIVATE_MODEL_URLS: '1' });
    fake.respondWith({ text: 'OK' });
    expect((await allowed.connect({ baseUrl: fake.baseUrl })).status).toBe(200);
  });

  it('lets the operator refuse loopback on a loopback gateway too', () => {
    expect(allowPrivateModelUrls({}, '127.0.0.1')).toBe(true);
    expect(allowPrivateModelUrls({}, 'localhost')).toBe(true);
    expect(allowPrivateModelUrls({}, '::1')).toBe(true);
    expect(allowPrivateModelUrls({}, '0.0.0.0')).toBe(false);
    expect(allowPrivateModelUrls({}, '192.168.1.5')).toBe(false);
    expect(allowPrivateModelUrls({ FLINT_ALLOW_PRIVATE_MODEL_URLS: '0' }, '127.0.0.1')).toBe(false);
    expect(allowPrivateModelUrls({ FLINT_ALLOW_PRIVATE_MODEL_URLS: '1' }, '0.0.0.0')).toBe(true);
  });

  it("screens again at connection time: the dispatcher's lookup refuses a name that resolves to a refused address", async () => {
    const policy = new ModelAddressPolicy({ allowPrivate: false, gatewayPort: () => null });
    const refusals: string[] = [];
    const lookup = policy.lookupFor(new URL('http://localhost:11434/v1'), (refusal) => refusals.push(refusal));
    const error = await new Promise<unknown>((resolve) => lookup('localhost', { all: true }, (e) => resolve(e)));
    expect(error).toBeInstanceOf(RefusedAddressError);
    expect(refusals).toEqual(['private']);
    const open = new ModelAddressPolicy({ allowPrivate: true, gatewayPort: () => null }).lookupFor(new URL('http://localhost:11434/v1'));
    const address = await new Promise<string>((resolve, reject) => open('localhost', {}, (e, a) => (e ? reject(e) : resolve(a as string))));
    expect(['127.0.0.1', '::1']).toContain(address);
  });
});
