/**
 * B5's instrumentation, injected into every page before its scripts run (page.addInitScript):
 * - frames: every requestAnimationFrame callback time while recording (intervals = smoothness);
 * - long animation frames (PerformanceObserver 'long-animation-frame'): duration, blocking;
 * - Event Timing (PerformanceObserver 'event', threshold 16 ms): each key event's duration from
 *   the OS timestamp to the next paint, and how many keys were pressed;
 * - markers: a page (or, in the IDE, the editor hook `__FLINT_EDITOR_PROBE__`) reports when a
 *   stream marker became present; it reached the screen in the next animation frame — or, in
 *   an editor given to the hook, in the frame it became present in, when the editor redrew its
 *   text within that frame's callbacks after it (its text layer's DOM changed meanwhile);
 *   either way the time is the start of the frame that painted it;
 * - keystrokes and changes (B6 in the browser): when each key was pressed, and the frame after
 *   each content change of the editor (or each `received()` of a control page).
 * `installProbe` runs in the page: it must not use anything from this module's scope.
 */

export interface ProbeData {
  /** rAF callback times while recording (epoch ms). */
  frames: number[];
  loafs: Array<{ start: number; duration: number; blocking: number; renderMs: number; styleLayoutMs: number; scripts: Array<{ invoker: string; source: string; ms: number }> }>;
  /** Event Timing entries of key/input events ≥ 16 ms (duration, ms). */
  events: Array<{ name: string; duration: number; inputDelay: number }>;
  /** Key presses seen while recording. */
  keys: number;
  /** Marker → epoch ms of the first animation frame after it was present. */
  screenAt: Record<number, number>;
  /** Marker → epoch ms it became present (in the model / received). */
  presentAt: Record<number, number>;
  /** Epoch ms of each keydown while recording (the event's own timestamp: when the key was pressed). */
  keyAt: number[];
  /** Epoch ms of the first animation frame after each editor content change (or `received()` call) while recording. */
  shownAt: number[];
}

interface MonacoLikeEditor {
  getContainerDomNode(): HTMLElement;
  getModel(): { getLineCount(): number; getLineContent(line: number): string } | null;
  onDidChangeModelContent(listener: (event: { changes: Array<{ range: { startLineNumber: number }; text: string }> }) => void): unknown;
}

export function installProbe(): void {
  const now = () => performance.timeOrigin + performance.now();
  const state = {
    recording: false,
    frames: [] as number[],
    loafs: [] as ProbeData['loafs'],
    events: [] as ProbeData['events'],
    keys: 0,
    screenAt: {} as Record<number, number>,
    presentAt: {} as Record<number, number>,
    waiting: [] as number[],
    keyAt: [] as number[],
    shownAt: [] as number[],
    /** Changes waiting for their frame. */
    unshown: 0,
  };
  /** What is waiting reaches the screen in the frame that started at `t`. */
  const paintedIn = (t: number) => {
    if (state.waiting.length > 0) {
      for (const marker of state.waiting) state.screenAt[marker] ??= t;
      state.waiting = [];
    }
    for (; state.unshown > 0; state.unshown--) state.shownAt.push(t);
  };
  // The frame being made: from this callback (the first of each frame: it registers itself at
  // once) until a task posted from it runs, which is after the frame's rendering.
  let frameStart: number | null = null;
  const afterFrame = new MessageChannel();
  afterFrame.port1.onmessage = () => {
    frameStart = null;
  };
  const frame = () => {
    const t = now();
    frameStart = t;
    afterFrame.port2.postMessage(null);
    if (state.recording) state.frames.push(t);
    paintedIn(t);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  try {
    new PerformanceObserver((list) => {
      if (!state.recording) return;
      type Script = { invoker: string; sourceFunctionName: string; sourceURL: string; duration: number };
      type Loaf = PerformanceEntry & { blockingDuration?: number; renderStart?: number; styleAndLayoutStart?: number; scripts?: Script[] };
      for (const entry of list.getEntries() as Loaf[]) {
        const end = entry.startTime + entry.duration;
        state.loafs.push({
          start: performance.timeOrigin + entry.startTime,
          duration: entry.duration,
          blocking: entry.blockingDuration ?? 0,
          // Where the frame went: rendering (rAF callbacks, style, layout, paint) and style + layout alone.
          renderMs: entry.renderStart ? end - entry.renderStart : 0,
          styleLayoutMs: entry.styleAndLayoutStart ? end - entry.styleAndLayoutStart : 0,
          scripts: (entry.scripts ?? [])
            .sort((a, b) => b.duration - a.duration)
            .slice(0, 3)
            .map((script) => ({ invoker: script.invoker, source: `${script.sourceFunctionName}@${script.sourceURL.replace(/^.*\//, '')}`, ms: script.duration })),
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: false });
  } catch {
    // An engine without LoAF: frames still tell the story.
  }
  new PerformanceObserver((list) => {
    if (!state.recording) return;
    for (const entry of list.getEntries() as Array<PerformanceEntry & { processingStart: number }>) {
      if (!/^key|^input|^beforeinput/.test(entry.name)) continue;
      state.events.push({ name: entry.name, duration: entry.duration, inputDelay: entry.processingStart - entry.startTime });
    }
  }).observe({ type: 'event', durationThreshold: 16, buffered: false } as PerformanceObserverInit);
  addEventListener(
    'keydown',
    (event) => {
      if (!state.recording) return;
      state.keys++;
      state.keyAt.push(performance.timeOrigin + event.timeStamp);
    },
    true,
  );
  const changed = () => {
    if (state.recording) state.unshown++;
  };

  const present = (markers: number[]) => {
    const t = now();
    for (const marker of markers) {
      if (state.presentAt[marker] !== undefined) continue;
      state.presentAt[marker] = t;
      state.waiting.push(marker);
    }
  };
  const pattern = /@(\d{6})/g; // markerPattern of bench/browser/src/markers.ts (this runs in the page)
  const w = window as unknown as Record<string, unknown>;
  w.__benchProbe = {
    present,
    /** A control page got what a keystroke elsewhere sent (B6 in the browser). */
    received: changed,
    start() {
      state.frames = [];
      state.loafs = [];
      state.events = [];
      state.keys = 0;
      state.screenAt = {};
      state.presentAt = {};
      state.waiting = [];
      state.keyAt = [];
      state.shownAt = [];
      state.unshown = 0;
      state.recording = true;
    },
    stop(): ProbeData {
      state.recording = false;
      return { frames: state.frames, loafs: state.loafs, events: state.events, keys: state.keys, screenAt: state.screenAt, presentAt: state.presentAt, keyAt: state.keyAt, shownAt: state.shownAt };
    },
    count: () => Object.keys(state.screenAt).length,
    shown: () => state.shownAt.length,
  };
  // The IDE: scan the lines each model change touched for complete markers.
  w.__FLINT_EDITOR_PROBE__ = (editor: MonacoLikeEditor) => {
    // The editor drew its text during a frame's callbacks: what was present before is in this
    // frame. Only its text layer counts (nothing but its render writes there); the layer is
    // created once a model is attached, so the whole editor is watched.
    const inText = (node: Node) => ((node instanceof Element ? node : node.parentElement)?.closest('.view-lines') ?? null) !== null;
    new MutationObserver((records) => {
      // Most mutations come with nothing waiting (the cursor, decorations): no scan then.
      if (frameStart === null || (state.waiting.length === 0 && state.unshown === 0)) return;
      if (records.some((record) => inText(record.target))) paintedIn(frameStart);
    }).observe(editor.getContainerDomNode(), { subtree: true, childList: true, characterData: true });
    editor.onDidChangeModelContent((event) => {
      if (!state.recording) return;
      changed();
      const model = editor.getModel();
      if (!model) return;
      const found: number[] = [];
      const lineCount = model.getLineCount();
      for (const change of event.changes) {
        let newlines = 0;
        for (let i = change.text.indexOf('\n'); i >= 0; i = change.text.indexOf('\n', i + 1)) newlines++;
        const last = Math.min(lineCount, change.range.startLineNumber + newlines);
        for (let line = change.range.startLineNumber; line <= last; line++) {
          for (const match of model.getLineContent(line).matchAll(pattern)) found.push(Number(match[1]));
        }
      }
      if (found.length > 0) present(found);
    });
  };
}
