import { createShutdown } from '../../core/common';

describe('shutdown', () => {
  it('runs hooks once, newest first, and goes on past a failing hook', async () => {
    const order: string[] = [];
    const errors: unknown[] = [];
    const s = createShutdown({ info: () => {}, error: (obj: unknown) => void errors.push(obj) } as never);
    s.add('db', () => void order.push('db'));
    s.add('broken', () => {
      throw new Error('boom');
    });
    s.add('http', async () => {
      await Promise.resolve();
      order.push('http');
    });
    expect(s.isShuttingDown).toBe(false);
    await Promise.all([s.run('SIGTERM'), s.run('SIGINT')]);
    await s.run('again');
    expect(order).toEqual(['http', 'db']);
    expect(errors).toHaveLength(1);
    expect(s.signal.aborted).toBe(true);
    expect(s.isShuttingDown).toBe(true);
  });
});
