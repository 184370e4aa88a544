import { useEffect, useRef, useState } from 'react';
import { setDisplayName, usePresence } from '../stores/presenceStore';
import { Avatar } from './PresenceBar';

/** Your name as others see it on your cursor. Commits on Enter or blur; kept in localStorage. */
export function DisplayNameInput() {
  const self = usePresence((s) => s.self);
  const [draft, setDraft] = useState(self.name);
  const cancelled = useRef(false);
  useEffect(() => setDraft(self.name), [self.name]);
  return (
    <label className="display-name" title="Your name, as others see it">
      <Avatar user={{ name: draft || self.name, color: self.color }} className="avatar--self" />
      <input
        data-testid="display-name"
        aria-label="Your display name"
        value={draft}
        maxLength={40}
        spellCheck={false}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter') event.currentTarget.blur();
          if (event.key === 'Escape') {
            cancelled.current = true;
            event.currentTarget.blur();
          }
        }}
        onBlur={() => {
          if (!cancelled.current) setDisplayName(draft);
          cancelled.current = false;
          // Whatever was kept (an empty or cancelled name keeps the old one) shows again.
          setDraft(usePresence.getState().self.name);
        }}
      />
    </label>
  );
}
