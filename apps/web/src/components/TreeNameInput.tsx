import { useEffect, useRef, useState } from 'react';

interface Props {
  initial: string;
  depth: number;
  kind: 'file' | 'folder';
  /** Resolves to null when done, or a sentence to show while the input stays open. */
  onCommit(name: string): Promise<string | null>;
  onCancel(): void;
}

/** The inline name field of the tree, for new entries and renames: Enter commits, Esc cancels. */
export function TreeNameInput({ initial, depth, kind, onCommit, onCancel }: Props) {
  const [value, setValue] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const element = input.current;
    if (!element) return;
    element.focus();
    // Like VS Code: select the name without its extension, so typing replaces just the name.
    const dot = kind === 'file' ? initial.lastIndexOf('.') : -1;
    element.setSelectionRange(0, dot > 0 ? dot : initial.length);
  }, [initial, kind]);

  const commit = async () => {
    const name = value.trim();
    if (busy) return;
    if (name === '' || name === initial) return onCancel();
    setBusy(true);
    const problem = await onCommit(name);
    setBusy(false);
    if (problem !== null) {
      setError(problem);
      input.current?.focus();
    }
  };

  return (
    <div className="tree-row tree-row--editing" style={{ paddingLeft: 8 + depth * 12 }}>
      <input
        ref={input}
        data-testid="tree-name-input"
        className={error ? 'tree-input tree-input--error' : 'tree-input'}
        value={value}
        spellCheck={false}
        aria-label={kind === 'file' ? 'File name' : 'Folder name'}
        aria-invalid={error !== null}
        readOnly={busy}
        onChange={(event) => {
          setValue(event.target.value);
          setError(null);
        }}
        onKeyDown={(event) => {
          event.stopPropagation();
          if (event.key === 'Enter') void commit();
          else if (event.key === 'Escape') onCancel();
        }}
        onBlur={() => {
          if (busy) return;
          // Leaving a refused name abandons it; leaving a fresh one keeps it, as in VS Code.
          if (error !== null) onCancel();
          else void commit();
        }}
      />
      {error && <div className="tree-input-error" role="alert">{error}</div>}
    </div>
  );
}
