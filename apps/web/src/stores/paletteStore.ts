import { create } from 'zustand';

interface PaletteState {
  /** The command palette (Ctrl/Cmd+Shift+P) is open. */
  open: boolean;
  /** Bumped when a command asks for Go to file (the palette's "Go to file…"). */
  quickOpenRequest: number;
}

export const usePalette = create<PaletteState>(() => ({ open: false, quickOpenRequest: 0 }));

export function setPaletteOpen(open: boolean): void {
  usePalette.setState({ open });
}

export function requestQuickOpen(): void {
  usePalette.setState((state) => ({ quickOpenRequest: state.quickOpenRequest + 1 }));
}
