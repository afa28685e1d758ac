import { QueueDriver } from '@test/support/merge-queue-driver';

/** A queue with one PR in CI, then `migrate`: the status is `migrating`. */
function migratingQueue(): QueueDriver {
  const d = new QueueDriver();
  d.enqueue(1);
  d.complete();
  d.send({ type: 'migrate' });
  expect(d.state.status).toBe('migrating');
  return d;
}

describe('pause and resume during a move (issue 24)', () => {
  it('migrate, pause, migrated: the pause is remembered, the status stays migrating, and the queue is paused after the move', () => {
    const d = migratingQueue();
    const revision = d.state.revision;
    d.send({ type: 'pause' });
    expect(d.state.status).toBe('migrating');
    expect(d.state.revision).toBe(revision + 1);
    expect(d.state.pausedBeforeMigration).toBe(true);
    const ops = d.send({ type: 'migrated', baseSha: 'moved0' });
    expect(d.state.status).toBe('paused');
    expect(d.state.baseSha).toBe('moved0');
    expect(ops.filter((o) => o.kind !== 'cleanup')).toEqual([]);
    d.send({ type: 'resume' });
    expect(d.state.status).toBe('active');
    expect(d.monitor.violations).toEqual([]);
  });

  it('migrate, pause, resume, migrated: the resume takes the pause back and the queue plans after the move', () => {
    const d = migratingQueue();
    d.send({ type: 'pause' });
    d.send({ type: 'resume' });
    expect(d.state.status).toBe('migrating');
    expect(d.state.pausedBeforeMigration).toBeUndefined();
    const ops = d.send({ type: 'migrated', baseSha: 'moved0' });
    expect(d.state.status).toBe('active');
    expect(ops.map((o) => o.kind)).toContain('prepare');
    expect(d.monitor.violations).toEqual([]);
  });

  it('pause, migrate, resume, migrated: a resume during the move undoes the pause from before it', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.send({ type: 'pause' });
    d.send({ type: 'migrate' });
    expect(d.state.pausedBeforeMigration).toBe(true);
    d.send({ type: 'resume' });
    expect(d.state.status).toBe('migrating');
    d.send({ type: 'migrated', baseSha: 'moved0' });
    expect(d.state.status).toBe('active');
    expect(d.monitor.violations).toEqual([]);
  });

  it('pause, migrate, migrated: paused before the move, paused after it', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.send({ type: 'pause' });
    d.send({ type: 'migrate' });
    d.send({ type: 'migrated', baseSha: 'moved0' });
    expect(d.state.status).toBe('paused');
  });

  it('migrate, resume, migrated: a resume with no pause to take back changes nothing', () => {
    const d = migratingQueue();
    const before = d.state;
    d.send({ type: 'resume' });
    expect(d.state).toBe(before);
    d.send({ type: 'migrated', baseSha: 'moved0' });
    expect(d.state.status).toBe('active');
  });

  it('migrate, pause, pause: the second pause changes nothing', () => {
    const d = migratingQueue();
    d.send({ type: 'pause' });
    const before = d.state;
    d.send({ type: 'pause' });
    expect(d.state).toBe(before);
  });

  it('migrate, migrated, pause: a pause after the move pauses at once', () => {
    const d = migratingQueue();
    d.send({ type: 'migrated', baseSha: 'moved0' });
    d.send({ type: 'pause' });
    expect(d.state.status).toBe('paused');
  });

  it('migrate, pause, disable, enable, migrated: disable ends the move at once (disable and enable have no gap)', () => {
    const d = migratingQueue();
    d.send({ type: 'pause' });
    d.send({ type: 'disable' });
    expect(d.state.status).toBe('disabled');
    expect(d.state.pausedBeforeMigration).toBeUndefined();
    d.send({ type: 'enable' });
    expect(d.state.status).toBe('active');
    // a disabled queue no longer migrates: the executor moves it with baseMoved, and `migrated` is ignored
    const before = d.state;
    d.send({ type: 'migrated', baseSha: 'moved0' });
    expect(d.state).toBe(before);
    expect(d.monitor.violations).toEqual([]);
  });
});
