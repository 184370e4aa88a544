/** A place the caret was: a group, a file and a position in it. */
export interface NavigationEntry {
  group: number;
  path: string;
  line: number;
  column: number;
}

/** Moves within this many lines of the last place refine it rather than add one (VS Code uses 10). */
const nearLines = 10;
const maxEntries = 50;

/**
 * Alt+Left / Alt+Right: where the caret has been, across files, as VS Code's Go Back and Go
 * Forward keep it. Every caret move is offered; one near the current entry (same file, within
 * a few lines) updates that entry, one elsewhere (F12 into another file, Ctrl+End) adds a new
 * one and drops what Forward had.
 */
export class NavigationHistory {
  private entries: NavigationEntry[] = [];
  private index = -1;

  record(entry: NavigationEntry): void {
    const current = this.entries[this.index];
    if (current && current.path === entry.path && current.group === entry.group && Math.abs(current.line - entry.line) < nearLines) {
      this.entries[this.index] = entry;
      return;
    }
    this.entries = [...this.entries.slice(0, this.index + 1), entry].slice(-maxEntries);
    this.index = this.entries.length - 1;
  }

  /** The entry Back goes to, and makes it current; null at the start. */
  back(): NavigationEntry | null {
    if (this.index <= 0) return null;
    this.index--;
    return this.entries[this.index] ?? null;
  }

  forward(): NavigationEntry | null {
    if (this.index >= this.entries.length - 1) return null;
    this.index++;
    return this.entries[this.index] ?? null;
  }
}

const history = new NavigationHistory();
let applying = false;

/** Offers a caret move to this tab's history; moves made by Back and Forward themselves are not. */
export function recordNavigation(entry: NavigationEntry): void {
  if (!applying) history.record(entry);
}

/** Runs Back (-1) or Forward (1) with `go` putting the caret there; false when there is nowhere to go. */
export function navigate(step: -1 | 1, go: (entry: NavigationEntry) => boolean): boolean {
  for (;;) {
    const entry = step < 0 ? history.back() : history.forward();
    if (entry === null) return false;
    applying = true;
    try {
      // A place in a file since deleted is skipped.
      if (go(entry)) return true;
    } finally {
      applying = false;
    }
  }
}
