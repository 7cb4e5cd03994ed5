// The checks of scripts/edge-check, against a server (HALYARD_URL) and an Unleash Edge in edge
// mode upstream to it (EDGE_URL): SDKs connected to Edge get the server's flags, and Edge's
// metrics reach the server. Prints what it found and exits 1 when a check fails.
import { initialize } from 'unleash-client';
import { UnleashClient } from 'unleash-proxy-client';

const { HALYARD_URL, EDGE_URL, ADMIN_TOKEN, BACKEND_TOKEN, FRONTEND_TOKEN } = process.env;
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
const admin = async (method, path, body) => {
  const response = await fetch(`${HALYARD_URL}${path}`, {
    method,
    headers: { Authorization: ADMIN_TOKEN, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// 1. The backend SDK through Edge gets the server's flags and evaluates as the playground does.
const ours = await (await fetch(`${HALYARD_URL}/api/client/features`, { headers: { Authorization: BACKEND_TOKEN } })).json();
const viaEdge = await (await fetch(`${EDGE_URL}/api/client/features`, { headers: { Authorization: BACKEND_TOKEN } })).json();
const names = (document) => document.features.map((feature) => feature.name).sort().join(',');
check(names(viaEdge) === names(ours) && ours.features.length > 0,
  `Edge serves the server's ${ours.features.length} flags (${names(viaEdge)})`);

const events = [];
const unleash = initialize({ url: `${EDGE_URL}/api/`, appName: 'sdk-behind-edge', customHeaders: { Authorization: BACKEND_TOKEN } });
unleash.on('warn', (message) => events.push(`warn: ${message}`));
unleash.on('error', (error) => events.push(`error: ${error}`));
await new Promise((resolve) => unleash.once('synchronized', resolve));
const contexts = [{ userId: '1', properties: { plan: 'pro' } }, { userId: '2', properties: { plan: 'free' } }];
const counted = {};
let agree = true;
for (const context of contexts) {
  const played = await admin('POST', '/api/admin/playground', { environment: 'development', context: { appName: 'sdk-behind-edge', ...context } });
  for (const feature of played.body.features) {
    const variant = unleash.getVariant(feature.name, context);
    counted[feature.name] ??= { yes: 0, no: 0 };
    counted[feature.name][variant.feature_enabled ? 'yes' : 'no'] += 1;
    if (variant.feature_enabled !== feature.isEnabled || variant.name !== feature.variant.name) {
      agree = false;
      console.log(`  ${feature.name} for ${JSON.stringify(context)}: Edge's SDK says ${variant.feature_enabled}/${variant.name}, the playground ${feature.isEnabled}/${feature.variant.name}`);
    }
  }
}
check(agree, `the Node SDK behind Edge evaluates ${Object.keys(counted).length} flags for ${contexts.length} contexts as the playground does`);
await unleash.destroyWithFlush();
check(events.length === 0, `the Node SDK behind Edge raised no warn or error (${events.join('; ') || 'none'})`);

// 2. The browser SDK through Edge's frontend API.
const browser = new UnleashClient({ url: `${EDGE_URL}/api/frontend`, clientKey: FRONTEND_TOKEN, appName: 'browser-behind-edge', context: contexts[0], metricsIntervalInitial: 0 });
const browserErrors = [];
browser.on('error', (error) => browserErrors.push(String(error?.message ?? error)));
const ready = new Promise((resolve) => browser.once('ready', resolve));
await browser.start();
await ready;
const played = await admin('POST', '/api/admin/playground', { environment: 'development', context: { appName: 'browser-behind-edge', ...contexts[0] } });
const browserAgrees = played.body.features.every((feature) => browser.isEnabled(feature.name) === feature.isEnabled);
browser.stop();
check(browserAgrees && browserErrors.length === 0, `the browser SDK behind Edge agrees with the playground (errors: ${browserErrors.join('; ') || 'none'})`);

// 3. Edge's metrics reach the server.
const flag = Object.keys(counted).find((name) => counted[name].yes + counted[name].no > 0);
let usage = null;
for (let attempt = 0; attempt < 40; attempt += 1) {
  usage = (await admin('GET', `/api/admin/client-metrics/features/${flag}`)).body;
  if (usage.seenApplications.includes('sdk-behind-edge')) break;
  await sleep(1000);
}
const yes = usage.lastHourUsage.reduce((sum, row) => sum + row.yes, 0);
const no = usage.lastHourUsage.reduce((sum, row) => sum + row.no, 0);
check(usage.seenApplications.includes('sdk-behind-edge') && yes === counted[flag].yes && no === counted[flag].no,
  `Edge's bulk metrics reached the server: ${flag} yes ${yes}/${counted[flag].yes}, no ${no}/${counted[flag].no}, applications ${usage.seenApplications.join(',')}`);
const applications = (await admin('GET', '/api/admin/metrics/applications')).body;
const appNames = applications.applications.map((application) => application.appName).sort();
check(appNames.includes('unleash-edge') && appNames.includes('sdk-behind-edge'), `the server lists Edge and the SDK behind it (${appNames.join(', ')})`);

console.log(failures.length === 0 ? 'edge-check: every check passed' : `edge-check: ${failures.length} check(s) failed`);
process.exit(failures.length === 0 ? 0 : 1);
