// What the real herdr integrations do: when their hook/extension file is installed and the agent
// runs inside a herdr pane, send `pane.report_agent_session` (all kinds) and, for the
// full-lifecycle reporters (pi, omp), `pane.report_agent` with the state, straight to herdr's
// socket ($HERDR_SOCKET_PATH) as one JSON line each, with a `seq` that only grows (real herdr
// ignores a report whose seq is not newer than the last one from that source). Calls run one
// after another in the background (a slow herdr never freezes the TUI) and failures are
// ignored, like the real hooks.
import fs from 'node:fs';
import net from 'node:net';

/** Like the real pi extension: microseconds since the epoch, then one more per report. */
let lastSeq = Date.now() * 1000;
function nextSeq(): number {
  lastSeq = Math.max(lastSeq + 1, Date.now() * 1000);
  return lastSeq;
}

export class HerdrReporter {
  private chain: Promise<void> = Promise.resolve();
  private readonly socket: string | undefined;
  private readonly pane: string;
  private readonly source: string;
  /** The session last reported: the real extensions send it with every state report too. */
  private sessionRef: Record<string, string> = {};

  constructor(
    private readonly kind: string,
    integrationFile: string,
  ) {
    const env = process.env;
    const inHerdr = env.HERDR_ENV === '1' && !!env.HERDR_PANE_ID && !!env.HERDR_SOCKET_PATH;
    const installed = integrationFile !== '' && fs.existsSync(integrationFile);
    this.socket = inHerdr && installed ? env.HERDR_SOCKET_PATH : undefined;
    this.pane = env.HERDR_PANE_ID ?? '';
    this.source = `herdr:${kind}`;
  }

  get active(): boolean {
    return this.socket !== undefined;
  }

  /** `pane.report_agent_session`; pi/omp send the session file path, the others the id. */
  session(ref: { id?: string; path?: string }, start: 'startup' | 'resume'): void {
    this.sessionRef = ref.path ? { agent_session_path: ref.path } : { agent_session_id: ref.id ?? '' };
    this.call('pane.report_agent_session', { session_start_source: start, ...this.sessionRef });
  }

  /** `pane.report_agent` with the state (full-lifecycle reporters only). */
  state(state: 'working' | 'idle' | 'blocked'): void {
    this.call('pane.report_agent', { state, ...this.sessionRef });
  }

  private call(method: string, params: Record<string, unknown>): void {
    const socket = this.socket;
    if (!socket) return;
    // The seq is taken when the report is made, not when it is sent, so the order holds.
    const request = { id: `${this.source}:${Date.now()}:${Math.random().toString(36).slice(2)}`, method, params: { pane_id: this.pane, source: this.source, agent: this.kind, seq: nextSeq(), ...params } };
    this.chain = this.chain.then(() => send(socket, request));
  }

  /** Wait for queued calls, but never longer than `ms` (quitting must stay quick). */
  async flush(ms: number): Promise<void> {
    await Promise.race([this.chain, new Promise((r) => setTimeout(r, ms).unref())]);
  }
}

/** One request, one answer line (or an error, or 5 s); never rejects. */
function send(socket: string, request: unknown): Promise<void> {
  return new Promise<void>((resolve) => {
    const conn = net.createConnection(socket);
    const done = () => {
      clearTimeout(timer);
      conn.destroy();
      resolve();
    };
    const timer = setTimeout(done, 5000);
    timer.unref();
    conn.on('connect', () => conn.write(`${JSON.stringify(request)}\n`));
    conn.on('data', done);
    conn.on('error', done);
    conn.on('end', done);
  });
}
