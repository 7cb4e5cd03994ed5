// The official Node SDK (`unleash-client`) against the server at HALYARD_URL with the backend token
// HALYARD_TOKEN: once it has the flags, it evaluates every flag of HALYARD_FLAGS (comma-separated)
// for every context of HALYARD_CONTEXTS (a JSON array of Unleash contexts) and prints one JSON line:
// each flag and context's answer (enabled, variant, payload) and every warn and error event.
import { initialize } from 'unleash-client';

const { HALYARD_URL, HALYARD_TOKEN, HALYARD_FLAGS, HALYARD_CONTEXTS } = process.env;
const flags = HALYARD_FLAGS.split(',');
const contexts = JSON.parse(HALYARD_CONTEXTS);
const events = [];
const unleash = initialize({
  url: `${HALYARD_URL}/api/`,
  appName: 'node-evaluate',
  disableMetrics: true,
  customHeaders: { Authorization: HALYARD_TOKEN },
});
unleash.on('warn', (message) => events.push({ kind: 'warn', message: String(message) }));
unleash.on('error', (error) => events.push({ kind: 'error', message: String(error) }));
await new Promise((resolve) => unleash.once('synchronized', resolve));
const evaluated = {};
for (const flag of flags) {
  contexts.forEach((context, index) => {
    const variant = unleash.getVariant(flag, context);
    evaluated[`${flag}#${index}`] = {
      enabled: unleash.isEnabled(flag, context),
      variant: variant.name,
      payload: variant.payload ?? null,
    };
  });
}
unleash.destroy();
console.log(JSON.stringify({ events, evaluated }));
