// `slicemesh log --help`.

export const LOG_USAGE = `Usage: slicemesh log <command> [flags]

Reads the KUBE log — live from NATS (and Postgres for the settings in force), or an exported
file with -f FILE — and replays it through the same code as the services.

  log history <ns>/<service>                every change of its slices, hints and zone views, with causes
  log at <point> [--node N]                 the state at a point; with --node, what node N programs
  log why --node N <ns>/<service> [--at P]  why node N sends (or not) to each endpoint
  log diff <A> <B>                          what changed between two points, per Service
  log dlq [list | show <seq> | redrive <seq>… | redrive --all]   dead letters (redrive: live only)
  log export [--from P] [--to P] [-o FILE] [--gzip]              a self-contained .slog (stdout by default)

A point is a KUBE sequence number, an RFC 3339 time, "first" or "latest".

Flags:
  -f, --file FILE            an exported log (.slog, plain or gzip); no server needed
  --nats-url URL             live: NATS (env NATS_URL; default nats://127.0.0.1:4222)
  --nats-nkey-seed-file FILE live, NATS locked down: the reader's seed (env NATS_NKEY_SEED_FILE,
                             written by slicemesh nats-auth); log dlq redrive needs admin.nk
  --nats-creds-file FILE     live: a .creds file instead (env NATS_CREDS_FILE)
  --database-url URL         live: Postgres holding the slicer's records (env DATABASE_URL)
  --db-schema NAME           live: the slicer's schema (env DB_SCHEMA; default slicemesh)
  --cluster ID               the cluster id (env CLUSTER; default local)
  --kube-stream, --dlq-stream NAME   live: stream names (env KUBE_STREAM, DLQ_STREAM; default KUBE, DLQ)
  --subject-prefix P         live: subject prefix (env SUBJECT_PREFIX; default none)
  --max-endpoints-per-slice N, --managed-by VALUE   override the recorded slicer settings
  --output text|json         default text
  --progress                 progress bars on stderr even when it is not a terminal
Exit codes: 0 success, 2 invalid input, flags or point (one line on stderr), 1 internal error.
`;
