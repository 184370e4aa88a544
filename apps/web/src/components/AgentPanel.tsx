import { useLayoutEffect, useMemo, useRef } from 'react';
import { agentShortcuts } from '../stores/agentMessages';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { DEMO_MODEL, groupByTurn, selectIsDemoModel, selectRouteModel, selectStreamingTurn, setAgentPanelOpen, useThread } from '../stores/threadStore';
import { selectNeedsModel, useModelConnection } from '../stores/modelConnectionStore';
import { requestEditorFocus } from '../stores/workspaceStore';
import { BundledChosenNote, ConnectedModel, FirstMinute } from './ConnectModel';
import { Icon } from './Icon';
import { ThreadInput } from './ThreadInput';
import { ThreadMessage } from './ThreadMessage';
import { ThreadTurn } from './ThreadTurn';
import { useShortcut, withKey } from '../stores/settingsStore';

/**
 * The workspace's shared AI thread, on the right of the editor (Ctrl/Cmd-L). Everyone in the
 * room sees the same thread live; editors write to it, steer it and review what it changed;
 * viewers watch.
 */
export function AgentPanel() {
  const open = useThread((s) => s.panelOpen);
  const synced = useThread((s) => s.synced);
  // Without a real model the panel offers one, or a replay, rather than free-running the bundled one (issue 37).
  const needsModel = useModelConnection(selectNeedsModel);
  const empty = useThread((s) => s.messages.length === 0);
  if (!open) return null;
  return (
    <aside className="agent-panel" data-testid="agent-panel" data-synced={synced} aria-label="Agent">
      <PanelHeader />
      <ConnectedModel />
      {needsModel && empty ? <FirstMinute /> : <ThreadList />}
      {needsModel ? !empty && <FirstMinute compact /> : <PanelFoot />}
    </aside>
  );
}

function PanelHeader() {
  const panelKey = useShortcut('agent-panel');
  const model = useThread(selectRouteModel);
  const demo = useThread(selectIsDemoModel);
  const streaming = useThread((s) => selectStreamingTurn(s) !== null);
  return (
    <div className="agent-panel-header">
      <span className={`agent-panel-title${streaming ? ' agent-panel-title--live' : ''}`}>
        <Icon name="spark" className="agent-panel-mark" /> Agent
      </span>
      {model && (
        <span className="agent-panel-model" data-testid="agent-panel-model" title={`The selected route is served by ${model}`}>
          {model}
        </span>
      )}
      {demo && (
        <span className="thread-tag thread-tag--demo" title="The bundled demo model fills in code-looking text and does not follow instructions. See the README to connect a real model.">
          demo model
        </span>
      )}
      <span className="top-spacer" />
      <button
        type="button"
        className="icon-button"
        aria-label="Close the agent panel"
        title={withKey('Close', panelKey)}
        onClick={() => {
          setAgentPanelOpen(false);
          requestEditorFocus();
        }}
      >
        <Icon name="close" />
      </button>
    </div>
  );
}

function ThreadList() {
  const messages = useThread((s) => s.messages);
  const turns = useThread((s) => s.turns);
  const canEdit = useConnection(selectCanEdit);
  const streaming = useThread((s) => selectStreamingTurn(s) !== null);
  const list = useRef<HTMLDivElement>(null);
  /** Follow the stream while the reader is at the bottom; leave them be once they scroll up. */
  const atBottom = useRef(true);
  const { groups, queued } = useMemo(() => groupByTurn(messages), [messages]);

  useLayoutEffect(() => {
    const element = list.current;
    if (element && atBottom.current) element.scrollTop = element.scrollHeight;
  }, [messages, turns]);

  if (messages.length === 0) return <EmptyThread />;
  return (
    <div
      ref={list}
      className="thread-list"
      data-testid="thread-list"
      role="log"
      aria-live="polite"
      aria-busy={streaming}
      onScroll={(event) => {
        const element = event.currentTarget;
        atBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
      }}
    >
      {groups.map((group) => {
        const turn = turns.get(group.turnId);
        return (
          <section key={group.key} className="thread-group" data-turn={group.turnId || undefined}>
            {group.messages.map((message) => (
              <ThreadMessage key={message.id} message={message} model={turn?.model} streaming={turn?.status === 'streaming'} />
            ))}
            {turn && <ThreadTurn turn={turn} canReview={canEdit} />}
          </section>
        );
      })}
      {queued.length > 0 && (
        <section className="thread-group thread-group--queued" aria-label="Queued messages">
          {queued.map((message) => (
            <ThreadMessage key={message.id} message={message} />
          ))}
        </section>
      )}
    </div>
  );
}

function EmptyThread() {
  const panelKey = useShortcut('agent-panel');
  const demo = useThread(selectIsDemoModel);
  const canEdit = useConnection(selectCanEdit);
  return (
    <div className="thread-list thread-empty" data-testid="thread-empty">
      <p className="thread-empty-title">
        <Icon name="spark" className="agent-panel-mark" /> One thread for everyone here
      </p>
      <p>
        Ask for a change in plain words. The agent reads the files it needs and writes its edits into them live, where everyone in the workspace sees them.
        Review each file's changes, or the whole turn, under its answer.
      </p>
      {canEdit && (
        <dl className="thread-keys">
          <dt>
            <kbd>Enter</kbd>
          </dt>
          <dd>send; while the agent works, steer it</dd>
          <dt>
            <kbd>{agentShortcuts.queue}</kbd>
          </dt>
          <dd>queue a message for when it finishes</dd>
          <dt>
            <kbd>Esc</kbd>
          </dt>
          <dd>stop it; what it wrote stays for review</dd>
          <dt>
            <kbd>@</kbd>
          </dt>
          <dd>mention a file; the file on screen and your selection go along by default</dd>
          {panelKey && (
            <>
              <dt>
                <kbd>{panelKey}</kbd>
              </dt>
              <dd>open or close this panel</dd>
            </>
          )}
        </dl>
      )}
      {demo && (
        <div className="thread-demo" data-testid="thread-demo-note">
          <strong>
            This gateway runs the bundled demo model, <span className="thread-nowrap">{DEMO_MODEL}</span>.
          </strong> It only fills in code-looking text: it does not follow instructions or use tools,
          so its answers here will not do what you ask. To connect a real model, start the gateway with a provider, for example{' '}
          <code>OPENAI_API_KEY=… FLINT_MODEL_FAST=… npm start</code> — see “Point Flint at a model” in the README. You can still send messages to see how the thread works.{' '}
          <BundledChosenNote />
        </div>
      )}
    </div>
  );
}

function PanelFoot() {
  const role = useConnection((s) => s.role);
  const closed = useConnection((s) => s.status.kind === 'closed');
  if (role === 'viewer') {
    return (
      <div className="thread-viewer" data-testid="thread-viewer-note">
        <Icon name="eye" /> You are viewing: you can watch the agent work, but not prompt it. Ask for an editor link to take part.
      </div>
    );
  }
  if (closed) return <div className="thread-viewer">This tab is disconnected for good; see the banner above.</div>;
  return <ThreadInput />;
}
