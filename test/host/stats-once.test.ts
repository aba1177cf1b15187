// stats-once.ts: a Host's view that stats each path once; the rest is the Host's own.
import { describe, expect, it } from 'vitest';
import type { FileStat, Host } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { statsOnce } from '../../src/host/stats-once.js';

/** A Host whose stat counts its calls per path; its other method needs `this`. */
class CountingHost {
  readonly label = 'counting';
  readonly asked: string[] = [];
  private answers = 0;
  async stat(p: string): Promise<FileStat | null> {
    this.asked.push(p);
    return p.endsWith('missing') ? null : ({ type: 'file', size: ++this.answers, mode: 0o600, mtimeMs: 0 } as FileStat);
  }
  async realpath(p: string): Promise<string> {
    return `${this.label}:${p}`;
  }
}

describe('statsOnce', () => {
  it('asks each path once, the first answer standing (a missing file too)', async () => {
    const host = new CountingHost();
    const view = statsOnce(host as unknown as Host);
    const [a, b] = await Promise.all([view.stat('/s/a'), view.stat('/s/a')]);
    expect(a).toBe(b);
    expect(await view.stat('/s/a')).toBe(a);
    expect(await view.stat('/s/missing')).toBeNull();
    expect(await view.stat('/s/missing')).toBeNull();
    expect((await view.stat('/s/b'))?.size).toBe(2);
    expect(host.asked).toEqual(['/s/a', '/s/missing', '/s/b']);
    // The Host itself still asks every time.
    await host.stat('/s/a');
    expect(host.asked).toHaveLength(4);
  });

  it("gives the Host's own methods and fields, called on the Host", async () => {
    const host = new CountingHost();
    const view = statsOnce(host as unknown as Host);
    expect(view.label).toBe('counting');
    expect(await view.realpath('/x')).toBe('counting:/x');
    const local = new LocalHost();
    const viewed = statsOnce(local);
    expect(await viewed.info()).toBe(await local.info());
  });
});
