#!/usr/bin/python3
"""Offline validation of Kubernetes manifests against their kinds' schemas.

    k8s_manifests.py MANIFEST...

Each document's apiVersion and kind name a model of the Kubernetes Python
client (python3-kubernetes, generated from the API's OpenAPI schema): every
field must be one that kind has, of its type, all the way down, and the
required fields must be there (the client's own deserializer checks those).
Fields newer than the packaged schema are named in NEWER_FIELDS, with the
Kubernetes version that has them. Exit 0 when every manifest is valid, 1
(naming the file, the document and the field) when not, 2 on bad usage.
"""
import json
import re
import sys

import kubernetes.client
import yaml
from kubernetes.client import ApiClient

# Fields the manifests use that the packaged schema (python3-kubernetes) is
# too old to know: (model, JSON field) -> (the Kubernetes version, its type).
NEWER_FIELDS = {("V1JobSpec", "backoffLimitPerIndex"): ("1.29", "int")}


def model_name(api_version, kind):
    version = api_version.split("/")[-1]
    return version[0].upper() + version[1:] + kind


def check_value(value, typ, where, errors):
    if value is None:
        return
    m = re.fullmatch(r"list\[(.*)\]", typ)
    if m:
        if not isinstance(value, list):
            errors.append(f"{where}: a list expected ({typ}), got {type(value).__name__}")
            return
        for i, v in enumerate(value):
            check_value(v, m.group(1), f"{where}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(([^,]*), (.*)\)", typ)
    if m:
        if not isinstance(value, dict):
            errors.append(f"{where}: a map expected ({typ}), got {type(value).__name__}")
            return
        for k, v in value.items():
            # a resource quantity (dict values of str) may be written as a number
            if m.group(2) == "str" and isinstance(v, (int, float)) and not isinstance(v, bool):
                continue
            check_value(v, m.group(2), f"{where}.{k}", errors)
        return
    scalars = {"str": (str,), "int": (int,), "bool": (bool,), "float": (int, float), "object": (object,)}
    if typ in scalars:
        ok = isinstance(value, scalars[typ]) and not (typ in ("int", "float") and isinstance(value, bool))
        if not ok:
            errors.append(f"{where}: {typ} expected, got {type(value).__name__} {value!r}")
        return
    check_model(value, typ, where, errors)


def check_model(doc, name, where, errors):
    cls = getattr(kubernetes.client, name, None)
    if cls is None:
        errors.append(f"{where}: no kind {name} in the schema")
        return
    if not isinstance(doc, dict):
        errors.append(f"{where}: an object ({name}) expected, got {type(doc).__name__}")
        return
    by_json = {j: a for a, j in cls.attribute_map.items()}
    for key, value in doc.items():
        if key in by_json:
            check_value(value, cls.openapi_types[by_json[key]], f"{where}.{key}", errors)
        elif (name, key) in NEWER_FIELDS:
            check_value(value, NEWER_FIELDS[(name, key)][1], f"{where}.{key}", errors)
        else:
            errors.append(f"{where}.{key}: {name} has no field '{key}' (it has: {', '.join(sorted(by_json))})")


class _Response:
    def __init__(self, data):
        self.data = data


def main(paths):
    if not paths:
        print("usage: k8s_manifests.py MANIFEST...", file=sys.stderr)
        return 2
    bad = 0
    for path in paths:
        try:
            docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            print(f"{path}: cannot read it as YAML: {e}")
            bad += 1
            continue
        for i, doc in enumerate(docs):
            errors = []
            if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
                errors.append("not a Kubernetes object (no apiVersion and kind)")
            else:
                name = model_name(doc["apiVersion"], doc["kind"])
                check_model(doc, name, doc["kind"], errors)
                if not errors:  # the required fields, as the client's deserializer sees them
                    try:
                        ApiClient().deserialize(_Response(json.dumps(doc)), name)
                    except (ValueError, TypeError) as e:
                        errors.append(f"{doc['kind']}: {e}")
            label = f"{path} (document {i + 1}, {doc.get('kind', '?') if isinstance(doc, dict) else '?'})"
            if errors:
                bad += 1
                for e in errors:
                    print(f"{label}: {e}")
            else:
                print(f"{label}: valid {model_name(doc['apiVersion'], doc['kind'])}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
