import type { ConnectionStatus } from '@flint/client';
import { useConnection } from '../stores/connectionStore';
import { useEditorStatus } from '../stores/editorStore';
import { follow, usePresence } from '../stores/presenceStore';
import { toggleProblems, useProblems } from '../stores/problemsStore';
import { useShortcut, withKey } from '../stores/settingsStore';
import { AgentHud } from './AgentHud';
import { AutocompleteStatus } from './AutocompleteStatus';
import { CheckStatus } from './CheckStatus';
import { roleLabel } from './RoleBadge';

function connectionText(status: ConnectionStatus): string {
  switch (status.kind) {
    case 'open':
      return 'Connected';
    case 'connecting':
      return status.attempt === 0 ? 'Connecting…' : `Reconnecting… (attempt ${status.attempt})`;
    case 'closed':
      return `Closed: ${status.message}`;
  }
}

function ConnectionItem() {
  const status = useConnection((s) => s.status);
  return (
    <span className={`status-item status-connection status-connection--${status.kind}`} data-testid="status-connection" title={connectionText(status)}>
      <span className="status-led" />
      <span className="status-text">{connectionText(status)}</span>
    </span>
  );
}

function RttItem() {
  const rttMs = useConnection((s) => s.rttMs);
  const open = useConnection((s) => s.status.kind === 'open');
  return (
    <span className="status-item status-rtt" data-testid="status-rtt" title="Round trip to the gateway">
      {open && rttMs !== null ? `${Math.max(0, Math.round(rttMs))} ms` : '— ms'}
    </span>
  );
}

function FollowingItem() {
  const name = usePresence((s) => s.peers.find((p) => p.clientId === s.following)?.user.name);
  if (name === undefined) return null;
  return (
    <button type="button" className="status-item status-following" onClick={() => follow(null)} title="Stop following (or move your cursor)">
      Following {name} ×
    </button>
  );
}

function EditorItems() {
  const line = useEditorStatus((s) => s.line);
  const column = useEditorStatus((s) => s.column);
  const selectedChars = useEditorStatus((s) => s.selectedChars);
  const languageName = useEditorStatus((s) => s.languageName);
  if (languageName === null) return null;
  return (
    <>
      <span className="status-item status-cursor" data-testid="status-cursor">
        Ln {line}, Col {column}
        {selectedChars > 0 && ` (${selectedChars} selected)`}
      </span>
      <span className="status-item status-language" data-testid="status-language">
        {languageName}
      </span>
    </>
  );
}

/**
 * Errors and warnings in the open files; opens the Problems panel. Its name is its content (the
 * glyphs hidden from screen readers, the words hidden from the eye), so what is seen is what is
 * heard (axe: label-content-name-mismatch); the key is the person's.
 */
function ProblemsItem() {
  const errors = useProblems((s) => s.errors);
  const warnings = useProblems((s) => s.warnings);
  const open = useProblems((s) => s.open);
  const key = useShortcut('problems');
  return (
    <button
      type="button"
      className={errors > 0 ? 'status-item status-problems status-problems--errors' : 'status-item status-problems'}
      data-testid="status-problems"
      aria-pressed={open}
      title={withKey('Problems in the open files', key)}
      onClick={toggleProblems}
    >
      <span aria-hidden="true">⊗</span> {errors}
      <span className="visually-hidden">{errors === 1 ? ' error,' : ' errors,'}</span> <span aria-hidden="true">⚠</span> {warnings}
      <span className="visually-hidden">{warnings === 1 ? ' warning' : ' warnings'}</span>
    </button>
  );
}


/** Connection, latency, the agent's HUD and the active editor's position: the bottom line of the IDE. */
export function StatusBar() {
  const role = useConnection((s) => s.role);
  return (
    <footer className="status-bar">
      <ConnectionItem />
      <RttItem />
      <AgentHud />
      <AutocompleteStatus />
      {role && <span className="status-item" data-testid="status-role">{roleLabel(role)}</span>}
      <FollowingItem />
      <CheckStatus />
      <span className="status-spacer" />
      <ProblemsItem />
      <EditorItems />
    </footer>
  );
}
