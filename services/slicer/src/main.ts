// The slicer's process: everything else is the service host's (settings, logger, health, signals).
import { runServiceMain } from '@slicemesh/runtime';
import { slicerService } from './service.ts';

await runServiceMain(slicerService, process.argv.slice(2), process.env);
