#!/usr/bin/env bash
# Prepares what the tests need on a fresh Linux machine, and does nothing that is already
# done: bubblewrap, Docker Engine (docker.io), debootstrap, acl, tmux (the interactive mode's
# terminal tests), chromium (the dashboard's browser tests) and python3 (hands serve's
# in-sandbox agent) from apt when running as root, a dockerd in the background when none answers, and the sandbox image (built offline
# with debootstrap + docker import, tagged by a hash of its recipe, so only once per machine).
# Elsewhere (macOS, no root) it says what is missing; the tests then fail with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."
log() { echo "test-env: $*" >&2; }

if [ "$(uname -s)" != Linux ]; then log "not Linux: bwrap and docker tests need Linux"; exit 0; fi

need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v tmux >/dev/null || need+=(tmux)
# setfacl: as root, the sandbox shares a root-owned workspace with its unprivileged uid.
command -v setfacl >/dev/null || need+=(acl)
# hands serve's in-sandbox agent is Python, run from the host's /usr inside bubblewrap.
[ -x /usr/bin/python3 ] || need+=(python3)
# ...and its code interpreter draws matplotlib charts as PNG results (bwrap uses the host's /usr).
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
# ...its kernels are real Jupyter kernels: IPython's (pandas for DataFrame results) and R's.
/usr/bin/python3 -c 'import ipykernel, jupyter_client, pandas' 2>/dev/null || need+=(python3-ipykernel python3-jupyter-client python3-pandas)
command -v R >/dev/null && [ -d /usr/lib/R/site-library/IRkernel ] || need+=(r-cran-irkernel)
# gVisor for hands serve's "gvisor" template (docker with the runsc runtime).
command -v runsc >/dev/null || need+=(runsc)
command -v openssl >/dev/null || need+=(openssl) # a throwaway TLS certificate for the proxy tests
# A failed command's diagnosis: programs built in the test, one linked to libmagic (absent from the image).
command -v cc >/dev/null || need+=(gcc libc6-dev)
[ -e /usr/include/magic.h ] || need+=(libmagic-dev)
# PostgreSQL for hands serve's several-node tests (a private server: scripts/postgres.sh).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# The dashboard's end-to-end tests drive Debian's Chromium (playwright-core, no downloaded browser).
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
      || log "apt-get install ${need[*]} failed"
  else
    log "missing ${need[*]} (install them, or run as root with apt)"
  fi
fi

if command -v docker >/dev/null && ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v dockerd >/dev/null; then
    log "starting dockerd"
    # No bridge and no iptables: sandboxes use --network none or host only.
    nohup dockerd --bridge=none --iptables=false >/tmp/hands-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
    docker info >/dev/null 2>&1 || log "dockerd did not start: $(tail -5 /tmp/hands-dockerd.log)"
  else
    log "no Docker Engine answers and this user cannot start one"
  fi
fi

# Register runsc with dockerd (merged into daemon.json, applied by a reload: running
# containers are not touched). --host-uds=open lets hands serve's agent reach its socket;
# --network=none: gVisor's own network stack is off (its sandboxes have no network).
if [ "$(id -u)" = 0 ] && command -v runsc >/dev/null && docker info >/dev/null 2>&1 \
  && ! docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"--network=none"'; then
  log "registering the runsc runtime with dockerd"
  mkdir -p /etc/docker
  node -e '
    const fs = require("fs"); const p = "/etc/docker/daemon.json";
    const c = fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, "utf8")) : {};
    c.runtimes = { ...(c.runtimes || {}), runsc: { path: "/usr/bin/runsc", runtimeArgs: ["--host-uds=open", "--network=none"] } };
    fs.writeFileSync(p, JSON.stringify(c, null, 2) + "\n");
  '
  [ -f /var/run/docker.pid ] && kill -HUP "$(cat /var/run/docker.pid)"
  for _ in $(seq 1 20); do docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"--network=none"' && break; sleep 0.25; done
  docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"--network=none"' || log "dockerd did not pick up runsc"
fi

# The private PostgreSQL server of hands serve's several-node tests (loopback, throwaway data).
bash scripts/postgres.sh || log "PostgreSQL did not start (hands serve's cluster tests will fail)"

# Deno (from npm) is the code interpreter's JavaScript/TypeScript kernel; bwrap sandboxes find it
# in the host's /usr/local/bin (the image has its own copy).
if [ "$(id -u)" = 0 ] && ! [ -x /usr/local/bin/deno ] && [ -f packages/sandbox/dist/image.js ]; then
  node --input-type=module -e 'const { installNpmPrograms } = await import("./packages/sandbox/dist/image.js"); await installNpmPrograms("/");' \
    || log "Deno could not be installed from npm (the interpreter's JavaScript/TypeScript tests will fail)"
fi

if docker info >/dev/null 2>&1 && [ -f packages/sandbox/dist/image.js ]; then
  node --input-type=module -e '
    const { buildImage, imageTag, imageExists } = await import("./packages/sandbox/dist/image.js");
    const tag = imageTag();
    if (await imageExists(tag)) process.exit(0);
    const t = Date.now();
    process.stderr.write(`test-env: building ${tag} (debootstrap + docker import)\n`);
    try { await buildImage(); } catch (e) { process.stderr.write(`test-env: image build failed: ${e.message}\n`); process.exit(0); }
    process.stderr.write(`test-env: built ${tag} in ${Math.round((Date.now() - t) / 1000)} s\n`);
  '
fi
exit 0
