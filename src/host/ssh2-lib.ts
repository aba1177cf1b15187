// ssh2, loaded on first use: ~45 ms of module loading (it stays outside the bundle, so no code
// cache covers it) that --version, help and local commands never need, and that a connection
// pays while its `ssh -G` runs in another process (see dialChain in ssh-connect.ts).
import { createRequire } from 'node:module';

type Ssh2 = typeof import('ssh2');

let lib: Ssh2 | undefined;

export function ssh2(): Ssh2 {
  return (lib ??= createRequire(import.meta.url)('ssh2') as Ssh2);
}
