// Simulates SDK instances against a server, as scripts/sdk-swarm runs it: each instance
// registers, polls /api/client/features every POLL seconds with its ETag, and posts metrics
// every METRICS seconds, for SECONDS seconds; starts are spread over the first poll interval.
// At WRITE_AT seconds a flag (FLAG) is switched, and every instance's next poll must show it.
// Prints one JSON line: requests, errors, latency percentiles and how long the write took to
// reach each instance.
const env = process.env;
const url = env.FLAGD_URL;
const token = env.BACKEND_TOKEN;
const admin = env.ADMIN_TOKEN;
const instances = Number(env.INSTANCES ?? 1000);
const seconds = Number(env.DURATION ?? 300);
const poll = Number(env.POLL ?? 15) * 1000;
const metricsEvery = Number(env.METRICS ?? 60) * 1000;
const writeAt = Number(env.WRITE_AT ?? seconds / 2) * 1000;
const flag = env.FLAG;
const project = env.PROJECT ?? 'default';
const environment = env.ENVIRONMENT ?? 'development';

const started = Date.now();
const deadline = started + seconds * 1000;
const latencies = { features: [], register: [], metrics: [] };
const statuses = {};
const errors = [];
let writtenAt = null;
let writtenState = null;
const seenAfterWrite = new Map();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function timed(kind, path, options) {
  const begun = performance.now();
  try {
    const response = await fetch(`${url}${path}`, options);
    const body = response.status === 200 && kind === 'features' ? await response.json() : await response.arrayBuffer();
    latencies[kind].push(performance.now() - begun);
    statuses[`${kind} ${response.status}`] = (statuses[`${kind} ${response.status}`] ?? 0) + 1;
    const expected = kind === 'features' ? [200, 304] : [202];
    if (!expected.includes(response.status)) errors.push(`${kind} ${response.status}`);
    return { response, body };
  } catch (error) {
    errors.push(`${kind} ${error.cause?.code ?? error.message}`);
    return null;
  }
}

async function instance(index) {
  await sleep((poll * index) / instances);
  const headers = { Authorization: token, 'unleash-appname': 'swarm', 'unleash-instanceid': `swarm-${index}`, 'Content-Type': 'application/json' };
  await timed('register', '/api/client/register', {
    method: 'POST', headers,
    body: JSON.stringify({ appName: 'swarm', instanceId: `swarm-${index}`, sdkVersion: 'swarm:1.0.0', strategies: ['default'], started: new Date().toISOString(), interval: poll }),
  });
  let etag = null;
  let flagState = null;
  let nextMetrics = Date.now() + metricsEvery;
  let counts = 0;
  while (Date.now() < deadline) {
    const pollStarted = Date.now();
    const result = await timed('features', '/api/client/features', { headers: etag ? { ...headers, 'If-None-Match': etag } : headers });
    if (result?.response.status === 200) {
      etag = result.response.headers.get('etag');
      counts += 1;
      const feature = result.body.features.find((candidate) => candidate.name === flag);
      flagState = feature?.enabled ?? null;
      if (writtenAt !== null && pollStarted >= writtenAt && !seenAfterWrite.has(index)) {
        if (flagState === writtenState) {
          seenAfterWrite.set(index, Date.now() - writtenAt);
        } else {
          errors.push('features 200 after the write without it');
          seenAfterWrite.set(index, Infinity);
        }
      }
    } else if (result?.response.status === 304 && writtenAt !== null && pollStarted >= writtenAt && !seenAfterWrite.has(index)) {
      // A 304 is right only when the answer this instance holds already shows the write (it
      // fetched it in a poll that overlapped the write).
      if (flagState === writtenState) {
        seenAfterWrite.set(index, Date.now() - writtenAt);
      } else {
        errors.push('features 304 after the write: the write was not seen');
        seenAfterWrite.set(index, Infinity);
      }
    }
    if (Date.now() >= nextMetrics) {
      nextMetrics += metricsEvery;
      const now = new Date().toISOString();
      await timed('metrics', '/api/client/metrics', {
        method: 'POST', headers,
        body: JSON.stringify({ appName: 'swarm', instanceId: `swarm-${index}`, bucket: { start: now, stop: now, toggles: { [flag]: { yes: counts, no: 1, variants: {} } } } }),
      });
    }
    await sleep(Math.max(0, pollStarted + poll - Date.now()));
  }
}

async function writer() {
  await sleep(writeAt);
  const current = await (await fetch(`${url}/api/admin/projects/${project}/features/${flag}`, { headers: { Authorization: admin } })).json();
  const enabled = current.environments.find((candidate) => candidate.name === environment)?.enabled;
  writtenState = !enabled;
  const response = await fetch(`${url}/api/admin/projects/${project}/features/${flag}/environments/${environment}/${writtenState ? 'on' : 'off'}`, {
    method: 'POST', headers: { Authorization: admin, 'Content-Type': 'application/json' }, body: '{}',
  });
  writtenAt = Date.now();
  if (response.status !== 200) errors.push(`write ${response.status}`);
}

const percentile = (values, p) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
};
await Promise.all([writer(), ...Array.from({ length: instances }, (_, index) => instance(index))]);
const delays = [...seenAfterWrite.values()];
console.log(JSON.stringify({
  instances, seconds, pollSeconds: poll / 1000,
  requests: Object.values(statuses).reduce((sum, n) => sum + n, 0),
  statuses,
  errors: errors.length, firstErrors: [...new Set(errors)].slice(0, 5),
  latencyMs: Object.fromEntries(Object.entries(latencies).map(([kind, values]) => [kind, { p50: percentile(values, 50), p99: percentile(values, 99), max: percentile(values, 100) }])),
  write: { sawIt: delays.filter(Number.isFinite).length, missed: instances - delays.filter(Number.isFinite).length, maxDelayMs: delays.length ? Math.max(...delays) : null },
}));
