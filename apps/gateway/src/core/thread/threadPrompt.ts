import type { ModelMessage } from '../ports/ModelProvider';

/** ~3.5 characters per token for code: an estimate, on the safe side for the window check. */
export const charsPerToken = 3.5;

/** An earlier message of the thread, as the prompt retells it. */
export interface HistoryEntry {
  kind: 'user' | 'assistant' | 'tool' | 'notice';
  text: string;
  author?: string;
  summary?: string;
}

export interface ThreadPromptInput {
  /** `tools`: the model calls tools; `text`: it writes patches in its answer (no tool calling). */
  mode: 'tools' | 'text';
  paths: string[];
  history: HistoryEntry[];
  /** The file on screen (its selection, if any, as 1-based lines) and @-mentioned files. */
  open: { path: string; text: string; selection: { startLine: number; endLine: number; text: string } | null } | null;
  mentions: Array<{ path: string; text: string }>;
  /** Hunks people rejected since, as RejectionHistory words them. */
  rejected: string[];
  message: string;
  by: string;
  contextTokens: number;
  maxOutputTokens: number;
}

export interface ThreadPrompt {
  messages: ModelMessage[];
  usedTokens: number;
  /** What was left out to fit the window, said in the thread; null when nothing was. */
  trimmed: string | null;
}

const toolsSystem = `You are Flint's coding agent. You work in a shared workspace: several people are in the room, they see your edits land in their editors as you write them, and any of them may interrupt or redirect you while you write.
Look before you change: use list_files, search and read_file to find and read what you need. Change files only with apply_patch (one patch may touch several files; add files with *** Add File). Give each hunk enough context lines to be found exactly once; if a hunk is reported as not applied, read the file again and send a new patch for it.
Keep explanations short and in Markdown. When you are done, say in a sentence or two what you changed.`;

const textSystem = `You are Flint's coding agent in a shared workspace. You cannot call tools. To change files, write a patch in your answer:
*** Begin Patch
*** Update File: path/to/file.ts
@@ a line just above the change
 context line
-old line
+new line
*** Add File: path/to/new.ts
+its first line
*** End Patch
Keep explanations short.`;

const tokensOf = (text: string) => Math.ceil(text.length / charsPerToken);

function fileBlock(path: string, text: string): string {
  return `<file path="${path}">\n${text}${text.endsWith('\n') || !text ? '' : '\n'}</file>`;
}

/**
 * The request for a thread turn, stable prefix first (system, the file list), then the thread so
 * far, then this message with its context, so provider prompt caches hit from one turn to the
 * next. When it does not fit the window, the oldest messages go first, then mentioned files,
 * then the open file is cut around the selection; `trimmed` says what went.
 */
export function buildThreadPrompt(input: ThreadPromptInput): ThreadPrompt {
  const budget = Math.max(1024, input.contextTokens - input.maxOutputTokens - 256);
  // The file list takes at most a quarter of the window (the demo model's is 2k tokens).
  const listed: string[] = [];
  let listChars = 0;
  for (const path of input.paths) {
    if (listed.length >= 2000 || (listChars + path.length + 1) / charsPerToken > budget / 4) break;
    listed.push(path);
    listChars += path.length + 1;
  }
  const system = `${input.mode === 'tools' ? toolsSystem : textSystem}\n\nFiles in the workspace (${input.paths.length}):\n${listed.join('\n')}${input.paths.length > listed.length ? '\n…' : ''}`;

  const history = retell(input.history);
  const trimmed: string[] = [];
  let mentions = input.mentions.slice();
  let open = input.open;
  const context = () => {
    const parts: string[] = [];
    if (open) {
      const where = open.selection ? `, lines ${open.selection.startLine}-${open.selection.endLine} selected` : '';
      parts.push(`The file on screen (${open.path}${where}):\n${fileBlock(open.path, open.text)}`);
      if (open.selection) parts.push(`The selection:\n${fileBlock(open.path, open.selection.text)}`);
    }
    for (const mention of mentions) parts.push(`@${mention.path}:\n${fileBlock(mention.path, mention.text)}`);
    if (input.rejected.length) parts.push(`Since your last answer, people rejected some of your changes:\n${input.rejected.join('\n')}`);
    return parts.join('\n\n');
  };
  const request = () => `${context()}\n\n${input.by}: ${input.message}`.trim();
  const size = () => tokensOf(system) + history.reduce((n, m) => n + tokensOf(m.content) + 4, 0) + tokensOf(request()) + 8;

  let dropped = 0;
  while (size() > budget && history.length > 0) {
    history.shift();
    dropped++;
  }
  // The thread must start with a person's message (a provider refuses an answer without a question).
  while (history[0]?.role === 'assistant') {
    history.shift();
    dropped++;
  }
  if (dropped) trimmed.push(`${dropped} older message${dropped === 1 ? '' : 's'} of the thread`);
  while (size() > budget && mentions.length > 0) {
    trimmed.push(`@${mentions[mentions.length - 1]!.path}`);
    mentions = mentions.slice(0, -1);
  }
  if (size() > budget && open) {
    const over = (size() - budget) * charsPerToken;
    const keep = Math.max(0, open.text.length - over - 200);
    const center = open.selection ? open.text.indexOf(open.selection.text) : 0;
    const from = Math.max(0, Math.min(open.text.length - keep, center - Math.floor(keep / 2)));
    open = { ...open, text: open.text.slice(from, from + keep), selection: open.selection };
    trimmed.push(`most of ${open.path} (kept ${Math.round(keep / 1000)}k characters around the selection)`);
  }
  const messages: ModelMessage[] = [{ role: 'system', content: system }, ...history, { role: 'user', content: request() }];
  return { messages, usedTokens: size(), trimmed: trimmed.length ? `Left out to fit the model's window: ${trimmed.join(', ')}.` : null };
}

/** The thread so far as chat messages: people's words, the model's answers with its tool steps noted where they ran. */
function retell(entries: HistoryEntry[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let steps: string[] = [];
  const pushAssistant = (text: string) => {
    // The steps ran before this text was written: told after it, the model would read that it
    // announced a result and then went to get it.
    const content = [steps.length ? `(Tool steps: ${steps.join('; ')}.)` : '', text.trim()].filter(Boolean).join('\n');
    steps = [];
    if (!content) return;
    const last = out[out.length - 1];
    if (last?.role === 'assistant') last.content = `${last.content}\n${content}`;
    else out.push({ role: 'assistant', content });
  };
  for (const entry of entries) {
    if (entry.kind === 'tool') steps.push(entry.summary ?? 'a tool call');
    else if (entry.kind === 'assistant') pushAssistant(entry.text);
    else if (entry.kind === 'user') {
      if (steps.length) pushAssistant('');
      const line = `${entry.author ?? 'Someone'}: ${entry.text}`;
      const last = out[out.length - 1];
      if (last?.role === 'user') last.content = `${last.content}\n${line}`;
      else out.push({ role: 'user', content: line });
    }
  }
  if (steps.length) pushAssistant('');
  return out;
}
