#!/usr/bin/env bash
# k8s_validate.sh MANIFEST_DIR SCRATCH: the Kubernetes manifests, validated
# offline (there is no API server here, and `kubectl apply --dry-run=client`
# needs one for its discovery and schema):
#  - kubectl reads each one (`kubectl label --local --dry-run=client`: its
#    YAML and object name; offline it does not know the kinds, so an unknown
#    kind passes here);
#  - k8s_manifests.py checks every field against its kind's schema;
#  - broken copies (a misspelt field, a wrong type, a missing required field,
#    an unknown kind) must be refused, so the check can fail.
set -uo pipefail
dir=$1 scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi; }
refused() { ! /usr/bin/python3 "$here/k8s_manifests.py" "$@"; }
command -v kubectl >/dev/null || { apt-get install -y --no-install-recommends kubernetes-client >&2 || { echo "skipped: no kubectl"; exit 77; }; }
/usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null ||
  { apt-get install -y --no-install-recommends python3-kubernetes python3-yaml >&2 || { echo "skipped: no python3-kubernetes"; exit 77; }; }
rm -rf "$scratch" && mkdir -p "$scratch"
for f in "$dir"/*.yaml; do
  name=$(kubectl label --local --dry-run=client -o name -f "$f" x=y 2>&1); rc=$?
  check "kubectl reads ${f##*/}: $name" test $rc -eq 0
done
check "every manifest valid against its kind's schema" /usr/bin/python3 "$here/k8s_manifests.py" "$dir"/*.yaml
# broken copies
sed 's/^  completions:/  completion:/' "$dir/shards-job.yaml" >"$scratch/misspelt.yaml"
sed 's/^  parallelism: [0-9]*/  parallelism: all/' "$dir/shards-job.yaml" >"$scratch/wrong-type.yaml"
sed '/^        - name: merge$/d; s/^          image: gatecheck-fuzz/        - image: gatecheck-fuzz/' "$dir/merge-job.yaml" >"$scratch/no-name.yaml"
sed 's/^kind: PersistentVolumeClaim/kind: PersistentVolumeClame/' "$dir/pvc.yaml" >"$scratch/unknown-kind.yaml"
for f in misspelt wrong-type no-name unknown-kind; do
  check "a $f manifest is refused: $(/usr/bin/python3 "$here/k8s_manifests.py" "$scratch/$f.yaml" | head -1 | cut -c1-160)" \
    refused "$scratch/$f.yaml"
done
[ $fails -eq 0 ]
