// `history` and `show` for a person: the handoffs as a table, one handoff with its events.
import type { JournalEvent, JournalSummary } from '../handoff/journal.js';
import { styleFor, table, tildePath, type RenderOptions, type Style } from './style.js';

export interface HistoryView {
  state_dir: string;
  handoffs: JournalSummary[];
}

export interface ShowView {
  handoff: JournalSummary;
  events: JournalEvent[];
}

/** `show BATCH`: every agent of a batch, each with its events. */
export interface ShowBatchView {
  batch: string;
  handoffs: ShowView[];
}

function outcome(s: JournalSummary, style: Style): string {
  if (s.outcome === 'succeeded' || s.outcome === 'recovered') return style.green(s.outcome);
  if (s.outcome === 'dry_run') return style.dim('dry run');
  if (s.outcome === 'unfinished' || s.outcome === 'rollback_incomplete') return style.yellow(s.outcome.replace('_', ' '));
  return style.red(s.outcome.replace('_', ' '));
}

/** `2026-11-30T19:19:26.123Z` → `2026-11-30 19:19:26`. */
function when(t: string): string {
  return t.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}

export function renderHistory(result: HistoryView, opts: RenderOptions): string {
  const style = styleFor(opts.color);
  if (result.handoffs.length === 0) return `No handoffs yet (journals in ${tildePath(result.state_dir, opts.home)}).\n`;
  const rows = result.handoffs.map((h) => [h.id, when(h.time), [h.agent, h.kind ? `(${h.kind})` : ''].filter(Boolean).join(' ') || '-', `${h.from ?? '?'} → ${h.to ?? '?'}`, outcome(h, style), h.failed_step ?? '']);
  return table(['ID', 'STARTED', 'AGENT', 'FROM → TO', 'OUTCOME', 'FAILED AT'], rows, style);
}

function eventText(e: JournalEvent): string {
  const data = e.data ?? {};
  if (e.type === 'header') return ['agent', 'kind', 'from', 'to'].flatMap((k) => (typeof data[k] === 'string' ? [`${k} ${String(data[k])}`] : [])).join(', ');
  if (e.type === 'outcome') return String(data.outcome ?? '');
  if (e.type === 'failed') return typeof data.error === 'string' ? data.error : '';
  if (e.type === 'record') return typeof data.kind === 'string' ? data.kind : '';
  return '';
}

export function renderShow(result: ShowView | ShowBatchView, opts: RenderOptions): string {
  if ('batch' in result) {
    const style = styleFor(opts.color);
    return [`${style.bold(`batch ${result.batch}`)}: ${result.handoffs.length} agents`, '', ...result.handoffs.map((one) => renderShow(one, opts))].join('\n');
  }
  const style = styleFor(opts.color);
  const h = result.handoff;
  const head = [
    `${style.bold(h.id)}  ${[h.agent, h.kind ? `(${h.kind})` : ''].filter(Boolean).join(' ')}  ${h.from ?? '?'} → ${h.to ?? '?'}  ${outcome(h, style)}`,
    ...(h.error ? [`${style.red('error:')} ${h.error}${h.failed_step ? ` (at ${h.failed_step})` : ''}`] : []),
    '',
  ].join('\n');
  const rows = result.events.map((e) => [when(e.t).slice(11), e.type, e.step ?? '', eventText(e)]);
  return `${head}\n${table(['TIME', 'EVENT', 'STEP', 'DETAIL'], rows, style)}`;
}
