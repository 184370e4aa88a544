import { defaultPlaygroundConfig, type PlaygroundConfig } from './Playground';

/** Playground mode's settings from the command line and the environment (README, "Playground mode"). */
export interface PlaygroundSettings {
  templateFolder: string;
  config: PlaygroundConfig;
  /** Model tokens per workspace per rolling hour, and for the whole gateway per rolling hour. */
  tokensPerWorkspaceHour: number;
  tokensPerHour: number;
}

type Env = Record<string, string | undefined>;

export class PlaygroundSettingsError extends Error {}

function positive(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new PlaygroundSettingsError(`${name} must be a positive number, not "${raw}".`);
  return value;
}

/** Null when playground mode is off (no `--playground`, no FLINT_PLAYGROUND). */
export function playgroundSettings(cli: string | undefined, env: Env): PlaygroundSettings | null {
  const templateFolder = cli ?? (env.FLINT_PLAYGROUND?.trim() || undefined);
  if (templateFolder === undefined) return null;
  return {
    templateFolder,
    config: {
      idleMs: positive(env, 'FLINT_PLAYGROUND_IDLE_MINUTES', defaultPlaygroundConfig.idleMs / 60_000) * 60_000,
      maxLive: Math.floor(positive(env, 'FLINT_PLAYGROUND_MAX_WORKSPACES', defaultPlaygroundConfig.maxLive)),
      perAddressPerHour: Math.floor(positive(env, 'FLINT_PLAYGROUND_PER_ADDRESS_HOUR', defaultPlaygroundConfig.perAddressPerHour)),
      sweepIntervalMs: defaultPlaygroundConfig.sweepIntervalMs,
      storageQuotaBytes: Math.floor(positive(env, 'FLINT_PLAYGROUND_QUOTA_MB', defaultPlaygroundConfig.storageQuotaBytes! / 1024 / 1024) * 1024 * 1024),
    },
    tokensPerWorkspaceHour: positive(env, 'FLINT_PLAYGROUND_TOKENS_PER_WORKSPACE_HOUR', 200_000),
    tokensPerHour: positive(env, 'FLINT_PLAYGROUND_TOKENS_PER_HOUR', 2_000_000),
  };
}
