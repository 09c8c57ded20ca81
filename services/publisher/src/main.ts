// The publisher's process: everything else is the service host's.
import { runServiceMain } from '@slicemesh/runtime';
import { publisherService } from './service.ts';

await runServiceMain(publisherService, process.argv.slice(2), process.env);
