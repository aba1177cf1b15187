// A view of a Host whose `stat` and `walk` ask each path once, the first answer standing for the
// view's life: for reads that ask the same file or folder more than once, as locating a session
// and walking its unit for each likely placement do (over ssh, a round trip or more each).
// Everything else is the Host's own, called on it.
import type { Host } from './host.js';

export function readsOnce(host: Host): Host {
  const stat = once((p) => host.stat(p));
  const walk = once((dir) => host.walk(dir));
  return new Proxy(host, {
    get(target, key) {
      if (key === 'stat') return stat;
      if (key === 'walk') return walk;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `read`, asked once per path (a failure too stands). */
function once<T>(read: (p: string) => Promise<T>): (p: string) => Promise<T> {
  const asked = new Map<string, Promise<T>>();
  return (p) => {
    let answer = asked.get(p);
    if (!answer) asked.set(p, (answer = read(p)));
    return answer;
  };
}
