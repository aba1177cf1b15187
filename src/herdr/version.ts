// herdr ≥ 0.8.0 is required on each side: `agent start NAME --kind --pane`, `server_not_running`
// envelopes and session reporting for all five kinds arrived in 0.8.0.
export const MIN_HERDR = [0, 8, 0] as const;

export interface VersionCheck {
  /** As printed, e.g. '0.8.0' or '0.8.0-preview.12'; 'unknown' when it could not be read. */
  version: string;
  ok: boolean;
  /** Set when the version could not be read: tolerated, but said. */
  warning?: string;
}

export function checkHerdrVersion(output: string): VersionCheck {
  const m = /(\d+)\.(\d+)\.(\d+)([-+][\w.-]+)?/.exec(output);
  if (!m) return { version: 'unknown', ok: true, warning: 'Could not read the herdr version; assuming it is recent enough.' };
  const parts = [Number(m[1]), Number(m[2]), Number(m[3])];
  let cmp = 0;
  for (let i = 0; i < 3 && cmp === 0; i++) cmp = Math.sign((parts[i] ?? 0) - (MIN_HERDR[i] ?? 0));
  return { version: m[0], ok: cmp >= 0 };
}
