// `send` for a person: where the agent runs now, what moved, what was checked, what is left to do.
import type { z } from 'zod';
import type { SendResult } from '../commands/send-result.js';
import { bytesText, count, durationText, fields, styleFor, tildePath, type RenderOptions } from './style.js';

export type SendView = z.infer<typeof SendResult>;

/** What a waiting screen asks of the person (README: "Screens that wait for a person"). */
const SCREEN_TEXT: Record<string, string> = {
  trust: 'the folder-trust question',
  first_run_setup: 'the first-run setup (theme, terms)',
  login: 'a login: the agent CLI is not logged in there',
  hook_review: 'a review of new hooks or settings',
  unrecognized_prompt: 'a screen agent-handoff did not recognise',
};

function listed(names: string[], max = 4): string {
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

export function renderSend(r: SendView, opts: RenderOptions): string {
  const style = styleFor(opts.color);
  const t = (p: string) => tildePath(p, opts.home);
  const plan = r.plan;
  const who = plan ? `${plan.agent.target} (${plan.kind})` : 'the agent';
  const route = plan ? `${plan.source.host} → ${plan.target.host}` : '';
  const out: string[] = [];
  for (const e of r.resumed ?? []) out.push(style.dim(`earlier handoff ${e.id}: ${e.action}`));
  if (!plan) {
    out.push(style.green(style.bold('✓ An earlier handoff of this agent was finished; nothing else to do.')));
    return out.join('\n') + '\n';
  }
  const changed = plan.source.changed_files;
  const session = `session ${plan.session.id.slice(0, 8)} (${count(plan.session.files, 'file')}, ${bytesText(plan.session.bytes)})`;
  if (r.deferred) {
    out.push(style.bold(`⧗ ${who} will move ${route} once its current turn ends.`));
    if (r.helper) out.push(fields([['helper', `workspace ${r.helper.workspace}, pane ${r.helper.pane} (job ${r.helper.job})`]], style).trimEnd());
    out.push(style.dim('  `agent-handoff history` shows how it went.'));
    return out.join('\n') + '\n';
  }
  const w = plan.will_create;
  if (r.dry_run) {
    out.push(style.bold(`Dry run: ${who} can move ${route}; nothing was changed.`));
    out.push(
      fields(
        [
          ['branch', `${w.branch}${w.new_worktree ? ' (new worktree)' : w.fast_forward ? ' (fast-forward)' : ''}`],
          ['worktree', t(w.worktree)],
          ['would move', [`HEAD ${plan.source.head.slice(0, 7)}`, changed.length ? `${count(changed.length, 'uncommitted file')} (${listed(changed)})` : 'no uncommitted changes', session].join('\n')],
          ['resume', w.resume_argv.join(' ')],
        ],
        style,
      ).trimEnd(),
    );
    if (r.running_handoff) out.push(style.yellow(`  ! handoff ${r.running_handoff.id} of this agent is running now (pid ${r.running_handoff.pid} on ${r.running_handoff.controller}); a real send waits for it.`));
    for (const x of plan.warnings) out.push(style.yellow(`  ! ${x}`));
    return out.join('\n') + '\n';
  }
  const took = (r.steps ?? []).reduce((n, s) => n + s.ms, 0);
  out.push(style.green(style.bold(`✓ Moved ${who} ${route}`)) + (took ? style.dim(` (steps took ${durationText(took)})`) : ''));
  const rows: [string, string][] = [];
  if (r.target_agent) rows.push(['runs as', `${r.target_agent.name} in pane ${r.target_agent.pane} (workspace ${r.target_agent.workspace}) on ${plan.target.host}`]);
  if (r.branch) rows.push(['branch', `${r.branch}${r.worktree_created ? ' (new worktree)' : ''}`]);
  if (r.target_worktree) rows.push(['worktree', t(r.target_worktree)]);
  if (r.cwd && r.cwd !== r.target_worktree) rows.push(['cwd', t(r.cwd)]);
  const moved = [`HEAD ${plan.source.head.slice(0, 7)}${r.bytes_sent ? `, ${bytesText(r.bytes_sent)} of commits sent` : ''}`];
  moved.push(r.changes_applied ? `${count(changed.length, 'uncommitted file')} applied (${listed(changed)})` : 'no uncommitted changes');
  moved.push(session);
  rows.push(['moved', moved.join('\n')]);
  if (r.source_stash) {
    const s = r.source_stash;
    rows.push(['source', s.stashed ? `changes stashed as ${(s.stash ?? '').slice(0, 7)} — \`git stash pop\` in ${t(plan.source.repo)} brings them back` : s.note]);
    if (s.changed_after_snapshot.length > 0) rows.push(['', style.yellow(`changed after the snapshot, left in place: ${listed(s.changed_after_snapshot)}`)]);
  }
  if (r.source_pane_at_shell !== undefined) rows.push(['source pane', r.source_pane_at_shell ? `${plan.agent.pane} is back at its shell` : style.yellow(`${plan.agent.pane} is not at its shell`)]);
  if (r.verified?.length) rows.push(['verified', r.verified.map((v) => `${style.green('✓')} ${v}`).join('\n')]);
  if (r.session_backups?.length) rows.push(['backups', r.session_backups.map(t).join('\n')]);
  if (r.hook_trust && r.hook_trust.status !== 'no_hook') rows.push(['hooks', r.hook_trust.detail]);
  if (r.brief) rows.push(['brief', r.brief.status.replace(/_/g, ' ')]);
  rows.push(['attach', r.attach ?? `herdr (on this machine; pane ${r.target_agent?.pane ?? '?'})`]);
  out.push(fields(rows, style).trimEnd());
  const waiting = r.waiting_for_user ?? [];
  if (waiting.length > 0) {
    out.push('', style.yellow(style.bold('Waiting for you:')));
    for (const s of waiting) out.push(style.yellow(`  ! ${SCREEN_TEXT[s] ?? s} (${s}) — attach${r.attach ? ` (${r.attach})` : ''} and answer it`));
    for (const step of r.next_steps ?? []) out.push(style.yellow(`    ${step}`));
  }
  for (const x of plan.warnings) out.push(style.yellow(`  ! ${x}`));
  return out.join('\n') + '\n';
}
