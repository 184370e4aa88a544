import { create } from 'zustand';

interface PaletteState {
  /** The command palette (Ctrl/Cmd+Shift+P) is open. */
  open: boolean;
  /** Bumped when a command asks for Go to file (the palette's "Go to file…"). */
  quickOpenRequest: number;
  /** Ctrl/Cmd+B: the sidebar (files, changes or search) is out of the way. */
  sidebarHidden: boolean;
  /** A tab's "Reveal in Explorer": the tree shows, selects and takes the keyboard to this path. */
  treeRevealRequest: { path: string; nonce: number } | null;
  /** Dragged (or set with the arrow keys) by this person, in CSS pixels; null: the default. Per browser. */
  sidebarWidth: number | null;
}

const sidebarWidthKey = 'flint.sidebarWidth';
export const sidebarWidthLimits = { min: 160, max: 640, step: 16 };

function savedSidebarWidth(): number | null {
  try {
    const width = Number(localStorage.getItem(sidebarWidthKey));
    return Number.isFinite(width) && width >= sidebarWidthLimits.min && width <= sidebarWidthLimits.max ? width : null;
  } catch {
    return null; // no storage (a sandboxed frame): the default width
  }
}

export const usePalette = create<PaletteState>(() => ({ open: false, quickOpenRequest: 0, sidebarHidden: false, treeRevealRequest: null, sidebarWidth: savedSidebarWidth() }));

/** Sets the sidebar's width within its limits; `persist` keeps it for the next load (at the end of a drag). */
export function setSidebarWidth(width: number, persist: boolean): void {
  const clamped = Math.round(Math.max(sidebarWidthLimits.min, Math.min(sidebarWidthLimits.max, width)));
  usePalette.setState({ sidebarWidth: clamped });
  if (!persist) return;
  try {
    localStorage.setItem(sidebarWidthKey, String(clamped));
  } catch (error) {
    console.warn('Flint: could not remember the sidebar width', error);
  }
}

export function requestTreeReveal(path: string): void {
  usePalette.setState((state) => ({ sidebarHidden: false, treeRevealRequest: { path, nonce: (state.treeRevealRequest?.nonce ?? 0) + 1 } }));
}

export function toggleSidebar(): void {
  usePalette.setState((state) => ({ sidebarHidden: !state.sidebarHidden }));
}

export function setPaletteOpen(open: boolean): void {
  usePalette.setState({ open });
}

export function requestQuickOpen(): void {
  usePalette.setState((state) => ({ quickOpenRequest: state.quickOpenRequest + 1 }));
}
