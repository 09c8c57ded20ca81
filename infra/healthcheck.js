// The image's HEALTHCHECK: healthy while http://127.0.0.1:$HEALTH_PORT/readyz answers 2xx.
const port = process.env.HEALTH_PORT ?? '9100';
try {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2500) });
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  process.stderr.write(`healthcheck: http://127.0.0.1:${port}/readyz: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
