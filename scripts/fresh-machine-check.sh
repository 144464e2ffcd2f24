#!/usr/bin/env bash
# The README's first hour on a machine that has only Node and redis-server (issue 38), run so that it cannot regress:
#
#   a clean clone of this checkout's HEAD in a new temporary directory (private, 0700, as `mktemp -d` makes it, like a
#   clone under /root; `--dirs private,ordinary` also runs it in a world-readable one), then, inside a network namespace
#   of its own (`unshare -n`, loopback up: the host's PostgreSQL, Redis and anything else on 127.0.0.1 are invisible,
#   and nothing outside is reachable), in the order the README and the banners print them:
#     npm start → the README's CLI and curl lines (org:create --with-key, webhook, sessions, org:list, apikey:list,
#       --help) and the banner's → Ctrl-C
#     npm run demo → every line of its banner (session, QR, scan, working, send, inbound, group, webhook) and the CLI
#       beside it → Ctrl-C
#     npm run demo -- --engine baileys → the same with its banner's lines → Ctrl-C
#     npm run demo again (the sim engine after Baileys: the other order)
#   each Ctrl-C must stop everything (exit 0, every port closed, the embedded PostgreSQL and redis-server too).
#
# node_modules: `npm ci` needs the registry, which the namespace cannot reach, so the clone gets a symlink to this
# checkout's node_modules (what `npm ci` just installed from the same lockfile in CI; the README's first command is
# the one step not replayed). dist/: built by the first `npm start`, as on a fresh machine; `--reuse-build` copies
# this checkout's dist/ instead (CI built it from the same sources a minute before).
#
# Usage (as root: unshare and the embedded PostgreSQL's `postgres` user need it):
#   scripts/fresh-machine-check.sh [--reuse-build] [--dirs private,ordinary]
# Prints one line per step and the total time; on a failure, the step, its output and the stack's log, exit 1.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

if [[ ${1:-} == --inside ]]; then
  # ---------------------------------------------------------------- inside the namespace, in the clone
  cd "$2"
  ip link set lo up
  log_dir=$3
  stack_log="$log_dir/stack.log"
  started_at=$(date +%s)

  # any exit (a failed step, set -e): the stack is stopped as Ctrl-C stops it, then whatever is left is killed
  trap 'set +e; [[ -n ${stack_pgid:-} ]] && { kill -INT -- "-$stack_pgid" 2>/dev/null; wait "$stack_pid" 2>/dev/null; }; kill -KILL -1 2>/dev/null; true' EXIT

  step() { printf '  %-8s %s\n' "$(($(date +%s) - started_at)) s" "$*"; }
  fail() {
    printf '\nFAILED: %s\n' "$*" >&2
    if [[ -f $stack_log ]]; then printf '%s\n' '--- the stack (last 60 lines):' >&2; tail -60 "$stack_log" >&2; fi
    exit 1
  }

  # every curl the README and the banners print, as printed, but failing on an HTTP error (--fail-with-body)
  curl() { command curl --silent --show-error --fail-with-body --max-time 30 "$@"; }
  export -f curl

  port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

  # `npm start` / `npm run demo …` in a process group of its own, as a terminal runs it; returns once the banner is out
  start_stack() {
    : >"$stack_log"
    setsid "$@" >"$stack_log" 2>&1 < /dev/null &
    stack_pid=$!
    stack_pgid=$stack_pid
    for _ in $(seq 1 1200); do
      # the banner is between two rules of ─
      [[ $(grep -c '^──────────' "$stack_log") -ge 2 ]] && return 0
      kill -0 "$stack_pid" 2>/dev/null || fail "$* exited before its banner"
      sleep 0.5
    done
    fail "$*: no banner within 10 minutes"
  }

  # Ctrl-C: SIGINT to the whole foreground group; everything must be gone, the stores it started too
  stop_stack() {
    kill -INT -- "-$stack_pgid"
    local code=0
    wait "$stack_pid" || code=$?
    # 130: npm's own answer to the SIGINT it got with the group, as in a terminal; the script under it exited 0
    [[ $code -eq 0 || $code -eq 130 ]] || fail "Ctrl-C: the stack exited with $code"
    grep -q 'stopped in' "$stack_log" || fail "Ctrl-C: no 'stopped in' line"
    for port in 3000 3001 3002 3003 4010 4011 5432 6379; do
      port_open "$port" && fail "Ctrl-C: port $port still open after the stack stopped"
    done
    # nothing of the clone still runs (the apps run from its dist/, the stack from its scripts/)
    if pgrep -f "$PWD/(dist|scripts)/" >/dev/null; then pgrep -af "$PWD/(dist|scripts)/" >&2; fail "Ctrl-C: processes left behind"; fi
    stack_pgid=
    step "Ctrl-C: stopped ($(grep -o 'stopped in [0-9.]* s' "$stack_log")), every port closed"
  }

  # The banner's lines after "next:", as printed (one command a line)
  banner_lines() { sed -n '/^  next:/,/^─/p' "$stack_log" | sed -e '1d' -e '$d' | sed -e 's/^    //'; }

  # Runs one printed line in this shell (its variables stay: TOKEN, QR), retrying while `want` is not in its output
  # (a QR that is not shown yet, a session not working yet: what a person would retry by hand)
  run_line() {
    local line=$1 want=${2:-} tries=${3:-1} out=''
    for _ in $(seq 1 "$tries"); do
      # stdout is the answer (JSON); what the CLI says on stderr ("using the database of the running npm start") is not
      if out=$(eval "$line" 2>"$log_dir/stderr") && [[ -z $want || $out == *"$want"* ]]; then
        last_output=$out
        return 0
      fi
      sleep 0.5
    done
    fail "$(printf '%s\n→ %s\n%s' "$line" "$out" "$(cat "$log_dir/stderr")")"
  }

  json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(eval("v"+process.argv[1])??"")})' "$1"; }

  # ------------------------------------------------------------ npm start and the README's next commands
  start_stack npm start
  step "npm start: banner ($(grep -c . "$stack_log") lines; $(grep -o 'built in [0-9]* s' "$stack_log" || echo 'no build'))"
  grep -q 'embedded' "$stack_log" || fail "npm start did not start the embedded PostgreSQL"
  grep -q 'redis-server' "$stack_log" || fail "npm start did not start redis-server"

  # the README's block, in its order, with the token and the organization it prints
  mapfile -t readme < <(sed -n '/then call the API:$/,/^```$/p' README.md | sed -n '/^```bash$/,/^```$/p' | sed -e '1d' -e '$d' |
    sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' | grep -v '^#')
  [[ ${#readme[@]} -ge 5 ]] || fail "README: the Quick start's command block was not found"
  TOKEN='' ORG=''
  for line in "${readme[@]}"; do
    line=${line//gwk_…/$TOKEN}
    line=${line//<orgId>/$ORG}
    run_line "$line"
    if [[ $line == *org:create* ]]; then
      TOKEN=$(json .apiKey.token <<<"$last_output")
      ORG=$(json .organization.id <<<"$last_output")
      [[ $TOKEN == gwk_* ]] || fail "org:create printed no API key: $last_output"
    fi
    step "README: ${line%% -H*}"
  done
  # the banner's own next lines, as printed (a second organization: the banner names another owner), the key it
  # prints in place of the placeholder
  while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    line=${line//<apiKey.token from above>/$TOKEN}
    run_line "$line"
    [[ $line == *org:create* ]] && TOKEN=$(json .apiKey.token <<<"$last_output")
    step "banner: ${line:0:90}…"
  done < <(banner_lines)
  stop_stack

  # ------------------------------------------------------------ the demo, on each engine, in both orders
  run_demo() {
    local engine=$1
    if [[ $engine == sim ]]; then start_stack npm run demo; else start_stack npm run demo -- --engine "$engine"; fi
    step "npm run demo ($engine): banner"
    local session='' line
    while IFS= read -r line; do
      [[ -z $line ]] && continue
      [[ -n $session ]] && line=${line//<sessionId>/$session}
      case $line in
        export*) eval "$line" ;;
        QR=*) eval "$line"; [[ -n ${QR:-} && $QR != undefined ]] || fail "$line → no QR" ;;
        *'/qr -H'*) run_line "$line" '"qr"' 120 ;;
        *'# working, once the phone scanned'*) run_line "$line" '"status":"working"' 120 ;;
        *'/groups'*) run_line "$line" '"groupJid"' 1 ;;
        *) run_line "$line" ;;
      esac
      if [[ -z $session && $line == *'/api/v1/sessions -H'* && $line == *POST* ]]; then
        session=$(json .id <<<"$last_output")
        [[ $session == ses_* ]] || fail "no session id in $last_output"
      fi
      step "demo ($engine): ${line:0:90}…"
    done < <(banner_lines)
    # the demo's receiver got the inbound message the banner's line sent (created before: the webhook line is last,
    # so one more inbound shows the whole way to the receiver)
    run_line "curl -s -X POST http://localhost:4010/sim/sessions/$session/inbound -H 'content-type: application/json' -d '{\"from\":\"15550001111\",\"text\":\"once more\"}'"
    run_line "grep -q 'hook *| message.received $session' '$stack_log'" '' 60
    step "demo ($engine): the webhook receiver got message.received"
    # the CLI beside the running demo finds the demo's database by itself (tmp/running-stack.json)
    run_line "npm run -s cli -- org:list" '"Demo"'
    step "demo ($engine): npm run -s cli -- org:list names the demo organization"
    stop_stack
  }
  run_demo sim
  run_demo baileys
  run_demo sim
  printf '  all steps passed in %s s\n' "$(($(date +%s) - started_at))"
  touch "$log_dir/passed"
  exit 0
fi

# -------------------------------------------------------------------- outside: the clone, then the namespace
reuse_build=0
dirs=private
while [[ $# -gt 0 ]]; do
  case $1 in
    --reuse-build) reuse_build=1 ;;
    --dirs) dirs=$2; shift ;;
    *) echo "usage: $0 [--reuse-build] [--dirs private,ordinary]" >&2; exit 2 ;;
  esac
  shift
done
[[ $(id -u) -eq 0 ]] || { echo "fresh-machine-check: run it as root (unshare -n and the embedded PostgreSQL's postgres user need it)" >&2; exit 2; }
command -v unshare >/dev/null && command -v ip >/dev/null || { echo "fresh-machine-check: needs unshare (util-linux) and ip (iproute2)" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "fresh-machine-check: needs redis-server, as the README says" >&2; exit 2; }
[[ -d $here/node_modules ]] || { echo "fresh-machine-check: run npm ci first (the clone uses this checkout's node_modules)" >&2; exit 2; }

total_start=$(date +%s)
for kind in ${dirs//,/ }; do
  base=$(mktemp -d /tmp/gw-fresh-XXXXXX) # 0700: root's private directory
  [[ $kind == ordinary ]] && chmod 0755 "$base"
  [[ $kind == private || $kind == ordinary ]] || { echo "--dirs: private or ordinary, not $kind" >&2; exit 2; }
  clone="$base/gateway"
  git clone --quiet --no-hardlinks "$here" "$clone"
  ln -s "$here/node_modules" "$clone/node_modules"
  if [[ $reuse_build -eq 1 && -f $here/dist/apps/api/src/main.js ]]; then cp -r "$here/dist" "$clone/dist"; fi
  echo "fresh machine check: $kind directory $base ($(stat -c %a "$base")), HEAD $(git -C "$clone" rev-parse --short HEAD)"
  code=0
  # a bare environment, as on a fresh machine: no DATABASE_URL, REDIS_URL or TEST_* from the caller
  # a network namespace (loopback only) and a PID namespace: whatever a failed step leaves running dies with the check
  env -i PATH="$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}" npm_config_update_notifier=false unshare --net --pid --fork --mount-proc bash "$here/scripts/fresh-machine-check.sh" --inside "$clone" "$base" || code=$?
  # the embedded PostgreSQL's data moved out of a private directory (scripts/local-services.js): this run's only
  staged=$(grep -ho 'keeps its data in [^ ]*' "$base/stack.log" 2>/dev/null | head -1 | sed 's/keeps its data in //') || true
  [[ -n $staged ]] && rm -rf "$(dirname "$staged")"
  # the inner run's own word as well as its exit status (the EXIT trap runs with set +e: under set -e a failed kill of an
  # already stopped stack once turned a passed run into exit 1)
  [[ -f $base/passed ]] || code=${code/#0/1}
  if [[ $code -ne 0 ]]; then echo "fresh machine check: FAILED in the $kind directory (exit $code; kept: $base)"; exit 1; fi
  rm -rf "$base"
done
echo "fresh machine check: passed in $(($(date +%s) - total_start)) s"
