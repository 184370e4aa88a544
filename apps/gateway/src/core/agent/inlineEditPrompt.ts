import type { ModelMessage } from '../ports/ModelProvider';

export interface InlineEditInput {
  path: string;
  text: string;
  start: number;
  end: number;
  instruction: string;
  /** Earlier turns of this thread on this workspace, oldest first (e.g. rejections). */
  history: string[];
  /** The model's window, in tokens. */
  contextTokens: number;
  maxOutputTokens: number;
}

export interface BuiltPrompt {
  messages: ModelMessage[];
  /** The text around the region, trimmed to the same window: for fill-in-the-middle models. */
  infill: { prefix: string; suffix: string };
  /** Said to the user when the file had to be trimmed to fit. */
  note: string | null;
}

const system = `You are Flint's inline code editor, pair-programming inside a shared editor.
You receive a file with a region marked <selection> … </selection> and an instruction.
Reply with ONLY the new text of the region: no explanations, no markdown fences, no markers.
Keep the surrounding indentation and style. If the instruction needs no change, repeat the region exactly.`;

/** ~3.5 characters per token for code: an estimate, on the safe side for the window check. */
const charsPerToken = 3.5;

/**
 * Builds the messages for a rewrite, stable prefix first (system prompt, then the file), so
 * provider prompt caches hit across turns; the instruction comes last. When the file does not
 * fit the window, context is trimmed from the far ends first, keeping the region whole.
 */
export function buildInlineEditPrompt(input: InlineEditInput): BuiltPrompt {
  const budgetChars = Math.floor((input.contextTokens - input.maxOutputTokens - 512) * charsPerToken);
  const region = input.text.slice(input.start, input.end);
  let before = input.text.slice(0, input.start);
  let after = input.text.slice(input.end);
  let note: string | null = null;
  const fixed = system.length + region.length + input.instruction.length + input.path.length + 200;
  const history = input.history.slice();
  let historyChars = history.reduce((n, h) => n + h.length, 0);
  while (history.length > 0 && fixed + before.length + after.length + historyChars > budgetChars) {
    historyChars -= history.shift()!.length;
    note = 'Older turns of the thread were left out to fit the model\'s window.';
  }
  const room = budgetChars - fixed - historyChars;
  if (before.length + after.length > room) {
    const keepBefore = Math.max(0, Math.min(before.length, Math.floor(room * 0.6)));
    const keepAfter = Math.max(0, Math.min(after.length, room - keepBefore));
    before = before.slice(before.length - keepBefore);
    after = after.slice(0, keepAfter);
    note = `The file was trimmed to ${Math.round((before.length + region.length + after.length) / 1000)}k characters around the selection to fit the model's window.`;
  }
  const messages: ModelMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: `File: ${input.path}\n\n${before}<selection>${region}</selection>${after}` },
  ];
  for (const line of history) messages.push({ role: 'user', content: line });
  messages.push({ role: 'user', content: `Instruction: ${input.instruction}` });
  return { messages, note, infill: { prefix: before, suffix: after } };
}
