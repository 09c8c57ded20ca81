// The hints service's process: everything else is the service host's.
import { runServiceMain } from '@slicemesh/runtime';
import { hintsService } from './service.ts';

await runServiceMain(hintsService, process.argv.slice(2), process.env);
