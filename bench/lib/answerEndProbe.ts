/**
 * B11's instrument in the agent panel: the start of the frame that painted the end of the
 * thread's next answer (a new assistant message whose Markdown shows `end`), timed as
 * bench/lib/browserProbe.ts times markers: the panel changed during a frame's callbacks → that
 * frame; between frames → the next one. Read `__benchAnswerEnd` (epoch ms, null until then).
 * `watchAnswerEnd` runs in the page: it must not use anything from this module's scope.
 */
export function watchAnswerEnd(end: string): void {
  const w = window as unknown as { __benchAnswerEnd: number | null };
  w.__benchAnswerEnd = null;
  const answers = () => document.querySelectorAll('[data-kind="assistant"] .thread-md');
  // Earlier turns' answers may end with the same words: only a new one counts.
  const before = answers().length;
  let frameStart: number | null = null;
  let waiting = false;
  const afterFrame = new MessageChannel();
  afterFrame.port1.onmessage = () => {
    frameStart = null;
  };
  const observer = new MutationObserver(() => {
    if (w.__benchAnswerEnd !== null || waiting) return;
    const all = answers();
    if (all.length <= before || !all[all.length - 1]!.textContent?.includes(end)) return;
    if (frameStart !== null) w.__benchAnswerEnd = frameStart;
    else waiting = true;
  });
  const frame = () => {
    const t = performance.timeOrigin + performance.now();
    frameStart = t;
    afterFrame.port2.postMessage(null);
    if (waiting) w.__benchAnswerEnd ??= t;
    if (w.__benchAnswerEnd === null) requestAnimationFrame(frame);
    else observer.disconnect();
  };
  requestAnimationFrame(frame);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
}
