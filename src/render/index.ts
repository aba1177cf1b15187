// Results for a person (stdout is a terminal and --json was not given). Each renderer is a pure
// function of the very object that would otherwise be printed as JSON; what a renderer does not
// know is printed as indented JSON, so nothing is ever hidden from the person.
import type { DoctorResult, ErrorResult, ListResult } from '../result.js';
import { renderDoctor } from './doctor.js';
import { renderError } from './error.js';
import { renderHistory, renderShow, type HistoryView, type ShowView } from './history.js';
import { renderList } from './list.js';
import { renderSend, type SendView } from './send.js';
import { renderSendBatch } from './send-batch.js';
import type { SendBatchResult } from '../commands/send-batch.js';
import type { RenderOptions } from './style.js';

export type { RenderOptions } from './style.js';

export function renderForPerson(result: unknown, opts: RenderOptions): string {
  const r = result as { ok?: unknown; command?: unknown; batch?: unknown };
  // A batch's result says who went where, whether all of them did or not.
  if (r.command === 'send' && typeof r.batch === 'string') return renderSendBatch(result as SendBatchResult, opts);
  if (r.ok === false) return renderError(result as ErrorResult, opts);
  switch (r.command) {
    case 'list':
      return renderList(result as ListResult, opts);
    case 'doctor':
      return renderDoctor(result as DoctorResult, opts);
    case 'send':
      return renderSend(result as SendView, opts);
    case 'history':
      return renderHistory(result as HistoryView, opts);
    case 'show':
      return renderShow(result as ShowView, opts);
    case 'help':
      return String((result as { usage: string }).usage).trimEnd() + '\n';
    case 'version':
      return `agent-handoff ${String((result as { version: string }).version)}\n`;
    default:
      return JSON.stringify(result, null, 2) + '\n';
  }
}
