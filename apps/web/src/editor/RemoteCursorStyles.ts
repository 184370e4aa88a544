import type { DocHandle } from '@flint/client';

const hexColor = /^#[0-9a-f]{6}$/i;
/** How long a name stays on a cursor after it moves: long enough to read, then out of the way. */
const labelVisibleMs = 2_500;

type AwarenessChange = { added: number[]; updated: number[]; removed: number[] };

/** A CSS string literal that no display name can break out of. */
function cssString(text: string): string {
  return '"' + [...text].map((ch) => (/[\w .-]/.test(ch) ? ch : `\\${ch.codePointAt(0)?.toString(16)} `)).join('') + '"';
}

/**
 * y-monaco marks a remote selection with `yRemoteSelection-<clientId>` classes; this keeps one
 * <style> element with each peer's colour and name for them. Awareness client ids differ per
 * document, so it reads the states of every open file.
 */
export class RemoteCursorStyles {
  private readonly element = document.createElement('style');
  private readonly handles = new Map<DocHandle, (change: AwarenessChange) => void>();
  /** When each remote cursor last moved; awareness client ids are random, so one map serves all docs. */
  private readonly movedAt = new Map<number, number>();
  private frame: number | null = null;
  private expiryTimer: ReturnType<typeof setTimeout> | null = null;
  private css = '';

  constructor() {
    this.element.dataset.flint = 'remote-cursors';
    document.head.append(this.element);
  }

  track(handle: DocHandle): void {
    const onChange = ({ added, updated, removed }: AwarenessChange) => {
      const now = performance.now();
      for (const clientId of [...added, ...updated]) this.movedAt.set(clientId, now);
      for (const clientId of removed) {
        this.movedAt.delete(clientId);
      }
      this.schedule();
    };
    this.handles.set(handle, onChange);
    handle.awareness.on('change', onChange);
    this.schedule();
  }

  untrack(handle: DocHandle): void {
    const onChange = this.handles.get(handle);
    if (onChange) handle.awareness.off('change', onChange);
    this.handles.delete(handle);
  }

  /** Cursor moves arrive many times a second; the style text changes far less often. */
  private readonly schedule = (): void => {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  };

  private render(): void {
    const rules: string[] = [];
    const now = performance.now();
    let nextExpiry = Infinity;
    for (const handle of this.handles.keys()) {
      for (const [clientId, state] of handle.awareness.getStates()) {
        if (clientId === handle.doc.clientID) continue;
        const user = state.user as { name?: unknown; color?: unknown; agent?: unknown } | undefined;
        const color = typeof user?.color === 'string' && hexColor.test(user.color) ? user.color : '#9aa3b2';
        const name = typeof user?.name === 'string' ? user.name.slice(0, 40) : 'Someone';
        const agent = user?.agent === true;
        // A person's name shows while their cursor moves, then goes out of the way; the agent's
        // always shows, so no one mistakes its writing for a person's.
        const hideAt = agent ? Infinity : (this.movedAt.get(clientId) ?? -Infinity) + labelVisibleMs;
        if (hideAt > now && hideAt !== Infinity) nextExpiry = Math.min(nextExpiry, hideAt);
        if (agent) {
          rules.push(
            `.yRemoteSelection-${clientId}{background-color:${color}38}`,
            // A still glow: an animated one would repaint the editor every frame while the agent writes.
            `.yRemoteSelectionHead-${clientId}{border-color:${color};box-shadow:0 0 8px 1px ${color}aa}`,
            `.yRemoteSelectionHead-${clientId}::after{content:${cssString(`✦ ${name}`)};background:${color};opacity:1}`,
          );
          continue;
        }
        rules.push(
          `.yRemoteSelection-${clientId}{background-color:${color}38}`,
          `.yRemoteSelectionHead-${clientId}{border-color:${color}}`,
          `.yRemoteSelectionHead-${clientId}::after{content:${cssString(name)};background:${color};opacity:${hideAt > now ? 1 : 0}}`,
        );
      }
    }
    if (this.expiryTimer !== null) clearTimeout(this.expiryTimer);
    this.expiryTimer = nextExpiry === Infinity ? null : setTimeout(this.schedule, nextExpiry - now + 16);
    const css = rules.join('\n');
    if (css !== this.css) {
      this.css = css;
      this.element.textContent = css;
    }
  }

  dispose(): void {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    if (this.expiryTimer !== null) clearTimeout(this.expiryTimer);
    for (const handle of [...this.handles.keys()]) this.untrack(handle);
    this.element.remove();
  }
}
