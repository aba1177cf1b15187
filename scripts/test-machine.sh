#!/bin/sh
# Before the test suite: the machine must have what the two-machine test world uses (sshd, tmux,
# the login shells it tests, iproute2, ps) and busybox, whose sh the sh programs' table tests
# run under beside dash and bash. As root with apt-get, the missing packages are
# installed (one line says which); otherwise one line names them and the command that installs
# them, and the test run stops before any suite starts.
set -eu

packages='openssh-server openssh-client tmux git iproute2 zsh fish procps busybox'

# The file each package provides that the world runs, for machines without dpkg.
provides() {
  case $1 in
    openssh-server) echo /usr/sbin/sshd ;;
    openssh-client) echo ssh ;;
    iproute2) echo ip ;;
    procps) echo ps ;;
    *) echo "$1" ;;
  esac
}

installed() {
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
  else
    command -v "$(provides "$1")" >/dev/null 2>&1
  fi
}

missing=''
for p in $packages; do installed "$p" || missing="$missing $p"; done
missing=${missing# }

if [ "$(id -u)" != 0 ]; then
  echo "npm test: the test world creates users and starts sshd, so it needs root: run it as root (sudo npm test)${missing:+; it also needs: $missing}" >&2
  exit 1
fi

if [ -n "$missing" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "npm test: missing packages: $missing — install them with your package manager, then run npm test again" >&2
    exit 1
  fi
  echo "npm test: installing $missing (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >/tmp/ah-apt.$$.log 2>&1; then
    echo "npm test: apt-get could not install $missing (log: /tmp/ah-apt.$$.log); install them with: apt-get install -y $missing" >&2
    exit 1
  fi
  rm -f /tmp/ah-apt.$$.log
fi

# The five real agent CLIs the real-agent tests run (pinned, into a cache folder outside the
# checkout; once per machine, later runs only check their versions). A failure stops the run: a
# real-agent test never skips for a missing agent.
sh "$(dirname "$0")/install-real-agents.sh" >&2
