// reads-once.ts: a Host's view that stats and walks each path once; the rest is the Host's own.
import { describe, expect, it } from 'vitest';
import type { FileStat, Host, WalkedFile } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { readsOnce } from '../../src/host/reads-once.js';

/** A Host whose stat and walk count their calls per path; its other method needs `this`. */
class CountingHost {
  readonly label = 'counting';
  readonly asked: string[] = [];
  readonly walked: string[] = [];
  private answers = 0;
  async walk(dir: string): Promise<WalkedFile[]> {
    this.walked.push(dir);
    if (dir.endsWith('gone')) throw new Error(`no ${dir}`);
    return [{ path: `${dir}/f`, stat: { type: 'file', size: this.walked.length, mode: 0o600, mtimeMs: 0 } as FileStat }];
  }
  async stat(p: string): Promise<FileStat | null> {
    this.asked.push(p);
    return p.endsWith('missing') ? null : ({ type: 'file', size: ++this.answers, mode: 0o600, mtimeMs: 0 } as FileStat);
  }
  async realpath(p: string): Promise<string> {
    return `${this.label}:${p}`;
  }
}

describe('readsOnce', () => {
  it('asks each path once, the first answer standing (a missing file too)', async () => {
    const host = new CountingHost();
    const view = readsOnce(host as unknown as Host);
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

  it('walks each folder once, the first answer (or failure) standing', async () => {
    const host = new CountingHost();
    const view = readsOnce(host as unknown as Host);
    const [a, b] = await Promise.all([view.walk('/s/d'), view.walk('/s/d')]);
    expect(a).toBe(b);
    expect(await view.walk('/s/d')).toBe(a);
    await expect(view.walk('/s/gone')).rejects.toThrow('no /s/gone');
    await expect(view.walk('/s/gone')).rejects.toThrow('no /s/gone');
    expect((await view.walk('/s/e'))[0]?.stat.size).toBe(3);
    expect(host.walked).toEqual(['/s/d', '/s/gone', '/s/e']);
    // Stat and walk are apart: a path walked is still stat'ed.
    await view.stat('/s/d');
    expect(host.asked).toEqual(['/s/d']);
  });

  it("gives the Host's own methods and fields, called on the Host", async () => {
    const host = new CountingHost();
    const view = readsOnce(host as unknown as Host);
    expect(view.label).toBe('counting');
    expect(await view.realpath('/x')).toBe('counting:/x');
    const local = new LocalHost();
    const viewed = readsOnce(local);
    expect(await viewed.info()).toBe(await local.info());
  });
});
