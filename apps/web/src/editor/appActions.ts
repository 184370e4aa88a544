import { closeActiveTab, toggleAgentPanel } from '../stores/appCommands';
import { monaco } from './monacoSetup';

/**
 * The app's shortcuts in the editor's command list (F1), so it shows the truth: Ctrl/Cmd-L is
 * the agent panel here, and Monaco's "Expand Line Selection" loses that key (still in F1,
 * without one). The window's key handler (Workspace) runs them before Monaco sees the key;
 * these make them listed, and runnable from F1.
 */
export function registerAppActions(editor: monaco.editor.IStandaloneCodeEditor): () => void {
  const { KeyMod, KeyCode } = monaco;
  const removed = monaco.editor.addKeybindingRule({ keybinding: KeyMod.CtrlCmd | KeyCode.KeyL, command: '-expandLineSelection' });
  const actions = [
    editor.addAction({ id: 'flint.agent.togglePanel', label: 'Agent: Open or Close the Agent Panel', keybindings: [KeyMod.CtrlCmd | KeyCode.KeyL], run: toggleAgentPanel }),
    // With Find open Alt+W is its "whole word", and this yields.
    editor.addAction({ id: 'flint.tabs.close', label: 'File: Close the Tab', keybindings: [KeyMod.Alt | KeyCode.KeyW], precondition: '!findWidgetVisible', run: closeActiveTab }),
  ];
  return () => {
    removed.dispose();
    for (const action of actions) action.dispose();
  };
}
