#!/usr/bin/env bash
# One night of release tracking (docs/ci/nightly.yml runs it; so does tests/test_nightly.py, against a local bare
# repository): the results branch fetched into a folder of its own, `jaxmlp track` (through `nox -s track`) over it,
# the new result folders pushed back to the branch (appended: each call's folder is named by its time, machine and
# process, so runners never overwrite one another; a push that finds the branch moved is rebased and tried again),
# then the exit code of track (0 nothing slower, 3 a release slower, 4 inconclusive with --strict, 1 not measured).
#
#   bench/track/nightly.sh [ARGUMENTS OF jaxmlp track...]     e.g. --pinned 0.7.0 --site site --message message.md
#
# Set by the environment (all optional):
#   RESULTS_URL     the repository that holds the results branch (default: this checkout's `origin`)
#   RESULTS_BRANCH  the branch (default: results; made on the first night)
#   RESULTS_FOLDER  where the branch is checked out, and track's --out (default: results)
#   TRACK_COMMAND   how track runs (default: `nox -s track --`; the test gives `python -m jaxmlp track`)
#   JAXMLP_MACHINE_NAME  the machine's name in every result (docs/questions/tracking.md: machine names in CI)
set -uo pipefail

url="${RESULTS_URL:-$(git remote get-url origin)}"
branch="${RESULTS_BRANCH:-results}"
folder="${RESULTS_FOLDER:-results}"
read -r -a command <<<"${TRACK_COMMAND:-nox -s track --}"
say() { echo "nightly: $*" >&2; }
git_() { git -C "$folder" -c user.name="${GIT_AUTHOR_NAME:-jaxmlp track}" -c user.email="${GIT_AUTHOR_EMAIL:-jaxmlp-track@localhost}" "$@"; }
git rev-parse --git-dir >/dev/null 2>&1 || { say "run it inside the project's git checkout"; exit 2; }

# 1. The results so far, checked out beside the project (a worktree of this checkout: a push goes with the
#    checkout's credentials, as actions/checkout leaves them). The branch's files are the truth.
rm -rf "$folder"
git worktree prune
if git ls-remote --exit-code --heads "$url" "$branch" >/dev/null 2>&1; then
  git fetch --quiet "$url" "+refs/heads/$branch:refs/remotes/track/$branch" &&
    git worktree add --quiet --detach "$folder" "refs/remotes/track/$branch" ||
    { say "could not fetch $branch from $url"; exit 1; }
  say "fetched $branch from $url: $(find "$folder" -maxdepth 2 -name track.json | wc -l) earlier call(s)"
else
  git worktree add --quiet --detach "$folder" && git_ checkout --quiet --orphan "$branch" && git_ rm -rfq --ignore-unmatch . ||
    { say "could not start $branch in $folder"; exit 1; }
  say "no branch $branch in $url yet: it starts tonight"
fi

# 2. Track: only the releases newer than the last one tracked are measured.
"${command[@]}" --out "$folder" "$@"
code=$?
say "jaxmlp track exited $code"

# 3. The new calls' folders (those that filed their track.json) pushed, appended to the branch.
added=0
for call in "$folder"/track-*/; do
  if [ -f "$call/track.json" ] && [ -n "$(git_ status --porcelain -- "$(basename "$call")")" ]; then
    git_ add -- "$(basename "$call")" && added=$((added + 1))
  fi
done
if [ "$added" -gt 0 ]; then
  git_ commit --quiet -m "jaxmlp track: $added new call(s) on ${JAXMLP_MACHINE_NAME:-this machine}" || exit 1
  for try in 1 2 3 4 5; do
    if git_ push --quiet "$url" "HEAD:refs/heads/$branch" 2>/dev/null; then
      say "pushed $added new folder(s) to $branch"
      break
    fi
    [ "$try" = 5 ] && { say "could not push to $branch after 5 tries"; exit 1; }
    say "$branch moved (another runner pushed): rebasing onto it, try $((try + 1))"
    git_ fetch --quiet "$url" "$branch" && git_ rebase --quiet FETCH_HEAD || { say "could not rebase onto $branch"; exit 1; }
  done
else
  say "nothing new to push"
fi
exit "$code"
