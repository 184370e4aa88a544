import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTinyLlamaGguf } from '@flint/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../core/ports/ModelProvider';
import { editByInfill } from './editByInfill';
import { EmbeddedProvider } from './EmbeddedProvider';

const dir = mkdtempSync(join(tmpdir(), 'flint-infill-edit-'));
const modelPath = join(dir, 'tiny.gguf');
writeFileSync(modelPath, makeTinyLlamaGguf());
const provider = new EmbeddedProvider({ modelPath, contextSize: 256, warmThreads: 1 });
afterAll(async () => {
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
});

async function textOf(stream: AsyncIterable<ModelEvent>): Promise<string> {
  let text = '';
  for await (const event of stream) if (event.type === 'text') text += event.text;
  return text;
}

describe('inline edits with the bundled model are fill-in-the-middle', () => {
  it('streams the infill of the text around the region, not a chat completion', async () => {
    const edit = editByInfill(provider);
    const request: ModelRequest = {
      model: 'default',
      messages: [{ role: 'user', content: 'Instruction: make it faster' }],
      maxOutputTokens: 8,
      infill: { prefix: 'function square(x) {\n  return ', suffix: ';\n}\n' },
    };
    const viaEdit = await textOf(edit.stream(request, new AbortController().signal));
    const direct = await textOf(provider.infill(request.infill!.prefix, request.infill!.suffix, { maxOutputTokens: 8 }, new AbortController().signal));
    const chat = await textOf(provider.stream(request, new AbortController().signal));
    expect(viaEdit.length).toBeGreaterThan(0);
    expect(viaEdit).toBe(direct);
    expect(viaEdit).not.toBe(chat);
  }, 60_000);
});
