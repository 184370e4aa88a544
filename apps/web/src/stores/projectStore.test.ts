import type { FlintClient } from '@flint/client';
import type { IndexEntry } from '@flint/protocol';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import type { ProjectInfo } from '../api/projectApi';
import { useConnection } from './connectionStore';
import {
  bindProject,
  closeDiff,
  gitRefreshDelayMs,
  openDiff,
  refreshProject,
  scheduleProjectRefresh,
  setChangesOpen,
  toggleChanges,
  unwatchFileDoc,
  useProject,
  watchFileDoc,
} from './projectStore';
import { useWorkspace } from './workspaceStore';

/** The gateway's project routes, answering from fields a test sets. */
class FakeGateway {
  project: ProjectInfo = { folder: true, git: { branch: 'main', files: [] } };
  head = new Map<string, string>();
  readonly asked: string[] = [];

  fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input), 'http://flint.test');
    this.asked.push(url.pathname + url.search);
    expect(new Headers(init?.headers).get('authorization')).toBe('Bearer token-1');
    if (url.pathname === '/api/workspaces/w1/project') return Response.json(this.project);
    if (url.pathname === '/api/workspaces/w1/project/head') {
      const path = url.searchParams.get('path') ?? '';
      return Response.json({ path, text: this.head.get(path) ?? null });
    }
    return Response.json({ error: 'no such route' }, { status: 404 });
  };

  projectAsks(): number {
    return this.asked.filter((path) => path === '/api/workspaces/w1/project').length;
  }
}

const entries = (list: Array<[string, IndexEntry]>) => {
  const map = new Map(list);
  const pathById = new Map<string, string>();
  const binaryFileIds = new Set<string>();
  for (const [path, entry] of map) {
    if (entry.kind !== 'file') continue;
    pathById.set(entry.fileId, path);
    if (entry.binary) binaryFileIds.add(entry.fileId);
  }
  useWorkspace.setState({ entries: map, pathById, binaryFileIds });
};


let gateway: FakeGateway;

beforeAll(() => {
  useConnection.setState({ workspaceId: 'w1', token: 'token-1' });
  vi.stubGlobal('fetch', new FakeGateway().fetch);
  bindProject({ status: { kind: 'open' }, onStatus: () => () => {} } as unknown as FlintClient);
});

beforeEach(async () => {
  gateway = new FakeGateway();
  vi.stubGlobal('fetch', gateway.fetch);
  useWorkspace.setState({ tabs: [], activeFileId: null, notice: null });
  entries([
    ['src/a.ts', { kind: 'file', fileId: 'fa' }],
    ['src/b.ts', { kind: 'file', fileId: 'fb' }],
    ['img/logo.png', { kind: 'file', fileId: 'fl', binary: true, bytes: 2048 }],
  ]);
  useProject.setState({ info: null, diff: null, changesOpen: false });
  await refreshProject();
  gateway.asked.length = 0;
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('git status', () => {
  it('marks the files git reports, and folders above them', async () => {
    gateway.project = {
      folder: true,
      git: {
        branch: 'main',
        files: [
          { path: 'src/a.ts', status: 'modified' },
          { path: 'src/gone.ts', status: 'deleted' },
        ],
      },
    };
    await refreshProject();
    const { marks } = useProject.getState();
    expect(marks.files.get('src/a.ts')).toBe('M');
    expect(marks.folders.get('src')).toBe(2);
  });

  it('asks again a second after an open file last changed, once for a burst of edits', async () => {
    vi.useFakeTimers();
    const doc = new Y.Doc();
    watchFileDoc(doc);
    const text = doc.getText('content');
    for (let i = 0; i < 5; i++) {
      text.insert(0, 'x');
      vi.advanceTimersByTime(300);
    }
    expect(gateway.projectAsks()).toBe(0);
    vi.advanceTimersByTime(gitRefreshDelayMs - 300);
    expect(gateway.projectAsks()).toBe(1);
    unwatchFileDoc(doc);
    text.insert(0, 'y');
    vi.advanceTimersByTime(10 * gitRefreshDelayMs);
    expect(gateway.projectAsks()).toBe(1);
  });

  it('asks again after the tree changes', () => {
    vi.useFakeTimers();
    entries([['src/a.ts', { kind: 'file', fileId: 'fa' }]]);
    vi.advanceTimersByTime(gitRefreshDelayMs);
    expect(gateway.projectAsks()).toBe(1);
  });

  it('an immediate refresh takes the place of a pending one', async () => {
    vi.useFakeTimers();
    scheduleProjectRefresh();
    await refreshProject();
    vi.advanceTimersByTime(10 * gitRefreshDelayMs);
    expect(gateway.projectAsks()).toBe(1);
  });

  it('without git there are no marks and no Changes view', async () => {
    gateway.project = { folder: true, git: { branch: 'main', files: [{ path: 'src/a.ts', status: 'added' }] } };
    await refreshProject();
    setChangesOpen(true);
    expect(useProject.getState().changesOpen).toBe(true);
    gateway.project = { folder: true, git: null };
    await refreshProject();
    expect(useProject.getState().marks.files.size).toBe(0);
    expect(useProject.getState().changesOpen).toBe(false);
    expect(toggleChanges()).toBe(false);
    expect(useProject.getState().changesOpen).toBe(false);
  });
});

describe('the diff against HEAD', () => {
  beforeEach(async () => {
    gateway.project = {
      folder: true,
      git: {
        branch: 'main',
        files: [
          { path: 'src/a.ts', status: 'modified' },
          { path: 'src/old.ts', status: 'deleted' },
        ],
      },
    };
    gateway.head.set('src/a.ts', 'const a = 1;\n');
    gateway.head.set('src/old.ts', 'gone\n');
    await refreshProject();
  });

  it('opens the file in its tab and reads its text at HEAD', async () => {
    openDiff('src/a.ts');
    expect(useWorkspace.getState().activeFileId).toBe('fa');
    expect(useProject.getState().diff).toMatchObject({ path: 'src/a.ts', fileId: 'fa', status: 'modified', head: undefined });
    await vi.waitFor(() => expect(useProject.getState().diff?.head).toBe('const a = 1;\n'));
  });

  it('a deleted file has HEAD on the left and no live file', async () => {
    openDiff('src/old.ts');
    await vi.waitFor(() => expect(useProject.getState().diff).toMatchObject({ path: 'src/old.ts', fileId: null, status: 'deleted', head: 'gone\n' }));
  });

  it('when HEAD cannot be read the diff says so, and shows no sides', async () => {
    vi.stubGlobal('fetch', async (input: RequestInfo | URL) =>
      String(input).includes('/project/head') ? Response.json({ error: 'Git could not read it.' }, { status: 500 }) : gateway.fetch(input),
    );
    openDiff('src/a.ts');
    await vi.waitFor(() => expect(useProject.getState().diff).toMatchObject({ head: undefined, error: 'Could not read src/a.ts at HEAD: Git could not read it.' }));
  });

  it('a binary file opens instead: there is no text to compare', () => {
    openDiff('img/logo.png');
    expect(useProject.getState().diff).toBeNull();
    expect(useWorkspace.getState().activeFileId).toBe('fl');
  });

  it('switching to another file, or the file going away, ends the diff', async () => {
    openDiff('src/a.ts');
    useWorkspace.setState({ activeFileId: 'fb' });
    expect(useProject.getState().diff).toBeNull();

    openDiff('src/a.ts');
    entries([['src/b.ts', { kind: 'file', fileId: 'fb' }]]);
    expect(useProject.getState().diff).toBeNull();
  });

  it('reads HEAD again with every answer: a commit moves it without a change here', async () => {
    openDiff('src/a.ts');
    await vi.waitFor(() => expect(useProject.getState().diff?.head).toBe('const a = 1;\n'));
    gateway.head.set('src/a.ts', 'const a = 2;\n');
    gateway.project = { folder: true, git: { branch: 'main', files: [] } };
    await refreshProject();
    await vi.waitFor(() => expect(useProject.getState().diff).toMatchObject({ head: 'const a = 2;\n', status: null }));
    closeDiff();
    expect(useProject.getState().diff).toBeNull();
  });
});
