/**
 * The peer for collaboration latency and footprint: the reference Yjs server
 * (@y/websocket-server, what y-websocket clients talk to), set up as its own bin does.
 */
import http from 'node:http';
import { setupWSConnection } from '@y/websocket-server/utils';
import { WebSocketServer } from 'ws';
import { listenLoopback, type LoopbackWsServer } from './listenLoopback';

export type YjsReferenceServer = LoopbackWsServer;

export async function startYjsReferenceServer(): Promise<YjsReferenceServer> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('okay'));
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', setupWSConnection);
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
  return listenLoopback(server, wss);
}
