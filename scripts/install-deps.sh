#!/usr/bin/env bash
# Installs exactly the Debian packages Tessera builds, tests and benchmarks with.
# Idempotent: prints nothing and touches nothing when every package is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libfmt-dev        # formatting (GCC 12 has no std::format)
  libcli11-dev      # command-line parsing
  libboost1.81-dev  # Asio and Beast: the HTTP server and client
  libssl-dev        # TLS for the API server
  nlohmann-json3-dev
  libyaml-cpp-dev   # manifests in YAML
  libsqlite3-dev    # the embedded store
  libspdlog-dev     # logging
  libcsv-dev        # CSV rows of the simulator's traces
  libcjose-dev libjansson-dev  # JWTs and JWKs: ServiceAccount tokens, OIDC (cjose.pc needs jansson.pc)
  python3-jwt python3-cryptography  # the JWT tests check our tokens against PyJWT's
  libgtest-dev libgmock-dev
  libbenchmark-dev
  prometheus        # the metrics tests scrape Tessera with a real Prometheus
  libxml2-utils     # xmllint: the SVG tests check the simulator's charts are well-formed XML
  # Containers (docs/agent.md): runc runs OCI bundles (crun 1.8 refuses this
  # kernel's hybrid cgroups), skopeo pulls images into the node's OCI store and
  # umoci unpacks them; the tests run a registry on 127.0.0.1 and build their
  # image from busybox-static.
  runc skopeo umoci
  docker-registry busybox-static
  # The pod network (docs/agent.md): links, addresses and routes over netlink.
  libnl-route-3-dev
  # NetworkPolicy and Services on the node (src/net): rulesets applied through
  # libnftables; nft itself to look at them.
  nftables libnftables-dev
  # Notebooks (docs/workloads.md): Debian's Jupyter Notebook, the default
  # command of a Notebook on a node without Jupyter Lab; the tests open a real
  # kernel through the server's proxy with it.
  jupyter-notebook
  # The portal (web/, docs/portal.md): Node.js and npm build it with Vite from
  # the committed lockfile (npm ci); the browser tests drive Debian's Chromium,
  # headless, with playwright-core; fonts so its screenshots show text.
  nodejs chromium fonts-dejavu-core
  openssl           # the browser tests' OIDC issuer gets its certificate from it
)
# A Node.js from elsewhere (NodeSource's nodejs package) carries its own npm;
# Debian's nodejs needs the npm package beside it.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
