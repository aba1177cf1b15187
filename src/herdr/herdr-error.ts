// herdr's failures as HandoffErrors that keep herdr's own error code, with the fix for the codes
// a user can act on. Both transports (socket and CLI) raise them the same way.
import { HandoffError } from '../errors.js';

/** A herdr command failed; `code` is herdr's own error code (e.g. `agent_pane_busy`). */
export class HerdrError extends HandoffError {
  readonly herdrCode: string;
  constructor(herdrCode: string, message: string, hostLabel: string, fix?: string) {
    super(herdrCode, `herdr on ${hostLabel}: ${message}`, fix === undefined ? {} : { fix });
    this.name = 'HerdrError';
    this.herdrCode = herdrCode;
  }
}

export const FIXES: Record<string, string> = {
  server_not_running: 'Start herdr on that machine (run `herdr` once, or `herdr server`), then retry.',
  protocol_mismatch: 'The herdr client and server versions differ on that machine: restart the herdr server after updating herdr.',
  herdr_not_installed: 'Install herdr 0.8 or later on that machine and make sure it is on the login PATH (e.g. ~/.local/bin).',
};

/** The HerdrError for an error envelope herdr answered with (on its socket or the CLI's stderr). */
export function envelopeError(error: { code: string; message: string }, hostLabel: string): HerdrError {
  return new HerdrError(error.code, error.message, hostLabel, FIXES[error.code]);
}
