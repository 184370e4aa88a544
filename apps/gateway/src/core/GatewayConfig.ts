import type { Limits } from '@flint/protocol';

export interface GatewayConfig {
  limits: Limits;
  /** A room with no sessions stays loaded this long, so a reload does not reread SQLite. */
  idleUnloadMs: number;
  /** A connection must say hello within this time. */
  helloTimeoutMs: number;
  /** A document is compacted into one update after this many appended updates. */
  compactEveryUpdates: number;
  /**
   * Past this many bytes waiting in a session's socket, its docs' updates are held back and sent
   * as one catch-up update when the socket drains (Session.sendUpdate).
   */
  slowClientBytes: number;
  /**
   * In a cluster, how often a gateway asks the store whether the links of its open sessions were
   * revoked: the longest a revocation whose announcement was lost leaves their sessions open.
   */
  linkCheckIntervalMs: number;
  agent: AgentConfig;
}

export interface AgentConfig {
  /** The agent applies the model's text once per this interval, never per token (DESIGN §4). */
  flushIntervalMs: number;
  maxOutputTokens: number;
  /** Prompts per minute per link (all its tabs, on any gateway of a cluster). */
  promptsPerMinute: number;
  /** Token budgets per rolling day. */
  workspaceTokensPerDay: number;
  linkTokensPerDay: number;
  /** The agent thread's guardrails: tool calls and tokens (input + output, all steps) per turn, tokens per workspace-hour. */
  threadToolCallsPerTurn: number;
  threadTokensPerTurn: number;
  threadTokensPerWorkspaceHour: number;
}

export const defaultConfig: GatewayConfig = {
  limits: {
    maxFrameBytes: 1024 * 1024,
    maxDocBytes: 8 * 1024 * 1024,
    maxFiles: 1000,
    maxMessagesPerSecond: 300,
  },
  idleUnloadMs: 30_000,
  helloTimeoutMs: 10_000,
  compactEveryUpdates: 500,
  slowClientBytes: 256 * 1024,
  linkCheckIntervalMs: 2_000,
  agent: {
    flushIntervalMs: 8,
    maxOutputTokens: 4096,
    promptsPerMinute: 30,
    workspaceTokensPerDay: 5_000_000,
    linkTokensPerDay: 2_000_000,
    threadToolCallsPerTurn: 40,
    threadTokensPerTurn: 1_000_000,
    threadTokensPerWorkspaceHour: 3_000_000,
  },
};
