import type { Disk, DiskEvent } from '../src/core/ports/Disk';
import { contentDigest } from '../src/project/NodeDisk';

/**
 * A folder in memory, for FolderSync's tests: its watcher reports changes only when the test
 * calls `deliver()`, so a test decides how disk events interleave with people's edits. Writes
 * made through the port are reported too, as a real watcher reports our own writes.
 */
export class MemoryDisk implements Disk {
  readonly root = '/memory';
  readonly files = new Map<string, { bytes: Uint8Array; mode: number }>();
  private pending: DiskEvent[] = [];
  private listener: ((events: DiskEvent[]) => void) | null = null;
  writes = 0;

  /** Something other than Flint changes the folder (an editor, git, a formatter). */
  external(path: string, text: string | null): void {
    const existed = this.files.has(path);
    if (text === null) this.files.delete(path);
    else this.files.set(path, { bytes: new TextEncoder().encode(text), mode: this.files.get(path)?.mode ?? 0o644 });
    this.pending.push({ type: text === null ? 'delete' : existed ? 'update' : 'create', path });
  }

  externalRename(from: string, to: string): void {
    const file = this.files.get(from);
    if (!file) return;
    this.files.delete(from);
    this.files.set(to, file);
    this.pending.push({ type: 'delete', path: from }, { type: 'create', path: to });
  }

  text(path: string): string | null {
    const file = this.files.get(path);
    return file ? new TextDecoder('utf-8', { ignoreBOM: true }).decode(file.bytes) : null;
  }

  /** Hands the watcher what happened since the last delivery. */
  deliver(): void {
    const events = this.pending;
    this.pending = [];
    if (events.length) this.listener?.(events);
  }

  async list(under?: string): Promise<Array<{ path: string; size: number }>> {
    return [...this.files].filter(([path]) => !this.ignored(path) && (under === undefined || path.startsWith(`${under}/`))).map(([path, file]) => ({ path, size: file.bytes.byteLength }));
  }

  async read(path: string): Promise<{ bytes: Uint8Array; mode: number } | null> {
    return this.files.get(path) ?? null;
  }

  readSync(path: string): { bytes: Uint8Array; mode: number } | null {
    return this.files.get(path) ?? null;
  }

  async write(path: string, bytes: Uint8Array, mode?: number, expected?: string | null): Promise<boolean> {
    const existed = this.files.has(path);
    if (expected !== undefined && (existed ? contentDigest(this.files.get(path)!.bytes) : null) !== expected) return false;
    this.files.set(path, { bytes, mode: mode ?? this.files.get(path)?.mode ?? 0o644 });
    this.writes++;
    this.pending.push({ type: existed ? 'update' : 'create', path });
    return true;
  }

  async remove(path: string): Promise<void> {
    if (this.files.delete(path)) this.pending.push({ type: 'delete', path });
  }

  async rename(from: string, to: string): Promise<void> {
    const file = this.files.get(from);
    if (!file) return;
    this.files.delete(from);
    this.files.set(to, file);
    this.pending.push({ type: 'delete', path: from }, { type: 'create', path: to });
  }

  async watch(onEvents: (events: DiskEvent[]) => void): Promise<() => Promise<void>> {
    this.listener = onEvents;
    return async () => {
      this.listener = null;
    };
  }

  ignored(path: string): boolean {
    return path.split('/').some((part) => part === 'node_modules' || part === '.git');
  }

  outsideWorkspace(path: string): string | null {
    return this.ignored(path) ? `"${path}" is ignored, so it is outside the workspace.` : null;
  }
}
