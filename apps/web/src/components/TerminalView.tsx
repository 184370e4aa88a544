import { FitAddon } from '@xterm/addon-fit';
import { WebglAddon } from '@xterm/addon-webgl';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef } from 'react';
import type { TerminalInfo } from '@flint/protocol';
import { resizeTerminal, sendTerminalInput, useTerminals, watchTerminal } from '../stores/terminalStore';
import { openThreadFile } from '../stores/threadStore';
import { findFileLinks } from '../terminal/fileLinks';

function loadWebgl(xterm: Terminal): void {
  try {
    const webgl = new WebglAddon();
    webgl.onContextLoss(() => webgl.dispose());
    xterm.loadAddon(webgl);
  } catch {
    // No WebGL here (a blocked GPU): xterm's DOM renderer draws it.
  }
}

const theme = { background: '#121418', foreground: '#d6d9df', cursor: '#f5a524', selectionBackground: '#2a2f3b' };

/**
 * One shared terminal on screen (xterm.js; WebGL where the browser has it). It shows the
 * terminal at the size its pty has, so every watcher sees the same lines; a person who may type
 * asks the gateway for the size that fits their panel.
 */
export function TerminalView({ info, mayType }: { info: TerminalInfo; mayType: boolean }) {
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const fit = useRef<FitAddon | null>(null);
  const canType = useRef(mayType);
  canType.current = mayType && info.kind === 'shell';
  const focusRequest = useTerminals((s) => s.focusRequest);

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const xterm = new Terminal({ theme, fontFamily: "'JetBrains Mono', 'DejaVu Sans Mono', monospace", fontSize: 12.5, scrollback: 5000, cols: info.cols, rows: info.rows, allowProposedApi: true });
    const fitAddon = new FitAddon();
    xterm.loadAddon(fitAddon);
    xterm.open(element);
    // As VS Code's `terminal.integrated.gpuAcceleration`: "off" draws with the DOM (some GPUs
    // blur WebGL text; the DOM's rows can be read by tools).
    if (localStorage.getItem('flint.terminalGpu') !== 'off') loadWebgl(xterm);
    const links = xterm.registerLinkProvider({
      provideLinks: (y, callback) => {
        const text = xterm.buffer.active.getLine(y - 1)?.translateToString(true) ?? '';
        const found = findFileLinks(text);
        callback(
          found.length === 0
            ? undefined
            : found.map((link) => ({
                range: { start: { x: link.start + 1, y }, end: { x: link.end, y } },
                text: text.slice(link.start, link.end),
                activate: () => openThreadFile({ path: link.path }, link.line),
              })),
        );
      },
    });
    const input = xterm.onData((data) => {
      if (canType.current) sendTerminalInput(info.termId, data);
    });
    const stop = watchTerminal(info.termId, {
      screen: (data) => {
        xterm.reset();
        xterm.write(data);
      },
      output: (data) => xterm.write(data),
    });
    term.current = xterm;
    fit.current = fitAddon;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const observer = new ResizeObserver(() => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        const size = fitAddon.proposeDimensions();
        if (canType.current && size && size.cols >= 2 && size.rows >= 1 && (size.cols !== xterm.cols || size.rows !== xterm.rows)) resizeTerminal(info.termId, Math.min(size.cols, 500), Math.min(size.rows, 200));
      }, 80);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      if (timer) clearTimeout(timer);
      stop();
      input.dispose();
      links.dispose();
      xterm.dispose();
      term.current = null;
    };
    // The view is made once per terminal; size and permission follow below.
  }, [info.termId]);

  useEffect(() => {
    const xterm = term.current;
    if (xterm && (xterm.cols !== info.cols || xterm.rows !== info.rows)) xterm.resize(info.cols, info.rows);
  }, [info.cols, info.rows]);

  useEffect(() => {
    const xterm = term.current;
    if (!xterm) return;
    xterm.options.disableStdin = !canType.current;
    xterm.options.cursorBlink = canType.current;
    // Given "may type" with the panel open: fit it now, not at the next resize.
    const size = fit.current?.proposeDimensions();
    if (canType.current && size && size.cols >= 2 && size.rows >= 1 && (size.cols !== info.cols || size.rows !== info.rows)) resizeTerminal(info.termId, Math.min(size.cols, 500), Math.min(size.rows, 200));
  }, [mayType, info.termId, info.cols, info.rows]);

  useEffect(() => {
    if (canType.current) term.current?.focus();
  }, [focusRequest]);

  return <div className="terminal-view" ref={host} data-testid="terminal-view" data-term-id={info.termId} data-may-type={canType.current ? 'true' : 'false'} />;
}
