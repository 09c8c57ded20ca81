// The multi-cluster service's process: everything else is the service host's.
import { runServiceMain } from '@slicemesh/runtime';
import { mcsService } from './service.ts';

await runServiceMain(mcsService, process.argv.slice(2), process.env);
