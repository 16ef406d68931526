#!/usr/bin/env bash
# Checks the Clonos chart without a Kubernetes cluster: helm lint and helm template for every
# values file of the matrix (deploy/k8s/clonos/ci), every rendered manifest validated against
# the Kubernetes 1.31 schemas, and the values the chart must refuse refused. Installs its tools
# pinned, from the package registries: helm from the Go module proxy, kubernetes-validate from
# PyPI (into deploy/k8s/.tools, reused by later runs).
set -euo pipefail

HELM_VERSION=v3.22.0
VALIDATE_VERSION=1.31.0
KUBERNETES_VERSION=1.31.0

here="$(cd "$(dirname "$0")" && pwd)"
chart="$here/../clonos"
tools="${CLONOS_K8S_TOOLS:-$here/../.tools}"
mkdir -p "$tools"

go="$(command -v go || echo /usr/local/go/bin/go)"
if [ ! -x "$tools/helm-$HELM_VERSION/helm" ]; then
  if [ ! -x "$go" ]; then
    echo "check-chart.sh needs Go to install helm $HELM_VERSION from the Go module proxy" >&2
    exit 2
  fi
  echo "installing helm $HELM_VERSION (go install)"
  GOBIN="$tools/helm-$HELM_VERSION" GOFLAGS=-mod=mod "$go" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
fi
helm="$tools/helm-$HELM_VERSION/helm"

if [ ! -x "$tools/validate-$VALIDATE_VERSION/bin/kubernetes-validate" ]; then
  echo "installing kubernetes-validate $VALIDATE_VERSION (pip)"
  python3 -m venv "$tools/validate-$VALIDATE_VERSION"
  "$tools/validate-$VALIDATE_VERSION/bin/pip" install -q "kubernetes-validate==$VALIDATE_VERSION"
fi
validate="$tools/validate-$VALIDATE_VERSION/bin/kubernetes-validate"

# CLONOS_CHART_RENDERED: a directory that keeps each values file's rendered manifests
if [ -n "${CLONOS_CHART_RENDERED:-}" ]; then
  out="$CLONOS_CHART_RENDERED"
  mkdir -p "$out"
else
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi

failures=0
for values in "$chart"/ci/*.yaml; do
  name="$(basename "$values" .yaml)"
  if ! "$helm" lint --strict --kube-version "$KUBERNETES_VERSION" "$chart" -f "$values" >"$out/$name.lint" 2>&1; then
    echo "FAIL lint $name"; cat "$out/$name.lint"; failures=$((failures + 1)); continue
  fi
  if ! "$helm" template clonos "$chart" --kube-version "$KUBERNETES_VERSION" -f "$values" >"$out/$name.yaml" 2>"$out/$name.err"; then
    echo "FAIL template $name"; cat "$out/$name.err"; failures=$((failures + 1)); continue
  fi
  if ! "$validate" --strict --kubernetes-version "$KUBERNETES_VERSION" "$out/$name.yaml" >"$out/$name.valid" 2>&1; then
    echo "FAIL validate $name"; cat "$out/$name.valid"; failures=$((failures + 1)); continue
  fi
  echo "ok $name: $(grep -c '^kind:' "$out/$name.yaml") objects"
done

# values the chart must refuse, each with the message that names what is wrong
refuse() {
  local expected="$1"; shift
  if "$helm" template clonos "$chart" --kube-version "$KUBERNETES_VERSION" "$@" >"$out/refused" 2>&1; then
    echo "FAIL not refused: $*"; failures=$((failures + 1))
  elif ! grep -q -- "$expected" "$out/refused"; then
    echo "FAIL refused without naming '$expected': $*"; cat "$out/refused"; failures=$((failures + 1))
  else
    echo "ok refused: $*"
  fi
}
refuse "mode" --set mode=cluster
refuse "job.jarURI" --set mode=application --set job.entryClass=Job
refuse "job.jarURI" --set mode=application --set job.entryClass=Job --set job.jarURI=https://example.com/job.jar
refuse "job.entryClass" --set mode=application --set job.jarURI=local:///opt/clonos/usrlib/job.jar
refuse "experiment" --set experiment.enabled=true --set experiment.type=soak
refuse "taskManager" --set taskManager.replicas=0
refuse "antiAffinity" --set taskManager.antiAffinity=maybe
refuse "highAvailability.storageDir" --set highAvailability.enabled=true
refuse "jobManager.replicas" --set jobManager.replicas=2
refuse "killPod" --set experiment.enabled=true --set experiment.type=overhead --set experiment.killPod=true
refuse "mode session" --set mode=application --set job.jarURI=local:///opt/clonos/usrlib/job.jar --set job.entryClass=Job --set experiment.enabled=true --set experiment.type=failure --set experiment.killPod=true

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "chart checks passed"
