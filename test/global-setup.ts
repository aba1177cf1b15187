// Once per test run. The two-machine world is set up lazily by the tests that need it
// (test/helpers/world.ts). In CI (CI=true, or AH_WORLD_TEARDOWN=1) a run that started the world
// also tears it down, so nothing is left running; on a developer machine the world stays up for
// the next run and for other test processes using it (`npm run world -- down` removes it).
import { loadWorld, teardownWorld, worldIsUp } from './world/machines.js';

export default async function setup(): Promise<() => Promise<void>> {
  const wasUp = worldIsUp(loadWorld());
  const teardown = process.env.AH_WORLD_TEARDOWN === '1' || (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false');
  return async () => {
    if (teardown && !wasUp && loadWorld()) await teardownWorld();
  };
}
