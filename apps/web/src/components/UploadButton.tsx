import { useRef } from 'react';
import { Icon } from './Icon';

/** "Upload…": picks files for the tree to upload; a lone .zip is unpacked, as when dropped. */
export function UploadButton({ onPick }: { onPick(files: File[]): void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className="icon-button" data-testid="upload-button" title="Upload files… (or drop them on the tree)" aria-label="Upload files" onClick={() => input.current?.click()}>
        <Icon name="upload" />
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="upload-input"
        onChange={(event) => {
          const files = [...(event.target.files ?? [])];
          // Cleared so that picking the same files again uploads them again.
          event.target.value = '';
          if (files.length > 0) onPick(files);
        }}
      />
    </>
  );
}
