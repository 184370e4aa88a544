/**
 * Fill-in-the-middle prompt formats per model family. A FIM model was trained on documents cut
 * into prefix / suffix / middle and marked with its own special tokens; sent the same marks, it
 * writes the middle. The formats (and each family's stop tokens) follow the model cards:
 * Qwen2.5-Coder, DeepSeek-Coder, StarCoder2 (repo-level with `<file_sep>`), Codestral, CodeLlama.
 */

/** Code from another open file that may help the model (a definition the cursor uses). */
export interface FimSnippet {
  path: string;
  text: string;
}

/** What the gateway asks to fill: the text around the cursor and related code. */
export interface FimPrompt {
  /** The file being completed, workspace-relative. */
  path: string;
  prefix: string;
  suffix: string;
  snippets: FimSnippet[];
  /** The cursor is mid-line: only the rest of this line is wanted. */
  singleLine: boolean;
}

export type FimTemplateName = 'qwen' | 'deepseek' | 'starcoder2' | 'codestral' | 'codellama';

export const fimTemplateNames: readonly FimTemplateName[] = ['qwen', 'deepseek', 'starcoder2', 'codestral', 'codellama'];

export interface FimTemplate {
  readonly name: FimTemplateName;
  /** The raw prompt, special tokens included. */
  render(prompt: FimPrompt): string;
  /** Tokens that end the middle, so servers that print special tokens stop there. */
  readonly stop: readonly string[];
}

/** The repository name the repo-level formats want; the model only needs it to be stable. */
const repoName = 'workspace';

/** DeepSeek's marks use fullwidth bars (U+FF5C) and a lower block (U+2581), not ASCII. */
const ds = (word: string) => `<\uFF5C${word.replace(/ /g, '\u2581')}\uFF5C>`;

/** Snippets as line comments above the prefix, for formats without a file separator token. */
export function snippetsAsComments(prompt: FimPrompt): string {
  if (prompt.snippets.length === 0) return '';
  const mark = lineCommentFor(prompt.path);
  const blocks = prompt.snippets.map(
    (s) => `${mark} Path: ${s.path}\n${s.text.split('\n').map((line) => `${mark} ${line}`.trimEnd()).join('\n')}\n`,
  );
  return blocks.join('');
}

const templates: Record<FimTemplateName, FimTemplate> = {
  // https://github.com/QwenLM/Qwen2.5-Coder (file-level and repository-level FIM)
  qwen: {
    name: 'qwen',
    render: (p) => {
      const fim = `<|fim_prefix|>${p.prefix}<|fim_suffix|>${p.suffix}<|fim_middle|>`;
      if (p.snippets.length === 0) return fim;
      const files = p.snippets.map((s) => `<|file_sep|>${s.path}\n${s.text}\n`).join('');
      return `<|repo_name|>${repoName}\n${files}<|file_sep|>${p.path}\n${fim}`;
    },
    stop: ['<|endoftext|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|fim_pad|>', '<|file_sep|>', '<|repo_name|>', '<|im_start|>', '<|im_end|>'],
  },
  // https://huggingface.co/deepseek-ai/deepseek-coder-6.7b-base (code insertion)
  deepseek: {
    name: 'deepseek',
    render: (p) => `${ds('fim begin')}${snippetsAsComments(p)}${p.prefix}${ds('fim hole')}${p.suffix}${ds('fim end')}`,
    stop: [ds('fim begin'), ds('fim hole'), ds('fim end'), ds('end of sentence'), '<|EOT|>'],
  },
  // StarCoder2 paper §5.1: repository context as `<file_sep>path\ncontent`, then the FIM file.
  starcoder2: {
    name: 'starcoder2',
    render: (p) => {
      const fim = `<fim_prefix>${p.prefix}<fim_suffix>${p.suffix}<fim_middle>`;
      if (p.snippets.length === 0) return fim;
      const files = p.snippets.map((s) => `<file_sep>${s.path}\n${s.text}\n`).join('');
      return `<repo_name>${repoName}${files}<file_sep>${p.path}\n${fim}`;
    },
    stop: ['<|endoftext|>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>', '<repo_name>'],
  },
  // Mistral's FIM order is suffix first; the tokenizer adds <s>.
  codestral: {
    name: 'codestral',
    render: (p) => `[SUFFIX]${p.suffix}[PREFIX]${snippetsAsComments(p)}${p.prefix}`,
    stop: ['[PREFIX]', '[SUFFIX]', '</s>'],
  },
  // Code Llama infilling: `<PRE> {pre} <SUF>{suf} <MID>`, the spaces are part of the format.
  codellama: {
    name: 'codellama',
    render: (p) => `<PRE> ${snippetsAsComments(p)}${p.prefix} <SUF>${p.suffix} <MID>`,
    stop: ['<EOT>', '<PRE>', '<SUF>', '<MID>'],
  },
};

export function fimTemplate(name: FimTemplateName): FimTemplate {
  return templates[name];
}

/** The family a model name belongs to, or null when the name says nothing of FIM support. */
export function fimTemplateForModel(model: string): FimTemplateName | null {
  const m = model.toLowerCase();
  // CodeQwen1.5 used StarCoder's marks; Qwen2.5-Coder and later use `<|fim_…|>`.
  if (m.includes('codeqwen')) return 'starcoder2';
  if (m.includes('qwen') && m.includes('coder')) return 'qwen';
  if (m.includes('deepseek') && m.includes('coder')) return 'deepseek';
  if (m.includes('starcoder')) return 'starcoder2';
  if (m.includes('codestral')) return 'codestral';
  if (m.includes('codellama') || m.includes('code-llama') || m.includes('code_llama')) return 'codellama';
  return null;
}

const hashComment = /\.(py|rb|sh|bash|zsh|ya?ml|toml|r|pl|ex|exs|nim|cr|jl|ps1|mk|dockerfile|conf|ini)$|(^|\/)(Makefile|Dockerfile)$/i;
const dashComment = /\.(sql|lua|hs|elm|ada)$/i;

/** How a line comment starts in the file's language, by extension. */
export function lineCommentFor(path: string): string {
  if (hashComment.test(path)) return '#';
  if (dashComment.test(path)) return '--';
  return '//';
}
