// Once per test run. The two-machine world is set up lazily by the tests that need it
// (test/helpers/world.ts); here we only remember whether it was already up, so a run that
// started it also tears it down and leaves no process behind (CI), while a developer's
// running world is kept.
import { loadWorld, teardownWorld, worldIsUp } from './world/machines.js';

export default async function setup(): Promise<() => Promise<void>> {
  const wasUp = worldIsUp(loadWorld());
  return async () => {
    if (!wasUp && loadWorld()) await teardownWorld();
  };
}
