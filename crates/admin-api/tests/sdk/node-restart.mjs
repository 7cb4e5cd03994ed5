// The official Node SDK (`unleash-client`) in streaming mode across a server restart: it connects
// to HALYARD_URL with the backend token HALYARD_TOKEN, prints `READY <state of HALYARD_FLAG>` once
// it has the flags, then waits (up to 60 s) until HALYARD_FLAG changes, which the test does after
// restarting the server. It prints one JSON line: every warn and error event, and how long after
// READY the change arrived.
import { initialize, InMemStorageProvider } from 'unleash-client';

const { HALYARD_URL, HALYARD_TOKEN, HALYARD_FLAG } = process.env;
const events = [];
const unleash = initialize({
  url: `${HALYARD_URL}/api/`,
  appName: 'node-restart-test',
  customHeaders: { Authorization: HALYARD_TOKEN },
  experimentalMode: { type: 'streaming' },
  storageProvider: new InMemStorageProvider(),
});
unleash.on('warn', (message) => events.push({ kind: 'warn', message: String(message) }));
unleash.on('error', (error) => events.push({ kind: 'error', message: String(error) }));
await new Promise((resolve) => unleash.once('synchronized', resolve));
const initial = unleash.isEnabled(HALYARD_FLAG);
console.log(`READY ${initial}`);
const ready = performance.now();
while (unleash.isEnabled(HALYARD_FLAG) === initial) {
  if (performance.now() - ready > 60_000) {
    throw new Error('the change after the restart was not seen within 60 s');
  }
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const seenAfterMs = Math.round(performance.now() - ready);
unleash.destroy();
console.log(JSON.stringify({ events, seenAfterMs }));
