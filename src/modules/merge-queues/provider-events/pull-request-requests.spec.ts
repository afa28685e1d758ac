import {
  decideEnqueue,
  dequeueReason,
  originOf,
  permissionRefusal,
  type PrRequest,
  queuesFor,
  refusalComment,
  type RequestQueue,
} from './pull-request-requests';

describe('pull-request-requests', () => {
  const sha = 'a'.repeat(40);
  const main: RequestQueue = { id: 'q-main', baseRef: 'main', enqueueLabel: 'queue', commentCommands: true, requireApproval: true };
  const release: RequestQueue = { id: 'q-release', baseRef: 'release', enqueueLabel: 'ship', commentCommands: false, requireApproval: false };
  const open = { state: 'open' as const, draft: false, baseRef: 'main', headSha: sha };
  const approved = { decision: 'APPROVED', headSha: sha };

  it('a label is for the queues it names; a comment for those that take comment commands', () => {
    expect(queuesFor({ via: 'label', label: 'queue' }, [main, release]).map((q) => q.id)).toEqual(['q-main']);
    expect(queuesFor({ via: 'label', label: 'ship' }, [main, release]).map((q) => q.id)).toEqual(['q-release']);
    expect(queuesFor({ via: 'label', label: 'bug' }, [main, release])).toEqual([]);
    expect(queuesFor({ via: 'comment' }, [main, release]).map((q) => q.id)).toEqual(['q-main']);
    expect(queuesFor({ via: 'label', label: 'queue' }, [{ ...main, enqueueLabel: null }])).toEqual([]);
  });

  it('accepts an open, non-draft PR on a queue’s base, approved for the head being queued when the queue requires it', () => {
    expect(decideEnqueue([main], { pull: open, review: approved })).toEqual({ accepted: true, queue: main });
    expect(decideEnqueue([main, release], { pull: { ...open, baseRef: 'release' } })).toEqual({ accepted: true, queue: release });
  });

  it('refuses, saying why: no PR, closed, draft, another base, not approved, approved for another head', () => {
    const why = (facts: Parameters<typeof decideEnqueue>[1], queues = [main]) => {
      const d = decideEnqueue(queues, facts);
      return d.accepted ? 'accepted' : d.why;
    };
    expect(why({ pull: null })).toBe('GitHub knows no such pull request');
    expect(why({ pull: { ...open, state: 'closed' }, review: approved })).toBe('the pull request is closed');
    expect(why({ pull: { ...open, draft: true }, review: approved })).toMatch(/is a draft; mark it ready for review/);
    expect(why({ pull: { ...open, baseRef: 'dev' }, review: approved }, [main, release])).toBe(
      'its base is `dev`, and the merge queue takes pull requests into `main`, `release` only; change the base first',
    );
    expect(why({ pull: open, review: { decision: 'REVIEW_REQUIRED', headSha: sha } })).toMatch(
      /review decision is REVIEW_REQUIRED, and this queue requires an approved/,
    );
    expect(why({ pull: open, review: { decision: null, headSha: sha } })).toMatch(/review decision is none/);
    expect(why({ pull: open, review: null })).toMatch(/no review decision/);
    expect(why({ pull: open, review: { decision: 'APPROVED', headSha: 'b'.repeat(40) } })).toMatch(/not the head aaaaaaaaaaaa/);
    // Without requireApproval the review is not asked.
    expect(why({ pull: open }, [{ ...main, requireApproval: false }])).toBe('accepted');
  });

  it('takes write, maintain and admin; names the permission of anyone else', () => {
    expect(permissionRefusal('dev', true, 'write', 'o/r')).toBeUndefined();
    expect(permissionRefusal('reader', false, 'read', 'o/r')).toBe(
      '@reader has `read` permission on o/r, and the merge queue takes requests only from people with write, maintain or admin permission',
    );
    expect(permissionRefusal('nobody', false, 'none', 'o/r')).toMatch(/^@nobody has no permission on o\/r/);
  });

  it('answers on the PR: who, what was refused, why, and what to do', () => {
    const label: PrRequest = { via: 'label', action: 'enqueue', number: 4, login: 'reader', label: 'queue' };
    expect(refusalComment(label, 'the pull request is closed')).toBe(
      '@reader: the merge queue did not queue this pull request (adding the label `queue`): the pull request is closed.\n\nOnce that is fixed, remove the label `queue` and add it again.',
    );
    const unlabel: PrRequest = { ...label, action: 'dequeue' };
    expect(refusalComment(unlabel, 'why')).toMatch(
      /did not remove this pull request from the queue \(removing the label `queue`\): why\. It stays in the queue\./,
    );
    const comment: PrRequest = { via: 'comment', action: 'dequeue', number: 4, login: 'dev' };
    expect(refusalComment(comment, 'it is not in the queue')).toMatch(/\(the comment `\/dequeue`\).*\n\nOnce that is fixed, comment `\/dequeue` again\.$/s);
    // The answer's first line is never a command.
    expect(refusalComment(comment, 'x').split('\n')[0].trim().startsWith('/')).toBe(false);
  });

  it('records how the entry came and who asked', () => {
    expect(originOf({ via: 'comment', action: 'enqueue', number: 1, login: 'dev' })).toEqual({ via: 'comment', actor: 'dev', actorKind: 'github' });
    expect(dequeueReason({ via: 'label', action: 'dequeue', number: 1, login: 'dev', label: 'queue' })).toBe('dequeued by @dev (label queue removed)');
    expect(dequeueReason({ via: 'comment', action: 'dequeue', number: 1, login: 'dev' })).toBe('dequeued by @dev (/dequeue)');
  });
});
