#!/bin/bash
# Runs inside the executor rootfs (tools/remote_exec_test starts it in its own mount and PID
# namespace, chrooted): PostgreSQL, BuildGrid (REAPI server on 127.0.0.1:$1) and one buildbox
# worker (buildbox-casd + buildbox-worker + buildbox-run-hosttools) with $3 concurrent jobs.
# $2: a fresh state folder (database, CAS, worker caches). Runs until killed.
set -euo pipefail
port=$1 state=$2 jobs=$3 config_in=$4
pg=/usr/lib/postgresql/18/bin
mkdir -p "$state"/{pg,pgsock,cas,casd,tmp,logs}
chown postgres:postgres "$state/pg" "$state/pgsock"
runuser -u postgres -- "$pg/initdb" -D "$state/pg" -A trust -U bgd >"$state/logs/initdb.log" 2>&1
# Unix socket only: nothing listens on TCP but BuildGrid.
runuser -u postgres -- "$pg/pg_ctl" -D "$state/pg" -l "$state/pgsock/postgres.log" -w \
  -o "-k $state/pgsock -c listen_addresses=''" start >/dev/null
runuser -u postgres -- "$pg/createdb" -h "$state/pgsock" -U bgd bgd
sed -e "s|@PORT@|$port|; s|@STATE@|$state|; s|@PGSOCK@|$state/pgsock|" "$config_in" > "$state/buildgrid.yml"
/opt/buildgrid/bin/bgd migrate apply "postgresql+psycopg://bgd@/bgd?host=$state/pgsock" >"$state/logs/migrate.log" 2>&1
/opt/buildgrid/bin/bgd server start "$state/buildgrid.yml" >"$state/logs/buildgrid.log" 2>&1 &
for _ in $(seq 300); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
buildbox-casd --cas-remote="http://127.0.0.1:$port" --cas-instance=main --proxy-instance=main --bind="unix:$state/casd.sock" \
  --quota-high=20G "$state/casd" >"$state/logs/casd.log" 2>&1 &
for _ in $(seq 100); do [[ -S "$state/casd.sock" ]] && break; sleep 0.1; done
# Each job stages its input root into its own fresh folder under TMPDIR (no --workspace-path:
# concurrent jobs in one fixed workspace fail with "is not empty" and delete each other's inputs).
# TMPDIR is on the same file system as casd's store, so staging hard-links.
TMPDIR="$state/tmp" buildbox-worker --bots-remote="http://127.0.0.1:$port" --instance=main \
  --cas-remote="unix:$state/casd.sock" \
  --buildbox-run=/usr/bin/buildbox-run-hosttools --runner-arg=--staging-mode=copy-or-link \
  --concurrent-jobs="$jobs" \
  --platform OSFamily=linux --platform ISA=x86-64 --max-wait-time=1 bot-1 >"$state/logs/worker.log" 2>&1 &
echo ready > "$state/ready"
wait
