import { useState } from 'react';
import type { CommandPolicy } from '@flint/protocol';
import { useConnection } from '../stores/connectionStore';
import { approveCommand, closeTerminal, grantTyping, openTerminal, selectMayType, selectTerminal, setTerminalSettings, useTerminals } from '../stores/terminalStore';
import { TerminalView } from './TerminalView';

/** Who may type: the owner lets each editor type, one by one. */
function PeopleMenu() {
  const people = useTerminals((s) => s.room?.people ?? []);
  const others = people.filter((p) => p.role !== 'owner');
  return (
    <div className="terminal-menu" role="menu" aria-label="Who may type">
      <div className="terminal-menu-title">Who may type</div>
      {others.length === 0 && <div className="terminal-menu-empty">Nobody else is here.</div>}
      {others.map((person) => (
        <label key={person.linkId} className="terminal-menu-row">
          <input
            type="checkbox"
            checked={person.mayType}
            disabled={person.role === 'viewer'}
            onChange={(event) => void grantTyping(person.linkId, event.target.checked)}
            aria-label={`${person.name} may type`}
          />
          <span className="terminal-dot" style={{ background: person.color }} />
          <span className="terminal-menu-name">{person.name}</span>
          <span className="terminal-menu-role">{person.role === 'viewer' ? 'viewer · watches' : 'editor'}</span>
        </label>
      ))}
    </div>
  );
}

function SettingsMenu() {
  const settings = useTerminals((s) => s.room?.settings);
  const [allowList, setAllowList] = useState(settings?.allowedCommands.join('\n') ?? '');
  const [checkCommand, setCheckCommand] = useState(settings?.checkCommand ?? '');
  if (!settings) return null;
  return (
    <div className="terminal-menu" role="menu" aria-label="Terminal settings">
      <label className="terminal-menu-row">
        <input type="checkbox" checked={settings.network} onChange={(event) => void setTerminalSettings({ ...settings, network: event.target.checked })} />
        <span>Network for commands</span>
      </label>
      <div className="terminal-menu-title">The agent runs commands</div>
      <select value={settings.commandPolicy} onChange={(event) => void setTerminalSettings({ ...settings, commandPolicy: event.target.value as CommandPolicy })} aria-label="Agent command policy">
        <option value="ask">after an editor approves each</option>
        <option value="allow-list">on the allow list only</option>
        <option value="never">never</option>
      </select>
      <textarea
        rows={3}
        value={allowList}
        aria-label="Allowed commands, one per line"
        onChange={(event) => setAllowList(event.target.value)}
        onBlur={() => void setTerminalSettings({ ...settings, allowedCommands: allowList.split('\n').map((c) => c.trim()).filter(Boolean).slice(0, 50) })}
      />
      <div className="terminal-menu-title">Check runs</div>
      <input
        value={checkCommand}
        aria-label="Check command"
        placeholder="npm test"
        onChange={(event) => setCheckCommand(event.target.value)}
        onBlur={() => void setTerminalSettings({ ...settings, checkCommand: checkCommand.trim().slice(0, 500) })}
      />
    </div>
  );
}

/**
 * Commands the agent asked to run: everyone sees them; the owner and those the owner lets type
 * run or refuse each ("may type" is the one capability to run code, [P45]).
 */
function Approvals() {
  const approvals = useTerminals((s) => s.room?.approvals ?? []);
  const canApprove = useTerminals(selectMayType);
  if (approvals.length === 0) return null;
  return (
    <div className="terminal-approvals">
      {approvals.map((a) => (
        <div key={a.approvalId} className="terminal-approval" data-testid="command-approval">
          <span>The agent wants to run</span>
          <code>{a.command}</code>
          {canApprove && (
            <>
              <button type="button" className="terminal-approve" onClick={() => void approveCommand(a.approvalId, true)}>
                Run
              </button>
              <button type="button" onClick={() => void approveCommand(a.approvalId, false)}>
                Refuse
              </button>
            </>
          )}
          {!canApprove && <span className="terminal-approval-wait">Waiting for the owner or someone they let type</span>}
        </div>
      ))}
    </div>
  );
}

/** The shared terminals of the workspace (Ctrl/Cmd+`): tabs, who types, who may. */
export function TerminalPanel() {
  const open = useTerminals((s) => s.open || (s.room?.approvals.length ?? 0) > 0);
  const room = useTerminals((s) => s.room);
  const activeTermId = useTerminals((s) => s.activeTermId);
  const typists = useTerminals((s) => s.typists);
  const mayType = useTerminals(selectMayType);
  const isOwner = useConnection((s) => s.role === 'owner');
  const [menu, setMenu] = useState<'people' | 'settings' | null>(null);
  if (!open) return null;
  const terminals = room?.terminals ?? [];
  const active = terminals.find((t) => t.termId === activeTermId) ?? null;
  const availability = room?.availability;
  const typist = active ? typists[active.termId] : undefined;
  return (
    <section className="terminal-panel" aria-label="Terminals" data-testid="terminal-panel">
      <Approvals />
      <div className="terminal-bar">
        <div className="terminal-tabs" role="tablist">
          {terminals.map((t) => (
            <div key={t.termId} className={`terminal-tab${t.termId === activeTermId ? ' terminal-tab--active' : ''}`} role="tab" aria-selected={t.termId === activeTermId}>
              <button type="button" className="terminal-tab-title" onClick={() => selectTerminal(t.termId)} title={`Opened by ${t.openedBy}`}>
                {t.kind === 'command' ? '▸ ' : ''}
                {t.title}
                {t.exitCode !== null && <span className={`terminal-exit${t.exitCode === 0 ? '' : ' terminal-exit--failed'}`}> · exit {t.exitCode}</span>}
              </button>
              {isOwner && (
                <button type="button" className="terminal-tab-close" aria-label={`Close ${t.title}`} onClick={() => void closeTerminal(t.termId)}>
                  ×
                </button>
              )}
            </div>
          ))}
          {isOwner && availability?.enabled && (
            <button type="button" className="terminal-new" aria-label="New terminal" title="New terminal" onClick={() => void openTerminal()}>
              +
            </button>
          )}
        </div>
        <div className="terminal-status">
          {typist && (
            <span className="terminal-typist" data-testid="terminal-typist">
              <span className="terminal-dot" style={{ background: typist.color }} />
              {typist.name} typed
            </span>
          )}
          {active && <span className="terminal-role">{active.kind === 'command' ? 'command · read-only' : mayType ? 'you may type' : 'watching'}</span>}
          {availability?.unsandboxed && <span className="terminal-unsafe">NOT SANDBOXED</span>}
          {isOwner && (
            <>
              <button type="button" className="terminal-bar-button" aria-expanded={menu === 'people'} onClick={() => setMenu(menu === 'people' ? null : 'people')}>
                Who may type
              </button>
              <button type="button" className="terminal-bar-button" aria-expanded={menu === 'settings'} onClick={() => setMenu(menu === 'settings' ? null : 'settings')}>
                Settings
              </button>
            </>
          )}
          <button type="button" className="terminal-bar-button" aria-label="Hide terminals" onClick={() => useTerminals.setState({ open: false })}>
            ⌄
          </button>
        </div>
        {menu === 'people' && <PeopleMenu />}
        {menu === 'settings' && <SettingsMenu />}
      </div>
      <div className="terminal-body">
        {availability && !availability.enabled && <div className="terminal-empty" data-testid="terminal-off">Terminals are off: {availability.reason}</div>}
        {availability?.enabled && !active && <div className="terminal-empty">{isOwner ? 'No terminal open. Press + to open one.' : 'No terminal open. The owner opens terminals; you will see them here.'}</div>}
        {active && <TerminalView key={active.termId} info={active} mayType={mayType} />}
      </div>
    </section>
  );
}
