#!/usr/bin/python3
"""Checks the deployment files in deploy/: the Kubernetes manifests parse as YAML and hold what a cluster needs
(kinds, API versions, elastic policy, replicas, restart policy, Guaranteed QoS, /dev/shm in memory, the PVC),
their commands start with `coretrain run` (PyTorchJob) / `mpirun` (MPIJob), every run_qa flag in them is one
`coretrain qa --help` lists, the run_qa flags are the HF guide's command verbatim (Hub model id, --dataset_name
squad) plus --save_steps/--save_total_limit, the whole command line gets past coretrain's flag parser (run offline on
empty caches it stops at once, naming the missing Hub file), and the Dockerfile runs coretrain as a non-root user
with ENTRYPOINT ["coretrain"].

usage: check_manifests.py --coretrain build/release/apps/coretrain [--root .]
Needs python3-yaml (scripts/install-deps.sh). Prints one line per failed check; exit 1 if any failed.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import yaml

PVC_MOUNT = "/tmp/pvc-mount"
# The seed's run_qa command (HF guide "Efficient training on multiple CPUs", its Kubernetes job), word for word:
# coretrain resolves the Hub model id and --dataset_name squad itself (docs/hub.md, docs/datasets.md).
SEED_ARGS = shlex.split(
    "--model_name_or_path distilbert/distilbert-base-uncased --dataset_name squad --do_train --do_eval "
    "--per_device_train_batch_size 12 --learning_rate 3e-5 --num_train_epochs 2 --max_seq_length 384 "
    "--doc_stride 128 --output_dir " + PVC_MOUNT + "/output --no_cuda --ddp_backend ccl --bf16")
# The flags the manifests add after the seed's (checkpoints on the PVC, so that a restart resumes).
EXTRA_FLAGS = {"--save_steps", "--save_total_limit"}
# The caches the jobs keep on the PVC (env of the pods / -genv of mpirun).
CACHE_ENV = ("HF_HOME", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE")
# Nothing of the caller's environment that picks a cache, an endpoint, a proxy or a rank reaches the offline run.
STRIPPED_ENV = re.compile(r"^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|PMI_|MPI_LOCAL|"
                          r"OMPI_|PET_|HYDRA_|HF_|HUGGING|TRANSFORMERS_|PYTORCH_|XDG_CACHE_HOME$|CORETRAIN_|"
                          r"CURL_|SSL_|[A-Za-z]+_proxy$|[A-Z]+_PROXY$)")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def load_yaml(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(docs) == 1, f"{path}: expected one YAML document, found {len(docs)}")
    return docs[0]


def quantity(v):
    """A Kubernetes resource quantity as a float (cpu in cores, memory in bytes)."""
    s = str(v)
    units = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    m = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", s)
    if not m or (m.group(2) and m.group(2) not in units):
        raise ValueError(f"not a quantity: {s!r}")
    return float(m.group(1)) * (units[m.group(2)] if m.group(2) else 1)


def help_flags(coretrain):
    """Flags `coretrain qa --help` lists -> their help line."""
    out = subprocess.run([coretrain, "qa", "--help"], capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    flags = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(--[A-Za-z0-9_]+)\b(.*)$", line)
        if m:
            flags[m.group(1)] = m.group(2)
    check(len(flags) > 50, f"`{coretrain} qa --help` listed only {len(flags)} flags")
    return flags


def split_flags(args):
    """['--a', '1', '--b', ...] -> {'--a': '1', '--b': None}; values are the non-flag words that follow."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if check(a.startswith("--"), f"qa argument {a!r} is not a --flag (after {args[i - 1] if i else 'qa'})"):
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                out[a] = args[i + 1]
                i += 1
            else:
                out[a] = None
        i += 1
    return out


def check_qa_args(where, qa_args, known, coretrain, cache_env):
    """qa_args: the words after `qa`; cache_env: the job's HF_HOME, TRANSFORMERS_CACHE, HF_DATASETS_CACHE."""
    flags = split_flags(qa_args)
    for f in flags:
        if check(f in known, f"{where}: {f} is not a flag `coretrain qa --help` knows"):
            check("not supported" not in known[f], f"{where}: {f} is listed as not supported by coretrain qa")
    seed = split_flags(SEED_ARGS)
    for f, v in seed.items():
        if check(f in flags, f"{where}: the seed's run_qa flag {f} is missing"):
            check(flags[f] == v, f"{where}: {f} is {flags[f]!r}, the seed has {v!r}")
    for f in flags:
        check(f in seed or f in EXTRA_FLAGS, f"{where}: {f} is not in the seed's command (only "
              f"{' '.join(sorted(EXTRA_FLAGS))} may be added)")
    check(qa_args[:len(SEED_ARGS)] == SEED_ARGS, f"{where}: the qa arguments do not start with the seed's command "
          f"verbatim:\n  {shlex.join(qa_args)}\n  {shlex.join(SEED_ARGS)}")
    check("--save_steps" in flags, f"{where}: --save_steps missing (a restart should lose little)")
    # The whole line through coretrain's own parser, offline, with the job's caches moved to an empty folder: it
    # must stop at once with one error line naming the first Hub file it lacks (config.json of the model, resolved
    # before the data), in the cache the manifest's env picks. An unknown flag or a bad value fails earlier, naming
    # the flag. HF_ENDPOINT and CORETRAIN_SQUAD_URL point at a closed loopback port, so that a request made in
    # spite of HF_HUB_OFFLINE fails at once (and differently) instead of reaching the network.
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.replace(PVC_MOUNT, tmp) for a in qa_args]
        env = {k: v for k, v in os.environ.items() if not STRIPPED_ENV.match(k)}
        env.update({k: v.replace(PVC_MOUNT, tmp) for k, v in cache_env.items()})
        env.update(HOME=tmp, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                   HF_ENDPOINT="http://127.0.0.1:9", CORETRAIN_SQUAD_URL="http://127.0.0.1:9/squad")
        model = flags.get("--model_name_or_path") or ""
        hub_cache = env.get("TRANSFORMERS_CACHE") or env.get("HF_HOME", tmp + "/.cache/huggingface") + "/hub"
        want = (f"--model_name_or_path: config.json of {model} at revision main is not in the cache "
                f"{hub_cache}/models--{model.replace('/', '--')} and HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE forbids "
                "downloading it")
        t0 = time.monotonic()
        try:
            r = subprocess.run([coretrain, "qa", *args], capture_output=True, text=True, timeout=60, env=env,
                               cwd=tmp)
        except subprocess.TimeoutExpired:
            check(False, f"{where}: `HF_HUB_OFFLINE=1 coretrain qa ...` on empty caches did not stop within 60 s")
            return
        took = time.monotonic() - t0
        out = r.stdout + r.stderr
        err = [line for line in out.splitlines() if "error" in line]
        check(r.returncode != 0 and len(err) == 1 and want in err[0],
              f"{where}: `HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 coretrain qa ...` on empty caches should stop with "
              f"one error line containing {want!r}; got exit {r.returncode}: {err if err else out[-300:]}")
        check(took < 20, f"{where}: the offline run took {took:.1f} s to stop (want at once)")
        cached = [os.path.join(d, f) for k in CACHE_ENV if k in env for d, _, fs in os.walk(env[k]) for f in fs]
        check(not cached, f"{where}: the offline run wrote into the caches: {cached[:5]}")


def check_pod(where, spec, need_pvc=True):
    """Guaranteed QoS for every container, /dev/shm as a memory emptyDir, the PVC at /tmp/pvc-mount."""
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for c in spec["containers"]:
        res = c.get("resources", {})
        req, lim = res.get("requests", {}), res.get("limits", {})
        for r in ("cpu", "memory"):
            if check(r in req and r in lim, f"{where}/{c['name']}: {r} request and limit both needed (Guaranteed)"):
                check(quantity(req[r]) == quantity(lim[r]),
                      f"{where}/{c['name']}: {r} request {req[r]} != limit {lim[r]} (not Guaranteed QoS)")
        check(set(req) == set(lim), f"{where}/{c['name']}: requests {sorted(req)} and limits {sorted(lim)} differ")
        check("<registry>" in c.get("image", ""), f"{where}/{c['name']}: image {c.get('image')!r} lacks the "
              "<registry> placeholder")
    if not need_pvc:
        return
    c = spec["containers"][0]
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    if check("/dev/shm" in mounts, f"{where}: /dev/shm not mounted"):
        v = volumes.get(mounts["/dev/shm"], {})
        check(v.get("emptyDir", {}).get("medium") == "Memory", f"{where}: /dev/shm is not an emptyDir medium Memory")
    if check(PVC_MOUNT in mounts, f"{where}: nothing mounted at {PVC_MOUNT}"):
        v = volumes.get(mounts[PVC_MOUNT], {})
        check("persistentVolumeClaim" in v, f"{where}: {PVC_MOUNT} is not a persistentVolumeClaim")
        return v.get("persistentVolumeClaim", {}).get("claimName")


def check_cache_volume(path, cache, pod):
    """The datasets cache (HF_DATASETS_CACHE: the SQuAD JSON and the feature cache) is shared on the PVC as the seed's
    job keeps HF's caches: fetched and built once, read by later pods and restarts (concurrent writers are safe: a
    lock per downloaded file, unique temporary names, then rename)."""
    check(cache.startswith(PVC_MOUNT + "/"), f"{path}: HF_DATASETS_CACHE {cache!r} is not on the PVC")


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def check_pytorchjob(path, known, coretrain, pvc_name):
    job = load_yaml(path)
    check(job.get("apiVersion") == "kubeflow.org/v1", f"{path}: apiVersion {job.get('apiVersion')}")
    check(job.get("kind") == "PyTorchJob", f"{path}: kind {job.get('kind')}")
    spec = job["spec"]
    ep = spec.get("elasticPolicy", {})
    for k, v in {"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 4, "maxRestarts": 10}.items():
        check(ep.get(k) == v, f"{path}: elasticPolicy.{k} is {ep.get(k)!r}, want {v!r}")
    nproc = str(spec.get("nprocPerNode", ""))
    check(nproc.isdigit(), f"{path}: spec.nprocPerNode {nproc!r} (without it the operator sends 'auto': one "
          "process per CPU for torchrun, per NUMA node for coretrain run; say how many)")
    check("nProcPerNode" not in ep, f"{path}: elasticPolicy.nProcPerNode is deprecated and forbidden beside "
          "spec.nprocPerNode")
    rs = spec["pytorchReplicaSpecs"]
    check(set(rs) == {"Worker"}, f"{path}: replica types {sorted(rs)}, want only Worker (elastic, no Master)")
    w = rs["Worker"]
    check(w.get("replicas") == 4, f"{path}: Worker replicas {w.get('replicas')}")
    check(w.get("restartPolicy") == "OnFailure", f"{path}: Worker restartPolicy {w.get('restartPolicy')}")
    pod = w["template"]["spec"]
    c = pod["containers"][0]
    check(c["name"] == "pytorch", f"{path}: container name {c['name']!r} (the operator requires 'pytorch')")
    cmd = [str(x) for x in c.get("command", [])] + [str(x) for x in c.get("args", [])]
    check(cmd[:2] == ["coretrain", "run"], f"{path}: command starts {cmd[:3]}, want coretrain run ...")
    if check("qa" in cmd, f"{path}: no qa subcommand in {cmd}"):
        launcher = [a for a in cmd[2:cmd.index("qa")] if a.startswith("-")]
        r = subprocess.run([coretrain, "run", "--help"], capture_output=True, text=True, timeout=60)
        if check(r.returncode == 0, f"`coretrain run --help` failed (exit {r.returncode}): {r.stderr[-200:]}"):
            run_flags = set(re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9_-]*)", r.stdout + r.stderr))
            for f in launcher:
                check(f.split("=")[0] in run_flags, f"{path}: launcher flag {f} is not in `coretrain run --help`")
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    check(ports.get("pytorchjob-port") is not None, f"{path}: no container port named pytorchjob-port "
          "(the rendezvous port the operator puts in PET_RDZV_ENDPOINT)")
    env = env_of(c)
    check(env.get("CCL_WORKER_COUNT") is not None, f"{path}: env CCL_WORKER_COUNT missing")
    for k in ("HF_HOME", "TRANSFORMERS_CACHE"):
        check((env.get(k) or "").startswith(PVC_MOUNT + "/"), f"{path}: env {k}={env.get(k)!r} not on the PVC")
    check_cache_volume(path, env.get("HF_DATASETS_CACHE") or "", pod)
    if "qa" in cmd:
        check_qa_args(path, cmd[cmd.index("qa") + 1:], known, coretrain,
                      {k: env[k] for k in CACHE_ENV if env.get(k)})
    for k in env:
        check(not k.startswith("PET_"), f"{path}: env {k} set by hand (the operator appends its own PET_ "
              "variables and the last one wins)")
    if nproc.isdigit() and "OMP_NUM_THREADS" in env:
        cpu = quantity(c["resources"]["limits"]["cpu"])
        check(int(nproc) * int(env["OMP_NUM_THREADS"]) == cpu,
              f"{path}: nprocPerNode {nproc} x OMP_NUM_THREADS {env['OMP_NUM_THREADS']} != cpu {cpu}")
    claim = check_pod(path, pod)
    check(claim == pvc_name, f"{path}: claimName {claim!r}, deploy/k8s/pvc.yaml makes {pvc_name!r}")
    return cmd[cmd.index("qa") + 1:] if "qa" in cmd else []


def check_mpijob(path, known, coretrain, pvc_name, docker):
    job = load_yaml(path)
    check(job.get("apiVersion") == "kubeflow.org/v2beta1", f"{path}: apiVersion {job.get('apiVersion')}")
    check(job.get("kind") == "MPIJob", f"{path}: kind {job.get('kind')}")
    spec = job["spec"]
    check(spec.get("mpiImplementation") == "MPICH", f"{path}: mpiImplementation {spec.get('mpiImplementation')}")
    check(spec.get("launcherCreationPolicy") == "WaitForWorkersReady",
          f"{path}: launcherCreationPolicy {spec.get('launcherCreationPolicy')}")
    slots = spec.get("slotsPerWorker")
    check(isinstance(slots, int) and slots >= 1, f"{path}: slotsPerWorker {slots!r}")
    check(spec.get("sshAuthMountPath") == docker["home"] + "/.ssh",
          f"{path}: sshAuthMountPath {spec.get('sshAuthMountPath')!r}, the image's user home is {docker['home']}")
    rs = spec["mpiReplicaSpecs"]
    check(set(rs) == {"Launcher", "Worker"}, f"{path}: replica types {sorted(rs)}")
    la, w = rs["Launcher"], rs["Worker"]
    check(la.get("replicas") == 1, f"{path}: Launcher replicas {la.get('replicas')}")
    check(w.get("replicas") == 4, f"{path}: Worker replicas {w.get('replicas')}")
    for name, r in (("Launcher", la), ("Worker", w)):
        check(r.get("restartPolicy") == "OnFailure", f"{path}: {name} restartPolicy {r.get('restartPolicy')}")
        check("-mpi:" in r["template"]["spec"]["containers"][0]["image"], f"{path}: {name} image is not the "
              "coretrain-mpi image (sshd)")
    lc = la["template"]["spec"]["containers"][0]
    cmd = [str(x) for x in lc.get("command", [])] + [str(x) for x in lc.get("args", [])]
    check(cmd[:1] == ["mpirun"], f"{path}: launcher command starts {cmd[:2]}, want mpirun")
    if check("-n" in cmd and "-ppn" in cmd, f"{path}: mpirun without -n/-ppn: {cmd[:8]}"):
        n, ppn = int(cmd[cmd.index("-n") + 1]), int(cmd[cmd.index("-ppn") + 1])
        check(n == w["replicas"] * slots, f"{path}: -n {n} != Worker replicas x slotsPerWorker")
        check(ppn == slots, f"{path}: -ppn {ppn} != slotsPerWorker {slots}")
    qa_args = []
    if check(cmd.count("coretrain") == 1 and "qa" in cmd, f"{path}: no `coretrain qa` in the mpirun command"):
        i = cmd.index("coretrain")
        check(cmd[i + 1] == "qa", f"{path}: coretrain {cmd[i + 1]} (want qa: mpirun starts the ranks itself)")
        qa_args = cmd[i + 2:]
        genv = {cmd[j + 1]: cmd[j + 2] for j in range(i) if cmd[j] == "-genv"}
        check_qa_args(path, qa_args, known, coretrain, {k: genv[k] for k in CACHE_ENV if genv.get(k)})
        check("CCL_WORKER_COUNT" in genv, f"{path}: -genv CCL_WORKER_COUNT missing")
        for k in ("HF_HOME", "TRANSFORMERS_CACHE"):
            check(genv.get(k, "").startswith(PVC_MOUNT + "/"), f"{path}: -genv {k} missing or not on the PVC")
        check_cache_volume(path, genv.get("HF_DATASETS_CACHE", ""), w["template"]["spec"])
        if "OMP_NUM_THREADS" in genv:
            cpu = quantity(w["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"])
            check(slots * int(genv["OMP_NUM_THREADS"]) == cpu,
                  f"{path}: slotsPerWorker {slots} x OMP_NUM_THREADS {genv['OMP_NUM_THREADS']} != worker cpu {cpu}")
    check_pod(path + " Launcher", la["template"]["spec"], need_pvc=False)
    wpod = w["template"]["spec"]
    wc = wpod["containers"][0]
    wcmd = [str(x) for x in wc.get("command", [])] + [str(x) for x in wc.get("args", [])]
    check(wcmd[:1] == ["/usr/sbin/sshd"], f"{path}: worker command {wcmd[:2]}, want /usr/sbin/sshd")
    if "-f" in wcmd:
        check(wcmd[wcmd.index("-f") + 1] == docker["sshd_config"],
              f"{path}: worker sshd -f {wcmd[wcmd.index('-f') + 1]}, the image writes {docker['sshd_config']}")
    probe = wc.get("readinessProbe", {}).get("tcpSocket", {}).get("port")
    check(probe == docker["sshd_port"], f"{path}: worker readinessProbe port {probe}, sshd listens on "
          f"{docker['sshd_port']}")
    for pod_name, pod in (("Launcher", la), ("Worker", w)):
        uid = pod["template"]["spec"].get("securityContext", {}).get("runAsUser")
        check(uid == docker["uid"], f"{path}: {pod_name} runAsUser {uid}, the image's user is uid {docker['uid']}")
    claim = check_pod(path + " Worker", wpod)
    check(claim == pvc_name, f"{path}: claimName {claim!r}, deploy/k8s/pvc.yaml makes {pvc_name!r}")
    return qa_args


def dockerfile_stages(path):
    """[(stage name, [(instruction, argument text)])], continuation lines joined; plus the ARGs before FROM."""
    lines, cur = [], ""
    with open(path) as f:
        for raw in f:
            s = raw.rstrip("\n")
            if not cur and (not s.strip() or s.lstrip().startswith("#")):
                continue
            if s.endswith("\\"):
                cur += s[:-1] + " "
                continue
            lines.append(cur + s)
            cur = ""
    pre, stages = [], []
    for line in lines:
        instr, _, rest = line.strip().partition(" ")
        instr = instr.upper()
        if instr == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", rest.strip(), re.I)
            stages.append({"from": m.group(1), "name": m.group(2), "body": []})
        elif stages:
            stages[-1]["body"].append((instr, rest.strip()))
        else:
            pre.append((instr, rest.strip()))
    return pre, stages


def check_dockerfile(root):
    path = os.path.join(root, "deploy/Dockerfile")
    pre, stages = dockerfile_stages(path)
    check(("ARG", "BASE=debian:bookworm-slim") in pre, f"{path}: no `ARG BASE=debian:bookworm-slim` before FROM")
    check(len(stages) >= 2, f"{path}: not multi-stage ({len(stages)} stage)")
    by_name = {s["name"]: s for s in stages}
    info = {"home": None, "uid": None, "sshd_port": None, "sshd_config": None}

    def inherited(stage, instr):
        """The last `instr` in this stage or the stages it is built FROM."""
        while stage:
            vals = [a for i, a in stage["body"] if i == instr]
            if vals:
                return vals[-1]
            stage = by_name.get(stage["from"])
        return None

    build = stages[0]
    check(build["from"] == "${BASE}", f"{path}: the build stage is FROM {build['from']}, want ${{BASE}}")
    runs = " ".join(a for i, a in build["body"] if i == "RUN")
    check("scripts/install-deps.sh --build-only" in runs, f"{path}: build stage does not use install-deps.sh "
          "--build-only")
    check("--preset portable" in runs and "--target coretrain" in runs, f"{path}: build stage does not configure "
          "the portable preset and build the coretrain target")
    check("native" not in runs, f"{path}: -march=native in the build stage (the image runs on other machines)")
    for s in stages[1:]:
        body = " ".join(a for i, a in s["body"] if i == "RUN")
        for bad in ("build-essential", "g++", "gcc", "python3", "install-deps.sh", "-dev"):
            check(bad not in body.split() and f" {bad} " not in f" {body} ",
                  f"{path}: stage {s['name']} installs {bad} (the runtime image holds no compiler or Python)")
        for a in (a for i, a in s["body"] if i == "RUN" and "useradd" in a):
            cmd = next(part.split() for part in a.split("&&") if "useradd" in part)
            info["uid"] = int(cmd[cmd.index("--uid") + 1]) if "--uid" in cmd else None
            info["user"] = cmd[-1]
            info["home"] = "/home/" + cmd[-1]
    final = stages[-1]
    check(final["from"] != "${BASE}" or any(i == "COPY" for i, _ in final["body"]),
          f"{path}: the final stage has no binary")
    for s in [final] + ([by_name["mpi"]] if "mpi" in by_name else []):
        user = inherited(s, "USER")
        check(user not in (None, "root", "0"), f"{path}: stage {s['name']} runs as {user or 'root (no USER)'}")
        check(user == info.get("user"), f"{path}: stage {s['name']} USER {user}, useradd made {info.get('user')}")
        ep = inherited(s, "ENTRYPOINT")
        check(ep is not None and json.loads(ep) == ["coretrain"], f"{path}: stage {s['name']} ENTRYPOINT {ep}, "
              "want [\"coretrain\"]")
        check(inherited(s, "WORKDIR") is not None, f"{path}: stage {s['name']} has no WORKDIR")
        env = " ".join(a for i, a in s["body"] if i == "ENV") + " " + " ".join(
            a for i, a in by_name.get(s["from"], {"body": []})["body"] if i == "ENV")
        check("HF_HOME=" in env, f"{path}: stage {s['name']} sets no HF_HOME default")
    check(final["name"] == "runtime", f"{path}: the last (default) stage is {final['name']}, want runtime")
    if check("mpi" in by_name, f"{path}: no `mpi` stage (sshd for MPI Operator workers)"):
        runs = " ".join(a for i, a in by_name["mpi"]["body"] if i == "RUN")
        check("openssh-server" in runs and "openssh-client" in runs, f"{path}: mpi stage lacks openssh")
        m = re.search(r"'(Port \d+\\n[^']*)'\s*>\s*(\S+)", runs)
        if check(m is not None, f"{path}: mpi stage writes no sshd_config with a Port"):
            info["sshd_port"] = int(re.match(r"Port (\d+)", m.group(1)).group(1))
            info["sshd_config"] = m.group(2)
            check(f"HostKey {info['home']}/.ssh/id_rsa" in m.group(1), f"{path}: sshd HostKey is not the key the "
                  "MPI Operator mounts at sshAuthMountPath/id_rsa")
    ignore = open(os.path.join(root, ".dockerignore")).read().split()
    check("*" in ignore or "build" in ignore or "build/" in ignore, ".dockerignore does not keep build/ out")
    presets = json.load(open(os.path.join(root, "CMakePresets.json")))
    port = [p for p in presets["configurePresets"] if p["name"] == "portable"]
    if check(port, "CMakePresets.json: no portable preset"):
        cv = port[0]["cacheVariables"]
        check(cv.get("CORETRAIN_NATIVE") == "OFF" and "native" not in json.dumps(cv),
              "CMakePresets.json: the portable preset builds for the build host's CPU")
    return info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coretrain", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
    a = ap.parse_args()
    root = a.root
    a.coretrain = os.path.abspath(a.coretrain)
    known = help_flags(a.coretrain)
    docker = check_dockerfile(root)
    pvc = load_yaml(os.path.join(root, "deploy/k8s/pvc.yaml"))
    check(pvc.get("kind") == "PersistentVolumeClaim" and pvc.get("apiVersion") == "v1", "pvc.yaml: not a v1 PVC")
    check("ReadWriteMany" in pvc["spec"].get("accessModes", []), "pvc.yaml: not ReadWriteMany (pods on several "
          "nodes mount it)")
    pvc_name = pvc["metadata"]["name"]
    pt = check_pytorchjob(os.path.join(root, "deploy/k8s/pytorchjob.yaml"), known, a.coretrain, pvc_name)
    mp = check_mpijob(os.path.join(root, "deploy/k8s/mpijob.yaml"), known, a.coretrain, pvc_name, docker)
    check(pt == mp, "pytorchjob.yaml and mpijob.yaml run coretrain qa with different flags:\n  "
          f"{shlex.join(pt)}\n  {shlex.join(mp)}")
    for f in failures:
        print("FAIL:", f)
    print(f"check_manifests: {len(failures)} failure(s)" if failures else
          "check_manifests: deploy/Dockerfile, deploy/k8s/{pvc,pytorchjob,mpijob}.yaml OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
