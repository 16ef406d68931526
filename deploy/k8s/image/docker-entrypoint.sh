#!/usr/bin/env bash
# Entrypoint of the Clonos image.
#   jobmanager  [-D key=value ...]   a session cluster's JobManager
#   application [-D key=value ...]   an application cluster's JobManager: the job in usrlib/,
#                                    its main class in -D '$internal.application.main=...'
#   taskmanager [-D key=value ...]   a TaskManager
# Anything else runs bin/clonos with the given arguments (help, run, ...).
set -euo pipefail

CLONOS_HOME="${CLONOS_HOME:-/opt/clonos}"
role="${1:-help}"

case "$role" in
  jobmanager|application|taskmanager)
    shift
    exec "$CLONOS_HOME/bin/clonos" process "$role" "$@"
    ;;
  *)
    exec "$CLONOS_HOME/bin/clonos" "$@"
    ;;
esac
