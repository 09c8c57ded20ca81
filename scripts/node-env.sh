# Sourced by the project's scripts: puts a Node.js of the line slicemesh needs (the major in
# .nvmrc, or newer) first on PATH. The node already on PATH is used when it is new enough;
# otherwise an official build from the npm registry's node-<os>-<arch> package is fetched once
# into .slicemesh/node/<major> (SLICEMESH_NODE_FETCH=0 refuses that and only says what is needed).
# Anything that goes wrong is one line on stderr saying what is needed and how to get it.

slicemesh_node_env() {
  local root want have os arch dir pkg tmp
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  want="$(tr -dc '0-9' < "$root/.nvmrc")"
  have="$(node -p 'process.versions.node' 2>/dev/null || echo none)"
  if [ "${have%%.*}" != none ] && [ "${have%%.*}" -ge "$want" ]; then return 0; fi

  dir="$root/.slicemesh/node/$want"
  if [ -x "$dir/bin/node" ]; then export PATH="$dir/bin:$PATH"; return 0; fi

  local need="slicemesh needs Node.js $want or newer (found: ${have/none/no node})"
  local how="install Node.js $want (https://nodejs.org/en/download, or nvm install $want) and run again"
  if [ "${SLICEMESH_NODE_FETCH:-1}" = 0 ]; then echo "$need; $how" >&2; return 1; fi
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "$need; $how" >&2; return 1 ;; esac
  case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) echo "$need; $how" >&2; return 1 ;; esac
  pkg="node-$os-$arch@$want"
  if ! command -v npm >/dev/null; then echo "$need; $how" >&2; return 1; fi
  echo "node-env: $need; fetching $pkg from the npm registry into .slicemesh/node/$want (once)" >&2
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$pkg" >/dev/null 2>&1 && tar xzf ./*.tgz) && [ -x "$tmp/package/bin/node" ]; then
    mkdir -p "$(dirname "$dir")" && rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp"
    export PATH="$dir/bin:$PATH"
    echo "node-env: using $("$dir/bin/node" --version) from .slicemesh/node/$want" >&2
    return 0
  fi
  rm -rf "$tmp"
  echo "$need; fetching $pkg from the npm registry failed: $how" >&2
  return 1
}

slicemesh_node_env
