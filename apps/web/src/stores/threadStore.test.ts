import { hunksOf, type HunkRecord } from '@flint/change-set';
import type { FlintClient, RequestResult } from '@flint/client';
import { THREAD_MESSAGES_KEY, THREAD_TURNS_KEY, type Role, type ThreadMessage, type ThreadTurnRecord } from '@flint/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { useConnection } from './connectionStore';
import {
  groupByTurn,
  mirrorThread,
  reviewKey,
  reviewThreadFile,
  reviewThreadTurn,
  selectCanReview,
  selectIsDemoModel,
  selectStreamingTurn,
  sendToThread,
  stopThread,
  useThread,
  type ThreadMirror,
} from './threadStore';

/** Writes a thread doc the way the gateway does: Y.Maps with a Y.Text 'text', JSON turn records. */
class GatewayThread {
  readonly doc = new Y.Doc();
  private readonly messages = this.doc.getArray<Y.Map<unknown>>(THREAD_MESSAGES_KEY);
  private readonly turns = this.doc.getMap<ThreadTurnRecord>(THREAD_TURNS_KEY);
  private next = 1;

  append(fields: Partial<ThreadMessage> & Pick<ThreadMessage, 'kind' | 'turnId'>, text = ''): string {
    const id = `m${this.next++}`;
    this.doc.transact(() => {
      const entry = new Y.Map<unknown>();
      for (const [key, value] of Object.entries({ author: null, ...fields, id, at: this.next })) entry.set(key, value);
      const body = new Y.Text();
      body.insert(0, text);
      entry.set('text', body);
      this.messages.push([entry]);
    });
    return id;
  }

  appendText(id: string, text: string): void {
    const body = this.find(id).get('text') as Y.Text;
    this.doc.transact(() => body.insert(body.length, text));
  }

  update(id: string, fields: Record<string, unknown>): void {
    const entry = this.find(id);
    this.doc.transact(() => {
      for (const [key, value] of Object.entries(fields)) {
        if (value === undefined) entry.delete(key);
        else entry.set(key, value);
      }
    });
  }

  setTurn(record: ThreadTurnRecord): void {
    this.doc.transact(() => this.turns.set(record.turnId, record));
  }

  private find(id: string): Y.Map<unknown> {
    return this.messages.toArray().find((entry) => entry.get('id') === id)!;
  }
}

function turn(overrides: Partial<ThreadTurnRecord> & Pick<ThreadTurnRecord, 'turnId'>): ThreadTurnRecord {
  return {
    status: 'done',
    by: 'Alice',
    route: 'fast',
    model: 'spark',
    startedAt: 1,
    endedAt: null,
    ttftMs: 90,
    outputTokens: 10,
    tokensPerSecond: 900,
    steps: 1,
    toolCalls: 0,
    files: [],
    context: { usedTokens: 1000, windowTokens: 128000, trimmed: null },
    agentClients: {},
    error: null,
    ...overrides,
  };
}

/** A scheduler under the test's control: `frame()` runs what was scheduled, like one animation frame. */
function frames() {
  const queue: Array<() => void> = [];
  return {
    schedule: (run: () => void) => queue.push(run),
    pending: () => queue.length,
    frame: () => queue.splice(0).forEach((run) => run()),
  };
}

const initial = useThread.getState();
let mirror: ThreadMirror | null = null;

afterEach(() => {
  mirror?.dispose();
  mirror = null;
  useThread.setState(initial, true);
});

function mirrorOf(thread: GatewayThread, hunkDoc?: (fileId: string) => Y.Doc | null) {
  const clock = frames();
  mirror = mirrorThread(thread.doc, clock.schedule, hunkDoc);
  clock.frame();
  return clock;
}

describe('the thread mirror', () => {
  it('reads the model\'s streaming answer once per frame, however many updates arrived', () => {
    const thread = new GatewayThread();
    thread.append({ kind: 'user', turnId: 't1', author: { name: 'Ana', color: '#f5a524' } }, 'Rename foo to bar');
    const answer = thread.append({ kind: 'assistant', turnId: 't1' });
    const clock = mirrorOf(thread);
    let renders = 0;
    const stop = useThread.subscribe(() => renders++);
    for (let i = 0; i < 50; i++) thread.appendText(answer, `word${i} `);
    expect(clock.pending()).toBe(1);
    expect(useThread.getState().messages[1]?.text).toBe('');
    clock.frame();
    stop();
    expect(renders).toBe(1);
    expect(useThread.getState().messages[1]?.text).toMatch(/^word0 .*word49 $/);
  });

  it('keeps the objects of messages that did not change, so only the streaming one re-renders', () => {
    const thread = new GatewayThread();
    thread.append({ kind: 'user', turnId: 't1', author: { name: 'Ana', color: '#f5a524' } }, 'Go');
    const answer = thread.append({ kind: 'assistant', turnId: 't1' }, 'Sure');
    const clock = mirrorOf(thread);
    const [user, before] = useThread.getState().messages;
    thread.appendText(answer, ', here it is.');
    clock.frame();
    const [userAfter, after] = useThread.getState().messages;
    expect(userAfter).toBe(user);
    expect(after).not.toBe(before);
    expect(after?.text).toBe('Sure, here it is.');
    // An update that changes nothing the UI shows leaves the store alone.
    const messages = useThread.getState().messages;
    thread.update(answer, { kind: 'assistant' });
    clock.frame();
    expect(useThread.getState().messages).toBe(messages);
  });

  it('sees a tool step finish and a queued message being sent (its flag removed)', () => {
    const thread = new GatewayThread();
    const step = thread.append({ kind: 'tool', turnId: 't1', tool: 'read_file', summary: 'read src/a.ts', status: 'running', path: 'src/a.ts' });
    const queued = thread.append({ kind: 'user', turnId: 't1', queued: true, author: { name: 'Bo', color: '#4cc9f0' } }, 'then add tests');
    const clock = mirrorOf(thread);
    expect(useThread.getState().messages.map((m) => [m.status, m.queued])).toEqual([['running', undefined], [undefined, true]]);
    thread.update(step, { status: 'failed', detail: 'no such file' });
    thread.update(queued, { queued: undefined, turnId: 't2' });
    clock.frame();
    const [tool, user] = useThread.getState().messages;
    expect(tool).toMatchObject({ status: 'failed', detail: 'no such file' });
    expect(user?.queued).toBeUndefined();
    expect(user?.turnId).toBe('t2');
  });

  it('replaces a turn record only when the gateway replaced it', () => {
    const thread = new GatewayThread();
    thread.setTurn(turn({ turnId: 't1', status: 'streaming', startedAt: 1 }));
    const clock = mirrorOf(thread);
    const turns = useThread.getState().turns;
    thread.append({ kind: 'notice', turnId: 't1', level: 'info' }, 'Context trimmed');
    clock.frame();
    expect(useThread.getState().turns).toBe(turns);
    expect(selectStreamingTurn(useThread.getState())?.turnId).toBe('t1');
    thread.setTurn(turn({ turnId: 't1', status: 'done', startedAt: 1 }));
    clock.frame();
    expect(useThread.getState().turns).not.toBe(turns);
    expect(selectStreamingTurn(useThread.getState())).toBeNull();
  });

  it('counts each turn\'s hunks per file in the files this tab has loaded, and follows reviews', () => {
    const thread = new GatewayThread();
    const file = new Y.Doc();
    const hunk = (turnId: string, status: HunkRecord['status'], seq: number): HunkRecord => ({
      turnId,
      agentClient: 9,
      insertedFrom: seq * 10,
      insertedTo: seq * 10 + 5,
      original: '',
      restoreAt: {},
      status,
      seq,
    });
    hunksOf(file).set('h1', hunk('t1', 'pending', 1));
    hunksOf(file).set('h2', hunk('t1', 'pending', 2));
    hunksOf(file).set('h3', hunk('t0', 'accepted', 3));
    const changed = { path: 'src/a.ts', fileId: 'fA', added: 4, removed: 1, line: 3 };
    thread.setTurn(turn({ turnId: 't1', files: [changed, { path: 'README.md', fileId: 'fB', added: 1, removed: 0, line: 1 }] }));
    const clock = mirrorOf(thread, (fileId) => (fileId === 'fA' ? file : null));
    const { reviews } = useThread.getState();
    expect(reviews.get(reviewKey('t1', 'fA'))).toEqual({ pending: 2, accepted: 0, rejected: 0 });
    expect(reviews.has(reviewKey('t1', 'fB'))).toBe(false); // not loaded here: unknown, not "nothing to review"
    hunksOf(file).set('h1', { ...hunk('t1', 'rejected', 1) });
    clock.frame();
    expect(useThread.getState().reviews.get(reviewKey('t1', 'fA'))).toEqual({ pending: 1, accepted: 0, rejected: 1 });
  });
});

interface Sent {
  text: string;
  route?: string;
  mode?: string;
  mentions?: string[];
  selection?: { fileId: string; anchor: number; head: number };
}

/** The client's thread calls, recorded; answers come from `answer`. */
function fakeClient(answer: RequestResult = { ok: true, turnId: 't9' }) {
  const sent: Sent[] = [];
  const reviews: Array<[string, { turnId?: string }, string]> = [];
  let stops = 0;
  const doc = new Y.Doc();
  const client = {
    threadSend: async (message: Sent) => {
      sent.push(message);
      return answer;
    },
    threadStop: async () => {
      stops++;
      return { ok: true } as RequestResult;
    },
    getDoc: () => ({ synced: true, doc }),
    openDoc: () => ({ synced: true, doc }),
    review: (fileId: string, select: { turnId?: string }, action: string) => {
      reviews.push([fileId, select, action]);
      return 1;
    },
  };
  return { client: client as unknown as FlintClient, sent, reviews, stops: () => stops };
}

function joinAs(role: Role, client: FlintClient) {
  useConnection.setState({ client, role, status: { kind: 'open', role, sessionId: 's', workspaceName: 'w' } });
}

describe('sending to the thread', () => {
  beforeEach(() => useThread.setState({ route: 'fast' }));

  it('Enter sends (the gateway steers a streaming turn with it) and Alt-Enter queues', async () => {
    const fake = fakeClient();
    joinAs('editor', fake.client);
    const selection = { fileId: 'fA', anchor: 3, head: 9 };
    expect(await sendToThread({ text: '  add a test  ', mode: 'send', mentions: ['src/a.ts', 'src/a.ts'], selection })).toBe(true);
    useThread.setState({ route: 'deep' });
    expect(await sendToThread({ text: 'then the docs', mode: 'queue', mentions: [], selection: null })).toBe(true);
    expect(fake.sent).toEqual([
      { text: 'add a test', route: 'fast', mode: 'send', mentions: ['src/a.ts'], selection },
      { text: 'then the docs', route: 'deep', mode: 'queue', mentions: [] },
    ]);
    expect(useThread.getState()).toMatchObject({ sending: false, error: null });
  });

  it('shows a refusal as a sentence that says what to do, and sends nothing empty', async () => {
    const fake = fakeClient({ ok: false, code: 'rate_limited', message: 'slow down', retryAfterMs: 3000 });
    joinAs('editor', fake.client);
    expect(await sendToThread({ text: '   ', mode: 'send', mentions: [], selection: null })).toBe(false);
    expect(fake.sent).toHaveLength(0);
    expect(await sendToThread({ text: 'go', mode: 'send', mentions: [], selection: null })).toBe(false);
    expect(useThread.getState().error).toBe('Too many messages in a row. Try again in 3 s.');
  });

  it('refuses too many mentions before asking the gateway', async () => {
    const fake = fakeClient();
    joinAs('owner', fake.client);
    const mentions = Array.from({ length: 17 }, (_, i) => `f${i}.ts`);
    expect(await sendToThread({ text: 'look', mode: 'send', mentions, selection: null })).toBe(false);
    expect(fake.sent).toHaveLength(0);
    expect(useThread.getState().error).toMatch(/at most 16 files/);
  });

  it('a viewer watches: sends, stops and reviews nothing', async () => {
    const fake = fakeClient();
    joinAs('viewer', fake.client);
    useThread.setState({ turns: new Map([['t1', turn({ turnId: 't1', status: 'streaming' })], ['t0', turn({ turnId: 't0', files: [{ path: 'a.ts', fileId: 'fA', added: 1, removed: 0, line: 1 }] })]]) });
    expect(await sendToThread({ text: 'hi', mode: 'send', mentions: [], selection: null })).toBe(false);
    expect(useThread.getState().error).toMatch(/only view/);
    await stopThread();
    expect(selectCanReview(useThread.getState(), 't0')).toBe(false);
    expect(await reviewThreadTurn('t0', 'accept')).toBe(0);
    expect([fake.sent.length, fake.stops(), fake.reviews.length]).toEqual([0, 0, 0]);
  });

  it('an editor stops the streaming turn, and reviews a turn only once it stopped writing', async () => {
    const fake = fakeClient();
    joinAs('editor', fake.client);
    const files = [
      { path: 'a.ts', fileId: 'fA', added: 2, removed: 1, line: 4 },
      { path: 'gone.ts', fileId: 'fG', added: 0, removed: 9, line: 1, deleted: true },
      { path: 'b.ts', fileId: 'fB', added: 5, removed: 0, line: 1, created: true },
    ];
    useThread.setState({ turns: new Map([['t1', turn({ turnId: 't1', status: 'streaming', files })]]) });
    expect(await reviewThreadFile('t1', 'fA', 'accept')).toBe(0);
    await stopThread();
    expect(fake.stops()).toBe(1);
    useThread.setState({ turns: new Map([['t1', turn({ turnId: 't1', status: 'cancelled', files })]]) });
    expect(await reviewThreadTurn('t1', 'reject')).toBe(2);
    expect(fake.reviews).toEqual([
      ['fA', { turnId: 't1' }, 'reject'],
      ['fB', { turnId: 't1' }, 'reject'],
    ]);
  });

  it('knows the bundled demo model by the route\'s model, else by the route\'s last turn', () => {
    useThread.setState({ models: { fast: 'flint-tiny', deep: null }, route: 'fast' });
    expect(selectIsDemoModel(useThread.getState())).toBe(true);
    useThread.setState({ route: 'deep', turns: new Map([['t1', turn({ turnId: 't1', route: 'deep', model: 'gpt-5.5' })]]) });
    expect(selectIsDemoModel(useThread.getState())).toBe(false);
    useThread.setState({ models: null, route: 'fast', turns: new Map([['t1', turn({ turnId: 't1', model: 'flint-tiny' })]]) });
    expect(selectIsDemoModel(useThread.getState())).toBe(true);
  });
});

describe('laying out the thread', () => {
  it('keeps each turn whole and puts messages still queued at the end', () => {
    const message = (id: string, turnId: string, extra: Partial<ThreadMessage> = {}): ThreadMessage => ({ id, kind: 'assistant', turnId, at: 0, text: '', author: null, ...extra });
    const { groups, queued } = groupByTurn([
      message('a', 't1', { kind: 'user' }),
      message('b', 't1'),
      message('q', 't2', { kind: 'user' }), // was queued during t1, now sent: t2 began here
      message('c', 't1', { kind: 'tool' }), // t1's last step, written after
      message('d', 't2'),
      message('n', '', { kind: 'notice' }),
      message('w', '', { kind: 'user', queued: true }),
    ]);
    expect(groups.map((g) => [g.key, g.messages.map((m) => m.id).join('')])).toEqual([
      ['t1', 'abc'],
      ['t2', 'qd'],
      ['message:n', 'n'],
    ]);
    expect(queued.map((m) => m.id)).toEqual(['w']);
  });
});
