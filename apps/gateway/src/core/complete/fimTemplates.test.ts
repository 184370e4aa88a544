import { describe, expect, it } from 'vitest';
import { fimTemplate, fimTemplateForModel, lineCommentFor, type FimPrompt } from './fimTemplates';

const plain: FimPrompt = { path: 'src/a.ts', prefix: 'const x = ', suffix: ';\n', snippets: [], singleLine: true };
const withSnippet: FimPrompt = { ...plain, snippets: [{ path: 'src/b.ts', text: 'export const y = 1;' }] };

describe('FIM templates', () => {
  it('Qwen2.5-Coder: <|fim_prefix|>…<|fim_suffix|>…<|fim_middle|>, repo-level with snippets', () => {
    const t = fimTemplate('qwen');
    expect(t.render(plain)).toBe('<|fim_prefix|>const x = <|fim_suffix|>;\n<|fim_middle|>');
    expect(t.render(withSnippet)).toBe(
      '<|repo_name|>workspace\n<|file_sep|>src/b.ts\nexport const y = 1;\n<|file_sep|>src/a.ts\n<|fim_prefix|>const x = <|fim_suffix|>;\n<|fim_middle|>',
    );
    expect(t.stop).toContain('<|endoftext|>');
    expect(t.stop).toContain('<|file_sep|>');
  });

  it('DeepSeek-Coder: fullwidth bars and the ▁ block, snippets as comments in the prefix', () => {
    const t = fimTemplate('deepseek');
    expect(t.render(plain)).toBe('<｜fim▁begin｜>const x = <｜fim▁hole｜>;\n<｜fim▁end｜>');
    expect(t.render(withSnippet)).toBe('<｜fim▁begin｜>// Path: src/b.ts\n// export const y = 1;\nconst x = <｜fim▁hole｜>;\n<｜fim▁end｜>');
    expect(t.stop).toContain('<｜end▁of▁sentence｜>');
  });

  it('StarCoder2: <fim_prefix>…<fim_suffix>…<fim_middle>, repo context with <file_sep>', () => {
    const t = fimTemplate('starcoder2');
    expect(t.render(plain)).toBe('<fim_prefix>const x = <fim_suffix>;\n<fim_middle>');
    expect(t.render(withSnippet)).toBe(
      '<repo_name>workspace<file_sep>src/b.ts\nexport const y = 1;\n<file_sep>src/a.ts\n<fim_prefix>const x = <fim_suffix>;\n<fim_middle>',
    );
    expect(t.stop).toContain('<file_sep>');
  });

  it('Codestral: suffix first, [SUFFIX]…[PREFIX]…', () => {
    const t = fimTemplate('codestral');
    expect(t.render(plain)).toBe('[SUFFIX];\n[PREFIX]const x = ');
    expect(t.stop).toEqual(expect.arrayContaining(['[PREFIX]', '[SUFFIX]']));
  });

  it('CodeLlama: "<PRE> {prefix} <SUF>{suffix} <MID>", spaces included', () => {
    const t = fimTemplate('codellama');
    expect(t.render(plain)).toBe('<PRE> const x =  <SUF>;\n <MID>');
    expect(t.stop).toContain('<EOT>');
  });

  it('picks the family from the model name, and nothing for chat models', () => {
    expect(fimTemplateForModel('Qwen/Qwen2.5-Coder-7B')).toBe('qwen');
    expect(fimTemplateForModel('qwen2.5-coder:1.5b-base')).toBe('qwen');
    expect(fimTemplateForModel('deepseek-coder-6.7b-base')).toBe('deepseek');
    expect(fimTemplateForModel('DeepSeek-Coder-V2-Lite-Base')).toBe('deepseek');
    expect(fimTemplateForModel('bigcode/starcoder2-3b')).toBe('starcoder2');
    expect(fimTemplateForModel('codestral-latest')).toBe('codestral');
    expect(fimTemplateForModel('codellama-7b-code')).toBe('codellama');
    expect(fimTemplateForModel('CodeQwen1.5-7B')).toBe('starcoder2');
    expect(fimTemplateForModel('gpt-5.4-mini')).toBeNull();
    expect(fimTemplateForModel('gpt-oss-120b')).toBeNull();
    expect(fimTemplateForModel('qwen3-235b-instruct')).toBeNull();
  });

  it('comments snippets in the language of the file being completed', () => {
    expect(lineCommentFor('a/b.py')).toBe('#');
    expect(lineCommentFor('Makefile')).toBe('#');
    expect(lineCommentFor('q.sql')).toBe('--');
    expect(lineCommentFor('x.tsx')).toBe('//');
    const py = fimTemplate('codellama').render({ ...withSnippet, path: 'main.py' });
    expect(py).toContain('# Path: src/b.ts\n# export const y = 1;\n');
  });
});
