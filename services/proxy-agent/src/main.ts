// The proxy agent's process: everything else is the service host's.
import { runServiceMain } from '@slicemesh/runtime';
import { proxyAgentService } from './service.ts';

await runServiceMain(proxyAgentService, process.argv.slice(2), process.env);
