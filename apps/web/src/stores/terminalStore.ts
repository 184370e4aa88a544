import type { FlintClient } from '@flint/client';
import type { TerminalMessage, TerminalSettings } from '@flint/protocol';
import { create } from 'zustand';
import { requireClient, useConnection } from './connectionStore';
import { showNotice } from './workspaceStore';

type TerminalStateMessage = Extract<TerminalMessage, { type: 'term.state' }>;

interface TerminalPanelState {
  /** The panel is shown (Ctrl/Cmd+`). */
  open: boolean;
  activeTermId: string | null;
  /** The room's terminals, people and settings, as the gateway last sent them. */
  room: TerminalStateMessage | null;
  /** Who typed last, per terminal. */
  typists: Record<string, { name: string; color: string }>;
  /** Bumped to move the keyboard into the active terminal. */
  focusRequest: number;
}

export const useTerminals = create<TerminalPanelState>(() => ({ open: false, activeTermId: null, room: null, typists: {}, focusRequest: 0 }));

/** What a terminal view on screen does with its terminal's bytes. */
export interface TerminalSink {
  /** The screen as it is now: draw it from scratch. */
  screen(data: string): void;
  output(data: string): void;
}

const sinks = new Map<string, TerminalSink>();

/** Wires the store to the tab's connection (once, before the workspace renders). */
export function bindTerminals(client: FlintClient): void {
  client.onTerminal((message) => {
    switch (message.type) {
      case 'term.state': {
        const { activeTermId } = useTerminals.getState();
        const ids = message.terminals.map((t) => t.termId);
        // The check this tab started: its output is what the person wants to see.
        if (checkRequested && message.check?.status === 'running' && ids.includes(message.check.termId)) {
          checkRequested = false;
          useTerminals.setState({ room: message, open: true, activeTermId: message.check.termId });
          return;
        }
        useTerminals.setState({ room: message, activeTermId: activeTermId && ids.includes(activeTermId) ? activeTermId : (ids.at(-1) ?? null) });
        return;
      }
      case 'term.screen':
        return sinks.get(message.termId)?.screen(message.data);
      case 'term.output':
        return sinks.get(message.termId)?.output(message.data);
      case 'term.typist':
        useTerminals.setState((s) => ({ typists: { ...s.typists, [message.termId]: { name: message.name, color: message.color } } }));
    }
  });
  // A new session knows of no watcher: each view on screen asks again (and gets the screen).
  client.onStatus((status) => {
    if (status.kind !== 'open') return;
    for (const termId of sinks.keys()) client.sendTerminal({ type: 'term.watch', termId, watch: true });
  });
}

/** A view shows a terminal: its bytes flow while it is mounted, starting with the screen. */
export function watchTerminal(termId: string, sink: TerminalSink): () => void {
  sinks.set(termId, sink);
  const client = useConnection.getState().client;
  client?.sendTerminal({ type: 'term.watch', termId, watch: true });
  return () => {
    if (sinks.get(termId) !== sink) return;
    sinks.delete(termId);
    client?.sendTerminal({ type: 'term.watch', termId, watch: false });
  };
}

export function sendTerminalInput(termId: string, data: string): void {
  requireClient().sendTerminal({ type: 'term.input', termId, data });
}

export function resizeTerminal(termId: string, cols: number, rows: number): void {
  requireClient().sendTerminal({ type: 'term.resize', termId, cols, rows });
}

export function toggleTerminalPanel(): void {
  const { open, room } = useTerminals.getState();
  if (open) return useTerminals.setState({ open: false });
  useTerminals.setState((s) => ({ open: true, focusRequest: s.focusRequest + 1 }));
  // The owner's first Ctrl+` opens a shell, as in other editors.
  if (room?.availability.enabled && room.terminals.length === 0 && useConnection.getState().role === 'owner') void openTerminal();
}

export async function openTerminal(): Promise<void> {
  useTerminals.setState({ open: true });
  const result = await requireClient().request({ type: 'term.open', cols: 100, rows: 24 });
  if (!result.ok) return showNotice(`No terminal: ${result.message}`);
  if (result.termId) useTerminals.setState((s) => ({ activeTermId: result.termId ?? null, focusRequest: s.focusRequest + 1 }));
}

export async function closeTerminal(termId: string): Promise<void> {
  const result = await requireClient().request({ type: 'term.close', termId });
  if (!result.ok) showNotice(`The terminal stays open: ${result.message}`);
}

export function selectTerminal(termId: string): void {
  useTerminals.setState((s) => ({ activeTermId: termId, focusRequest: s.focusRequest + 1 }));
}

export async function grantTyping(linkId: string, mayType: boolean): Promise<void> {
  const result = await requireClient().request({ type: 'term.grant', linkId, mayType });
  if (!result.ok) showNotice(result.message);
}

export async function setTerminalSettings(settings: TerminalSettings): Promise<void> {
  const result = await requireClient().request({ type: 'term.settings', settings });
  if (!result.ok) showNotice(`Not changed: ${result.message}`);
}

/** The Check button: the workspace's check command, its outcome in everyone's status bar. */
let checkRequested = false;

export async function runCheck(): Promise<void> {
  checkRequested = true;
  const result = await requireClient().request({ type: 'term.check' });
  if (result.ok) return;
  checkRequested = false;
  showNotice(`No check: ${result.message}`);
}

export async function approveCommand(approvalId: string, approve: boolean): Promise<void> {
  const result = await requireClient().request({ type: 'term.approve', approvalId, approve });
  if (!result.ok) showNotice(result.message);
}

/** Whether this tab may type in the room's shells (the gateway decides; this only shapes the UI). */
export function selectMayType(state: TerminalPanelState): boolean {
  return state.room?.you.mayType ?? false;
}
