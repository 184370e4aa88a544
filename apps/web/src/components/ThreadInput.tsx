import type { AgentRoute } from '@flint/protocol';
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { completeMention, mentionQueryAt, mentionsIn, suggestMentions, type MentionQuery } from '../fileTree/mentions';
import { agentShortcuts } from '../stores/agentMessages';
import { useEditorStatus, type EditorSelection } from '../stores/editorStore';
import { dismissThreadError, selectStreamingTurn, sendToThread, setThreadRoute, stopThread, useThread } from '../stores/threadStore';
import { requestEditorFocus, useWorkspace } from '../stores/workspaceStore';
import { Icon } from './Icon';

const selectionKey = (s: EditorSelection) => `${s.fileId}:${s.anchor}:${s.head}`;

/**
 * Where people write to the agent. Enter sends (while a turn streams, it steers that turn),
 * Alt-Enter queues the message after it, Shift-Enter breaks the line, Esc stops the turn.
 * `@` completes a file path from the tree; the file on screen and its selection go along
 * unless their chip is removed.
 */
export function ThreadInput() {
  const input = useRef<HTMLTextAreaElement>(null);
  const [text, setText] = useState('');
  const [caret, setCaret] = useState(0);
  const [pick, setPick] = useState(0);
  const [closedMention, setClosedMention] = useState<number | null>(null);
  const pendingCaret = useRef<number | null>(null);
  /** The selection whose chip was removed; a new selection brings the chip back. */
  const [dismissed, setDismissed] = useState<string | null>(null);
  const entries = useWorkspace((s) => s.entries);
  const streaming = useThread((s) => selectStreamingTurn(s) !== null);
  const sending = useThread((s) => s.sending);
  const route = useThread((s) => s.route);
  const error = useThread((s) => s.error);
  const focusRequest = useThread((s) => s.inputFocusRequest);

  useEffect(() => {
    if (focusRequest > 0) input.current?.focus();
  }, [focusRequest]);

  useLayoutEffect(() => {
    const element = input.current;
    if (!element) return;
    // Grows with its text up to a third of the panel; then it scrolls.
    element.style.height = 'auto';
    element.style.height = `${Math.min(element.scrollHeight, 240)}px`;
    if (pendingCaret.current !== null) {
      element.setSelectionRange(pendingCaret.current, pendingCaret.current);
      pendingCaret.current = null;
    }
  }, [text]);

  // Text files only: a binary one (a folder project's image) has nothing the model could read.
  const isFile = (path: string) => {
    const entry = entries.get(path);
    return entry?.kind === 'file' && !entry.binary;
  };
  const files = useMemo(() => [...entries].filter(([, entry]) => entry.kind === 'file' && !entry.binary).map(([path]) => path), [entries]);
  const mention = useMemo(() => {
    const found = mentionQueryAt(text, caret);
    return found && found.start !== closedMention ? found : null;
  }, [text, caret, closedMention]);
  const suggestions = useMemo(() => (mention ? suggestMentions(files, mention.query) : []), [files, mention]);
  const mentioned = useMemo(() => mentionsIn(text, isFile), [text, entries]);

  const track = (element: HTMLTextAreaElement) => setCaret(element.selectionStart ?? element.value.length);

  const choose = (found: MentionQuery, path: string) => {
    const next = completeMention(text, found, caret, path);
    pendingCaret.current = next.caret;
    setText(next.text);
    setCaret(next.caret);
    setPick(0);
  };

  const submit = async (mode: 'send' | 'queue') => {
    const selection = useEditorStatus.getState().selection;
    const attached = selection && selectionKey(selection) !== dismissed ? selection : null;
    const sent = await sendToThread({
      text,
      mode,
      mentions: mentionsIn(text, isFile),
      selection: attached ? { fileId: attached.fileId, anchor: attached.anchor, head: attached.head } : null,
    });
    if (sent) {
      setText('');
      setCaret(0);
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing) return;
    const popup = mention !== null && suggestions.length > 0;
    if (popup && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setPick((index) => (index + step + suggestions.length) % suggestions.length);
    } else if (popup && (event.key === 'Tab' || (event.key === 'Enter' && !event.shiftKey && !event.altKey))) {
      choose(mention, suggestions[Math.min(pick, suggestions.length - 1)]!);
    } else if (popup && event.key === 'Escape') {
      setClosedMention(mention.start);
    } else if (event.key === 'Enter' && !event.shiftKey) {
      void submit(event.altKey ? 'queue' : 'send');
    } else if (event.key === 'Escape') {
      if (streaming) void stopThread();
      else requestEditorFocus();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  };

  const action = streaming ? 'Steer' : 'Send';
  return (
    <div className="thread-input" data-testid="thread-input-area">
      <div className="thread-chips">
        <SelectionChip dismissed={dismissed} onRemove={setDismissed} />
        {mentioned.map((path) => (
          <span key={path} className="thread-chip thread-chip--mention" title={`${path} goes with the message`}>
            @{path}
          </span>
        ))}
      </div>
      {mention && suggestions.length > 0 && (
        <ul className="thread-mentions" role="listbox" aria-label="Mention a file" data-testid="thread-mentions">
          {suggestions.map((path, index) => (
            <li
              key={path}
              role="option"
              aria-selected={index === pick}
              className={index === pick ? 'thread-mention thread-mention--active' : 'thread-mention'}
              onMouseDown={(event) => {
                event.preventDefault();
                choose(mention, path);
              }}
            >
              {path}
            </li>
          ))}
        </ul>
      )}
      <textarea
        ref={input}
        className={`thread-textarea${streaming ? ' thread-textarea--steer' : ''}`}
        data-testid="thread-input"
        rows={2}
        value={text}
        readOnly={sending}
        spellCheck
        placeholder={streaming ? 'Steer the agent: it changes course with this… (or Alt+Enter to queue)' : 'Ask the agent to change the code…  @ to mention a file'}
        aria-label="Message to the agent"
        onChange={(event) => {
          setText(event.target.value);
          track(event.target);
          setClosedMention(null);
          setPick(0);
          if (error) dismissThreadError();
        }}
        onSelect={(event) => track(event.currentTarget)}
        onKeyDown={onKeyDown}
      />
      {error && (
        <div className="thread-input-error" role="alert" data-testid="thread-error">
          {error}
        </div>
      )}
      <div className="thread-input-bar">
        <select
          className="thread-route"
          data-testid="thread-route"
          aria-label="Model route"
          value={route}
          title="Route: fast for quick edits, deep for a heavier model (remembered)"
          onChange={(event) => setThreadRoute(event.target.value as AgentRoute)}
        >
          <option value="fast">fast</option>
          <option value="deep">deep</option>
        </select>
        <span className="thread-input-bar-gap" />
        {streaming && (
          <button type="button" className="agent-bar-button agent-bar-stop" data-testid="thread-stop" title={`Stop the agent (${agentShortcuts.stop}); what it wrote stays for review`} onClick={() => void stopThread()}>
            <Icon name="stop" className="thread-button-icon" /> Stop
          </button>
        )}
        <button
          type="button"
          className={`button button--primary thread-send${streaming ? ' thread-send--steer' : ''}`}
          data-testid="thread-send"
          data-action={action.toLowerCase()}
          disabled={sending || text.trim() === ''}
          title={streaming ? 'Steer: the agent stops its current step and continues with this (Enter)' : 'Send (Enter)'}
          onClick={() => void submit('send')}
        >
          {action} <Icon name="send" className="thread-button-icon" />
        </button>
      </div>
      {/* A row of its own: beside Stop and Steer it had no room and was cut off. Each key stays whole; the row wraps between them. */}
      <div className="thread-input-hint" data-testid="thread-input-hint">
        {(streaming ? ['↵ steer', `${agentShortcuts.queue} queue`, 'Esc stop'] : ['↵ send', '⇧↵ new line', `${agentShortcuts.queue} queue`]).map((hint) => (
          <span key={hint}>{hint}</span>
        ))}
      </div>
    </div>
  );
}

/** The file on screen and its lines, sent with the message unless removed. */
function SelectionChip({ dismissed, onRemove }: { dismissed: string | null; onRemove(key: string): void }) {
  const selection = useEditorStatus((s) => s.selection);
  const path = useWorkspace((s) => (selection ? s.pathById.get(selection.fileId) : undefined));
  if (!selection || path === undefined || selectionKey(selection) === dismissed) return null;
  const lines = selection.anchor === selection.head ? `${selection.startLine}` : selection.startLine === selection.endLine ? `${selection.startLine}` : `${selection.startLine}-${selection.endLine}`;
  const what = selection.anchor === selection.head ? 'the caret' : 'the selection';
  return (
    <span className="thread-chip" data-testid="thread-selection-chip" title={`${path} and ${what} go with the message`}>
      <Icon name="file" className="thread-chip-icon" />
      {path}:{lines}
      <button type="button" className="thread-chip-remove" aria-label="Leave the file out of this message" title="Leave it out" onClick={() => onRemove(selectionKey(selection))}>
        <Icon name="close" />
      </button>
    </span>
  );
}
