import { agentShortcuts } from '../stores/agentMessages';
import { revealProblem, reviewFile, selectStreamingTurn, stopTurn, useAgent, type ReviewProblems } from '../stores/agentStore';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { selectThreadWritingIn, stopThread, useThread } from '../stores/threadStore';
import { requestEditorFocus, useWorkspace } from '../stores/workspaceStore';

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * A pill floating over the bottom of the editor: Stop while the agent writes in the file on
 * screen, Accept all / Reject all while changes wait for review. For every editor in the room,
 * not only whoever prompted; viewers get none of it (the gateway would refuse them).
 */
export function AgentReviewBar() {
  const canEdit = useConnection(selectCanEdit);
  const activeFileId = useWorkspace((s) => s.activeFileId);
  const inline = useAgent((s) => selectStreamingTurn(s, activeFileId));
  const thread = useThread((s) => selectThreadWritingIn(s, activeFileId));
  // The agent writing here: an inline edit, or the agent thread's turn (its Stop stops the thread).
  const streaming = inline
    ? { model: inline.model, tokensPerSecond: inline.tokensPerSecond, stop: () => void stopTurn(inline.turnId) }
    : thread
      ? { model: thread.model, tokensPerSecond: thread.tokensPerSecond, stop: () => void stopThread() }
      : null;
  const reviewable = useAgent((s) => (s.review !== null && s.review.fileId === activeFileId ? s.review.reviewable : 0));
  const problems = useAgent((s) => (s.problems !== null && s.problems.fileId === activeFileId ? s.problems : null));
  if (!canEdit || activeFileId === null || (!streaming && reviewable === 0)) return null;

  const review = (action: 'accept' | 'reject') => {
    reviewFile(activeFileId, action);
    requestEditorFocus();
  };
  return (
    <div className="agent-bar" role="toolbar" aria-label="AI changes">
      {streaming && (
        <>
          <span className="agent-bar-live">
            <span className="hud-dot" />
            <strong>{streaming.model}</strong> is writing
            {streaming.tokensPerSecond !== null && <span className="agent-bar-rate"> · {number.format(streaming.tokensPerSecond)} tok/s</span>}
          </span>
          <button type="button" className="agent-bar-button agent-bar-stop" data-testid="stop-button" title={`Stop the agent (${agentShortcuts.stop}); what it wrote stays for review`} onClick={streaming.stop}>
            ■ Stop <kbd>{agentShortcuts.stop}</kbd>
          </button>
        </>
      )}
      {streaming && reviewable > 0 && <span className="agent-bar-sep" />}
      {reviewable > 0 && (
        <>
          <span className="agent-bar-count">
            {reviewable} {reviewable === 1 ? 'change' : 'changes'} to review
          </span>
          {problems && <ProblemsSummary problems={problems} />}
          <button type="button" className="agent-bar-button agent-bar-reject" data-testid="reject-all" title={`Reject all: put the original back (${agentShortcuts.rejectAll})`} onClick={() => review('reject')}>
            Reject all
          </button>
          <button type="button" className="agent-bar-button agent-bar-accept" data-testid="accept-all" title={`Accept all (${agentShortcuts.acceptAll}); Tab accepts the change at the caret`} onClick={() => review('accept')}>
            Accept all <kbd>{agentShortcuts.acceptAll}</kbd>
          </button>
        </>
      )}
    </div>
  );
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * What the pending changes do to the file's TypeScript problems: the ones they add (click: go
 * to the first), the ones they fix, or that they add none. The tooltip lists the messages.
 */
function ProblemsSummary({ problems }: { problems: ReviewProblems }) {
  const { added, fixed } = problems;
  if (added.length === 0 && fixed.length === 0) {
    return (
      <span className="agent-bar-problems agent-bar-problems-clean" data-testid="review-problems-none" title="TypeScript finds no new problem in this file with these changes">
        ✓ no new problems
      </span>
    );
  }
  const word = added.every((problem) => problem.severity === 'error') ? 'error' : 'problem';
  return (
    <>
      {added.length > 0 && (
        <button
          type="button"
          className="agent-bar-problems agent-bar-problems-added"
          data-testid="review-problems-added"
          title={`These changes add:\n${added.map((p) => `line ${p.line}: ${p.message}`).join('\n')}\n\nClick to go to the first.`}
          onClick={() => revealProblem(problems.fileId, 0)}
        >
          ⊗ {plural(added.length, `new ${word}`)}
        </button>
      )}
      {fixed.length > 0 && (
        <span className="agent-bar-problems agent-bar-problems-fixed" data-testid="review-problems-fixed" title={`These changes fix:\n${fixed.map((p) => p.message).join('\n')}`}>
          ✓ {fixed.length} fixed
        </span>
      )}
    </>
  );
}
