/**
 * The e2e server: the real gateway (main.ts), with its `fast` route pointed at a loopback fake
 * OpenAI-compatible provider (the one thing e2e may fake: a provider we don't own). Tests script
 * the fake over a small control port (E2E_PORT + 1): POST /script with a FakeScript (every answer),
 * POST /script-once with a list of them (the next answers, in order, then /script's again). The
 * `complete` route (autocomplete) goes to a fake FIM server with the Qwen template, scripted with
 * POST /script-complete.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeFimServer, FakeOpenAIServer, type FakeScript } from '@flint/test-kit';

const fake = await FakeOpenAIServer.start();
fake.respondWith({ text: 'return 0;', tokensPerSecond: 200, chunkChars: 2 });
const fim = await FakeFimServer.start();
fim.respondWith({ text: '' });

const controlPort = Number(process.env.PORT ?? 4173) + 1;
createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/script') {
      fake.respondWith(JSON.parse(body) as Partial<FakeScript>);
      res.writeHead(204).end();
      return;
    }
    // The next answers, in order (a tool loop: a patch call, then the closing words).
    if (req.method === 'POST' && req.url === '/script-once') {
      for (const script of JSON.parse(body) as Partial<FakeScript>[]) fake.respondOnceWith(script);
      res.writeHead(204).end();
      return;
    }
    if (req.method === 'POST' && req.url === '/script-complete') {
      fim.respondWith(JSON.parse(body) as Partial<FakeScript>);
      res.writeHead(204).end();
      return;
    }
    res.writeHead(404).end();
  });
}).listen(controlPort, '127.0.0.1');

process.env.FLINT_PROVIDER = 'openai-chat';
process.env.OPENAI_BASE_URL = fake.baseUrl;
process.env.OPENAI_API_KEY = 'e2e-key';
process.env.FLINT_MODEL_FAST = 'fake-spark';
process.env.FLINT_MODEL_DEEP = 'fake-deep';
const configFile = join(tmpdir(), `flint-e2e-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify({ routes: { complete: { kind: 'openai-chat', baseUrl: fim.baseUrl, model: 'qwen2.5-coder-e2e', fimTemplate: 'qwen' } } }));
process.env.FLINT_CONFIG = configFile;
await import('@flint/gateway/main');
