import type { AgentErrorCode, ThreadFileChange, ThreadTurnRecord } from '@flint/protocol';
import { baseName, parentPath } from '@flint/protocol';
import { memo } from 'react';
import { describeTurnError } from '../stores/agentMessages';
import { openThreadFile, reviewKey, reviewThreadFile, reviewThreadTurn, undoFileOpReview, useThread, type FileReview } from '../stores/threadStore';

const statusText: Record<ThreadTurnRecord['status'], string> = {
  streaming: 'working',
  done: 'done',
  cancelled: 'stopped',
  failed: 'failed',
};

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

const providerCodes = new Set<string>(['not_configured', 'auth', 'rate_limited', 'quota', 'context_length', 'overloaded', 'circuit_open', 'network', 'bad_response', 'budget_exceeded', 'internal']);

/** What went wrong, in the words the rest of the IDE uses for the same provider failure. */
function errorText(error: NonNullable<ThreadTurnRecord['error']>): string {
  if (!providerCodes.has(error.code)) return error.message;
  const { title, detail } = describeTurnError({ code: error.code as AgentErrorCode, message: error.message, retryAfterMs: null });
  return `${title} ${detail}`;
}

interface Props {
  turn: ThreadTurnRecord;
  canReview: boolean;
}

/**
 * The end of a turn in the thread: how it went (status, model, speed, how full the window
 * was), the files it touched with live +/− counts, and its review. Accept / Reject, for a
 * file or the whole turn, are one transaction per file: one undo step in that file.
 */
export const ThreadTurn = memo(function ThreadTurn({ turn, canReview }: Props) {
  const files = turn.files;
  const streaming = turn.status === 'streaming';
  const reviewable = files.filter((file) => !file.deleted);
  return (
    <div className={`thread-turn thread-turn--${turn.status}`} data-testid="thread-turn" data-status={turn.status}>
      <div className="thread-turn-meta">
        <span className="thread-turn-status" data-testid="thread-turn-status">
          <span className="hud-dot" />
          {statusText[turn.status]}
        </span>
        <span className="thread-turn-model" title={`${turn.by} · route ${turn.route}`}>
          {turn.model} · {turn.route}
        </span>
        <span title="Output tokens per second">
          {turn.tokensPerSecond === null ? '—' : number.format(turn.tokensPerSecond)} <span className="hud-label">tok/s</span>
        </span>
        <span title="Time to first token">
          <span className="hud-label">TTFT</span> {turn.ttftMs === null ? '—' : `${number.format(turn.ttftMs)} ms`}
        </span>
        <span title={`${plural(turn.steps, 'model call')}, ${plural(turn.toolCalls, 'tool call')}`}>
          {compact.format(turn.outputTokens)} <span className="hud-label">tok</span>
        </span>
      </div>
      <ContextMeter context={turn.context} />
      {turn.error && (
        <div className="thread-turn-error" role="alert">
          {errorText(turn.error)}
        </div>
      )}
      {files.length > 0 && (
        <ul className="thread-files" aria-label="Files this turn changed">
          {files.map((file) => (
            <FileRow key={file.fileId} turnId={turn.turnId} file={file} canReview={canReview && !streaming} />
          ))}
        </ul>
      )}
      {reviewable.length > 0 && <TurnReview turnId={turn.turnId} files={reviewable} canReview={canReview && !streaming} streaming={streaming} />}
    </div>
  );
});

function ContextMeter({ context }: { context: ThreadTurnRecord['context'] }) {
  if (context.windowTokens <= 0) return null;
  const share = Math.min(1, context.usedTokens / context.windowTokens);
  const level = share > 0.9 ? 'full' : share > 0.7 ? 'high' : 'ok';
  return (
    <div className={`thread-context thread-context--${level}`} data-testid="thread-context" title={`The model's window at the last request: ${number.format(context.usedTokens)} of ${number.format(context.windowTokens)} tokens`}>
      <span className="hud-label">context</span>
      <span className="thread-context-bar">
        <span style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </span>
      <span>
        {compact.format(context.usedTokens)} / {compact.format(context.windowTokens)}
      </span>
      {context.trimmed && (
        <span className="thread-context-trimmed" title={`Left out to fit the window: ${context.trimmed}`}>
          trimmed: {context.trimmed}
        </span>
      )}
    </div>
  );
}

/** Where a file's review stands, when this tab has its doc: still pending, or how it ended. */
function reviewState(review: FileReview | undefined): 'pending' | 'accepted' | 'rejected' | 'mixed' | 'none' | null {
  if (!review) return null;
  if (review.pending > 0) return 'pending';
  if (review.accepted > 0 && review.rejected > 0) return 'mixed';
  if (review.accepted > 0) return 'accepted';
  if (review.rejected > 0) return 'rejected';
  return 'none';
}

const reviewedText = { accepted: 'accepted', rejected: 'rejected', mixed: 'reviewed', none: '' } as const;

function FileRow({ turnId, file, canReview }: { turnId: string; file: ThreadFileChange; canReview: boolean }) {
  const state = useThread((s) => reviewState(s.reviews.get(reviewKey(turnId, file.fileId))));
  const open = () => openThreadFile({ fileId: file.fileId, path: file.path }, file.line);
  const folder = parentPath(file.path);
  const settled = state !== null && state !== 'pending';
  return (
    <li className={`thread-file${file.deleted ? ' thread-file--deleted' : ''}`} data-testid="thread-file" data-path={file.path} data-review={state ?? undefined}>
      <button type="button" className="thread-file-open" disabled={file.deleted} title={file.deleted ? `${file.path} was deleted` : `Open ${file.path} at line ${file.line}`} onClick={open}>
        <span className="thread-file-name">{baseName(file.path)}</span>
        {folder && <span className="thread-file-dir">{folder}</span>}
      </button>
      {file.created && <span className="thread-tag thread-tag--created">new</span>}
      {file.deleted && <span className="thread-tag thread-tag--deleted">deleted</span>}
      <span className="thread-file-counts">
        <span className="thread-added">+{file.added}</span> <span className="thread-removed">−{file.removed}</span>
      </span>
      {file.deleted ? (
        // The turn deleted it: its doc was kept, so Reject brings it back (decision 0026).
        <span className="thread-file-actions">
          <button type="button" className="thread-icon-button thread-reject" data-testid="thread-file-restore" disabled={!canReview} title={`Reject the deletion: bring ${file.path} back with its text`} aria-label={`Restore ${file.path}`} onClick={() => void reviewThreadFile(turnId, file.fileId, 'reject')}>
            ↶
          </button>
        </span>
      ) : settled ? (
        <span className={`thread-file-reviewed thread-file-reviewed--${state}`}>
          {reviewedText[state]}
          {file.created && state === 'rejected' && (
            <button type="button" className="thread-icon-button" data-testid="thread-file-undo" disabled={!canReview} title={`Undo: make ${file.path} again`} aria-label={`Undo rejecting ${file.path}`} onClick={() => void undoFileOpReview(turnId, file.fileId)}>
              ↶
            </button>
          )}
        </span>
      ) : (
        <span className="thread-file-actions">
          <button type="button" className="thread-icon-button thread-reject" data-testid="thread-file-reject" disabled={!canReview} title={`Reject the changes to ${file.path} (one undo step)`} aria-label={`Reject ${file.path}`} onClick={() => void reviewThreadFile(turnId, file.fileId, 'reject')}>
            ✗
          </button>
          <button type="button" className="thread-icon-button thread-accept" data-testid="thread-file-accept" disabled={!canReview} title={`Accept the changes to ${file.path} (one undo step)`} aria-label={`Accept ${file.path}`} onClick={() => void reviewThreadFile(turnId, file.fileId, 'accept')}>
            ✓
          </button>
        </span>
      )}
    </li>
  );
}

function TurnReview({ turnId, files, canReview, streaming }: { turnId: string; files: ThreadFileChange[]; canReview: boolean; streaming: boolean }) {
  const pending = useThread((s) => {
    let count = 0;
    for (const file of files) {
      const review = s.reviews.get(reviewKey(turnId, file.fileId));
      if (!review || review.pending > 0) count++;
    }
    return count;
  });
  if (pending === 0) return null;
  const why = streaming ? 'The agent is still writing; review once it stops.' : canReview ? '' : 'Viewers cannot review changes.';
  return (
    <div className="thread-turn-review">
      <span className="thread-turn-review-count">{plural(pending, 'file')} to review</span>
      <button type="button" className="agent-bar-button agent-bar-reject" data-testid="thread-turn-reject" disabled={!canReview} title={why || 'Reject every change of this turn (one undo step per file)'} onClick={() => void reviewThreadTurn(turnId, 'reject')}>
        Reject all
      </button>
      <button type="button" className="agent-bar-button agent-bar-accept" data-testid="thread-turn-accept" disabled={!canReview} title={why || 'Accept every change of this turn (one undo step per file)'} onClick={() => void reviewThreadTurn(turnId, 'accept')}>
        Accept all
      </button>
    </div>
  );
}
