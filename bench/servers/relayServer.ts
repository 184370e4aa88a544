/**
 * The control for gateway CPU and throughput: the least a server can do to put a model's stream
 * in front of a browser. It takes `{ "tokens": n }` over a WebSocket, POSTs one Chat Completions
 * request (keep-alive, as the gateway does), and forwards every delta's text as its own
 * WebSocket message, then `{"done":true}`. No documents, no storage, no coalescing.
 * `perRead`: one message per TCP read instead (every delta that arrived together), the least
 * work a relay can do per byte — B5's transport floor, which must not drown a page in messages.
 */
import http from 'node:http';
import https from 'node:https';
import { WebSocketServer } from 'ws';
import { listenLoopback, type LoopbackWsServer } from './listenLoopback';

export type RelayServer = LoopbackWsServer;

export async function startRelayServer(providerBaseUrl: string, perRead = false): Promise<RelayServer> {
  const target = new URL(`${providerBaseUrl}/chat/completions`);
  const client = target.protocol === 'https:' ? https : http;
  const agent = new client.Agent({ keepAlive: true });
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', () => {
      const body = JSON.stringify({
        model: 'bench-model',
        stream: true,
        messages: [{ role: 'user', content: 'write code' }],
        stream_options: { include_usage: true },
      });
      const req = client.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let read = '';
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!event.startsWith('data: ')) continue;
            const data = event.slice(6);
            if (data === '[DONE]') {
              if (read) ws.send(read);
              read = '';
              ws.send('{"done":true}');
              continue;
            }
            const content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
            if (!content) continue;
            if (perRead) read += content;
            else ws.send(content);
          }
          if (read) ws.send(read);
        });
      });
      req.on('error', () => ws.close(1011, 'provider failed'));
      req.end(body);
    });
  });
  return listenLoopback(server, wss, () => agent.destroy());
}
