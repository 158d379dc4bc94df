#!/usr/bin/python3
"""Plays the Kubeflow training operator for deploy/k8s/pytorchjob.yaml: for every Worker pod, the environment the
operator gives its container (the template's env, then the operator's, by the rules in docs/kubernetes.md) and the
container's command, written as OUT/pod<i>.env (NAME=VALUE lines) and OUT/pod<i>.cmd (NUL-separated argv); prints
"<job> <replicas>".

What this machine cannot have is substituted, and only that: --rdzv-conf adds an elasticPolicy.rdzvConf (short
timeouts for a test), --pvc maps the PVC mount path to a local folder, --omp overrides OMP_NUM_THREADS (the
manifest's cpu limit is for a real node), and --demo replaces the model/data flags of `qa` with generated data
(the launcher part of the command and every other flag are kept as the manifest has them).
"""
import argparse
import os
import sys

import yaml

# qa flags whose values name real data or size the job for a real node: replaced by --demo's flags.
DATA_FLAGS = {"--model_name_or_path", "--train_file", "--validation_file", "--per_device_train_batch_size",
              "--num_train_epochs", "--max_seq_length", "--doc_stride", "--save_steps", "--save_total_limit",
              "--dataset_name", "--dataset_config_name"}


def operator_env(job, spec, worker, container):
    """setPodEnv + ElasticEnvVarGenerator (training-operator v1.9, pkg/controller.v1/pytorch)."""
    env = [("PYTHONUNBUFFERED", "1")]
    replicas = spec["pytorchReplicaSpecs"]
    if "Master" in replicas:
        raise SystemExit("this player covers Worker-only elastic jobs (the manifest has a Master)")
    nproc = spec.get("nprocPerNode", "auto")
    env.append(("PET_NPROC_PER_NODE", str(nproc)))
    ep = spec.get("elasticPolicy")
    if ep is None:
        env.append(("PET_NNODES", str(worker["replicas"])))
        return env
    port = ep.get("rdzvPort")
    if port is None:
        port = next((p["containerPort"] for p in container.get("ports", []) if p.get("name") == "pytorchjob-port"),
                    23456)
    host = ep.get("rdzvHost", f"{job}-worker-0")
    env.append(("PET_RDZV_ENDPOINT", f"{host}:{port}"))
    env.append(("PET_RDZV_BACKEND", ep.get("rdzvBackend", "c10d")))
    lo = ep.get("minReplicas", ep.get("maxReplicas", worker["replicas"]))
    hi = ep.get("maxReplicas", lo)
    env.append(("PET_NNODES", f"{lo}:{hi}"))
    if "maxRestarts" in ep:
        env.append(("PET_MAX_RESTARTS", str(ep["maxRestarts"])))
    if "rdzvId" in ep:
        env.append(("PET_RDZV_ID", ep["rdzvId"]))
    if ep.get("rdzvConf"):
        env.append(("PET_RDZV_CONF", ",".join(f"{kv['key']}={kv['value']}" for kv in ep["rdzvConf"])))
    if ep.get("standalone"):
        env.append(("PET_STANDALONE", ""))
    return env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("out")
    ap.add_argument("--rdzv-conf", default="")
    ap.add_argument("--pvc", default="")
    ap.add_argument("--omp", default="")
    ap.add_argument("--demo", default="", help="qa flags that replace the data flags (space-separated)")
    ap.add_argument("--coretrain", default="coretrain", help="the binary that plays the image's coretrain")
    a = ap.parse_args()

    job_doc = yaml.safe_load(open(a.manifest))
    job = job_doc["metadata"]["name"]
    spec = job_doc["spec"]
    if a.rdzv_conf:
        spec["elasticPolicy"]["rdzvConf"] = [{"key": k, "value": v}
                                            for k, v in (kv.split("=", 1) for kv in a.rdzv_conf.split(","))]
    worker = spec["pytorchReplicaSpecs"]["Worker"]
    container = next(c for c in worker["template"]["spec"]["containers"] if c["name"] == "pytorch")
    mount = next(m["mountPath"] for m in container["volumeMounts"]
                 if any(v["name"] == m["name"] and "persistentVolumeClaim" in v
                        for v in worker["template"]["spec"]["volumes"]))

    def local(s):
        return s.replace(mount, a.pvc) if a.pvc else s

    cmd = list(container.get("command", [])) + list(container.get("args", []))
    if cmd and cmd[0] == "coretrain":
        cmd[0] = a.coretrain
    if a.demo:
        q = cmd.index("qa")
        head, flags = cmd[:q + 1], cmd[q + 1:]
        kept, i = [], 0
        while i < len(flags):
            f = flags[i]
            takes_value = i + 1 < len(flags) and not flags[i + 1].startswith("--")
            if f in DATA_FLAGS:
                i += 2 if takes_value else 1
                continue
            kept += flags[i:i + (2 if takes_value else 1)]
            i += 2 if takes_value else 1
        cmd = head + a.demo.split() + kept
    cmd = [local(c) for c in cmd]

    template_env = [(e["name"], local(str(e["value"]))) for e in container.get("env", [])]
    if a.omp:
        template_env = [(k, a.omp if k == "OMP_NUM_THREADS" else v) for k, v in template_env]
    os.makedirs(a.out, exist_ok=True)
    for i in range(worker["replicas"]):
        env = template_env + operator_env(job, spec, worker, container)
        with open(os.path.join(a.out, f"pod{i}.env"), "w") as f:
            for k, v in env:
                f.write(f"{k}={v}\n")
        with open(os.path.join(a.out, f"pod{i}.cmd"), "wb") as f:
            f.write(b"\0".join(c.encode() for c in cmd) + b"\0")
    print(job, worker["replicas"])


if __name__ == "__main__":
    sys.exit(main())
