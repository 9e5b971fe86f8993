#!/bin/sh
# Flex Template entry point (FLEX_TEMPLATE_GO_BINARY). Google's launcher runs
# it with the template's parameters and the launch environment as flags. The
# job submits itself with its own binary as the worker binary, so workers run
# this image's cgo build and no Go toolchain is needed to cross-compile one.
# Workers need OpenBLAS, so the job must run in the ctxsim worker image: it is
# taken from the launch (sdk_container_image) or else from CTXSIM_WORKER_IMAGE,
# set when the launcher image was built.
set -eu
bin="/opt/ctxsim/bin/${CTXSIM_JOB:?CTXSIM_JOB is not set}"
image_given=false
for arg in "$@"; do
  case "$arg" in
    -sdk_container_image=* | --sdk_container_image=*) image_given=true ;;
  esac
done
if [ "$image_given" = false ]; then
  if [ -z "${CTXSIM_WORKER_IMAGE:-}" ]; then
    echo "launch.sh: no worker image: launch with sdk_container_image or build with --build-arg WORKER_IMAGE" >&2
    exit 2
  fi
  set -- "$@" --sdk_container_image="$CTXSIM_WORKER_IMAGE"
fi
exec "$bin" --worker_binary="$bin" "$@"
