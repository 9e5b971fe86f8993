# Sourced by the bench scripts right after they cd to the repository, and
# before they shift their arguments: it keeps the command line, and
# bench_knobs NAME... prints the two lines every bench header carries: the
# knobs (the environment variables the script reads) with the values the
# run used, defaults included, and the command that reruns it with exactly
# those, whatever the script's defaults become.
BENCH_COMMAND=$(printf ' %q' "$0" "$@")
bench_knobs() {
  local v knobs="" env=""
  for v in "$@"; do
    knobs+=" $v=${!v-}"
    env+="$v=$(printf %q "${!v-}") "
  done
  echo "knobs:$knobs"
  echo "command: $env${BENCH_COMMAND# }"
}
