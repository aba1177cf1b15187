// A view of a Host whose `stat` asks each path once, the first answer standing for the view's
// life: for reads that ask the same file more than once, as locating a session and walking its
// unit do (over ssh, a round trip each). Everything else is the Host's own, called on it.
import type { FileStat, Host } from './host.js';

export function statsOnce(host: Host): Host {
  const asked = new Map<string, Promise<FileStat | null>>();
  const stat = (p: string): Promise<FileStat | null> => {
    let answer = asked.get(p);
    if (!answer) asked.set(p, (answer = host.stat(p)));
    return answer;
  };
  return new Proxy(host, {
    get(target, key) {
      if (key === 'stat') return stat;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
