/**
 * Issue 37's first minute, on a real server (port 0) and a loopback fake provider: an owner
 * connects a model for the workspace (checked with a real request, the key sealed and never sent
 * back), collaborators see only its name, and the demo's scripted turn replays through the
 * thread engine into the files.
 */
import { turnsOf } from '../core/agent/roomTurns';
import { randomBytes } from 'node:crypto';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { FakeOpenAIServer, fakeFaults } from '@flint/test-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRouter } from '../core/agent/ModelRouter';
import { createGateway } from '../index';
import { secretBox } from '../models/connect/secretBox';
import { WorkspaceModels } from '../models/connect/WorkspaceModels';
import { ModelAddressPolicy } from '../models/connect/modelAddressPolicy';
import type { ModelEvent, ModelProvider } from '../core/ports/ModelProvider';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';
import { createWorkspaceModelApi } from './workspaceModelApi';

const gatewayProvider: ModelProvider = {
  kind: 'embedded',
  close: async () => undefined,
  stream: async function* (): AsyncGenerator<ModelEvent> {
    yield { type: 'text', text: 'uint8Array' };
    yield { type: 'done', finishReason: 'stop' };
  },
};
const gatewayRouter: ModelRouter = (route) => (route === 'complete' ? null : { provider: gatewayProvider, model: 'flint-tiny', contextTokens: 2048, supportsPrediction: false });

let fake: FakeOpenAIServer;
beforeAll(async () => {
  fake = await FakeOpenAIServer.start();
});
afterAll(async () => fake.close());

let server: RunningServer | null = null;
let models: WorkspaceModels | null = null;
afterEach(async () => {
  await server?.close();
  await models?.close();
  server = null;
});

async function setUp() {
  const store = new SqliteStore(':memory:');
  // The fake provider listens on loopback: allowed, as for a gateway that listens on loopback (main.ts).
  const addresses = new ModelAddressPolicy({ allowPrivate: true, gatewayPort: () => server?.port ?? null });
  models = new WorkspaceModels({ meta: { get: (k) => store.getMeta(k), set: (k, v) => store.setMeta(k, v) }, secrets: secretBox(randomBytes(32)), clock: systemClock, addresses });
  const router = models.router(gatewayRouter);
  const gateway = createGateway({}, { store, clock: systemClock, random: systemRandom, models: router });
  const modelApi = createWorkspaceModelApi(gateway, { models, clock: systemClock, gatewayModel: () => 'flint-tiny' });
  server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, routes: [modelApi] });
  const created = gateway.createWorkspace('Tally', demoWorkspaceFiles);
  const workspaceId = created.workspaceId;
  const link = (role: 'editor' | 'viewer') => {
    const result = gateway.share(workspaceId, created.owner.token, { role, label: role, expiresInMs: null });
    if (!result.ok) throw new Error(result.message);
    return result.value.token;
  };
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${server!.port}/api/workspaces/${workspaceId}/${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, any>) : null };
  };
  return { store, gateway, router, workspaceId, owner: created.owner.token, editor: link('editor'), viewer: link('viewer'), call };
}

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const key = 'sk-test-0123456789-secret';

describe('connecting a model for a workspace', () => {
  it('checks the endpoint with a real request, keeps the key sealed, masks it for the owner and hides it from everyone else', async () => {
    const { store, workspaceId, owner, editor, viewer, call, router } = await setUp();
    fake.respondWith({ text: 'OK' });
    const before = fake.requests.length;

    const connected = await call('PUT', 'model', owner, { kind: 'openai', baseUrl: fake.baseUrl, apiKey: key, model: 'fake-coder' });
    expect(connected.status).toBe(200);
    expect(connected.body!.connection).toMatchObject({ kind: 'openai', model: 'fake-coder', baseUrl: fake.baseUrl, maskedKey: 'sk-…cret' });
    expect(connected.text).not.toContain(key);
    // The check was a real request, with the key.
    expect(fake.requests.length).toBe(before + 1);
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${key}`);
    // Sealed at rest: the store's copy does not hold it.
    expect(store.getMeta(`model-connection:${workspaceId}`)).not.toContain(key);

    for (const token of [editor, viewer]) {
      const seen = await call('GET', 'model', token);
      expect(seen.status).toBe(200);
      expect(seen.body).toEqual({ connection: { kind: 'openai', model: 'fake-coder', connectedAt: expect.any(Number) }, gateway: { model: 'flint-tiny' }, canConnect: false });
      expect(seen.text).not.toContain(key);
    }
    const ownerView = await call('GET', 'model', owner);
    expect(ownerView.body!.connection.maskedKey).toBe('sk-…cret');
    expect(ownerView.text).not.toContain(key);

    // The workspace's agent routes go to it; autocomplete and other workspaces keep the gateway's.
    expect(router('fast', workspaceId)?.model).toBe('fake-coder');
    expect(router('deep', workspaceId)?.model).toBe('fake-coder');
    expect(router('complete', workspaceId)).toBeNull();
    expect(router('fast', 'w-another')?.model).toBe('flint-tiny');
    fake.respondWith({ text: 'answer from the connected model' });
    let text = '';
    for await (const event of router('fast', workspaceId)!.provider.stream({ model: 'fake-coder', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 20 }, new AbortController().signal)) {
      if (event.type === 'text') text += event.text;
    }
    expect(text).toBe('answer from the connected model');
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${key}`);

    expect((await call('DELETE', 'model', owner)).status).toBe(204);
    expect((await call('GET', 'model', editor)).body!.connection).toBeNull();
    expect(router('fast', workspaceId)?.model).toBe('flint-tiny');
  });

  it("is the owner's alone: editors and viewers are refused and nothing changes", async () => {
    const { call, editor, viewer, owner } = await setUp();
    for (const token of [editor, viewer]) {
      const refused = await call('PUT', 'model', token, { kind: 'ollama', model: 'qwen2.5-coder' });
      expect(refused.status).toBe(403);
      expect(refused.body!.error).toMatch(/owner/);
      expect((await call('DELETE', 'model', token)).status).toBe(403);
    }
    expect((await call('GET', 'model', owner)).body!.connection).toBeNull();
    expect((await call('GET', 'model', 'not-a-token')).status).toBe(403);
  });

  it('refuses an endpoint that fails the check with what it answered, and stores nothing', async () => {
    const { call, owner } = await setUp();
    fake.respondOnceWith({ fault: fakeFaults.unauthorized() });
    const refused = await call('PUT', 'model', owner, { kind: 'openai', baseUrl: fake.baseUrl, apiKey: 'sk-wrong-key-000000', model: 'fake-coder' });
    expect(refused.status).toBe(502);
    expect(refused.body!.error).toContain(new URL(fake.baseUrl).host);
    expect(refused.text).not.toContain('sk-wrong-key-000000');
    expect((await call('GET', 'model', owner)).body!.connection).toBeNull();

    // Nothing listens there: a sentence, not a stack.
    const down = await call('PUT', 'model', owner, { kind: 'llamacpp', baseUrl: 'http://127.0.0.1:9', model: 'any' });
    expect(down.status).toBe(502);
    expect(down.body!.error).toMatch(/127\.0\.0\.1:9/);

    expect((await call('PUT', 'model', owner, { kind: 'ollama', baseUrl: 'file:///etc/passwd', model: 'x' })).status).toBe(400);
    expect((await call('PUT', 'model', owner, { kind: 'gemini', model: 'x' })).status).toBe(400);
    expect((await call('PUT', 'model', owner, { kind: 'ollama', baseUrl: fake.baseUrl.replace(/\/v1$/, ''), model: ' ' })).status).toBe(400);
  });

  it('adds /v1 to an Ollama or llama.cpp address given without it', async () => {
    const { call, owner } = await setUp();
    fake.respondWith({ text: 'OK' });
    const ok = await call('PUT', 'model', owner, { kind: 'ollama', baseUrl: fake.baseUrl.replace(/\/v1$/, ''), model: 'qwen2.5-coder:7b' });
    expect(ok.status).toBe(200);
    expect(ok.body!.connection).toMatchObject({ baseUrl: fake.baseUrl, maskedKey: null, model: 'qwen2.5-coder:7b' });
  });
});

describe("the demo's scripted turn, replayed", () => {
  it('streams its edits into the demo files through the thread engine, labelled as a replay', async () => {
    const { gateway, workspaceId, editor, viewer, call } = await setUp();
    expect((await call('POST', 'demo-replay', viewer, {})).status).toBe(403);
    expect((await call('POST', 'demo-replay', editor, { speed: 3 })).status).toBe(400);

    const started = await call('POST', 'demo-replay', editor, { by: 'Ada', speed: 10 });
    expect(started.status).toBe(202);
    const held = gateway.holdRoom(workspaceId)!;
    try {
      const room = held.room;
      expect(turnsOf(room).thread).not.toBeNull();
      // One turn at a time: a second replay while it plays is refused.
      expect((await call('POST', 'demo-replay', editor, {})).status).toBe(409);
      await until(() => turnsOf(room).thread === null, 'the replayed turn to end');
      const text = (path: string) => room.doc(room.fileIdAt(path)!)!.doc.getText(FILE_TEXT_KEY).toString();
      expect(text('src/format.ts')).toBe(
        demoWorkspaceFiles['src/format.ts']!.replace("import type { Task } from './model/task';", "import { isOverdue, type Task } from './model/task';").replace(
          '  return `${box} ${marks[task.priority]} #${task.id} ${task.title}`;',
          "  const late = isOverdue(task) ? ' (overdue)' : '';\n  return `${box} ${marks[task.priority]} #${task.id} ${task.title}${late}`;",
        ),
      );
      const task = text('src/model/task.ts');
      expect(task).toContain('  dueDate?: Date;\n}');
      expect(task).toContain("export function createTask(title: string, priority: Priority = 'normal', dueDate?: Date): Task {");
      expect(task).toContain('export function isOverdue(task: Task, now: Date = new Date()): boolean {');
      expect(task).toContain('export function toggle(task: Task): Task {');
      const thread = room.thread.doc.toJSON();
      expect(JSON.stringify(thread)).toContain('replay · scripted demo turn');
      expect(JSON.stringify(thread)).toContain('Give tasks an optional due date');
      expect(JSON.stringify(thread)).toContain('a replay of a recorded agent turn, not a live model');
    } finally {
      held.release();
    }
  });
});
