#!/bin/sh
# Installs the five real agent CLIs the real-agent tests (test/real-agents/) run, PINNED, each into
# its own prefix in a cache folder outside the repository:
#   $AH_REAL_AGENTS_DIR (default: /var/cache/agent-handoff/real-agents as root, else
#   ${XDG_CACHE_HOME:-~/.cache}/agent-handoff/real-agents)/<agent>-<version>/
# Once per machine: a prefix whose binary already prints its version is left alone. Everything is
# made world-readable, so the test world's users (laptop, vega) can run the binaries.
#
# Install scripts: npm 11 warns about packages "not yet covered by allowScripts" and may skip their
# postinstall. Claude Code's postinstall puts its native binary in place and grok's links its
# binary (and writes into GROK_HOME, pointed here at the prefix), so both installs pass
# --dangerously-allow-all-scripts and the version check below proves the binaries are there.
#
# Usage: sh scripts/install-real-agents.sh [agent…]   (default: all five)
# Prints one line per agent (installed/present, seconds, binary); exits non-zero if any fails.
set -eu

if [ -n "${AH_REAL_AGENTS_DIR:-}" ]; then
  DIR=$AH_REAL_AGENTS_DIR
elif [ "$(id -u)" = 0 ]; then
  DIR=/var/cache/agent-handoff/real-agents
else
  DIR=${XDG_CACHE_HOME:-$HOME/.cache}/agent-handoff/real-agents
fi

# agent, version, packages, binary (relative to the prefix), version text the binary prints.
spec() {
  case $1 in
    pi) echo '0.73.1|@mariozechner/pi-coding-agent@0.73.1|node_modules/.bin/pi' ;;
    claude) echo '2.1.197|@anthropic-ai/claude-code@2.1.197|node_modules/.bin/claude' ;;
    codex) echo '0.171.0|@openai/codex@0.171.0|node_modules/.bin/codex' ;;
    omp) echo '18.2.3|@oh-my-pi/pi-coding-agent@18.2.3 @oven/bun-linux-x64@1.4.5|node_modules/.bin/omp' ;;
    grok) echo '1.0.41|@xai-official/grok@1.0.41|node_modules/.bin/grok' ;;
    *) return 1 ;;
  esac
}

# The environment a binary runs with for its version check (bun first on PATH for omp; no update
# checks, no home of the installing user touched).
version_of() {
  agent=$1 prefix=$2 bin=$3
  scratch=$prefix/.version-home
  mkdir -p "$scratch"
  env -i PATH="$prefix/node_modules/@oven/bun-linux-x64/bin:$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin" \
    HOME="$scratch" GROK_HOME="$prefix/grok-home" PI_CODING_AGENT_DIR="$scratch/agent" PI_OFFLINE=1 \
    CODEX_HOME="$scratch/codex" DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 TERM=dumb \
    timeout 60 "$prefix/$bin" --version </dev/null 2>&1 | head -n 3
  rm -rf "$scratch"
}

now() { date +%s.%N; }

install_one() {
  agent=$1
  s=$(spec "$agent") || { echo "install-real-agents: unknown agent $agent" >&2; return 1; }
  version=${s%%|*}; rest=${s#*|}; pkgs=${rest%%|*}; bin=${rest#*|}
  prefix=$DIR/$agent-$version
  if [ -f "$prefix/.installed" ] && version_of "$agent" "$prefix" "$bin" | grep -qF "$version"; then
    echo "$agent $version: present ($prefix/$bin)"
    return 0
  fi
  t0=$(now)
  # Installed in place (grok's postinstall links its binary by absolute path); the .installed
  # marker, written last, says the prefix is complete.
  rm -rf "$prefix"
  mkdir -p "$prefix/grok-home" "$prefix/npm-home"
  # HOME and GROK_HOME point into the prefix: grok's postinstall copies its binary to
  # $GROK_HOME/bin and writes $GROK_HOME/config.toml, never into the installing user's home.
  # shellcheck disable=SC2086
  if ! HOME="$prefix/npm-home" GROK_HOME="$prefix/grok-home" DISABLE_AUTOUPDATER=1 \
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error --no-update-notifier \
      --cache "${AH_REAL_AGENTS_NPM_CACHE:-$DIR/.npm-cache}" --dangerously-allow-all-scripts $pkgs >"$prefix.log" 2>&1; then
    echo "install-real-agents: npm install of $pkgs failed; log:" >&2
    cat "$prefix.log" >&2
    rm -rf "$prefix" "$prefix.log"
    return 1
  fi
  rm -rf "$prefix/npm-home" "$prefix.log"
  got=$(version_of "$agent" "$prefix" "$bin" || true)
  if ! printf '%s' "$got" | grep -qF "$version"; then
    echo "install-real-agents: $agent: $prefix/$bin does not print version $version; it printed: $got" >&2
    return 1
  fi
  chmod -R a+rX "$prefix"
  echo "$version" >"$prefix/.installed"
  chmod a+r "$prefix/.installed"
  t1=$(now)
  echo "$agent $version: installed in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s ($prefix/$bin)"
}

mkdir -p "$DIR"
chmod a+rx "$DIR"
# Every folder above the cache must be traversable by the world users.
d=$DIR
while [ "$d" != / ]; do
  if [ -O "$d" ]; then chmod a+x "$d"; fi
  d=$(dirname "$d")
done

agents=${*:-pi claude codex omp grok}
start=$(now)
failed=''
for a in $agents; do install_one "$a" || failed="$failed $a"; done
end=$(now)
echo "real agents in $DIR: $(awk "BEGIN{printf \"%.1f\", $end - $start}") s"
if [ -n "$failed" ]; then
  echo "install-real-agents: failed:$failed" >&2
  exit 1
fi
