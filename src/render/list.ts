// `list` for a person: one aligned row per agent.
import type { ListResult, ListedAgent } from '../result.js';
import { styleFor, table, tildePath, type RenderOptions } from './style.js';

/** The first characters of a session id (a pi or omp transcript path: the id in its file name). */
export function sessionPrefix(session: ListedAgent['session']): string {
  if (!session) return '-';
  const base = session.kind === 'path' ? (session.value.split('/').pop() ?? session.value).replace(/\.[a-z]+$/i, '') : session.value;
  const id = base.includes('_') ? base.slice(base.lastIndexOf('_') + 1) : base;
  return id.slice(0, 8);
}

export function renderList(result: ListResult, opts: RenderOptions): string {
  const style = styleFor(opts.color);
  if (result.agents.length === 0) return `No herdr agents on ${result.host}.\n`;
  const rows = result.agents.map((a) => [
    a.this_pane ? `${a.target} ${style.dim('(this pane)')}` : a.target,
    a.kind ?? '-',
    a.status,
    a.cwd ? tildePath(a.cwd, opts.home) : '-',
    sessionPrefix(a.session),
    a.supported ? style.green('yes') : style.red('no'),
  ]);
  const where = result.address && result.address !== result.host ? `${result.host} (${result.address})` : result.host;
  const out = [`Agents on ${where}:\n`, table(['TARGET', 'KIND', 'STATUS', 'CWD', 'SESSION', 'MOVABLE'], rows, style)];
  for (const a of result.agents) {
    if (a.moved) out.push(style.yellow(`note: ${a.target}'s session was handed off to ${a.moved.to} (${a.moved.at}); this copy may be stale.\n`));
  }
  return out.join('');
}
