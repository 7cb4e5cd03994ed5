// Simulates SDK instances against a server, as scripts/sdk-swarm runs it: each instance
// registers, polls /api/client/features every HALYARD_POLL seconds with its ETag, and posts metrics
// every HALYARD_METRICS seconds, for SECONDS seconds; starts are spread over the first poll interval.
// At WRITE_AT seconds a flag (FLAG) is switched, and every instance's next poll must show it.
// Prints one JSON line: requests, errors, latency percentiles and how long the write took to
// reach each instance.
//
// One process plays every instance, so it does not decompress and parse each answer as a real
// SDK would: it asks for gzip as the Node SDK does and reads the bytes. That the write reached
// an instance is read from the ETag, which is a digest of the answer: after the write, the
// writer fetches the answer once, checks that it shows the write, and every instance's next
// poll must return that tag (200) or already hold it (304).
import http from 'node:http';
import zlib from 'node:zlib';
const env = process.env;
const url = env.HALYARD_URL;
const token = env.BACKEND_TOKEN;
const admin = env.ADMIN_TOKEN;
const instances = Number(env.HALYARD_INSTANCES ?? 1000);
const seconds = Number(env.HALYARD_DURATION ?? 300);
const poll = Number(env.HALYARD_POLL ?? 15) * 1000;
const metricsEvery = Number(env.HALYARD_METRICS ?? 60) * 1000;
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
/** One request on a connection of its own; resolves to its status, headers and body bytes. */
function send(method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${path}`, { method, headers, agent: false }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function timed(kind, path, method, headers, body) {
  const begun = performance.now();
  try {
    const response = await send(method, path, headers, body);
    latencies[kind].push(performance.now() - begun);
    statuses[`${kind} ${response.status}`] = (statuses[`${kind} ${response.status}`] ?? 0) + 1;
    const expected = kind === 'features' ? [200, 304] : [202];
    if (!expected.includes(response.status)) errors.push(`${kind} ${response.status}`);
    return response;
  } catch (error) {
    errors.push(`${kind} ${error.code ?? error.message}`);
    return null;
  }
}

async function instance(index) {
  await sleep((poll * index) / instances);
  const headers = {
    Authorization: token, 'unleash-appname': 'swarm', 'unleash-instanceid': `swarm-${index}`,
    'Content-Type': 'application/json', 'Accept-Encoding': 'gzip,deflate',
  };
  await timed('register', '/api/client/register', 'POST', headers,
    JSON.stringify({ appName: 'swarm', instanceId: `swarm-${index}`, sdkVersion: 'swarm:1.0.0', strategies: ['default'], started: new Date().toISOString(), interval: poll }));
  let etag = null;
  let nextMetrics = Date.now() + metricsEvery;
  let counts = 0;
  while (Date.now() < deadline) {
    const pollStarted = Date.now();
    const result = await timed('features', '/api/client/features', 'GET', etag ? { ...headers, 'If-None-Match': etag } : headers);
    if (result?.status === 200) {
      etag = result.headers.etag;
      counts += 1;
    }
    if (result && writtenEtag !== null && pollStarted >= writtenAt && !seenAfterWrite.has(index)) {
      if (etag === writtenEtag) {
        seenAfterWrite.set(index, Date.now() - writtenAt);
      } else {
        errors.push(`features ${result.status} after the write without it`);
        seenAfterWrite.set(index, Infinity);
      }
    }
    if (Date.now() >= nextMetrics) {
      nextMetrics += metricsEvery;
      const now = new Date().toISOString();
      await timed('metrics', '/api/client/metrics', 'POST', headers,
        JSON.stringify({ appName: 'swarm', instanceId: `swarm-${index}`, bucket: { start: now, stop: now, toggles: { [flag]: { yes: counts, no: 1, variants: {} } } } }));
    }
    await sleep(Math.max(0, pollStarted + poll - Date.now()));
  }
}

let writtenEtag = null;
async function writer() {
  await sleep(writeAt);
  const adminHeaders = { Authorization: admin, 'Content-Type': 'application/json' };
  const current = JSON.parse((await send('GET', `/api/admin/projects/${project}/features/${flag}`, adminHeaders)).body);
  const enabled = current.environments.find((candidate) => candidate.name === environment)?.enabled;
  writtenState = !enabled;
  const response = await send('POST', `/api/admin/projects/${project}/features/${flag}/environments/${environment}/${writtenState ? 'on' : 'off'}`, adminHeaders, '{}');
  if (response.status !== 200) errors.push(`write ${response.status}`);
  writtenAt = Date.now();
  // The answer after the write, checked once: its tag is what every instance must reach.
  const answer = await send('GET', '/api/client/features', { Authorization: token, 'Accept-Encoding': 'gzip' });
  const document = JSON.parse(zlib.gunzipSync(answer.body));
  if (document.features.find((candidate) => candidate.name === flag)?.enabled !== writtenState) {
    errors.push('the answer after the write does not show it');
  }
  writtenEtag = answer.headers.etag;
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
