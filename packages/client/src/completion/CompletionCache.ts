/**
 * Suggestions by where they were made — (file, the end of the prefix, the start of the suffix)
 * — least recently used out first. A backspace, an undo or a return to a spot shows the
 * suggestion again without asking the model.
 */
export interface CachedSuggestion {
  requestId: number;
  text: string;
}

export interface CacheKeyParts {
  fileId: string;
  prefix: string;
  suffix: string;
}

export class CompletionCache {
  private readonly entries = new Map<string, CachedSuggestion>();

  constructor(
    private readonly capacity = 64,
    private readonly prefixTailChars = 256,
    private readonly suffixHeadChars = 96,
  ) {}

  key(at: CacheKeyParts): string {
    return `${at.fileId}\u0000${at.prefix.slice(-this.prefixTailChars)}\u0000${at.suffix.slice(0, this.suffixHeadChars)}`;
  }

  get(at: CacheKeyParts): CachedSuggestion | undefined {
    const key = this.key(at);
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(at: CacheKeyParts, value: CachedSuggestion): void {
    const key = this.key(at);
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
