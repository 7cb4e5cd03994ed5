// The official Node SDK (`unleash-client`) in its default configuration against the server at
// HALYARD_URL, with the backend token HALYARD_TOKEN. It evaluates HALYARD_FLAGS (comma-separated) for
// a few users for HALYARD_SECONDS, then sends its metrics and prints one JSON line: every warn and
// error event, what it evaluated, and what it counted.
import { initialize } from 'unleash-client';

const { HALYARD_URL, HALYARD_TOKEN, HALYARD_FLAGS, HALYARD_SECONDS } = process.env;
const flags = HALYARD_FLAGS.split(',');
const events = [];
const unleash = initialize({
  url: `${HALYARD_URL}/api/`,
  appName: 'node-sdk-test',
  customHeaders: { Authorization: HALYARD_TOKEN },
});
unleash.on('warn', (message) => events.push({ kind: 'warn', message: String(message) }));
unleash.on('error', (error) => events.push({ kind: 'error', message: String(error) }));
let registered = false;
unleash.on('registered', () => { registered = true; });
const unchanged = { count: 0 };
unleash.on('unchanged', () => { unchanged.count += 1; });
await new Promise((resolve) => unleash.once('synchronized', resolve));

const evaluated = {};
const counted = {};
const deadline = Date.now() + Number(HALYARD_SECONDS) * 1000;
let round = 0;
while (Date.now() < deadline) {
  for (const flag of flags) {
    const context = { userId: String(round % 7), properties: { plan: round % 2 ? 'pro' : 'free' } };
    const variant = unleash.getVariant(flag, context);
    const key = `${flag}/${context.userId}/${context.properties.plan}`;
    evaluated[key] = { enabled: variant.feature_enabled, variant: variant.name };
    counted[flag] ??= { yes: 0, no: 0, variants: {} };
    counted[flag][variant.feature_enabled ? 'yes' : 'no'] += 1;
    counted[flag].variants[variant.name] = (counted[flag].variants[variant.name] ?? 0) + 1;
  }
  round += 1;
  await new Promise((resolve) => setTimeout(resolve, 200));
}
await unleash.destroyWithFlush();
console.log(JSON.stringify({ events, registered, unchanged: unchanged.count, evaluated, counted }));
