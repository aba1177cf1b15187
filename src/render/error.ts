// A failure for a person: what went wrong and what to do, one line each.
import type { ErrorResult } from '../result.js';
import { styleFor, type RenderOptions } from './style.js';

export function renderError(result: ErrorResult, opts: RenderOptions): string {
  const style = styleFor(opts.color);
  const lines = [`${style.red(style.bold('error:'))} ${result.error} ${style.dim(`(${result.code})`)}`];
  if (result.fix) lines.push(`${style.cyan(style.bold('fix:'))}   ${result.fix}`);
  const step = result.details?.failed_step;
  if (typeof step === 'string') lines.push(`${style.dim('step:')}  ${step}`);
  const undone = result.details?.undone;
  if (Array.isArray(undone) && undone.length > 0) lines.push(`${style.dim('undone:')} ${undone.map((u) => (typeof u === 'string' ? u : JSON.stringify(u))).join(', ')}`);
  return lines.join('\n') + '\n';
}
