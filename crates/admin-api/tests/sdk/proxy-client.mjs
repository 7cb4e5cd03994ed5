// The official browser SDK (`unleash-proxy-client`), run in Node, against the server's frontend
// API at FLAGD_URL with the frontend token FLAGD_TOKEN. It evaluates FLAGD_FLAGS for the context
// in FLAGD_CONTEXT (JSON), sends its metrics, and prints one JSON line: every error event and
// what it evaluated.
import { UnleashClient } from 'unleash-proxy-client';

const { FLAGD_URL, FLAGD_TOKEN, FLAGD_FLAGS, FLAGD_CONTEXT } = process.env;
const errors = [];
const client = new UnleashClient({
  url: `${FLAGD_URL}/api/frontend`,
  clientKey: FLAGD_TOKEN,
  appName: 'proxy-client-test',
  context: JSON.parse(FLAGD_CONTEXT),
  metricsIntervalInitial: 0,
});
client.on('error', (error) => errors.push(String(error?.message ?? error)));
const ready = new Promise((resolve) => client.once('ready', resolve));
await client.start();
await ready;
const evaluated = {};
for (const flag of FLAGD_FLAGS.split(',')) {
  const variant = client.getVariant(flag);
  evaluated[flag] = { enabled: client.isEnabled(flag), variant: variant.name, payload: variant.payload ?? null };
}
await client.sendMetrics();
client.stop();
console.log(JSON.stringify({ errors, evaluated }));
