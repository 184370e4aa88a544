import type { CompleterStats } from '@flint/client';
import { create } from 'zustand';

/** Autocomplete as the status bar shows it: on or off (remembered), and how it is doing. */
interface AutocompleteState {
  enabled: boolean;
  stats: CompleterStats | null;
}

const enabledKey = 'flint.autocomplete';

function storedEnabled(): boolean {
  try {
    return localStorage.getItem(enabledKey) !== 'off';
  } catch {
    return true; // storage disabled: on is the default
  }
}

export const useAutocomplete = create<AutocompleteState>(() => ({ enabled: storedEnabled(), stats: null }));

export function setAutocompleteEnabled(enabled: boolean): void {
  useAutocomplete.setState({ enabled });
  try {
    localStorage.setItem(enabledKey, enabled ? 'on' : 'off');
  } catch {
    // Storage disabled: the choice holds for this tab only.
  }
}

let pending: CompleterStats | null = null;
let frame: number | null = null;

/** Stats change at keystroke rate; the status bar takes them at most once per frame. */
export function reportAutocompleteStats(stats: CompleterStats): void {
  pending = stats;
  frame ??= requestAnimationFrame(() => {
    frame = null;
    useAutocomplete.setState({ stats: pending });
  });
}
