/**
 * B6's transport floor: a WebSocket server that forwards every message to every other client,
 * and nothing else.
 */
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { listenLoopback, type LoopbackWsServer } from './listenLoopback';

export async function startBroadcastServer(): Promise<LoopbackWsServer> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => {
      for (const other of wss.clients) if (other !== ws) other.send(data, { binary: isBinary });
    });
  });
  return listenLoopback(server, wss);
}
