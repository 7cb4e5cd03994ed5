// The official Node SDK (`unleash-client`) following changes: in streaming mode
// (HALYARD_MODE=streaming), polling the delta API (HALYARD_MODE=delta) or the whole document
// (HALYARD_MODE=polling), every HALYARD_INTERVAL ms. It evaluates HALYARD_FLAGS for a few users,
// then switches HALYARD_FLAG HALYARD_WRITES times through the admin API (token HALYARD_ADMIN, at
// HALYARD_ADMIN_URL when the SDK reads an edge, else at HALYARD_URL) and measures, for each write,
// the milliseconds from the write's answer until the SDK answers the new state. It prints one
// JSON line: every warn and error event, what it evaluated, and the delays.
import { initialize, InMemStorageProvider } from 'unleash-client';

const {
  HALYARD_URL, HALYARD_TOKEN, HALYARD_ADMIN, HALYARD_MODE, HALYARD_INTERVAL, HALYARD_FLAGS, HALYARD_FLAG,
  HALYARD_WRITES, HALYARD_ADMIN_URL,
} = process.env;
const flags = HALYARD_FLAGS.split(',');
const events = [];
const experimentalMode = {
  streaming: { type: 'streaming' },
  delta: { type: 'polling', format: 'delta' },
  polling: { type: 'polling', format: 'full' },
}[HALYARD_MODE];
const unleash = initialize({
  url: `${HALYARD_URL}/api/`,
  appName: `node-${HALYARD_MODE}-test`,
  refreshInterval: Number(HALYARD_INTERVAL),
  customHeaders: { Authorization: HALYARD_TOKEN },
  experimentalMode,
  // Every run starts from the server, not from a backup an earlier run left.
  storageProvider: new InMemStorageProvider(),
});
unleash.on('warn', (message) => events.push({ kind: 'warn', message: String(message) }));
unleash.on('error', (error) => events.push({ kind: 'error', message: String(error) }));
await new Promise((resolve) => unleash.once('synchronized', resolve));

const evaluated = {};
for (let user = 0; user < 7; user += 1) {
  for (const plan of ['free', 'pro']) {
    for (const flag of flags) {
      const variant = unleash.getVariant(flag, { userId: String(user), properties: { plan } });
      evaluated[`${flag}/${user}/${plan}`] = { enabled: variant.feature_enabled, variant: variant.name };
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const delays = [];
let state = unleash.isEnabled(HALYARD_FLAG);
for (let write = 0; write < Number(HALYARD_WRITES); write += 1) {
  state = !state;
  const path = `/api/admin/projects/default/features/${HALYARD_FLAG}/environments/development/${state ? 'on' : 'off'}`;
  const response = await fetch(`${HALYARD_ADMIN_URL ?? HALYARD_URL}${path}`, { method: 'POST', headers: { Authorization: HALYARD_ADMIN } });
  if (!response.ok) {
    throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  }
  const written = performance.now();
  while (unleash.isEnabled(HALYARD_FLAG) !== state) {
    if (performance.now() - written > 10_000) {
      throw new Error(`write ${write} was not seen within 10 s`);
    }
    await sleep(2);
  }
  delays.push(Math.round(performance.now() - written));
  await sleep(50 + Math.random() * 200);
}
unleash.destroy();
console.log(JSON.stringify({ events, evaluated, delays }));
