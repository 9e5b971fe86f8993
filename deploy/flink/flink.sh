#!/usr/bin/env bash
# A Flink cluster on this machine for the ctxsim jobs, built from Maven
# Central's jars (pom.xml, checked against checksums.sha256) and Beam's Go
# SDK worker pool, with every task manager on a host of its own.
#
#   deploy/flink/flink.sh fetch    # resolve and check the jars, build the worker pool
#   deploy/flink/flink.sh up       # start the cluster (fetches first when needed)
#   deploy/flink/flink.sh status   # its processes and, per host, what listens where
#   deploy/flink/flink.sh down     # stop every process and remove the hosts
#   deploy/flink/flink.sh env      # the flags that submit a job to it
#
# Hosts are network namespaces (ip netns, so it runs as root) joined by a
# bridge: NAME-jm holds the job manager and Beam's Flink job server, and
# each NAME-tmI holds task manager I and one Go SDK worker pool, which
# Flink asks for SDK workers (--environment_type=EXTERNAL, localhost:50000
# in that host). The submitting machine reaches the job server on the
# bridge's private subnet; nothing listens on any other address. A worker
# pool and the workers it starts see this machine's files except /tmp,
# which is their host's own (as on separate machines): a job's paths must
# be absolute and lie outside /tmp.
#
# Knobs (environment): CTXSIM_FLINK_NAME (prefix of the namespaces and
# links, at most 6 characters; default cxfl), CTXSIM_FLINK_NET (the first
# three octets of the cluster's /24; default 10.231.77), CTXSIM_FLINK_TMS
# (task managers, default 2), CTXSIM_FLINK_SLOTS (slots per task manager,
# default 2), CTXSIM_FLINK_TM_MEMORY (each task manager's process size,
# default 2560m), CTXSIM_FLINK_HOME (state, logs and configuration; default
# out/flink), CTXSIM_FLINK_CACHE (fetched jars and the worker pool binary;
# default ~/.cache/ctxsim/flink), CTXSIM_FLINK_HEARTBEAT_MS (Flink's
# heartbeat timeout, default 30000), JAVA (default java, 17 or newer).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

name="${CTXSIM_FLINK_NAME:-cxfl}"
net="${CTXSIM_FLINK_NET:-10.231.77}"
tms="${CTXSIM_FLINK_TMS:-2}"
slots="${CTXSIM_FLINK_SLOTS:-2}"
tm_memory="${CTXSIM_FLINK_TM_MEMORY:-2560m}"
heartbeat_ms="${CTXSIM_FLINK_HEARTBEAT_MS:-30000}"
home="${CTXSIM_FLINK_HOME:-$repo/out/flink}"
cache="${CTXSIM_FLINK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctxsim/flink}"
java="${JAVA:-java}"

if [ ${#name} -gt 6 ] || [[ ! "$name" =~ ^[a-z][a-z0-9]*$ ]]; then
  echo "flink.sh: CTXSIM_FLINK_NAME must be 1 to 6 lower-case letters or digits, starting with a letter: $name" >&2
  exit 2
fi
if [[ ! "$net" =~ ^10\.[0-9]+\.[0-9]+$ ]]; then
  echo "flink.sh: CTXSIM_FLINK_NET must be three octets of 10.0.0.0/8, such as 10.231.77: $net" >&2
  exit 2
fi
if [[ ! "$tms" =~ ^[1-9]$ ]]; then
  echo "flink.sh: CTXSIM_FLINK_TMS must be 1 to 9: $tms" >&2
  exit 2
fi

bridge="$name-br"
jm_ns="$name-jm"
jm_ip="$net.10"
host_ip="$net.1"
job_port=8099
rest_port=8081

# The pinned versions, read from pom.xml so that they are written once.
pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$here/pom.xml" | head -1; }
beam_version="$(pom_prop beam.version)"
flink_minor="$(pom_prop flink.minor)"
lib="$cache/lib-beam$beam_version-flink$flink_minor"
boot="$cache/beam-boot-$(cd "$repo" && go list -m -f '{{.Version}}' github.com/apache/beam/sdks/v2 2>/dev/null || echo unknown)"

tm_ns() { echo "$name-tm$1"; }
tm_ip() { echo "$net.$((10 + $1))"; }

log() { echo "flink.sh: $*" >&2; }
die() { log "$*"; exit 1; }

need_root() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces); run it with sudo"
  command -v ip >/dev/null || die "needs ip (Debian: apt-get install iproute2)"
  command -v unshare >/dev/null || die "needs unshare (Debian: apt-get install util-linux)"
}

# fetch resolves the jars with Maven (checksums checked against Central's),
# copies them into one folder and checks every one against the checksums
# recorded here; it builds the Go SDK's boot loader, whose worker-pool mode
# starts SDK workers, from the module go.mod pins.
fetch() {
  if [ -f "$lib/.verified" ] && cmp -s "$lib/.verified" "$here/checksums.sha256"; then
    :
  else
    command -v mvn >/dev/null || die "needs Maven (Debian: apt-get install maven)"
    local tmp="$lib.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    log "fetching Beam $beam_version's Flink $flink_minor runner and Flink from Maven Central"
    mvn -B -q -C -f "$here/pom.xml" \
      org.apache.maven.plugins:maven-dependency-plugin:2.8:copy-dependencies \
      -DoutputDirectory="$tmp" >&2
    local want got
    want="$(awk '{print $2}' "$here/checksums.sha256")"
    got="$(cd "$tmp" && ls)"
    if [ "$want" != "$got" ]; then
      diff <(echo "$want") <(echo "$got") >&2 || true
      rm -rf "$tmp"
      die "the jars Maven resolved are not the ones checksums.sha256 lists (above: < listed, > resolved)"
    fi
    if ! (cd "$tmp" && sha256sum --quiet -c "$here/checksums.sha256" >&2); then
      rm -rf "$tmp"
      die "a fetched jar does not match checksums.sha256"
    fi
    cp "$here/checksums.sha256" "$tmp/.verified"
    rm -rf "$lib"
    mv "$tmp" "$lib"
  fi
  if [ ! -x "$boot" ]; then
    log "building the Go SDK worker pool (Beam's boot loader) into $boot"
    mkdir -p "$cache"
    (cd "$repo" && CGO_ENABLED=0 go build -o "$boot.tmp.$$" github.com/apache/beam/sdks/v2/go/container)
    mv "$boot.tmp.$$" "$boot"
  fi
}

# java_version_ok checks that JAVA is 17 or newer.
java_version_ok() {
  local v
  v="$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  [ -n "$v" ] || die "cannot run $java"
  [ "${v%%.*}" -ge 17 ] || die "needs Java 17 or newer, $java is $v"
}

# Java 17 closes the JDK internals that Flink and Beam reach into.
jvm_opens=(
  --add-exports=java.base/sun.net.util=ALL-UNNAMED
  --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED
)

# write_conf writes one process's Flink configuration into folder $1;
# $2 is the address it binds to.
write_conf() {
  local dir="$1" addr="$2"
  mkdir -p "$dir"
  cat >"$dir/flink-conf.yaml" <<EOF
jobmanager.rpc.address: $jm_ip
jobmanager.rpc.port: 6123
# The job manager's REST handler hands submitted jobs to its blob server
# at localhost: bind to the job manager host's every address, which are
# its loopback and its private one.
jobmanager.bind-host: 0.0.0.0
jobmanager.memory.process.size: 1g
blob.server.port: 6124
rest.address: $jm_ip
rest.bind-address: $jm_ip
rest.port: $rest_port
taskmanager.host: $addr
taskmanager.bind-host: $addr
taskmanager.rpc.port: 6122
taskmanager.data.port: 6121
taskmanager.numberOfTaskSlots: $slots
taskmanager.memory.process.size: $tm_memory
# Beam's Fn API servers in the task manager (artifacts: the job's worker
# binary, some 200 MB; data; state) buffer in direct memory.
taskmanager.memory.task.off-heap.size: 512m
# The harvest's graph runs many exchanges at once: with Flink's default
# share (about 200 MB here) a task found 359 of the 512 buffers it needed.
taskmanager.memory.network.min: 384m
taskmanager.memory.network.max: 384m
parallelism.default: $((tms * slots))
classloader.resolve-order: parent-first
heartbeat.timeout: $heartbeat_ms
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 2
restart-strategy.fixed-delay.delay: 5 s
io.tmp.dirs: $home/$3/io
EOF
  cat >"$dir/log4j2.properties" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
logger.netty.name = org.jboss.netty.channel.DefaultChannelPipeline
logger.netty.level = OFF
EOF
  mkdir -p "$home/$3/io"
}

# start runs a command in namespace $2 as the leader of its own process
# group, its output in $home/logs/$1.out, and records its process ID.
start() {
  local what="$1" ns="$2"
  shift 2
  ip netns exec "$ns" setsid "$@" >"$home/logs/$what.out" 2>&1 </dev/null &
  echo $! >"$home/pids/$what"
}

# resource_params prints what Flink's own start scripts would give a job
# manager (jm) or task manager (tm) for its configuration: JVM flags on the
# first line, dynamic properties on the second.
resource_params() {
  "$java" -cp "$lib/*" org.apache.flink.runtime.util.bash.BashJavaUtils \
    "GET_$(echo "$1" | tr a-z A-Z)_RESOURCE_PARAMS" --configDir "$2" 2>/dev/null |
    sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}

# java_cmd sets cmd to the command that starts a JVM of the cluster:
# java_cmd CONF-DIR LOG-NAME JVM-FLAGS... -- MAIN-CLASS ARGS...
java_cmd() {
  local conf="$1" logname="$2"
  shift 2
  cmd=("$java" "${jvm_opens[@]}")
  while [ "$1" != -- ]; do
    cmd+=("$1")
    shift
  done
  shift
  cmd+=("-Dlog.file=$home/logs/$logname.log"
    "-Dlog4j.configurationFile=$conf/log4j2.properties"
    -cp "$lib/*" "$@")
}

add_host() { # namespace veth-suffix address
  local ns="$1" veth="$name-$2" addr="$3"
  ip netns add "$ns"
  ip link add "$veth" type veth peer name "$veth-p"
  ip link set "$veth-p" netns "$ns"
  ip link set "$veth" master "$bridge" up
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "$veth-p" name eth0
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
}

wait_port() { # namespace address port what seconds pid-file
  local ns="$1" addr="$2" port="$3" what="$4" secs="$5" pidf="$6"
  local i
  for ((i = 0; i < secs * 2; i++)); do
    if ip netns exec "$ns" ss -ltnH "src $addr:$port or src 0.0.0.0:$port or src [::]:$port" 2>/dev/null | grep -q .; then
      return 0
    fi
    if ! kill -0 "$(cat "$pidf")" 2>/dev/null; then
      tail -20 "$home/logs/$what".* >&2 || true
      die "$what exited while starting (logs in $home/logs)"
    fi
    sleep 0.5
  done
  die "$what is not listening on $addr:$port after ${secs}s (logs in $home/logs)"
}

wait_task_managers() { # seconds
  local i n=0
  for ((i = 0; i < $1 * 2; i++)); do
    n="$(ip netns exec "$jm_ns" curl -s "http://$jm_ip:$rest_port/taskmanagers" 2>/dev/null |
      grep -o '"id":' | wc -l || true)"
    [ "$n" -ge "$tms" ] && return 0
    sleep 0.5
  done
  die "$n of $tms task managers registered with the job manager after $1 s (logs in $home/logs)"
}

up() {
  need_root
  java_version_ok
  if ip netns list | grep -q "^$jm_ns\b"; then
    die "a cluster named $name is up already (deploy/flink/flink.sh down first)"
  fi
  fetch
  rm -rf "$home"
  mkdir -p "$home/logs" "$home/pids" "$home/artifacts"

  ip link add "$bridge" type bridge
  ip addr add "$host_ip/24" dev "$bridge"
  ip link set "$bridge" up
  add_host "$jm_ns" jm "$jm_ip"
  local i
  for ((i = 1; i <= tms; i++)); do
    add_host "$(tm_ns "$i")" "tm$i" "$(tm_ip "$i")"
  done

  write_conf "$home/conf/jm" "$jm_ip" jm
  local jm_params
  mapfile -t jm_params < <(resource_params jm "$home/conf/jm")
  [ ${#jm_params[@]} -eq 2 ] || die "Flink's BashJavaUtils gave no job manager memory settings"
  # shellcheck disable=SC2086
  java_cmd "$home/conf/jm" jobmanager ${jm_params[0]} -- \
    org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
    --configDir "$home/conf/jm" ${jm_params[1]}
  start jobmanager "$jm_ns" "${cmd[@]}"
  wait_port "$jm_ns" "$jm_ip" "$rest_port" jobmanager 120 "$home/pids/jobmanager"

  for ((i = 1; i <= tms; i++)); do
    local ns addr tm_params
    ns="$(tm_ns "$i")"
    addr="$(tm_ip "$i")"
    write_conf "$home/conf/tm$i" "$addr" "tm$i"
    mapfile -t tm_params < <(resource_params tm "$home/conf/tm$i")
    [ ${#tm_params[@]} -eq 2 ] || die "Flink's BashJavaUtils gave no task manager memory settings"
    # shellcheck disable=SC2086
    java_cmd "$home/conf/tm$i" "taskmanager$i" ${tm_params[0]} -- \
      org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
      --configDir "$home/conf/tm$i" ${tm_params[1]}
    start "taskmanager$i" "$ns" "${cmd[@]}"
    # The worker pool's host has a /tmp of its own (Beam's boot loader
    # copies each job's worker binary there), removed by down; the pool
    # and its workers run in $home/tmI, where the boot loader writes the
    # job's options.
    mkdir -p "$home/tm$i/tmp"
    start "workerpool$i" "$ns" unshare -m --propagation private \
      sh -c 'mount --bind "$1" /tmp && cd "$2" && exec "$3" --worker_pool' \
      workerpool "$home/tm$i/tmp" "$home/tm$i" "$boot"
  done
  for ((i = 1; i <= tms; i++)); do
    wait_port "$(tm_ns "$i")" "$(tm_ip "$i")" 6122 "taskmanager$i" 120 "$home/pids/taskmanager$i"
    wait_port "$(tm_ns "$i")" 0.0.0.0 50000 "workerpool$i" 30 "$home/pids/workerpool$i"
  done
  wait_task_managers 120

  write_conf "$home/conf/client" "$jm_ip" client
  java_cmd "$home/conf/client" jobserver -Xmx768m -- \
    org.apache.beam.runners.flink.FlinkJobServerDriver \
    --flink-master="$jm_ip:$rest_port" --flink-conf-dir="$home/conf/client" \
    --job-host="$jm_ip" --job-port="$job_port" --artifact-port=8098 --expansion-port=8097 \
    --artifacts-dir="$home/artifacts"
  start jobserver "$jm_ns" "${cmd[@]}"
  wait_port "$jm_ns" "$jm_ip" "$job_port" jobserver 120 "$home/pids/jobserver"
  log "up: $tms task managers with $slots slots each; submit with: $(env_flags)"
}

env_flags() {
  echo "--runner=universal --endpoint=$jm_ip:$job_port --environment_type=EXTERNAL --environment_config=localhost:50000"
}

# stop ends process group $1 (TERM, then KILL after a grace period).
stop() {
  local f="$home/pids/$1" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  kill -TERM -- "-$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 20; i++)); do
    kill -0 -- "-$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$f"
}

down() {
  need_root
  local i
  stop jobserver
  for ((i = 1; i <= 9; i++)); do
    stop "workerpool$i"
    stop "taskmanager$i"
    rm -rf "$home/tm$i/tmp"
  done
  stop jobmanager
  # Whatever still runs on the cluster's hosts (started by an earlier up
  # whose state folder is gone) ends with them.
  local ns pids
  for ns in $(ip netns list | awk '{print $1}' | grep "^$name-"); do
    pids="$(ip netns pids "$ns")"
    [ -z "$pids" ] && continue
    kill -TERM $pids 2>/dev/null || true
    sleep 2
    kill -KILL $(ip netns pids "$ns") 2>/dev/null || true
  done
  for ((i = 1; i <= 9; i++)); do
    ip netns del "$(tm_ns "$i")" 2>/dev/null || true
    ip link del "$name-tm$i" 2>/dev/null || true
  done
  ip netns del "$jm_ns" 2>/dev/null || true
  ip link del "$name-jm" 2>/dev/null || true
  ip link del "$bridge" 2>/dev/null || true
  log "down"
}

status() {
  local ns pidf
  for pidf in "$home"/pids/*; do
    [ -f "$pidf" ] || continue
    if kill -0 "$(cat "$pidf")" 2>/dev/null; then
      echo "$(basename "$pidf") pid $(cat "$pidf") running"
    else
      echo "$(basename "$pidf") pid $(cat "$pidf") not running"
    fi
  done
  for ns in $(ip netns list | awk '{print $1}' | grep "^$name-" | sort); do
    echo "== $ns: $(ip -n "$ns" -4 -o addr show | awk '{print $2, $4}' | tr '\n' ' ')"
    ip netns exec "$ns" ss -ltnp
  done
}

case "${1:-}" in
  fetch) fetch ;;
  up) up ;;
  down) down ;;
  status) status ;;
  env) env_flags ;;
  *)
    echo "usage: deploy/flink/flink.sh fetch|up|down|status|env" >&2
    exit 2
    ;;
esac
