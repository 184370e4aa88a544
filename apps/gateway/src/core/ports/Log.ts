export type LogLevel = 'info' | 'warn' | 'error';
/** Where the gateway says what happened: one line per event, with fields (main.ts writes JSON lines). */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;
