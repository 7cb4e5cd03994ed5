# Sourced by the scripts that drive Unleash's own web UI (the Apache-2.0 frontend build shipped in
# the npm package unleash-server@7.6.5) against Halyard in headless Chromium: puppeteer-core, the
# build, Chromium, and a server of the build on one origin with Halyard's API.
#
# The caller sets `tools` (the cache outside the repository), `work` (a temporary directory) and
# `say`/`die`, and has Node.js on its PATH; these functions set `webui_tools`, `build_dir`,
# `chromium` and `ui_pid`.
webui_version=7.6.5
webui_tools="$tools/webui"
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "needs root or sudo to run: $*"; fi
}
apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { as_root apt-get update -qq >&2; apt_updated=1; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# puppeteer-core@24 and the frontend build (npm pack) in $webui_tools; Chromium from Debian when
# none is found (HALYARD_CHROMIUM names one).
webui_peer_install() {
  mkdir -p "$webui_tools"
  if [ ! -f "$webui_tools/node_modules/puppeteer-core/package.json" ]; then
    say "installing puppeteer-core@24 into $webui_tools"
    [ -f "$webui_tools/package.json" ] || echo '{"private":true}' > "$webui_tools/package.json"
    npm install --prefix "$webui_tools" --no-audit --no-fund --loglevel=error puppeteer-core@24 >&2
  fi
  local webui_dir="$webui_tools/unleash-server-$webui_version"
  if [ ! -d "$webui_dir/package" ]; then
    say "fetching unleash-server@$webui_version (npm pack) into $webui_dir"
    rm -rf "$webui_dir.tmp" && mkdir -p "$webui_dir.tmp"
    (cd "$webui_dir.tmp" && npm pack --silent "unleash-server@$webui_version" >/dev/null && tar xzf unleash-server-*.tgz && rm unleash-server-*.tgz)
    rm -rf "$webui_dir" && mv "$webui_dir.tmp" "$webui_dir"
  fi
  local index_html
  index_html=$(find "$webui_dir/package" -path '*frontend/build/index.html' -print -quit)
  [ -n "$index_html" ] || index_html=$(grep -rl --include=index.html '::unleashToken::' "$webui_dir/package" | head -1 || true)
  [ -n "$index_html" ] || die "no frontend index.html found in unleash-server@$webui_version"
  build_dir=$(dirname "$index_html")
  say "Unleash frontend build: $build_dir"
  chromium=${HALYARD_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
  if [ -z "$chromium" ]; then
    say "Chromium not found: installing Debian's chromium and fonts-liberation"
    apt_install chromium fonts-liberation
    chromium=$(command -v chromium) || die "could not install Chromium"
  fi
  say "$("$chromium" --version 2>/dev/null || echo "$chromium")"
}

# Serves the build on 127.0.0.1:$1 with Halyard's API (on port $2) proxied, as one origin
# (scripts/webui-server.mjs); waits until it answers.
webui_peer_serve() {
  node scripts/webui-server.mjs "$build_dir" "$1" "$2" > "$work/ui-server.log" 2>&1 &
  ui_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$1/" | grep -q '<div id="app">' || die "the UI server does not serve index.html"
}
