/**
 * B10's instrument in the IDE page: when each stream marker (`@000042`, bench/browser/src/markers.ts)
 * first reached the screen in the editor, counting everything the editor draws as text — the
 * committed text (`.view-lines`), the provisional text drawn after the agent's cursor (injected
 * into its line, and the `.flint-provisional-zone` view zone below it; decision 0020) — and
 * whether the marker was provisional then.
 *
 * The time is the start of the frame that painted it, as bench/lib/browserProbe.ts counts it: the
 * editor's text changed during a frame's callbacks (Monaco draws in one) → that frame; between
 * frames (a socket message) → the next one. A view zone is appended hidden and shown by the
 * editor's next render, so its text counts only once it is displayed.
 * `installEditorScreenProbe` runs in the page: it must not use anything from this module's scope.
 */

export interface EditorScreenData {
  /** Marker → epoch ms of the start of the first frame that painted it. */
  screenAt: Record<number, number>;
  /** Markers that were provisional text (not yet in the document) when first painted. */
  provisional: number[];
  /** rAF callback times while recording (epoch ms): how smoothly the page kept drawing. */
  frames: number[];
  /** Main-thread time this probe spent reading the editor's text while recording: its own cost. */
  scanMs: number;
}

export interface EditorScreenProbe {
  start(): void;
  stop(): EditorScreenData;
  /** Markers painted since start. */
  count(): number;
  /** Whether provisional text is drawn right now (a turn still streaming shows some). */
  provisionalShown(): boolean;
}

export function installEditorScreenProbe(): void {
  const now = () => performance.timeOrigin + performance.now();
  const pattern = /@(\d{6})/g; // markerPattern of bench/browser/src/markers.ts (this runs in the page)
  let recording = false;
  let screenAt: Record<number, number> = {};
  let provisional: number[] = [];
  let frames: number[] = [];
  let scanMs = 0;
  const seen = new Set<number>();
  /** Seen between frames: the next frame paints them. */
  let waiting: number[] = [];
  // The frame being made: from its first callback (this one registers itself first every frame)
  // until a task posted from it runs, after the frame's rendering.
  let frameStart: number | null = null;
  const afterFrame = new MessageChannel();
  afterFrame.port1.onmessage = () => {
    frameStart = null;
  };
  const frame = () => {
    const t = now();
    frameStart = t;
    afterFrame.port2.postMessage(null);
    if (recording) frames.push(t);
    for (const marker of waiting) screenAt[marker] ??= t;
    waiting = [];
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);

  const markersIn = (elements: Iterable<Element>) => {
    const found = new Set<number>();
    for (const element of elements) for (const match of (element.textContent ?? '').matchAll(pattern)) found.add(Number(match[1]));
    return found;
  };
  const shownZones = (editor: Element) => Array.from(editor.querySelectorAll<HTMLElement>('.flint-provisional-zone')).filter((zone) => zone.style.display !== 'none');
  const scan = () => {
    const editor = document.querySelector('[data-testid="editor"]');
    if (!editor) return;
    const zones = shownZones(editor);
    const onScreen = markersIn([...editor.querySelectorAll('.view-lines'), ...zones]);
    let pendingNow: Set<number> | null = null;
    for (const marker of onScreen) {
      if (seen.has(marker)) continue;
      seen.add(marker);
      pendingNow ??= markersIn([...editor.querySelectorAll('.view-lines .flint-provisional'), ...zones]);
      if (pendingNow.has(marker)) provisional.push(marker);
      if (frameStart !== null) screenAt[marker] = frameStart;
      else waiting.push(marker);
    }
  };
  // Only mutations of the editor's text or of its view zones can show a marker: the rest (the
  // cursor, line positions, the status bar) is skipped before reading any text.
  const relevant = (record: MutationRecord) => {
    const target = record.target instanceof Element ? record.target : record.target.parentElement;
    if (!target) return false;
    if (record.type === 'attributes') return target.classList.contains('flint-provisional-zone');
    return target.closest('.view-lines, .view-zones') !== null;
  };
  // The document, not its element: an init script runs before there is one. Attributes too: a
  // zone is shown by a change of its style.
  new MutationObserver((records) => {
    if (!recording) return;
    const t0 = performance.now();
    if (records.some(relevant)) scan();
    scanMs += performance.now() - t0;
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['style'] });

  const probe: EditorScreenProbe = {
    start() {
      screenAt = {};
      provisional = [];
      frames = [];
      scanMs = 0;
      seen.clear();
      waiting = [];
      recording = true;
    },
    stop() {
      recording = false;
      return { screenAt, provisional, frames, scanMs };
    },
    count: () => Object.keys(screenAt).length,
    provisionalShown: () => document.querySelector('[data-testid="editor"] .flint-provisional') !== null,
  };
  (window as unknown as { __benchScreen: EditorScreenProbe }).__benchScreen = probe;
}
