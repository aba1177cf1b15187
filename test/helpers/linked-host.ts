// A LocalHost taken for one across a link: its sockets cost a round trip (as over ssh), so herdr's
// client follows starts with a watch program and reaches herdr with the probe's program. It keeps
// the programs it ran, the requests sent with a new connection, and counts its connections.
import type { Duplex } from 'node:stream';
import type { RunOptions, RunResult } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';

export class LinkedHost extends LocalHost {
  override readonly socketsCostARoundTrip = true;
  readonly ran: string[][] = [];
  readonly requests: string[] = [];
  connections = 0;

  override run(argv: readonly string[], opts?: RunOptions): Promise<RunResult> {
    this.ran.push([...argv]);
    return super.run(argv, opts);
  }

  override connectSocket(p: string, opts?: { first?: string }): Promise<Duplex> {
    this.connections++;
    if (opts?.first !== undefined) this.requests.push(opts.first);
    return super.connectSocket(p, opts);
  }
}
