import { runBoundCommand } from '../commands/boundCommands';
import type { BoundCommandId } from '../commands/keybindings';
import { closeActiveTab, toggleAgentPanel } from '../stores/appCommands';
import { currentKeybindings, toggleWordWrap, useSettings } from '../stores/settingsStore';
import { monaco } from './monacoSetup';

const keyCodes: Record<string, keyof typeof monaco.KeyCode> = {
  ',': 'Comma',
  '.': 'Period',
  '/': 'Slash',
  '\\': 'Backslash',
  ';': 'Semicolon',
  "'": 'Quote',
  '`': 'Backquote',
  '[': 'BracketLeft',
  ']': 'BracketRight',
  '-': 'Minus',
  '=': 'Equal',
  Left: 'LeftArrow',
  Right: 'RightArrow',
  Up: 'UpArrow',
  Down: 'DownArrow',
  Escape: 'Escape',
  Enter: 'Enter',
  Space: 'Space',
  Tab: 'Tab',
  Backspace: 'Backspace',
  Delete: 'Delete',
  Home: 'Home',
  End: 'End',
  PageUp: 'PageUp',
  PageDown: 'PageDown',
  Insert: 'Insert',
};

/** A chord (keybindings.ts) as Monaco's keybinding number, or null if Monaco has no name for its key. */
export function monacoKeybinding(chord: string): number | null {
  const parts = chord.split('+');
  const key = parts.pop() ?? '';
  const name = /^[A-Z]$/.test(key) ? `Key${key}` : /^[0-9]$/.test(key) ? `Digit${key}` : /^F\d+$/.test(key) ? key : keyCodes[key];
  const code = name === undefined ? undefined : (monaco.KeyCode as unknown as Record<string, number>)[name];
  if (code === undefined) return null;
  let mods = 0;
  if (parts.includes('Mod')) mods |= monaco.KeyMod.CtrlCmd;
  if (parts.includes('Alt')) mods |= monaco.KeyMod.Alt;
  if (parts.includes('Shift')) mods |= monaco.KeyMod.Shift;
  return mods | code;
}

const groupActions: Array<[BoundCommandId, string]> = [
  ['split', 'View: Split Editor Right'],
  ['recent-tab', 'View: Open the Tab Used Before'],
  ['close-other-tabs', 'View: Close the Other Tabs'],
  ['close-all-tabs', 'View: Close All the Tabs of This Group'],
  ['problems', 'View: Show or Hide Problems'],
];

/**
 * The app's shortcuts in the editor's command list (F1), so it shows the truth — with the keys
 * the person gave them (Settings): Ctrl/Cmd-L is the agent panel here by default, and Monaco's
 * "Expand Line Selection" loses that key (still in F1, without one) while the panel holds it.
 * The window's key handler (Workspace) runs them before Monaco sees the key; these make them
 * listed, and runnable from F1. Registered again when the keys change.
 */
export function registerAppActions(editor: monaco.editor.IStandaloneCodeEditor): () => void {
  let disposers: Array<{ dispose(): void }> = [];
  const register = () => {
    for (const disposer of disposers) disposer.dispose();
    const keys = currentKeybindings();
    const bindingOf = (id: BoundCommandId) => {
      const chord = keys[id];
      const keybinding = chord === null ? null : monacoKeybinding(chord);
      return keybinding === null ? [] : [keybinding];
    };
    const panelKeys = bindingOf('agent-panel');
    disposers = [
      ...panelKeys.map((keybinding) => monaco.editor.addKeybindingRule({ keybinding, command: '-expandLineSelection' })),
      editor.addAction({ id: 'flint.agent.togglePanel', label: 'Agent: Open or Close the Agent Panel', keybindings: panelKeys, run: toggleAgentPanel }),
      // With Find open Alt+W is its "whole word", and this yields.
      editor.addAction({ id: 'flint.tabs.close', label: 'File: Close the Tab', keybindings: bindingOf('close-tab'), precondition: '!findWidgetVisible', run: closeActiveTab }),
      editor.addAction({ id: 'flint.view.toggleWordWrap', label: 'View: Toggle Word Wrap', keybindings: bindingOf('word-wrap'), run: toggleWordWrap }),
      // The editor groups' and Problems' commands (the window's handler and TabSwitcher take their keys first).
      ...groupActions.map(([id, label]) => editor.addAction({ id: `flint.${id}`, label, keybindings: bindingOf(id), run: () => void runBoundCommand(id) })),
    ];
  };
  register();
  const unsubscribe = useSettings.subscribe((state, previous) => {
    if (state.keybindings !== previous.keybindings) register();
  });
  return () => {
    unsubscribe();
    for (const disposer of disposers) disposer.dispose();
  };
}
