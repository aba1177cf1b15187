// Screen-based status for agents without a lifecycle hook: herdr's manifests reduced to the
// phrases our fake agents print (bottom of the buffer decides).

const WORKING = ['esc to interrupt'];
const BLOCKED = [
  'Do you want to',
  'Quick safety check',
  'Trust this folder?',
  'Select login method',
  'Sign in with ChatGPT',
  'Login with Grok',
  'Setup step',
  'Hooks need review',
  '[y/N]',
  'Working directory · resume',
];

export type ScreenState = 'idle' | 'working' | 'blocked';

export function classifyScreen(text: string): ScreenState {
  const bottom = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-15)
    .join('\n');
  const lower = bottom.toLowerCase();
  if (WORKING.some((w) => lower.includes(w))) return 'working';
  if (BLOCKED.some((b) => bottom.includes(b))) return 'blocked';
  return 'idle';
}
