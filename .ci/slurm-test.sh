#!/usr/bin/env bash
# A real Slurm run of the script `ballast slurm` writes, on this one machine.
#
# Installs munge and Slurm's controller and node daemon from Debian packages (only what is
# missing), configures a one-node cluster in a private directory (SLURM_CONF points at it, so
# nothing under /etc/slurm is touched), starts munged, slurmctld and slurmd, submits the
# script for a --quick item as 3 shards plus the dependent merge, waits for both, and checks
# the merged outputs against a single `ballast run --quick`:
#   - CSV and SVG byte-identical;
#   - JSON identical after removing the execution fields (Metadata::EXECUTION_FIELDS:
#     command, threads, wall_time_s, cpu_time_s, cached_points, shared_points, shards,
#     git_revision; a test of ballast-runner, tests/slurm_script.rs, keeps this list
#     complete), which say how the item ran, not what it computed;
#   - the Markdown report byte-identical above its `## Run` section (which quotes the command,
#     the wall time and the thread count).
# Exits non-zero on any failure or mismatch; the daemons it started are stopped on exit.
#
# Must run as root on a Debian machine without a running Slurm. Environment:
#   BALLAST       the ballast binary (default: cargo build --release --locked -p ballast-cli)
#   SLURM_ITEM    the config to run (default: configs/filling22/table8_1.toml)
#   SLURM_TIMEOUT seconds to wait for the jobs (default: 300)
#   SLURM_TEST_TIMELIMIT=1 also checks a time limit and a resume (about 2 more minutes): the
#                 full-scale item as 2 shards with --time 1 (minute) must end TIMEOUT after
#                 checkpointing on SIGTERM, its merge must be cancelled, and the script run
#                 again must resume both shards from the checkpoints (then it is cancelled)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

item_cfg="${SLURM_ITEM:-configs/filling22/table8_1.toml}"
timeout_s="${SLURM_TIMEOUT:-300}"
shards=3
start=$SECONDS

log() { echo "slurm-test: $*"; }
die() { echo "slurm-test: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (installs packages, starts munged and slurmd)"

echo "::group::slurm packages"
missing=()
for pkg in munge slurmctld slurmd slurm-client jq; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # No systemd here: the packages' start scripts would fail, so a policy-rc.d refuses
    # every service start during the install (the Debian way for containers); the test
    # starts the daemons itself below.
    policy_added=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 0755 /usr/sbin/policy-rc.d
        policy_added=1
    fi
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    if [ -n "$policy_added" ]; then
        rm -f /usr/sbin/policy-rc.d
    fi
fi
for cmd in munged slurmctld slurmd sbatch squeue sinfo scontrol jq; do
    command -v "$cmd" >/dev/null || die "$cmd not found after installing the packages"
done
slurmctld -V
echo "::endgroup::"

echo "::group::ballast binary"
if [ -z "${BALLAST:-}" ]; then
    cargo build --release --locked -p ballast-cli
    BALLAST="${CARGO_TARGET_DIR:-$repo/target}/release/ballast"
fi
BALLAST="$(readlink -f "$BALLAST")"
[ -x "$BALLAST" ] || die "BALLAST=$BALLAST is not an executable"
log "ballast: $BALLAST"
echo "::endgroup::"

tmp="$(mktemp -d /tmp/ballast-slurm.XXXXXX)"
pids=()
munged_pid=""
cleanup() {
    local rc=$?
    set +e
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null
    done
    for p in "${pids[@]}"; do
        # slurmd and slurmctld exit within a second or two of SIGTERM.
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    if [ -n "$munged_pid" ]; then
        kill "$munged_pid" 2>/dev/null
    fi
    wait 2>/dev/null
    rm -rf "$tmp"
    log "daemons stopped, $tmp removed (exit $rc, $((SECONDS - start)) s)"
    exit "$rc"
}
trap cleanup EXIT

echo "::group::munge"
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running: using it"
else
    install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
    install -d -o munge -g munge -m 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        if command -v mungekey >/dev/null; then
            mungekey --create --keyfile=/etc/munge/munge.key
        else
            dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        fi
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
    # Foreground (-F) in the background, so we know its pid and stop only it.
    # setpriv execs munged itself (runuser would stay as its parent), so $! is munged.
    setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F &
    munged_pid=$!
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
    munge -n | unmunge >/dev/null || die "munged does not answer"
    log "munged started (pid $munged_pid)"
fi
echo "::endgroup::"

echo "::group::slurm cluster"
host="$(hostname -s)"
# The node line as slurmd sees this machine (CPUs, sockets, cores, memory must match).
node="$(slurmd -C | head -n1)"
case "$node" in NodeName=*) ;; *) die "slurmd -C printed no node line: $node" ;; esac
node="NodeName=$host NodeAddr=127.0.0.1 ${node#NodeName=* }"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
export SLURM_CONF="$tmp/slurm.conf"
# MaxTime=30 (minutes) like a short queue: every job the script submits must ask for less.
cat >"$SLURM_CONF" <<EOF
ClusterName=ballast-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$tmp/log/jobcomp.txt
MinJobAge=600
KillWait=20
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
$node
PartitionName=ci Nodes=$host Default=YES MaxTime=30 State=UP
EOF
log "node: $node"
slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.stderr" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/log/slurmd.stderr" 2>&1 &
pids+=($!)
show_daemon_logs() {
    for f in "$tmp"/log/*; do
        echo "----- $f (last 40 lines)"
        tail -n 40 "$f"
    done
}
state=""
for _ in $(seq 60); do
    state="$(sinfo -h -n "$host" -o %T 2>/dev/null || true)"
    [ "$state" = idle ] && break
    sleep 0.5
done
if [ "$state" != idle ]; then
    sinfo -N -l || true
    show_daemon_logs
    die "the node is not idle after 30 s (state: ${state:-none})"
fi
sinfo -N -l
echo "::endgroup::"

echo "::group::submit the ballast slurm script"
# The jobs run in the repository (configs/ paths as given); outputs go to the scratch dir.
# The script itself lives in a directory whose name has a space and a quote.
cd "$repo"
mkdir -p "$tmp/job's script"
job_script="$tmp/job's script/run.sh"
"$BALLAST" slurm "$item_cfg" --quick --shards "$shards" --cpus 1 --mem 1G --time 00:10:00 \
    --out "$tmp/cluster" --ballast "$BALLAST" -o "$job_script"
submit_out="$(bash "$job_script")"
echo "$submit_out"
array_id="$(sed -n 's/.*job array \([0-9]*\).*/\1/p' <<<"$submit_out")"
merge_id="$(sed -n 's/.*merge as job \([0-9]*\).*/\1/p' <<<"$submit_out")"
[ -n "$array_id" ] && [ -n "$merge_id" ] || die "could not read the job ids from: $submit_out"
log "array job $array_id ($shards tasks), merge job $merge_id"
echo "::endgroup::"

echo "::group::wait for the jobs"
job_report() {
    echo "----- squeue"
    squeue -a -l || true
    echo "----- scontrol show job"
    scontrol show job "$array_id" || true
    scontrol show job "$merge_id" || true
    echo "----- job completions"
    cat "$tmp/log/jobcomp.txt" 2>/dev/null || true
    for f in "$tmp"/cluster/slurm-logs/*; do
        [ -e "$f" ] || continue
        echo "----- $f"
        cat "$f"
    done
    show_daemon_logs
}
waited=0
while squeue -h -j "$array_id,$merge_id" 2>/dev/null | grep -q .; do
    if [ "$waited" -ge "$timeout_s" ]; then
        job_report
        die "the jobs did not finish within $timeout_s s"
    fi
    sleep 2
    waited=$((waited + 2))
    if [ $((waited % 20)) -eq 0 ]; then
        log "waiting ($waited s):"
        squeue -h -j "$array_id,$merge_id" -o '  %i %j %T %M %R' || true
    fi
done
log "jobs left the queue after about $waited s"
# Array tasks appear as `array_id_i`; scontrol -o prints one line per task.
scontrol -o show job "$array_id" | sed 's/^\(JobId=[0-9]* \).*\(ArrayTaskId=[0-9]*\).*\(JobState=[A-Z_]*\).*\(ExitCode=[0-9:]*\).*/  \1\2 \3 \4/'
scontrol -o show job "$merge_id" | sed 's/^\(JobId=[0-9]* \).*\(JobName=[^ ]*\).*\(JobState=[A-Z_]*\).*\(ExitCode=[0-9:]*\).*/  \1\2 \3 \4/'
bad="$( (scontrol -o show job "$array_id"; scontrol -o show job "$merge_id") \
    | grep -v 'JobState=COMPLETED .*ExitCode=0:0' || true)"
tasks="$(scontrol -o show job "$array_id" | grep -c 'JobState=COMPLETED' || true)"
if [ -n "$bad" ] || [ "$tasks" -ne "$shards" ]; then
    job_report
    die "not every job completed with exit code 0 ($tasks of $shards shards completed)"
fi
log "array ($shards tasks) and merge completed with exit code 0"
for f in "$tmp"/cluster/slurm-logs/*; do
    echo "  $(basename "$f"): $(tr '\n' ' ' <"$f" | cut -c1-150)"
done
echo "::endgroup::"

echo "::group::compare with a single run"
"$BALLAST" run "$item_cfg" --quick --out "$tmp/local" --no-checkpoint
paper_dir="$(basename "$(dirname "$item_cfg")")"
item="$(basename "$item_cfg" .toml)"
local_dir="$tmp/local/$paper_dir"
cluster_dir="$tmp/cluster/$paper_dir"
[ -d "$local_dir" ] || die "the single run wrote no $local_dir"
ls -l "$cluster_dir"
# Metadata::EXECUTION_FIELDS: how the item ran, not what it computed.
exec_fields='del(.metadata.command, .metadata.threads, .metadata.wall_time_s,
    .metadata.cpu_time_s, .metadata.cached_points, .metadata.shared_points, .metadata.shards,
    .metadata.git_revision)'
strip_json() { jq -S "$exec_fields" "$1"; }
failures=0
compared=0
for a in "$local_dir/$item".*; do
    name="$(basename "$a")"
    b="$cluster_dir/$name"
    if [ ! -f "$b" ]; then
        echo "MISSING  $name: not in the merged outputs"
        failures=$((failures + 1))
        continue
    fi
    case "$name" in
        *.json)
            if diff <(strip_json "$a") <(strip_json "$b") >"$tmp/diff"; then
                echo "same     $name (after removing the execution fields)"
                # Show what the execution fields say in each (they differ, by design).
                diff <(jq -S .metadata "$a") <(jq -S .metadata "$b") \
                    | sed -n 's/^[<>]/         &/p' || true
            else
                echo "DIFFERS  $name"; cat "$tmp/diff"; failures=$((failures + 1))
            fi
            ;;
        *.md)
            if cmp -s <(sed '/^## Run$/,$d' "$a") <(sed '/^## Run$/,$d' "$b"); then
                echo "same     $name (above its ## Run section)"
            else
                echo "DIFFERS  $name"
                diff <(sed '/^## Run$/,$d' "$a") <(sed '/^## Run$/,$d' "$b") || true
                failures=$((failures + 1))
            fi
            ;;
        *)
            if cmp "$a" "$b"; then
                echo "same     $name (byte-identical, $(wc -c <"$a") bytes)"
            else
                echo "DIFFERS  $name"; failures=$((failures + 1))
            fi
            ;;
    esac
    compared=$((compared + 1))
done
echo "::endgroup::"
[ "$compared" -gt 0 ] || die "no outputs to compare in $local_dir"
[ "$failures" -eq 0 ] || die "$failures of the merged outputs differ from the single run"
log "OK: $compared outputs of $item_cfg from $shards Slurm shards + merge match a single run ($((SECONDS - start)) s)"

[ "${SLURM_TEST_TIMELIMIT:-0}" = 1 ] || exit 0

echo "::group::time limit and resume"
wait_gone() { # wait_gone JOBIDS SECONDS
    local w=0
    while squeue -h -j "$1" 2>/dev/null | grep -q .; do
        [ "$w" -lt "$2" ] || { job_report; die "jobs $1 still queued after $2 s"; }
        sleep 3
        w=$((w + 3))
    done
}
tl_out="$tmp/timelimit"
"$BALLAST" slurm "$item_cfg" --shards 2 --cpus 1 --mem 1G --time 1 \
    --out "$tl_out" --ballast "$BALLAST" -o "$tmp/timelimit.sh"
submit_out="$(bash "$tmp/timelimit.sh")"
echo "$submit_out"
array_id="$(sed -n 's/.*job array \([0-9]*\).*/\1/p' <<<"$submit_out")"
merge_id="$(sed -n 's/.*merge as job \([0-9]*\).*/\1/p' <<<"$submit_out")"
# Slurm checks time limits about every 30 s, then allows KillWait (20 s) after SIGTERM.
wait_gone "$array_id,$merge_id" 240
states="$(scontrol -o show job "$array_id" | grep -o 'JobState=[A-Z_]*' | sort | uniq -c)"
merge_state="$(scontrol -o show job "$merge_id" | grep -o 'JobState=[A-Z_]*')"
log "after the time limit: shards $(echo $states), merge $merge_state"
[ "$(scontrol -o show job "$array_id" | grep -c 'JobState=TIMEOUT')" -eq 2 ] \
    || { job_report; die "the shards did not end TIMEOUT"; }
[ "$merge_state" = JobState=CANCELLED ] || { job_report; die "the merge was not cancelled"; }
saved="$( (grep -l 'interrupted; .* finished runs' "$tl_out"/slurm-logs/*_[12].out || true) | wc -l)"
[ "$saved" -eq 2 ] || { job_report; die "$saved of 2 shards say they saved their runs"; }
grep -h 'interrupted;' "$tl_out"/slurm-logs/*.out | sed 's/^/  /'
ckpts="$(find "$tl_out/.checkpoint" -type f | wc -l)"
[ "$ckpts" -gt 0 ] || die "no checkpoint files after the time limit"
submit_out="$(bash "$tmp/timelimit.sh")"
echo "$submit_out"
array2="$(sed -n 's/.*job array \([0-9]*\).*/\1/p' <<<"$submit_out")"
merge2="$(sed -n 's/.*merge as job \([0-9]*\).*/\1/p' <<<"$submit_out")"
resumed=0
for _ in $(seq 60); do
    resumed="$( (grep -l 'resuming from checkpoints' "$tl_out"/slurm-logs/*-"$array2"_*.out \
        2>/dev/null || true) | wc -l)"
    [ "$resumed" -eq 2 ] && break
    sleep 1
done
scancel "$array2" "$merge2" || true
[ "$resumed" -eq 2 ] || { job_report; die "$resumed of 2 resubmitted shards resumed"; }
grep -h 'resuming from checkpoints' "$tl_out"/slurm-logs/*-"$array2"_*.out | sed 's/^/  /'
wait_gone "$array2,$merge2" 60
echo "::endgroup::"
log "OK: time limit (TIMEOUT, runs checkpointed, merge cancelled) and resume ($((SECONDS - start)) s)"
