// The watcher's process: everything else is the service host's.
import { runServiceMain } from '@slicemesh/runtime';
import { watcherService } from './service.ts';

await runServiceMain(watcherService, process.argv.slice(2), process.env);
