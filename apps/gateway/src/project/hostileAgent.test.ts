/**
 * The agent thread's tools against a hostile folder (issue 32 item 1, decision 0025): the real
 * thread loop on the in-memory harness, a scripted model, a real temporary folder with links. A
 * prompt-injected model has the same tools as a collaborator, and meets the same edge.
 */
import { readThread } from '@flint/protocol';
import { FakeClock } from '@flint/test-kit';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { ModelEvent, ModelProvider, ModelRequest } from '../core/ports/ModelProvider';
import { SqliteStore } from '../storage/SqliteStore';
import type { ModelRouter } from '../core/agent/ModelRouter';
import { drain } from '../../test/ScriptedProvider';
import { Harness } from '../../test/testHarness';
import { NodeDisk } from './NodeDisk';
import { FolderSync } from './FolderSync';

const folders: string[] = [];
const syncs: FolderSync[] = [];
afterEach(async () => {
  await Promise.all(syncs.splice(0).map((sync) => sync.stop()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A model that answers each call with the next scripted list of events. */
class ToolScript implements ModelProvider {
  readonly kind = 'scripted-tools';
  private readonly answers: ModelEvent[][] = [];

  answer(...events: ModelEvent[]): this {
    this.answers.push(events);
    return this;
  }

  stream(_request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const events = this.answers.shift() ?? [{ type: 'text', text: 'Done.' }];
    return (async function* () {
      for (const event of events) {
        if (signal.aborted) return;
        yield event;
        await Promise.resolve();
      }
      yield { type: 'usage', inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 };
      yield { type: 'done', finishReason: events.some((event) => event.type === 'tool-call') ? 'tool_calls' : 'stop' };
    })();
  }

  async close(): Promise<void> {}
}

const call = (index: number, name: string, args: unknown): ModelEvent[] => [
  { type: 'tool-call', index, id: `call_${index}_${name}`, name },
  { type: 'tool-call-delta', index, arguments: JSON.stringify(args) },
];

function folder(files: Record<string, string>, prefix: string): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  folders.push(root);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  return root;
}

it('the agent\'s *** Add File:, rename_file and delete_file cannot reach through a link, nor onto an ignored file', async () => {
  const outside = folder({ 'existing.txt': 'precious\n' }, 'flint-outside-');
  const root = folder({ 'a.txt': 'a\n', '.gitignore': '.env\n', '.env': 'API_KEY=1\n' }, 'flint-hostile-');
  symlinkSync(outside, join(root, 'linkdir'));
  symlinkSync('.git', join(root, 'gitlink'));

  const provider = new ToolScript();
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false, supportsTools: true });
  const h = new Harness(new SqliteStore(':memory:'), undefined, models, new FakeClock());
  const ws = h.gateway.createWorkspace('Agent');
  const held = h.gateway.holdRoom(ws.workspaceId)!;
  const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk: await NodeDisk.open(root), bases: { get: () => null, set: () => {} }, log: () => {}, writeDelayMs: 5 });
  syncs.push(sync);
  await sync.start();
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const thread = alice.openThread();
  h.flush();

  const patch = (path: string) => `*** Begin Patch\n*** Add File: ${path}\n+owned\n*** End Patch`;
  provider
    .answer(...call(0, 'apply_patch', { patch: patch('linkdir/existing.txt') }))
    .answer(...call(0, 'apply_patch', { patch: patch('gitlink/hooks/pre-commit') }))
    .answer(...call(0, 'apply_patch', { patch: patch('.env') }))
    .answer(...call(0, 'rename_file', { from: 'a.txt', to: 'linkdir/a.txt' }))
    .answer(...call(0, 'delete_file', { path: 'linkdir/existing.txt' }))
    .answer({ type: 'text', text: 'Done.' });
  alice.threadSend({ text: 'make yourself at home', mode: 'send' });
  for (let round = 0; round < 80; round++) {
    await drain();
    h.clock.advance(8);
    h.flush();
  }
  await sync.flushed();

  const tools = readThread(thread.doc).messages.filter((message) => message.kind === 'tool');
  // What the model is told (and people see in the step's detail): why each was refused.
  expect(tools.map((message) => `${message.summary ?? ''} ${message.detail ?? ''}`)).toEqual([
    expect.stringMatching(/"linkdir" is a link on disk/),
    expect.stringMatching(/"gitlink" is a link on disk/),
    expect.stringMatching(/"\.env" is ignored/),
    expect.stringMatching(/"linkdir" is a link on disk/),
    expect.stringMatching(/does not exist/), // the tree never showed it
  ]);
  expect(readdirSync(outside)).toEqual(['existing.txt']);
  expect(readFileSync(join(outside, 'existing.txt'), 'utf8')).toBe('precious\n');
  expect(readFileSync(join(root, '.env'), 'utf8')).toBe('API_KEY=1\n');
  expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a\n');
  expect([...alice.index.doc.getMap('entries').keys()].sort()).toEqual(['.gitignore', 'a.txt']);
});
