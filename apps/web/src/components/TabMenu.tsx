import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { BoundCommandId } from '../commands/keybindings';
import { runTabAction, type TabAction } from '../stores/appCommands';
import { shortcutOf, useSettings } from '../stores/settingsStore';

/** The menu's actions; those with a command in the key table show the person's key for it. */
const items: Array<{ action: TabAction; label: string; command?: BoundCommandId } | 'separator'> = [
  { action: 'close', label: 'Close', command: 'close-tab' },
  { action: 'close-others', label: 'Close Others', command: 'close-other-tabs' },
  { action: 'close-right', label: 'Close to the Right' },
  { action: 'close-all', label: 'Close All', command: 'close-all-tabs' },
  'separator',
  { action: 'copy-path', label: 'Copy Path' },
  { action: 'copy-relative-path', label: 'Copy Relative Path' },
  'separator',
  { action: 'reveal', label: 'Reveal in Explorer' },
  { action: 'split-right', label: 'Split Right', command: 'split' },
];

export interface TabMenuTarget {
  group: number;
  fileId: string;
  /** Where it opens, in the page's pixels (the pointer, or under the tab for Shift+F10). */
  x: number;
  y: number;
}

/**
 * A tab's context menu, as in VS Code: right click or Shift+F10 (or the menu key) on a tab.
 * Arrow keys move, Enter runs, Esc closes and gives the keyboard back to the tab.
 */
export function TabMenu({ target, onClose }: { target: TabMenuTarget; onClose(restoreFocus: boolean): void }) {
  const menu = useRef<HTMLDivElement>(null);
  const [position, setPosition] = useState({ left: target.x, top: target.y });

  // Inside the window, however near its edge the tab is.
  useLayoutEffect(() => {
    const box = menu.current?.getBoundingClientRect();
    if (!box) return;
    setPosition({ left: Math.max(4, Math.min(target.x, window.innerWidth - box.width - 4)), top: Math.max(4, Math.min(target.y, window.innerHeight - box.height - 4)) });
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
  }, [target]);

  useEffect(() => {
    const away = (event: PointerEvent) => {
      if (!menu.current?.contains(event.target as Node)) onClose(false);
    };
    const blur = () => onClose(false);
    window.addEventListener('pointerdown', away, true);
    window.addEventListener('blur', blur);
    return () => {
      window.removeEventListener('pointerdown', away, true);
      window.removeEventListener('blur', blur);
    };
  }, [onClose]);

  const run = (action: TabAction) => {
    onClose(action !== 'reveal' && action !== 'split-right');
    runTabAction(action, target.group, target.fileId);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const buttons = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
    const at = buttons.indexOf(document.activeElement as HTMLElement);
    const move = (to: number) => buttons[(to + buttons.length) % buttons.length]?.focus();
    if (event.key === 'ArrowDown') move(at + 1);
    else if (event.key === 'ArrowUp') move(at - 1);
    else if (event.key === 'Home') move(0);
    else if (event.key === 'End') move(buttons.length - 1);
    else if (event.key === 'Escape' || event.key === 'Tab') onClose(true);
    else return;
    event.preventDefault();
    event.stopPropagation();
  };

  // Re-rendered when the person changes a key.
  useSettings((st) => st.keybindings);
  return (
    <div ref={menu} className="context-menu" role="menu" aria-label="Tab actions" data-testid="tab-menu" style={position} onKeyDown={onKeyDown} onContextMenu={(e) => e.preventDefault()}>
      {items.map((item, i) => {
        const shortcut = item === 'separator' || item.command === undefined ? undefined : shortcutOf(item.command);
        return item === 'separator' ? (
          <div key={`sep-${i}`} className="context-menu-separator" role="separator" />
        ) : (
          <button key={item.action} type="button" role="menuitem" tabIndex={-1} className="context-menu-item" data-action={item.action} onClick={() => run(item.action)}>
            <span>{item.label}</span>
            {shortcut && <kbd className="context-menu-key">{shortcut}</kbd>}
          </button>
        );
      })}
    </div>
  );
}
