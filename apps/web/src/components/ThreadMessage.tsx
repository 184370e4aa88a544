import type { ThreadMessage as Message } from '@flint/protocol';
import { memo, type CSSProperties } from 'react';
import { openThreadFile } from '../stores/threadStore';
import { Avatar } from './PresenceBar';
import { ThreadMarkdown } from './ThreadMarkdown';

/** Only a plain colour reaches a style attribute: the name and colour come from a peer. */
const safeColor = (color: string | undefined) => (color && /^#[0-9a-f]{6}$/i.test(color) ? color : '#9aa3b2');

const toolMarks = { running: '◌', done: '✓', failed: '✗' } as const;

interface Props {
  message: Message;
  /** The model that answered, for an assistant message (from its turn). */
  model?: string;
  /** The turn is still streaming: an empty answer is the model thinking, not an empty answer. */
  streaming?: boolean;
}

/** One entry of the thread: a person's message, the model's answer, a tool step, or a notice. */
export const ThreadMessage = memo(function ThreadMessage({ message, model, streaming = false }: Props) {
  switch (message.kind) {
    case 'user':
      return <UserMessage message={message} />;
    case 'assistant':
      return (
        <div className="thread-msg thread-msg--assistant" data-testid="thread-message" data-kind="assistant">
          <div className="thread-msg-head">
            <span className="thread-agent-mark">✦</span>
            <span className="thread-msg-author">{model ?? 'Agent'}</span>
          </div>
          {message.text === '' && streaming ? <div className="thread-thinking">thinking…</div> : <ThreadMarkdown text={message.text} />}
        </div>
      );
    case 'tool':
      return <ToolStep message={message} />;
    case 'notice':
      return (
        <div className={`thread-notice thread-notice--${message.level ?? 'info'}`} data-testid="thread-notice" data-level={message.level ?? 'info'} role={message.level === 'error' ? 'alert' : undefined}>
          <span className="thread-notice-mark" aria-hidden="true">
            {message.level === 'error' ? '⚠' : 'i'}
          </span>
          <span className="thread-notice-text">{message.text}</span>
          {message.path !== undefined && <PathLink path={message.path} line={message.line} />}
        </div>
      );
  }
});

function UserMessage({ message }: { message: Message }) {
  const author = message.author ?? { name: 'Someone', color: '#9aa3b2' };
  const color = safeColor(author.color);
  const className = ['thread-msg', 'thread-msg--user', message.steer && 'thread-msg--steer', message.queued && 'thread-msg--queued'].filter(Boolean).join(' ');
  return (
    <div className={className} style={{ '--author-color': color } as CSSProperties} data-testid="thread-message" data-kind="user" data-queued={message.queued ? 'true' : undefined}>
      <div className="thread-msg-head">
        <Avatar user={{ name: author.name, color }} className="thread-avatar" />
        <span className="thread-msg-author" style={{ color }}>
          {author.name.slice(0, 40)}
        </span>
        {message.steer && (
          <span className="thread-tag thread-tag--steer" title="Sent while the agent was working: it changed course with this">
            steered
          </span>
        )}
        {message.queued && (
          <span className="thread-tag" title="Waits for the current turn to finish">
            queued
          </span>
        )}
        {message.route === 'deep' && <span className="thread-tag">deep</span>}
      </div>
      <div className="thread-user-text">{message.text}</div>
    </div>
  );
}

function ToolStep({ message }: { message: Message }) {
  const status = message.status ?? 'done';
  const summary = message.summary || message.tool || 'tool';
  return (
    <div className={`thread-tool thread-tool--${status}`} data-testid="thread-tool-step" data-status={status} title={message.tool ? `${message.tool}${message.detail ? `\n${message.detail}` : ''}` : undefined}>
      <div className="thread-tool-line">
        <span className="thread-tool-mark" aria-label={status}>
          {toolMarks[status]}
        </span>
        {message.path !== undefined ? (
          <button type="button" className="thread-tool-summary thread-link" title={`Open ${message.path}${message.line ? ` at line ${message.line}` : ''}`} onClick={() => openThreadFile({ path: message.path }, message.line)}>
            {summary}
          </button>
        ) : (
          <span className="thread-tool-summary">{summary}</span>
        )}
      </div>
      {status === 'failed' && message.detail && <div className="thread-tool-detail">{message.detail}</div>}
    </div>
  );
}

function PathLink({ path, line }: { path: string; line?: number }) {
  return (
    <button type="button" className="thread-link thread-notice-path" onClick={() => openThreadFile({ path }, line)}>
      {path}
      {line !== undefined && `:${line}`}
    </button>
  );
}
