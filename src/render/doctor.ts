// `doctor` for a person: a checklist per machine, then each problem with its fix.
import type { DoctorResult, SideReport } from '../result.js';
import { styleFor, type RenderOptions, type Style } from './style.js';

function side(title: string, r: SideReport, style: Style): string[] {
  const ok = style.green('✓');
  const bad = style.red('✗');
  const none = style.dim('-');
  const who = [r.user && r.hostname ? `${r.user}@${r.hostname}` : (r.hostname ?? r.host), r.platform].filter(Boolean).join(', ');
  const lines = [style.bold(`${title}: ${r.host}${who && who !== r.host ? ` (${who})` : ''}`)];
  if (r.ssh) {
    const s = r.ssh;
    lines.push(`  ${ok} ssh ${s.user}@${s.host}:${s.port}${s.proxy_jump ? ` via ${s.proxy_jump}` : ''} — ${s.auth ?? 'authenticated'}, host key ${s.host_key}, ${s.round_trip_ms} ms round trip`);
  }
  for (const t of r.tools) {
    const mark = t.ok ? ok : t.required ? bad : none;
    const what = t.ok ? [t.version, t.path].filter(Boolean).join(' ') : t.path ? `${t.version ?? 'unknown version'} ${t.path}` : 'not found';
    lines.push(`  ${mark} ${t.name}${t.required ? '' : style.dim(' (optional)')} ${style.dim(what)}`);
  }
  const h = r.herdr;
  const herdrOk = h.installed && h.server === 'running';
  lines.push(`  ${herdrOk ? ok : bad} herdr ${h.installed ? `${h.version ?? '(unknown version)'}, server ${h.server.replace('_', ' ')}` : 'not installed'}`);
  for (const i of r.integrations) {
    const good = i.status === 'current' || i.status === 'installed';
    lines.push(`  ${good ? ok : none} ${i.kind} integration ${style.dim(i.status)}`);
  }
  return lines;
}

export function renderDoctor(result: DoctorResult, opts: RenderOptions): string {
  const style = styleFor(opts.color);
  const out: string[] = [...side('here', result.local, style)];
  if (result.target) out.push('', ...side('target', result.target, style));
  if (result.problems.length > 0) {
    out.push('', style.bold('Problems:'));
    for (const p of result.problems) {
      out.push(`  ${style.red('✗')} ${p.where}: ${p.problem} ${style.dim(`(${p.code})`)}`);
      out.push(`    ${style.cyan('fix:')} ${p.fix}`);
    }
  }
  if (result.warnings.length > 0) {
    out.push('', style.bold('Warnings:'));
    for (const w of result.warnings) out.push(`  ${style.yellow('!')} ${w}`);
  }
  const n = result.problems.length;
  out.push('', result.ready ? style.green(style.bold('Ready: a handoff can run.')) : style.red(style.bold(`Not ready: ${n} ${n === 1 ? 'problem' : 'problems'} to fix first.`)));
  return out.join('\n') + '\n';
}
