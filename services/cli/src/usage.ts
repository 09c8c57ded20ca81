// Help texts. `slicemesh --help` prints USAGE on stdout; errors only ever print one line.

import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, MANAGED_BY_CONTROLLER, MAX_MAX_ENDPOINTS_PER_SLICE } from '@slicemesh/model';

const PLAN = `slicemesh plan [-f FILE] [--max-endpoints-per-slice N] [--managed-by VALUE] [--output slices|changed|changes]
  Runs the EndpointSlice reconciler for Services with a selector and the mirroring reconciler
  for selectorless Services with an Endpoints object, then topology hints.
  --max-endpoints-per-slice N  endpoints per slice, 1..${MAX_MAX_ENDPOINTS_PER_SLICE} (default ${DEFAULT_MAX_ENDPOINTS_PER_SLICE})
  --managed-by VALUE           managed-by label of the slices this controller owns
                               (default ${MANAGED_BY_CONTROLLER})
  --output slices              a List of the cluster's EndpointSlices after the plan: every input
                               slice, with the planned creates, updates and deletes applied (default)
  --output changed             a List of the slices the plan creates or updates
  --output changes             {"create":[...],"update":[...],"delete":[...]}`;

const HINTS = `slicemesh hints [-f FILE]
  Computes topology hints for existing EndpointSlices from Nodes (and Services, if given);
  prints {"slices":[...],"decisions":[...]}.`;

const PROXY_PLAN = `slicemesh proxy-plan --node NAME [-f FILE] [--format json|iptables|nftables|ipvs] [--ip-family IPv4|IPv6]
                    [--iptables-chains own|kube-proxy] [--ipvs-interface NAME]
  What kube-proxy on node NAME would program for the given Services, EndpointSlices and Nodes.
  --format json       one entry per service port with its endpoints (default)
  --format iptables   an iptables-restore --noflush script (one family: --ip-family, default IPv4)
  --format nftables   an nft -f script (both families unless --ip-family is given)
  --format ipvs       the whole IPVS-mode node plan, in apply order: ipset restore input, the
                      iptables companion rules, the dummy interface (--ipvs-interface, default
                      kube-ipvs0) with its bound addresses, ipvsadm-restore input (both families
                      unless --ip-family is given; set and chain names follow --iptables-chains)
  --iptables-chains own         chains SLICEMESH-SERVICES, SLICEMESH-SVC-<hash>, ... and masquerade
                                mark 0x2000, as the agent programs beside kube-proxy (default)
  --iptables-chains kube-proxy  kube-proxy's own names (KUBE-SERVICES, ...) and mark 0x4000`;

export const COMMAND_USAGE: Readonly<Record<string, string>> = { plan: PLAN, hints: HINTS, 'proxy-plan': PROXY_PLAN };

export const USAGE = `Usage: slicemesh <command> [flags]

Reads Kubernetes JSON (a List, one object or an array), e.g. the output of
  kubectl get svc,pods,nodes,endpoints,endpointslices -A -o json
from stdin, or from FILE with -f FILE, and prints Kubernetes JSON on stdout.

${PLAN}

${HINTS}

${PROXY_PLAN}

slicemesh log history|at|why|diff|dlq|export …
  Reads the KUBE log, live or exported (-f FILE): history, time travel, why, dead letters.
  See slicemesh log --help.

slicemesh ui [--port N] [--host H] [-f FILE]
  The web view of the same log: services, slices, zones and nodes at any point of a timeline,
  and why a node sends to an endpoint. See slicemesh ui --help.

slicemesh nats-auth --cluster ID --out DIR [--agents NAME,...] [--force | --if-missing]
  Locks NATS down: an nkey seed per role (and per agent) and the nats-server authorization
  block that gives each key its role's permissions. See slicemesh nats-auth --help.

Flags of every command: -f, --file FILE (read FILE instead of stdin; "-" is stdin), -h, --help.
Exit codes: 0 success, 2 invalid input or flags (one line on stderr), 1 internal error.
`;
