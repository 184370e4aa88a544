import type { AgentErrorCode, RequestErrorCode, TurnInfo } from '@flint/protocol';

/**
 * What the user reads when the agent cannot help: a sentence that says what happened and what
 * to do, chosen by typed code (never by matching the gateway's text, STYLE "Errors"). The
 * gateway's own message is the fallback for codes that have nothing better to say.
 */

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
const mod = isMac ? '⌘' : 'Ctrl';

/** The agent's keys as tooltips spell them (AgentController and the agent panel bind them); the panel's own is in the key table (commands/keybindings.ts). */
export const agentShortcuts = {
  prompt: `${mod}+K`,
  acceptHunk: 'Tab',
  acceptAll: `${mod}+Enter`,
  rejectAll: `${mod}+Shift+Backspace`,
  stop: 'Esc',
  queue: isMac ? '⌥+Enter' : 'Alt+Enter',
};

export function retryText(retryAfterMs: number | null | undefined): string {
  if (retryAfterMs === null || retryAfterMs === undefined || retryAfterMs <= 0) return 'Try again in a moment.';
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  if (seconds < 120) return `Try again in ${seconds} s.`;
  return `Try again in ${Math.ceil(seconds / 60)} min.`;
}

export interface PromptFailure {
  code: RequestErrorCode | 'disconnected';
  message: string;
  retryAfterMs?: number;
}

/** Why a prompt was refused before the model ran; shown inside the inline prompt box. */
export function describePromptFailure(failure: PromptFailure): string {
  switch (failure.code) {
    case 'not_configured':
      return 'No model is configured for this route. Ask the workspace owner to set OPENAI_API_KEY or FLINT_PROVIDER on the gateway, or pick the other route.';
    case 'busy':
      return 'The agent is already writing in this file. Stop it first (Esc), or wait for it to finish.';
    case 'rate_limited':
      return `Too many prompts in a row. ${retryText(failure.retryAfterMs)}`;
    case 'budget_exceeded':
      return `${failure.message} Ask the workspace owner to raise the budget, or try again tomorrow.`;
    case 'forbidden':
      return 'This link can only view the workspace. Ask for an editor link to use the AI.';
    case 'disconnected':
      return 'Not connected to the gateway. Wait for the connection to come back, then press Enter again.';
    case 'invalid_range':
      return 'The selection changed before the prompt arrived. Select the code again and retry.';
    case 'not_found':
      return 'This file no longer exists.';
    case 'invalid_path':
    case 'exists':
    case 'too_many_files':
      return failure.message;
  }
  // A code newer than this table: the gateway's own sentence is the best there is.
  return failure.message;
}

export interface TurnErrorText {
  title: string;
  detail: string;
}

/** Why a turn failed while the model ran; shown in the error banner to everyone in the room. */
export function describeTurnError(error: NonNullable<TurnInfo['error']>): TurnErrorText {
  // A turn that fails mid-answer applies everything the model sent and keeps the rest of the
  // original ([P20], [P23]); a failure before the first token leaves nothing, hence "anything".
  const kept = 'Anything it wrote before that stays in the file for review.';
  const text = (code: AgentErrorCode): TurnErrorText => {
    switch (code) {
      case 'not_configured':
        return { title: 'No model is configured.', detail: 'Set OPENAI_API_KEY or FLINT_PROVIDER on the gateway and restart it, or pick the other route.' };
      case 'auth':
        return { title: 'The model provider rejected the API key.', detail: 'Check the key configured on the gateway (OPENAI_API_KEY or the route\'s key) and restart it.' };
      case 'rate_limited':
        return { title: 'The model provider is rate limiting requests.', detail: retryText(error.retryAfterMs) };
      case 'quota':
        return { title: 'The model provider account is out of quota.', detail: `Add credit to the provider account, or switch the route to another provider. ${kept}` };
      case 'context_length':
        return { title: 'The prompt is too long for the model.', detail: 'Select a smaller region, or use a route whose model has a larger window.' };
      case 'overloaded':
        return { title: 'The model provider is overloaded or down.', detail: `${retryText(error.retryAfterMs)} Or switch to the other route. ${kept}` };
      case 'circuit_open':
        return { title: 'The model provider keeps failing, so Flint paused requests to it.', detail: `${retryText(error.retryAfterMs)} Or switch to the other route.` };
      case 'network':
        return { title: 'The gateway lost its connection to the model provider.', detail: `${kept} Try again.` };
      case 'bad_response':
        return { title: 'The model provider sent a response Flint could not read.', detail: `${kept} Try again; if it keeps happening, check the provider's status.` };
      case 'budget_exceeded':
        return { title: 'The token budget for today is spent.', detail: `Ask the workspace owner to raise it, or try again tomorrow. ${kept}` };
      case 'internal':
        return { title: 'The gateway hit an internal error.', detail: `${kept} Try again.` };
    }
  };
  return text(error.code);
}

/** Why the agent thread refused a message; shown under the panel's input. */
export function describeThreadFailure(failure: PromptFailure): string {
  switch (failure.code) {
    case 'not_configured':
      return 'No model is configured for this route. Ask the workspace owner to configure a provider on the gateway (see the README), or pick the other route.';
    case 'busy':
      return 'The agent cannot take this message now. Wait for the current turn to finish, or queue it with Alt+Enter.';
    case 'rate_limited':
      return `Too many messages in a row. ${retryText(failure.retryAfterMs)}`;
    case 'budget_exceeded':
      return `${failure.message} Ask the workspace owner to raise the budget, or try again tomorrow.`;
    case 'forbidden':
      return 'This link can only view the workspace. Ask for an editor link to talk to the agent.';
    case 'disconnected':
      return 'Not connected to the gateway. Your message is still here: send it again once the connection is back.';
    case 'not_found':
      return `${failure.message} Check the files you mentioned, then send again.`;
    case 'invalid_range':
      return 'The selection changed before the message arrived. Select the code again, or remove the selection chip, and send again.';
    case 'invalid_path':
    case 'exists':
    case 'too_many_files':
      return failure.message;
  }
  // A code newer than this table: the gateway's own sentence is the best there is.
  return failure.message;
}
