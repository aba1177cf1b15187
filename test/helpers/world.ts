// For e2e tests: the two-machine world (set up once, shared by every test file of a run).
import { setupWorld, type World } from '../world/machines.js';

let worldPromise: Promise<World> | undefined;

export function useWorld(): Promise<World> {
  worldPromise ??= setupWorld();
  return worldPromise;
}
