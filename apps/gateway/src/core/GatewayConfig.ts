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
   * What one link, one client address and all sessions together may hold, so that no one
   * link opens unlimited sessions or makes every joiner receive megabytes of cursors.
   */
  sessions: SessionCaps;
  /** What uploads may leave a workspace's files holding in all, unless its owner sets another quota. */
  storageQuotaBytes: number;
  /**
   * In a cluster, how often a gateway asks the store whether the links of its open sessions were
   * revoked: the longest a revocation whose announcement was lost leaves their sessions open.
   */
  linkCheckIntervalMs: number;
  agent: AgentConfig;
}

export interface SessionCaps {
  /** Open sessions (tabs) per link on this gateway; past it, 4430 (retryable). */
  perLink: number;
  /** Open sessions per client address (the socket's, or the balancer's X-Forwarded-For). */
  perAddress: number;
  /** Bytes of updates waiting for what they build on, all sessions together (each holds ≤ maxFrameBytes). */
  waitingBytes: number;
  /** Cursors and presence states a session receives when it opens a doc. */
  snapshotStates: number;
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
  /** Tokens per rolling hour for the whole gateway, every workspace together (a public playground's bill). */
  instanceTokensPerHour: number;
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
  sessions: {
    perLink: 200,
    perAddress: 400,
    waitingBytes: 64 * 1024 * 1024,
    snapshotStates: 256,
  },
  storageQuotaBytes: 100 * 1024 * 1024,
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
    instanceTokensPerHour: Number.POSITIVE_INFINITY,
  },
};
