/**
 * Entry of a benchmark child process (started by bench/lib/ChildHost.ts):
 * `childMain.ts <kind> <options-json>`. It starts one server, reports `{ready}` over IPC, then
 * answers calls `{id, op, args}` with `{id, ok, value | error}`. Every kind answers `stats`
 * (process.cpuUsage and memoryUsage, after a full GC on request) and `exit`.
 */
import type { FakeScript } from '@flint/test-kit';
import type { FimScript } from '../lib/FimTokenServer';
import type { PacedScript } from '../lib/PacedTokenServer';
import type { BenchGatewayOptions } from './startBenchGateway';

import { writeFileSync } from 'node:fs';
import { Session as InspectorSession } from 'node:inspector';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How long the event loop was blocked: timers (the agent's flushes) wait at least that long. */
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();

type Handler = (args: Record<string, unknown>) => unknown;

/** CPU profiling of a measured window only (not the process's start-up), via the inspector. */
let inspector: InspectorSession | null = null;
function inspectorPost(method: string, params?: object): Promise<unknown> {
  return new Promise((resolve, reject) => inspector!.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
}

const kind = process.argv[2] ?? '';
const options = JSON.parse(process.argv[3] ?? '{}') as Record<string, unknown>;
const send = (message: unknown) => process.send?.(message);

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Twice: the first pass can leave garbage that only finalisers freed.
  gc?.();
  gc?.();
}

async function start(): Promise<{ info: Record<string, unknown>; handlers: Record<string, Handler>; close: () => Promise<void> }> {
  switch (kind) {
    case 'paced-provider': {
      // Imported per kind: a child loads only the server it runs (faster start, smaller heap).
      const { PacedTokenServer } = await import('../lib/PacedTokenServer');
      const server = await PacedTokenServer.start();
      return {
        info: { url: server.baseUrl },
        handlers: {
          configure: (args) => server.configure(args as unknown as PacedScript),
          streams: () => server.streams,
        },
        close: () => server.close(),
      };
    }
    case 'fim-provider': {
      const { FimTokenServer } = await import('../lib/FimTokenServer');
      const server = await FimTokenServer.start();
      return {
        info: { url: server.baseUrl },
        handlers: {
          configure: (args) => server.configure(args as unknown as FimScript),
          requests: () => server.requests,
        },
        close: () => server.close(),
      };
    }
    case 'fake-openai': {
      const { FakeOpenAIServer } = await import('@flint/test-kit');
      const server = await FakeOpenAIServer.start();
      return {
        info: { url: server.baseUrl },
        handlers: {
          respondWith: (args) => server.respondWith(args as Partial<FakeScript>),
          requests: () =>
            server.requests.map((r) => ({ transport: r.transport, path: r.path, bodyBytes: JSON.stringify(r.body).length, connectionId: r.connectionId, outcome: r.outcome })),
          connections: () => ({ tcp: server.tcpConnections, ws: server.wsConnections }),
        },
        close: () => server.close(),
      };
    }
    case 'gateway': {
      const { startBenchGateway } = await import('./startBenchGateway');
      const running = await startBenchGateway(options as BenchGatewayOptions);
      return {
        info: { url: running.wsUrl, port: running.server.port },
        handlers: {
          createWorkspace: (args) => {
            const created = running.gateway.createWorkspace(String(args.name ?? 'bench'), (args.files ?? {}) as Record<string, string>);
            return { workspaceId: created.workspaceId, token: created.owner.token };
          },
          createWorkspaces: (args) => {
            const out: Array<{ workspaceId: string; token: string }> = [];
            for (let i = 0; i < Number(args.count); i++) {
              const created = running.gateway.createWorkspace(`bench ${i}`, (args.files ?? {}) as Record<string, string>);
              out.push({ workspaceId: created.workspaceId, token: created.owner.token });
            }
            return out;
          },
          shareEditor: (args) => running.gateway.links.create(String(args.workspaceId), 'editor', 'Editor', null).token,
          // B14: the most CPU the process spent between two turns of its event loop since the last
          // call: a stall in CPU time, which a descheduled process on a busy machine does not inflate.
          loopCpu: async () => {
            const { loopCpuMonitor } = await import('./loopCpuMonitor');
            return loopCpuMonitor.takeMaxMs();
          },
          // B14: the agent's search tool, run on the gateway's event loop over a workspace's files.
          search: async (args) => {
            const { searchWorkspace } = await import('./searchWorkspace');
            return searchWorkspace(running.gateway, String(args.workspaceId), String(args.query), args.regex === true);
          },
          sessionCount: () => running.gateway.sessionCount,
          roomsLoaded: () => running.gateway.metrics.render().match(/^flint_rooms_loaded (\d+)/m)?.[1],
        },
        close: () => running.close(),
      };
    }
    case 'relay': {
      const { startRelayServer } = await import('./relayServer');
      const relay = await startRelayServer(String(options.providerBaseUrl), options.perRead === true);
      return { info: { url: relay.url }, handlers: {}, close: () => relay.close() };
    }
    case 'broadcast': {
      const { startBroadcastServer } = await import('./broadcastServer');
      const broadcast = await startBroadcastServer();
      return { info: { url: broadcast.url }, handlers: {}, close: () => broadcast.close() };
    }
    case 'yjs': {
      const { startYjsReferenceServer } = await import('./yjsReferenceServer');
      const yjs = await startYjsReferenceServer();
      return { info: { url: yjs.url }, handlers: {}, close: () => yjs.close() };
    }
    default:
      throw new Error(`unknown child kind "${kind}"`);
  }
}

try {
  const { info, handlers, close } = await start();
  const all: Record<string, Handler> = {
    ...handlers,
    profileStart: async () => {
      inspector ??= new InspectorSession();
      inspector.connect();
      await inspectorPost('Profiler.enable');
      await inspectorPost('Profiler.setSamplingInterval', { interval: 100 });
      await inspectorPost('Profiler.start');
    },
    profileStop: async (args) => {
      const { profile } = (await inspectorPost('Profiler.stop')) as { profile: unknown };
      inspector!.disconnect();
      writeFileSync(String(args.path), JSON.stringify(profile));
      return args.path;
    },
    stats: (args) => {
      if (args.gc) fullGc();
      const eventLoopDelayMs = { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
      if (args.resetLoopDelay) loopDelay.reset();
      return { cpu: process.cpuUsage(), memory: process.memoryUsage(), eventLoopDelayMs };
    },
  };
  process.on('message', (message: { id: number; op: string; args: Record<string, unknown> }) => {
    if (message.op === 'exit') {
      void close().finally(() => process.exit(0));
      return;
    }
    const handler = all[message.op];
    if (!handler) return send({ id: message.id, ok: false, error: `unknown op ${message.op}` });
    Promise.resolve()
      .then(() => handler(message.args))
      .then(
        (value) => send({ id: message.id, ok: true, value }),
        (error: unknown) => send({ id: message.id, ok: false, error: String(error) }),
      );
  });
  // The parent going away (a crash, Ctrl-C) must not leave servers behind.
  process.on('disconnect', () => process.exit(0));
  send({ ready: info });
} catch (error) {
  send({ error: String(error) });
  process.exit(1);
}
