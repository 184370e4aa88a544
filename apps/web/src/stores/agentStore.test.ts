import type { TurnInfo } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { describePromptFailure, describeTurnError, retryText } from './agentMessages';
import { selectErrorTurn, selectHudTurn, selectStreamingTurn, useAgent } from './agentStore';

function turn(overrides: Partial<TurnInfo> & Pick<TurnInfo, 'turnId'>): TurnInfo {
  return {
    fileId: 'f1',
    status: 'done',
    route: 'fast',
    model: 'spark',
    instruction: 'do it',
    by: 'Alice',
    agentClient: 7,
    startedAt: 0,
    ttftMs: 120,
    outputTokens: 10,
    tokensPerSecond: 1000,
    note: null,
    error: null,
    ...overrides,
  };
}

function state(turns: TurnInfo[], dismissed: string[] = []) {
  return { ...useAgent.getState(), turns: new Map(turns.map((t) => [t.turnId, t])), dismissedErrors: new Set(dismissed) };
}

describe('agent store selectors', () => {
  it('the HUD shows the turn streaming in the active file, else its latest, else the workspace\'s latest', () => {
    const older = turn({ turnId: 'a', startedAt: 1 });
    const elsewhere = turn({ turnId: 'b', fileId: 'f2', startedAt: 5 });
    const streaming = turn({ turnId: 'c', status: 'streaming', startedAt: 3 });
    expect(selectHudTurn(state([older, elsewhere, streaming]), 'f1')?.turnId).toBe('c');
    expect(selectHudTurn(state([older, elsewhere]), 'f1')?.turnId).toBe('a');
    expect(selectHudTurn(state([older, elsewhere]), 'f3')?.turnId).toBe('b');
    expect(selectStreamingTurn(state([older, streaming]), 'f2')).toBeNull();
  });

  it('shows a failure until dismissed or until someone tries again in that file', () => {
    const failed = turn({ turnId: 'a', status: 'failed', startedAt: 1, error: { code: 'auth', message: 'bad key', retryAfterMs: null } });
    expect(selectErrorTurn(state([failed]))?.turnId).toBe('a');
    expect(selectErrorTurn(state([failed], ['a']))).toBeNull();
    expect(selectErrorTurn(state([failed, turn({ turnId: 'b', status: 'streaming', startedAt: 2 })]))).toBeNull();
    expect(selectErrorTurn(state([failed, turn({ turnId: 'b', fileId: 'f2', startedAt: 2 })]))?.turnId).toBe('a');
  });
});

describe('agent messages', () => {
  it('says when to retry in seconds, rounding up', () => {
    expect(retryText(2_100)).toBe('Try again in 3 s.');
    expect(retryText(null)).toBe('Try again in a moment.');
    expect(retryText(600_000)).toBe('Try again in 10 min.');
  });

  it('turns every request refusal into a sentence with what to do', () => {
    expect(describePromptFailure({ code: 'not_configured', message: '' })).toMatch(/^No model is configured/);
    expect(describePromptFailure({ code: 'busy', message: '' })).toMatch(/already writing/);
    expect(describePromptFailure({ code: 'rate_limited', message: '', retryAfterMs: 4000 })).toMatch(/Try again in 4 s\.$/);
  });

  it('explains every provider failure by its code', () => {
    expect(describeTurnError({ code: 'auth', message: 'x', retryAfterMs: null }).title).toMatch(/API key/);
    expect(describeTurnError({ code: 'rate_limited', message: 'x', retryAfterMs: 7000 }).detail).toBe('Try again in 7 s.');
    expect(describeTurnError({ code: 'quota', message: 'x', retryAfterMs: null }).title).toMatch(/quota/);
    expect(describeTurnError({ code: 'circuit_open', message: 'x', retryAfterMs: null }).title).toMatch(/paused/);
    expect(describeTurnError({ code: 'context_length', message: 'x', retryAfterMs: null }).detail).toMatch(/smaller region/);
  });
});
