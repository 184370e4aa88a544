import type { KeyboardEvent, PointerEvent } from 'react';
import { setSidebarWidth, sidebarWidthLimits, usePalette } from '../stores/paletteStore';

/**
 * The sidebar's right edge: drag it, or focus it and use the arrow keys (Home and End for the
 * narrowest and widest), as a window splitter does (WAI-ARIA). The width is this browser's.
 */
export function SidebarResizer({ sidebar }: { sidebar: () => HTMLElement | null }) {
  const width = usePalette((s) => s.sidebarWidth);
  const current = () => width ?? sidebar()?.getBoundingClientRect().width ?? 240;

  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    if (event.button !== 0) return;
    event.preventDefault();
    const handle = event.currentTarget;
    handle.setPointerCapture(event.pointerId);
    const startX = event.clientX;
    const startWidth = current();
    let last = startWidth;
    const move = (e: globalThis.PointerEvent) => {
      last = startWidth + e.clientX - startX;
      setSidebarWidth(last, false);
    };
    const up = () => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', up);
      handle.removeEventListener('pointercancel', up);
      setSidebarWidth(last, true);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up);
    handle.addEventListener('pointercancel', up);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const { min, max, step } = sidebarWidthLimits;
    const now = current();
    const to = event.key === 'ArrowLeft' ? now - step : event.key === 'ArrowRight' ? now + step : event.key === 'Home' ? min : event.key === 'End' ? max : null;
    if (to === null) return;
    event.preventDefault();
    setSidebarWidth(to, true);
  };

  return (
    <div
      className="sidebar-resizer"
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the sidebar"
      aria-valuemin={sidebarWidthLimits.min}
      aria-valuemax={sidebarWidthLimits.max}
      aria-valuenow={Math.round(current())}
      tabIndex={0}
      data-testid="sidebar-resizer"
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  );
}
