/**
 * B13's keystroke arms: two Flint clients on chosen gateways, two Hocuspocus providers on two
 * servers, and the floors (a Redis hop, a PostgreSQL insert). Each probe is one keystroke (or
 * one hop) and resolves with how long it took to arrive.
 */
import { FILE_TEXT_KEY } from '@flint/protocol';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import { Redis } from 'ioredis';
import pg from 'pg';
import { WebSocket } from 'ws';
import * as Y from 'yjs';
import type { HocuspocusChild } from './clusterHarness';
import { connectFlintClient, fileIdOf } from './connectFlintClient';
import { tokenText } from './PacedTokenServer';
import { until } from './until';

/** A gateway of any kind (a cluster's main.ts process, the lone ChildHost one): where to connect, what to measure. */
export interface GatewayRef {
  /** ws://…/ws */
  url: string;
  pid: number;
  /** A fresh workspace holding README.md, and its owner token. */
  createWorkspace(name: string): Promise<{ workspaceId: string; token: string }>;
}

export interface LatencyArm {
  name: string;
  probe(): Promise<number>;
  samples: number[];
  close(): Promise<void> | void;
}

const seedText = tokenText(500).join('');

/** A character typed at a random place in `a` until `b`'s observer sees it. */
function keystroke(name: string, a: Y.Text, b: Y.Text, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      b.unobserve(observer);
      reject(new Error(`${name}: a keystroke did not reach B within ${timeoutMs} ms`));
    }, timeoutMs);
    const observer = () => {
      clearTimeout(timer);
      b.unobserve(observer);
      resolve(performance.now() - t0);
    };
    b.observe(observer);
    const t0 = performance.now();
    a.insert(Math.floor(Math.random() * a.length), 'x');
  });
}

/** A and B (FlintClients, the owner link) on `gatewayA` and `gatewayB`, in a 2 KB README.md. */
export async function flintArm(name: string, gatewayA: GatewayRef, gatewayB: GatewayRef): Promise<LatencyArm> {
  const { workspaceId, token } = await gatewayA.createWorkspace('B13 keystrokes');
  const [a, b] = await Promise.all([connectFlintClient(gatewayA.url, workspaceId, token), connectFlintClient(gatewayB.url, workspaceId, token)]);
  const fileId = fileIdOf(a, 'README.md');
  const [handleA, handleB] = [a.openDoc(fileId), b.openDoc(fileId)];
  await Promise.all([handleA.whenSynced(), handleB.whenSynced()]);
  const [textA, textB] = [handleA.doc.getText(FILE_TEXT_KEY), handleB.doc.getText(FILE_TEXT_KEY)];
  textA.insert(0, seedText);
  await until(() => textB.length === textA.length, `${name}: the seed text to reach B`, 10_000);
  return {
    name,
    probe: () => keystroke(name, textA, textB),
    samples: [],
    close: () => {
      a.destroy();
      b.destroy();
    },
  };
}

/** A on one Hocuspocus server, B on the other, the same document. */
export async function hocuspocusArm(name: string, serverA: HocuspocusChild, serverB: HocuspocusChild): Promise<LatencyArm> {
  // The socket comes from `ws` (Node 20 has no WebSocket); a provider handed its socket is attached by hand.
  const connect = (url: string) => {
    const provider = new HocuspocusProvider({ websocketProvider: new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WebSocket }), name: 'b13', document: new Y.Doc() });
    provider.attach();
    return provider;
  };
  const [a, b] = [connect(serverA.url), connect(serverB.url)];
  await until(() => a.synced && b.synced, 'Hocuspocus providers to sync', 10_000);
  const [textA, textB] = [a.document.getText(FILE_TEXT_KEY), b.document.getText(FILE_TEXT_KEY)];
  textA.insert(0, seedText);
  await until(() => textB.length === textA.length, `${name}: the seed text to reach B`, 10_000);
  return {
    name,
    probe: () => keystroke(name, textA, textB),
    samples: [],
    close: () => {
      for (const provider of [a, b]) {
        provider.destroy();
        provider.configuration.websocketProvider.destroy();
      }
    },
  };
}

/** A 30-byte PUBLISH until a subscriber on a second connection has it: one hop between gateways. */
export async function redisFloor(url: string): Promise<LatencyArm> {
  const [pub, sub] = [new Redis(url), new Redis(url)];
  let arrived: (() => void) | null = null;
  sub.on('messageBuffer', () => arrived?.());
  await sub.subscribe('b13floor');
  return {
    name: 'floor: Redis publish → subscriber',
    probe: () =>
      new Promise((resolve) => {
        const t0 = performance.now();
        arrived = () => resolve(performance.now() - t0);
        void pub.publish('b13floor', Buffer.alloc(30));
      }),
    samples: [],
    close: () => {
      pub.disconnect();
      sub.disconnect();
    },
  };
}

/** An INSERT of a 30-byte update row as PostgresStore appends one (synchronous_commit off). */
export async function postgresFloor(url: string): Promise<LatencyArm> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET synchronous_commit = off');
  await client.query('CREATE TABLE floor (seq BIGSERIAL PRIMARY KEY, doc_key TEXT NOT NULL, data BYTEA NOT NULL)');
  const row = Buffer.alloc(30);
  return {
    name: 'floor: PostgreSQL INSERT',
    probe: async () => {
      const t0 = performance.now();
      await client.query('INSERT INTO floor (doc_key, data) VALUES ($1, $2)', ['b13', row]);
      return performance.now() - t0;
    },
    samples: [],
    close: () => client.end(),
  };
}
