// Drive the test world from a shell: `node dist/test/world/cli.js up|down|status|smoke`.
import { loadWorld, setupWorld, teardownWorld, worldIsUp } from './machines.js';
import { runSmoke } from './smoke.js';

async function main(cmd: string | undefined): Promise<number> {
  switch (cmd) {
    case 'up': {
      const world = await setupWorld();
      process.stdout.write(JSON.stringify(world, null, 2) + '\n');
      return 0;
    }
    case 'down':
      await teardownWorld();
      return 0;
    case 'status': {
      const world = loadWorld();
      process.stdout.write(JSON.stringify({ up: worldIsUp(world), world }, null, 2) + '\n');
      return 0;
    }
    case 'smoke': {
      const wasUp = worldIsUp();
      try {
        return await runSmoke(await setupWorld());
      } finally {
        if (!wasUp) await teardownWorld();
      }
    }
    default:
      process.stderr.write('usage: world up|down|status|smoke\n');
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
