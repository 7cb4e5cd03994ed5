// The official browser SDK (`unleash-proxy-client`), run in Node, against the server's frontend
// API at HALYARD_URL with the frontend token HALYARD_TOKEN. It evaluates HALYARD_FLAGS for the context
// in HALYARD_CONTEXT (JSON), sends its metrics, and prints one JSON line: every error event and
// what it evaluated.
import { UnleashClient } from 'unleash-proxy-client';

const { HALYARD_URL, HALYARD_TOKEN, HALYARD_FLAGS, HALYARD_CONTEXT } = process.env;
const errors = [];
const client = new UnleashClient({
  url: `${HALYARD_URL}/api/frontend`,
  clientKey: HALYARD_TOKEN,
  appName: 'proxy-client-test',
  context: JSON.parse(HALYARD_CONTEXT),
  metricsIntervalInitial: 0,
});
client.on('error', (error) => errors.push(String(error?.message ?? error)));
const ready = new Promise((resolve) => client.once('ready', resolve));
await client.start();
await ready;
const evaluated = {};
for (const flag of HALYARD_FLAGS.split(',')) {
  const variant = client.getVariant(flag);
  evaluated[flag] = { enabled: client.isEnabled(flag), variant: variant.name, payload: variant.payload ?? null };
}
await client.sendMetrics();
client.stop();
console.log(JSON.stringify({ errors, evaluated }));
