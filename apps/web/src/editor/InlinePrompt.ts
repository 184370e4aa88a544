import type { AgentRoute } from '@flint/protocol';
import { selectStreamingTurn, setRoute, stopTurn, submitPrompt, useAgent } from '../stores/agentStore';
import { monaco } from './monacoSetup';

interface OpenPrompt {
  fileId: string;
  model: monaco.editor.ITextModel;
  /** [0]: the target range, tracked through everyone's edits; [1]: its highlight. */
  target: monaco.editor.IEditorDecorationsCollection;
  zone: monaco.editor.IViewZone;
  zoneId: string;
}

const maxWidthPx = 680;

/**
 * The Ctrl/Cmd-K box: an instruction for the agent about the selected code (or the caret's
 * line), shown right above it. A view zone makes room between the lines and an overlay widget
 * sits in it (VS Code's ZoneWidget pattern): an input inside a view zone would have its clicks
 * taken by the editor. The target is a tracked decoration, so collaborators typing while the
 * instruction is written move it along with the code.
 */
export class InlinePrompt {
  readonly isOpen: monaco.editor.IContextKey<boolean>;
  private current: OpenPrompt | null = null;
  private sending = false;
  /** The prompt closed (Esc) while its request was in flight. */
  private abandoned: OpenPrompt | null = null;
  private readonly root = document.createElement('div');
  private readonly input = document.createElement('input');
  private readonly routePicker = document.createElement('select');
  private readonly error = document.createElement('div');
  private readonly overlay: monaco.editor.IOverlayWidget;
  private readonly disposers: Array<() => void> = [];

  constructor(private readonly editor: monaco.editor.IStandaloneCodeEditor) {
    this.isOpen = editor.createContextKey('flintPromptOpen', false);
    this.build();
    this.overlay = { getId: () => 'flint.inlinePrompt', getDomNode: () => this.root, getPosition: () => null };
    const listeners = [
      editor.onDidLayoutChange(() => this.layout()),
      editor.onDidChangeModelContent(() => this.followTarget()),
      editor.onDidChangeModel(() => this.close(false)),
    ];
    const unsubscribe = useAgent.subscribe((state, previous) => {
      if (state.route !== previous.route) this.routePicker.value = state.route;
    });
    this.disposers.push(unsubscribe, () => listeners.forEach((listener) => listener.dispose()));
  }

  private build(): void {
    this.root.className = 'flint-prompt';
    const row = document.createElement('div');
    row.className = 'flint-prompt-row';
    const mark = document.createElement('span');
    mark.className = 'flint-prompt-mark';
    mark.textContent = '✦';
    this.input.className = 'flint-prompt-input';
    this.input.dataset.testid = 'inline-prompt';
    this.input.spellcheck = false;
    this.input.setAttribute('aria-label', 'Instruction for the AI');
    this.routePicker.className = 'flint-prompt-route';
    this.routePicker.dataset.testid = 'route-picker';
    this.routePicker.title = 'Route: fast for quick edits, deep for a heavier model (remembered)';
    for (const route of ['fast', 'deep'] satisfies AgentRoute[]) this.routePicker.append(new Option(route, route));
    this.routePicker.value = useAgent.getState().route;
    this.routePicker.addEventListener('change', () => {
      setRoute(this.routePicker.value === 'deep' ? 'deep' : 'fast');
      this.input.focus();
    });
    const hint = document.createElement('span');
    hint.className = 'flint-prompt-hint';
    hint.textContent = '↵ send · esc close';
    row.append(mark, this.input, this.routePicker, hint);
    this.error.className = 'flint-prompt-error';
    this.error.dataset.testid = 'prompt-error';
    this.error.setAttribute('role', 'alert');
    this.root.append(row);
    // The editor must not act on keys typed here (Enter would break a line, Esc stop a turn).
    this.root.addEventListener('keydown', (event) => {
      event.stopPropagation();
      if (event.isComposing) return;
      if (event.key === 'Escape' || ((event.ctrlKey || event.metaKey) && event.code === 'KeyK')) {
        event.preventDefault();
        this.close(true, event.key === 'Escape');
      } else if (event.key === 'Enter' && event.target === this.input) {
        event.preventDefault();
        void this.submit();
      }
    });
    this.input.addEventListener('input', () => this.showError(null));
  }

  /** Opens the box above `selection` of the shown file, or moves it there when already open. */
  open(fileId: string, selection: monaco.Selection): void {
    const model = this.editor.getModel();
    if (!model) return;
    if (this.current) this.detach();
    const empty = selection.isEmpty();
    const target = this.editor.createDecorationsCollection([
      { range: selection, options: { stickiness: monaco.editor.TrackedRangeStickiness.NeverGrowsWhenTypingAtEdges } },
      empty
        ? { range: selection, options: { isWholeLine: true, className: 'flint-prompt-target' } }
        : { range: selection, options: { className: 'flint-prompt-target' } },
    ]);
    this.input.placeholder = selectStreamingTurn(useAgent.getState(), fileId)
      ? 'Steer the AI: a new instruction for the rewrite in progress…'
      : empty
        ? 'Ask the AI to change this line…'
        : 'Ask the AI to change the selection…';
    this.showError(null);
    this.editor.addOverlayWidget(this.overlay);
    this.layout();
    const zone: monaco.editor.IViewZone = {
      afterLineNumber: selection.startLineNumber - 1,
      heightInPx: this.root.offsetHeight + 6,
      domNode: document.createElement('div'),
      suppressMouseDown: true,
      onDomNodeTop: (top) => {
        this.root.style.top = `${top + 2}px`;
      },
    };
    let zoneId = '';
    this.editor.changeViewZones((accessor) => {
      zoneId = accessor.addZone(zone);
    });
    this.current = { fileId, model, target, zone, zoneId };
    this.isOpen.set(true);
    this.editor.revealLinesInCenterIfOutsideViewport(Math.max(1, selection.startLineNumber - 2), selection.startLineNumber);
    this.input.focus();
    this.input.select();
  }

  /** `cancel`: the user said Esc, so a prompt still on its way is called off too. */
  close(focusEditor: boolean, cancel = false): void {
    if (!this.current) return;
    if (cancel && this.sending) this.abandoned = this.current;
    this.detach();
    this.input.value = '';
    if (focusEditor) this.editor.focus();
  }

  private detach(): void {
    const current = this.current;
    if (!current) return;
    this.current = null;
    this.isOpen.set(false);
    current.target.clear();
    this.editor.changeViewZones((accessor) => accessor.removeZone(current.zoneId));
    this.editor.removeOverlayWidget(this.overlay);
  }

  private async submit(): Promise<void> {
    const current = this.current;
    const instruction = this.input.value.trim();
    if (!current || !instruction || this.sending) return;
    const range = current.target.getRange(0);
    if (!range) return this.showError('The code this prompt was about is gone. Select it again.');
    const anchor = current.model.getOffsetAt(range.getStartPosition());
    const head = current.model.getOffsetAt(range.getEndPosition());
    this.setSending(true);
    const outcome = await submitPrompt({ fileId: current.fileId, anchor, head, instruction });
    this.setSending(false);
    if (this.current !== current) {
      // Esc while the prompt was on its way means "never mind": stop the turn it started.
      if (outcome.ok && outcome.turnId !== null && this.abandoned === current) void stopTurn(outcome.turnId);
      return;
    }
    if (!outcome.ok) {
      this.showError(outcome.error);
      this.input.focus();
      return;
    }
    this.close(true);
    // A selection left over the region would hide the diff the agent is about to stream there.
    if (this.editor.getModel() === current.model) this.editor.setPosition(range.getStartPosition());
  }

  private setSending(sending: boolean): void {
    this.sending = sending;
    this.input.readOnly = sending;
    this.root.classList.toggle('flint-prompt--sending', sending);
  }

  private showError(message: string | null): void {
    if (message === null && !this.error.isConnected) return;
    if (message === null) this.error.remove();
    else {
      this.error.textContent = message;
      this.root.append(this.error);
    }
    this.resizeZone();
  }

  private resizeZone(): void {
    const current = this.current;
    if (!current) return;
    current.zone.heightInPx = this.root.offsetHeight + 6;
    this.editor.changeViewZones((accessor) => accessor.layoutZone(current.zoneId));
  }

  private layout(): void {
    const layout = this.editor.getLayoutInfo();
    this.root.style.left = `${layout.contentLeft}px`;
    this.root.style.width = `${Math.max(240, Math.min(maxWidthPx, layout.contentWidth - layout.verticalScrollbarWidth - 16))}px`;
  }

  /** Keeps the box above its target while people (or the agent) edit above it. */
  private followTarget(): void {
    const current = this.current;
    const range = current?.target.getRange(0);
    if (!current || !range || current.zone.afterLineNumber === range.startLineNumber - 1) return;
    current.zone.afterLineNumber = range.startLineNumber - 1;
    this.editor.changeViewZones((accessor) => accessor.layoutZone(current.zoneId));
  }

  dispose(): void {
    this.detach();
    for (const dispose of this.disposers) dispose();
  }
}
