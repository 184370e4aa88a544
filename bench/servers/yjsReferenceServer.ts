/**
 * The peer for collaboration latency and footprint: the reference Yjs server
 * (@y/websocket-server, what y-websocket clients talk to), set up as its own bin does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setupWSConnection } from '@y/websocket-server/utils';
import { WebSocketServer } from 'ws';

export interface YjsReferenceServer {
  url: string;
  close(): Promise<void>;
}

export async function startYjsReferenceServer(): Promise<YjsReferenceServer> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('okay'));
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', setupWSConnection);
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
