#!/usr/bin/env bash
# The baseline for `npm run bench`: the same pi handoff done the way a straightforward script
# would, with the OpenSSH client — a separate `ssh` (or `scp`, or `git push` over ssh) per remote
# step, no connection sharing. Run as the laptop user; bench/handoff.ts times it.
#
#   baseline.sh AGENT TARGET REMOTE_HERDR
#
# AGENT is a herdr agent name on this machine, TARGET an ssh alias, REMOTE_HERDR the herdr
# executable there (it is not on the non-interactive PATH). The same job as agent-handoff's:
# check the target (tools, herdr server and version, the integration, free space), find its
# clone of the project by the origin URL, move the work, resume the agent, and check the result
# (HEAD, the files, the session file, the agent alive) before calling it done. End state, as
# agent-handoff leaves it: the branch checked out in <clone>.worktrees/BRANCH with the
# uncommitted work (untracked files too), the session file rewritten to the new folder, the
# agent resumed there under the same name, the changes stashed here. Prints "step NAME" as each
# step begins and "done PANE WORKSPACE WORKTREE" at the end.
set -euo pipefail
agent=$1 target=$2 rherdr=$3
ssh_opts=(-o ControlMaster=no -o ControlPath=none -o BatchMode=yes)
q() { printf '%q' "$1"; }
# First value of a string field in one line of JSON (herdr prints compact JSON).
field() { grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | sed "s/^\"$1\":\"//; s/\"\$//"; }
number() { grep -o "\"$1\":[0-9]*" | head -n 1 | sed 's/.*://'; }
step() { echo "step $1"; }

step info
info=$(herdr agent get "$agent")
pane=$(field pane_id <<<"$info")
cwd=$(field cwd <<<"$info")
session=$(grep -o '"agent_session":{[^}]*}' <<<"$info" | field value)
src_repo=$(git -C "$cwd" rev-parse --show-toplevel)
branch=$(git -C "$src_repo" symbolic-ref --short HEAD)
origin=$(git -C "$src_repo" remote get-url origin)
changes=$(git -C "$src_repo" status --porcelain --untracked-files=all | wc -l)

step check-target
# Tools on the login PATH, herdr's version and server, the pi integration, free space at home.
ssh "${ssh_opts[@]}" "$target" "bash -lc 'command -v git && command -v pi' >/dev/null && $(q "$rherdr") --version && $(q "$rherdr") status server --json | grep -q '\"running\":true' && $(q "$rherdr") integration status | grep -q '^pi: current' && df -Pk ~ | tail -n 1" >/dev/null

step find-checkout
# The target's clone of this project: a repository under the home folder with the same origin.
target_repo=$(ssh "${ssh_opts[@]}" "$target" "find ~ -maxdepth 4 -name .git -type d -prune 2>/dev/null | while read -r g; do d=\${g%/.git}; [ \"\$(git -C \"\$d\" remote get-url origin 2>/dev/null)\" = $(q "$origin") ] && { echo \"\$d\"; break; }; done")
[ -n "$target_repo" ] || { echo "no clone of $origin on $target" >&2; exit 1; }
worktree="$target_repo.worktrees/$branch"

step quit
herdr pane send-text "$pane" /quit
sleep 0.5
herdr pane send-keys "$pane" enter
at_shell() {
  local p
  p=$(herdr pane process-info --pane "$pane")
  [ "$(number shell_pid <<<"$p")" = "$(number foreground_process_group_id <<<"$p")" ]
}
until at_shell; do sleep 0.15; done

step stash
head=$(git -C "$src_repo" rev-parse HEAD)
git -C "$src_repo" stash push -q -u -m "handoff to $target"
wip=$(git -C "$src_repo" rev-parse stash@{0})

step push
git -C "$src_repo" push -q "ssh://$target$target_repo" "$head:refs/handoff/head" "$wip:refs/handoff/wip"

step worktree
ssh "${ssh_opts[@]}" "$target" "git -C $(q "$target_repo") worktree add -q -B $(q "$branch") $(q "$worktree") refs/handoff/head"

step apply
ssh "${ssh_opts[@]}" "$target" "git -C $(q "$worktree") stash apply -q refs/handoff/wip && git -C $(q "$target_repo") update-ref -d refs/handoff/head && git -C $(q "$target_repo") update-ref -d refs/handoff/wip"

step session
folder="--$(printf '%s' "${worktree#/}" | tr '/:' '--')--"
dest_dir=$(ssh "${ssh_opts[@]}" "$target" "mkdir -p .pi/agent/sessions/$(q "$folder") && cd .pi/agent/sessions/$(q "$folder") && pwd")
dest_file="$dest_dir/$(basename "$session")"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
sed "s#$src_repo#$worktree#g" "$session" >"$tmp"
scp -q "${ssh_opts[@]}" "$tmp" "$target:$dest_file"

step start
ws=$(ssh "${ssh_opts[@]}" "$target" "$(q "$rherdr") workspace create --cwd $(q "$worktree") --label $(q "$branch") --no-focus")
ws_id=$(grep -o '"workspace":{[^}]*}' <<<"$ws" | field workspace_id)
new_pane=$(grep -o '"root_pane":{[^}]*}' <<<"$ws" | field pane_id)
# The new pane's shell may not own its terminal yet: retry as a person would.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  if out=$(ssh "${ssh_opts[@]}" "$target" "$(q "$rherdr") agent start $(q "$agent") --kind pi --pane $(q "$new_pane") -- --session $(q "$dest_file")" 2>&1); then break; fi
  grep -q 'not an available shell' <<<"$out" || { echo "$out" >&2; exit 1; }
  sleep 0.25
done

step verify
# HEAD, the changed files (as many as left the laptop), the session file as written, and the
# agent alive — before calling the handoff done.
sum=$(sha256sum <"$tmp" | cut -d' ' -f1)
check=$(ssh "${ssh_opts[@]}" "$target" "git -C $(q "$worktree") rev-parse HEAD && git -C $(q "$worktree") status --porcelain --untracked-files=all | wc -l && sha256sum <$(q "$dest_file") | cut -d' ' -f1 && $(q "$rherdr") agent get $(q "$agent") | grep -o '\"pane_id\":\"[^\"]*\"'")
[ "$(sed -n 1p <<<"$check")" = "$head" ] || { echo "HEAD on $target is not $head" >&2; exit 1; }
[ "$(sed -n 2p <<<"$check")" -eq "$changes" ] || { echo "the changes did not land on $target" >&2; exit 1; }
[ "$(sed -n 3p <<<"$check")" = "$sum" ] || { echo "the session file on $target is not what was sent" >&2; exit 1; }
grep -q "\"$new_pane\"" <<<"$check" || { echo "the agent is not running in $new_pane on $target" >&2; exit 1; }

step end
echo "done $new_pane $ws_id $worktree"
