import { create } from 'zustand';

interface PaletteState {
  /** The command palette (Ctrl/Cmd+Shift+P) is open. */
  open: boolean;
  /** Bumped when a command asks for Go to file (the palette's "Go to file…"). */
  quickOpenRequest: number;
  /** Ctrl/Cmd+B: the sidebar (files, changes or search) is out of the way. */
  sidebarHidden: boolean;
}

export const usePalette = create<PaletteState>(() => ({ open: false, quickOpenRequest: 0, sidebarHidden: false }));

export function toggleSidebar(): void {
  usePalette.setState((state) => ({ sidebarHidden: !state.sidebarHidden }));
}

export function setPaletteOpen(open: boolean): void {
  usePalette.setState({ open });
}

export function requestQuickOpen(): void {
  usePalette.setState((state) => ({ quickOpenRequest: state.quickOpenRequest + 1 }));
}
