// Round trips of establishing the ssh session (issue #18), counted by the bench's tap.
// AH_HANDSHAKE_DELAY_MS=25 prints them at a 50 ms round trip (the numbers in the issue).
import { beforeAll, describe, it } from 'vitest';
import { handshakeTable, measureHandshake, type HandshakeCost } from '../../bench/handshake.js';
import { useWorld } from '../helpers/world.js';
import type { World } from '../world/machines.js';

let world: World;

beforeAll(async () => {
  world = await useWorld();
});

const printDelay = Number(process.env.AH_HANDSHAKE_DELAY_MS ?? 0);

describe('establishing the ssh session', () => {
  it.runIf(printDelay > 0)('prints the cost at the given delay', async () => {
    const runs: HandshakeCost[] = [];
    for (let i = 0; i < Number(process.env.AH_HANDSHAKE_RUNS ?? 5); i++) runs.push(await measureHandshake(world, printDelay));
    console.log(handshakeTable(runs));
    console.log(JSON.stringify(runs));
  }, 120_000);
});
