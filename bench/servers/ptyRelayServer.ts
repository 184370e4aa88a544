/**
 * B15's control: the least a server can do to share a terminal — one node-pty pty (in the same
 * bubblewrap sandbox as Flint's), every WebSocket message written to it, every read of it sent
 * to every client as it comes. No screen, no batching, no permissions, no back-pressure.
 */
import http from 'node:http';
import { spawn } from '@lydell/node-pty';
import { WebSocketServer, type WebSocket } from 'ws';
import { listenLoopback, type LoopbackWsServer } from './listenLoopback';

export async function startPtyRelayServer(file: string, args: string[], cwd: string): Promise<LoopbackWsServer & { kill(): void }> {
  const pty = spawn(file, args, { name: 'xterm-256color', cols: 100, rows: 30, cwd, env: {} });
  const clients = new Set<WebSocket>();
  pty.onData((data) => {
    for (const ws of clients) ws.send(data);
  });
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    clients.add(ws);
    ws.on('message', (data) => pty.write(String(data)));
    ws.on('close', () => clients.delete(ws));
  });
  const running = await listenLoopback(server, wss);
  return { ...running, kill: () => pty.kill('SIGKILL') };
}
