// The test world's `herdr` is the real herdr 0.8.2 behind a shell gate (machines.ts: herdrGate):
// only while a test has put faults in `<config dir>/herdr-sim-faults.json` does this run first,
// and a matching call fails here the way herdr fails (an error envelope on stderr, exit 1), so
// real herdr never sees it. Every other call goes straight to the real binary.
import { configDir } from './paths.js';
import { takeFault } from './testing.js';

const words = process.argv.slice(2);
const fault = words[0] === 'server' && words[1] !== 'stop' ? null : takeFault(configDir(process.env), words);
if (fault) {
  process.stderr.write(`${JSON.stringify({ error: { code: fault.code, message: fault.message }, id: `cli:${words.slice(0, 2).join(':')}` })}\n`);
  process.exitCode = 1;
}
