/**
 * B12's instrument in the IDE page, injected before its scripts run: when the file tree first
 * showed rows while holding every file of the workspace (its `data-files`; the tree is virtualised
 * and a large one starts collapsed, issue 36, so the page never has a row per file) (the start of
 * the animation frame that painted them, as bench/lib/browserProbe.ts counts frames), when the page's WebSocket opened and
 * what it received until then (the index arrives as the largest message), and its frames from then
 * on: the tree answers a click once the main thread is free. `interactiveAt` is the end of the
 * last frame longer than 50 ms before the first second of frames all ≤ 50 ms (Lighthouse's time
 * to interactive waits for such a quiet window, of 5 s); a page with no quiet second within 15 s
 * of the tree is given up on (`gaveUpAt`). Frames are counted here, by rAF, not
 * from long-animation-frame entries: those are delivered in a later task, so a waiter polling
 * for them can read "quiet" in the middle of a long freeze.
 * `installTreeProbe` runs in the page: it must not use anything from this module's scope; it
 * reads the number of files to wait for from `window.__benchTreeRows`.
 */

export interface TreeProbeData {
  /** Epoch ms: the page's navigation started. */
  navigationAt: number;
  domContentLoadedAt: number | null;
  socketOpenAt: number | null;
  /** [epoch ms, bytes] of every WebSocket message received before the tree was complete. */
  messages: Array<[number, number]>;
  /** Start of the first frame that painted any tree row. */
  firstRowAt: number | null;
  /** Start of the first frame that painted rows of a tree holding `__benchTreeRows` files. */
  treeAt: number | null;
  /** Rows (tree items) in the page then, and the files the tree held. */
  rows: number;
  fileRows: number;
  /** [start epoch ms, ms] of every frame longer than 50 ms after `treeAt`, until `interactiveAt`. */
  longFrames: Array<[number, number]>;
  interactiveAt: number | null;
  /** Set instead of `interactiveAt` when 15 s after the tree went by without a quiet second. */
  gaveUpAt: number | null;
}

export function installTreeProbe(): void {
  const expected = (window as unknown as { __benchTreeRows: number }).__benchTreeRows;
  const nav = () => performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
  const state: TreeProbeData = { navigationAt: performance.timeOrigin, domContentLoadedAt: null, socketOpenAt: null, messages: [], firstRowAt: null, treeAt: null, rows: 0, fileRows: 0, longFrames: [], interactiveAt: null, gaveUpAt: null };
  (window as unknown as { __benchTree: TreeProbeData }).__benchTree = state;
  const now = () => performance.timeOrigin + performance.now();
  const size = (data: unknown) => (data instanceof ArrayBuffer ? data.byteLength : data instanceof Blob ? data.size : String(data).length);
  const Native = window.WebSocket;
  // Listeners added here run before the app's own: the time is the message's arrival in the page.
  window.WebSocket = class extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      this.addEventListener('open', () => (state.socketOpenAt ??= now()));
      this.addEventListener('message', (event) => {
        if (state.treeAt === null) state.messages.push([now(), size(event.data)]);
      });
    }
  };
  let last = 0;
  let busyUntil = 0;
  const tick = (t: number) => {
    const at = performance.timeOrigin + t;
    if (state.treeAt !== null) {
      if (at - last > 50) {
        state.longFrames.push([last, at - last]);
        busyUntil = at;
      }
      last = at;
      if (at - Math.max(state.treeAt, busyUntil) >= 1000) {
        state.interactiveAt = Math.max(state.treeAt, busyUntil);
        return;
      }
      if (at - state.treeAt >= 15_000) {
        state.gaveUpAt = at;
        return;
      }
      requestAnimationFrame(tick);
      return;
    }
    const tree = document.querySelector('[data-testid="file-tree"]');
    if (tree && state.firstRowAt === null && tree.querySelector('[data-testid="tree-item"]')) state.firstRowAt = at;
    const files = Number(tree?.getAttribute('data-files') ?? 0);
    if (tree && files >= expected) {
      const rows = tree.querySelectorAll('[data-testid="tree-item"]');
      if (rows.length > 0) {
        state.treeAt = last = at;
        state.rows = rows.length;
        state.fileRows = files;
        const timing = nav();
        if (timing && timing.domContentLoadedEventEnd > 0) state.domContentLoadedAt = performance.timeOrigin + timing.domContentLoadedEventEnd;
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
