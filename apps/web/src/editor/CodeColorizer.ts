/** Colours `code` as HTML for a language the editor knows (Monaco's `colorize`). */
export type Colorize = (code: string, languageId: string) => Promise<string>;

/** The editor's language id for a fence's language ("ts" → "typescript"), or null if it has none. */
export type ResolveLanguage = (fenceLanguage: string) => string | null;

const keyOf = (language: string, code: string) => `${language}\u0000${code}`;

/**
 * Code blocks of the agent's answers, coloured by the editor's own tokenizer, asynchronously,
 * and cached by (language, code): an answer re-renders every frame while it streams, and its
 * finished blocks must not be coloured again each time. Least recently used entries go first.
 */
export class CodeColorizer {
  private readonly cache = new Map<string, string>();
  private readonly pending = new Map<string, Promise<void>>();
  /** Blocks the tokenizer failed on: they stay plain rather than be tried on every render. */
  private readonly failed = new Set<string>();

  constructor(
    private readonly colorize: Colorize,
    private readonly resolveLanguage: ResolveLanguage,
    private readonly maxEntries = 256,
  ) {}

  /** The coloured HTML if it is ready; null otherwise (then `request` it). */
  lookup(code: string, language: string): string | null {
    const key = keyOf(language, code);
    const html = this.cache.get(key);
    if (html === undefined) return null;
    this.cache.delete(key); // to the back: most recently used
    this.cache.set(key, html);
    return html;
  }

  /** Whether a block is worth `request`ing: its language is known, and it is neither cached nor failed. */
  wants(code: string, language: string): boolean {
    const key = keyOf(language, code);
    return !this.cache.has(key) && !this.failed.has(key) && this.resolveLanguage(language) !== null;
  }

  /**
   * Colours a block unless it is cached or already under way; resolves once it is cached (or
   * could not be coloured: then it stays plain and is not tried again).
   */
  request(code: string, language: string): Promise<void> {
    const key = keyOf(language, code);
    if (this.cache.has(key) || this.failed.has(key)) return Promise.resolve();
    const running = this.pending.get(key);
    if (running) return running;
    const languageId = this.resolveLanguage(language);
    if (languageId === null) return Promise.resolve();
    const job = this.colorize(code, languageId)
      .then(
        (html) => this.store(key, html),
        // Plain text is still right; a tokenizer that fails once will fail again.
        (error: unknown) => {
          if (this.failed.size < this.maxEntries) this.failed.add(key);
          console.warn(`Flint: could not colour a ${language} block`, error);
        },
      )
      .finally(() => this.pending.delete(key));
    this.pending.set(key, job);
    return job;
  }

  private store(key: string, html: string): void {
    this.cache.set(key, html);
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }
}
