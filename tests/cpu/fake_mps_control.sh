#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A stand-in for nvidia-cuda-mps-control in the CLI tests (Cli.Mps*): the daemon is a file in the
# pipe folder, and every call is appended to calls.log beside that folder.
state="$CUDA_MPS_PIPE_DIRECTORY/fake-daemon"
echo "$* pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY" >> "$CUDA_MPS_PIPE_DIRECTORY/../calls.log"
if [ "$1" = "-d" ]; then
  [ -n "$FAKE_MPS_REFUSE" ] && { echo "An instance of this daemon is already running"; exit 1; }
  : > "$state"
  exit 0
fi
[ -e "$state" ] || { echo "Cannot find MPS control daemon process"; exit 1; }
while read -r cmd; do
  case "$cmd" in
    get_server_list) ;;
    quit) rm -f "$state" ;;
  esac
done
exit 0
