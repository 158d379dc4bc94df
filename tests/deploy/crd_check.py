#!/usr/bin/python3
"""Checks Kubernetes custom resources against their CRDs' OpenAPI schemas, the way the API server would see them:
fields the schema does not know (the API server silently drops those, so a typo such as `nprocPerNod` would pass
`kubectl apply` and do nothing), wrong types and values outside an enum. Not in CTest: the CRDs are not vendored.

usage: crd_check.py CRD_FILE [CRD_FILE ...] -- MANIFEST [MANIFEST ...]
  curl -LO https://raw.githubusercontent.com/kubeflow/training-operator/v1.9.0/manifests/base/crds/kubeflow.org_pytorchjobs.yaml
  curl -LO https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.0/deploy/v2beta1/mpi-operator.yaml
  tests/deploy/crd_check.py kubeflow.org_pytorchjobs.yaml mpi-operator.yaml -- deploy/k8s/pytorchjob.yaml deploy/k8s/mpijob.yaml
Needs python3-yaml only. Exit 1 if a manifest has a problem or no CRD matches it.
"""
import sys

import yaml

TYPES = {"string": str, "boolean": bool, "object": dict, "array": list}


def walk(obj, sch, path, out):
    if sch.get("x-kubernetes-int-or-string") or sch.get("format") == "int-or-string":
        if not isinstance(obj, (int, str)) or isinstance(obj, bool):
            out.append(f"{path}: {obj!r} is neither an integer nor a string")
        return
    t = sch.get("type")
    if t == "integer":
        if not isinstance(obj, int) or isinstance(obj, bool):
            out.append(f"{path}: {obj!r} is not an integer")
    elif t == "number":
        if not isinstance(obj, (int, float)) or isinstance(obj, bool):
            out.append(f"{path}: {obj!r} is not a number")
    elif t in TYPES and not isinstance(obj, TYPES[t]):
        out.append(f"{path}: {type(obj).__name__} where the schema wants {t}")
        return
    if "enum" in sch and obj not in sch["enum"]:
        out.append(f"{path}: {obj!r} not one of {sch['enum']}")
    if isinstance(obj, dict):
        if sch.get("x-kubernetes-preserve-unknown-fields"):
            return
        props = sch.get("properties")
        for k in sch.get("required", []):
            if k not in obj:
                out.append(f"{path}: required field {k} missing")
        if props is None:
            ap = sch.get("additionalProperties")
            if isinstance(ap, dict):
                for k, v in obj.items():
                    walk(v, ap, f"{path}.{k}", out)
            return
        for k, v in obj.items():
            if path == "" and k in ("apiVersion", "kind", "metadata"):
                continue
            if k not in props:
                out.append(f"{path}.{k}: unknown field (the API server would drop it)")
            else:
                walk(v, props[k], f"{path}.{k}", out)
    elif isinstance(obj, list) and "items" in sch:
        for i, v in enumerate(obj):
            walk(v, sch["items"], f"{path}[{i}]", out)


def main(argv):
    if "--" not in argv:
        print(__doc__)
        return 2
    crd_files, manifests = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    schemas = {}
    for f in crd_files:
        for d in yaml.safe_load_all(open(f)):
            if d and d.get("kind") == "CustomResourceDefinition":
                group = d["spec"]["group"]
                for v in d["spec"]["versions"]:
                    schemas[(f"{group}/{v['name']}", d["spec"]["names"]["kind"])] = v["schema"]["openAPIV3Schema"]
    bad = 0
    for m in manifests:
        for obj in yaml.safe_load_all(open(m)):
            if not obj:
                continue
            key = (obj.get("apiVersion"), obj.get("kind"))
            if key not in schemas:
                if "/" in str(key[0]) and key[0] != "v1" and not key[0].startswith("apps/"):
                    print(f"{m}: no CRD given for {key[0]} {key[1]}")
                    bad += 1
                continue
            out = []
            walk(obj, schemas[key], "", out)
            for line in out:
                print(f"{m}: {line}")
            bad += bool(out)
            print(f"{m}: {key[1]} {key[0]}: {'OK' if not out else f'{len(out)} problem(s)'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
