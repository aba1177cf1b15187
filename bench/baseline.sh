#!/usr/bin/env bash
# The baseline for `npm run bench`: the same pi handoff done the way a straightforward script
# would, with the OpenSSH client — a separate `ssh` (or `scp`, or `git push` over ssh) per remote
# step, no connection sharing. Run as the laptop user; bench/handoff.ts times it.
#
#   baseline.sh AGENT TARGET TARGET_REPO REMOTE_HERDR
#
# AGENT is a herdr agent name on this machine, TARGET an ssh alias, TARGET_REPO the clone of the
# same project on the target, REMOTE_HERDR the herdr executable there (it is not on the
# non-interactive PATH). End state, as agent-handoff leaves it: the branch checked out in
# TARGET_REPO.worktrees/BRANCH with the uncommitted work (untracked files too), the session file
# rewritten to the new folder, the agent resumed there under the same name, the changes stashed
# here. Prints "step NAME" as each step begins and "done PANE WORKSPACE" at the end.
set -euo pipefail
agent=$1 target=$2 target_repo=$3 rherdr=$4
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
worktree="$target_repo.worktrees/$branch"

step check-target
ssh "${ssh_opts[@]}" "$target" "$(q "$rherdr") agent list" >/dev/null

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

step end
echo "done $new_pane $ws_id"
