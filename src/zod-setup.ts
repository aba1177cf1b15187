// zod compiles a fast path for each object schema the first time it parses with it (a generated
// function). A command lives for one run and parses each schema a few times, so the compiling
// costs more than it saves (a dry run's CPU profile: about 10 ms of its main thread).
import { z } from 'zod';

/** Parse with zod's interpreter from now on (the results are the same; only the speed differs). */
export function parseWithoutCompiling(): void {
  z.config({ jitless: true });
}
