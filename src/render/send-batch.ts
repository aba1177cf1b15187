// A batch `send` for a person: a table of who went where, then what did not go and why.
import type { SendBatchResult } from '../commands/send-batch.js';
import { count, durationText, styleFor, table, tildePath, type RenderOptions } from './style.js';

export function renderSendBatch(r: SendBatchResult, opts: RenderOptions): string {
  const style = styleFor(opts.color);
  const t = (p: string) => tildePath(p, opts.home);
  const route = `${r.source.host} → ${r.target.host}`;
  const s = r.summary;
  const out: string[] = [];
  if (r.deferred) out.push(style.bold(`⧗ ${count(s.planned, 'agent')} will move ${route} once this agent's turn ends.`));
  else if (r.dry_run) out.push(style.bold(`Dry run: ${count(s.planned, 'agent')} can move ${route}${s.refused ? `, ${s.refused} cannot` : ''}; nothing was changed.`));
  else if (r.ok) out.push(style.green(style.bold(`✓ ${count(s.moved, 'agent')} moved ${route} in ${durationText(r.ms)}.`)));
  else out.push(style.yellow(style.bold(`${s.moved} of ${count(s.chosen, 'agent')} moved ${route}; ${s.failed + s.refused} did not.`)));
  const outcome = (o: string) => (o === 'moved' ? style.green(o) : o === 'planned' ? o : o === 'failed' ? style.red(o) : style.yellow(o));
  const rows = r.agents.map((a) => {
    const res = a.result;
    const where = res?.target_worktree ?? res?.plan?.will_create.worktree;
    const detail = a.error ? a.error.code : res?.target_agent ? `pane ${res.target_agent.pane}` : '';
    return [a.agent, a.kind ?? '?', outcome(a.outcome), where ? t(where) : '', detail];
  });
  out.push('', table(['AGENT', 'KIND', 'OUTCOME', 'WORKTREE', 'DETAIL'], rows, style).trimEnd());
  const shared = r.checkouts.filter((c) => c.agents.length > 1);
  if (shared.length > 0) {
    out.push('');
    for (const c of shared) out.push(style.dim(`${c.agents.join(', ')} share ${t(c.repo)}: one snapshot, one placement${c.stashed === null ? '' : c.stashed ? ', one stash' : ', changes kept at the source'}.`));
  }
  const problems = r.agents.filter((a) => a.error);
  if (problems.length > 0) out.push('');
  for (const a of problems) {
    out.push(`${style.red(`${a.agent}:`)} ${a.error!.error}`);
    if (a.error!.fix) out.push(`  ${style.bold('fix:')} ${a.error!.fix}`);
  }
  if (!r.dry_run && !r.deferred && s.moved > 0 && r.target.host !== 'local') out.push('', style.dim(`Attach: herdr --remote ${r.target.host}`));
  out.push(style.dim(`batch ${r.batch}: \`agent-handoff show ${r.batch}\` shows every step.`));
  return out.join('\n') + '\n';
}
