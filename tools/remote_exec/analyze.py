"""Summarises tools/remote_exec_test's runs into bench/results/remote_exec.{json,md}.

Input: a JSON file of runs (written by the test), each with its Bazel execution log
(--execution_log_json_file: concatenated SpawnExec objects) and the sha256 list of its outputs.
Standard library only (runs with the host's python3).
"""

from __future__ import annotations

import argparse
import json
import statistics


def read_log(path):
    text = open(path).read()
    decoder = json.JSONDecoder()
    i, spawns = 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return spawns
        obj, i = decoder.raw_decode(text, i)
        spawns.append(obj)


def read_sums(path):
    sums = {}
    for line in open(path):
        digest, name = line.rstrip("\n").split("  ", 1)
        sums[name] = digest
    return sums


def summarize_run(run, torch_targets):
    spawns = read_log(run["exec_log"])
    runners = {}
    for s in spawns:
        runners[s.get("runner", "?")] = runners.get(s.get("runner", "?"), 0) + 1
    compiles = [s for s in spawns if s.get("mnemonic") == "TritonCompile"]
    inputs = [len(s.get("inputs", [])) for s in compiles]
    nbytes = [sum(int(i["digest"]["sizeBytes"]) for i in s.get("inputs", []) if "digest" in i) for s in compiles]
    compile_runners, torch_runners = {}, {}
    for s in compiles:
        compile_runners[s.get("runner", "?")] = compile_runners.get(s.get("runner", "?"), 0) + 1
        if s.get("targetLabel") in torch_targets:
            torch_runners[s.get("runner", "?")] = torch_runners.get(s.get("runner", "?"), 0) + 1
    # On the executor: the command alone (not queueing, staging or transfers).
    exec_s = [float(s.get("metrics", {}).get("executionWallTime", "0s").rstrip("s") or 0) for s in compiles]
    failed = [s.get("targetLabel", "?") for s in spawns if s.get("exitCode", 0) != 0 or s.get("status")]
    largest = {}
    if compiles:
        big = max(compiles[0].get("inputs", []), key=lambda i: int(i.get("digest", {}).get("sizeBytes", 0)))
        largest = {"path": big["path"], "bytes": int(big["digest"]["sizeBytes"])}
    return {
        "name": run["name"],
        "description": run["description"],
        "wall_s": round(run["wall_s"], 1),
        "bazel_summary": run.get("summary", ""),
        "load_before": run.get("load_before"),
        "spawns": len(spawns),
        "spawns_by_runner": dict(sorted(runners.items())),
        "triton_compile": {
            "actions": len(compiles),
            "by_runner": dict(sorted(compile_runners.items())),
            # Of the targets whose kernel files import torch.
            "torch_importing_by_runner": dict(sorted(torch_runners.items())),
            "input_files_per_action": {"min": min(inputs), "max": max(inputs)} if inputs else {},
            "input_bytes_per_action": {
                "min": min(nbytes), "max": max(nbytes), "mean": int(statistics.mean(nbytes)),
            } if nbytes else {},
            "largest_input": largest,
            "execution_wall_s_median": round(statistics.median(exec_s), 2) if exec_s else None,
        },
        "failed_spawns": failed,
        "outputs": len(read_sums(run["sums"])),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", required=True)
    parser.add_argument("--out_json", required=True)
    parser.add_argument("--out_md", required=True)
    parser.add_argument("--torch_targets", required=True, help="labels of the torch-importing kernel targets, one a line")
    args = parser.parse_args()
    meta = json.load(open(args.runs))
    runs = {r["name"]: r for r in meta["runs"]}
    result = dict(meta["context"])
    torch_targets = {line.strip() for line in open(args.torch_targets) if line.strip()}
    result["torch_importing_targets"] = sorted(torch_targets)
    result["runs"] = [summarize_run(r, torch_targets) for r in meta["runs"]]
    # Each run against its reference (the examples' local build; the corpus' local build).
    result["outputs_identical_to_local"] = {
        name: read_sums(r["sums"]) == read_sums(runs[r.get("reference", "local")]["sums"])
        for name, r in runs.items() if name != r.get("reference", "local")
    }
    by = {r["name"]: r for r in result["runs"]}
    # Cold runs alternate over rounds (name_1, name_2, ...); the ratio compares medians.
    colds = [r for r in result["runs"] if r["name"].startswith("cold_archive_bare_worker")]
    bases = [r for r in result["runs"] if r["name"].startswith("cold_local_mode_worker_with_interpreter")]
    cold_s = statistics.median([r["wall_s"] for r in colds])
    base_s = statistics.median([r["wall_s"] for r in bases])
    result["cold_archive_median_s"] = round(cold_s, 1)
    result["cold_local_mode_with_interpreter_median_s"] = round(base_s, 1)
    result["cold_ratio_archive_vs_worker_with_interpreter"] = round(cold_s / base_s, 3)
    result["cold_ratio_per_round"] = [round(a["wall_s"] / b["wall_s"], 3) for a, b in zip(colds, bases)]
    checks = {
        "every TritonCompile ran remotely (cold, bare worker)": all(
            c["triton_compile"]["by_runner"] == {"remote": c["triton_compile"]["actions"]}
            and c["triton_compile"]["actions"] > 0 for c in colds),
        "torch-importing kernels: every TritonCompile ran remotely (cold, bare worker)": bool(torch_targets) and all(
            c["triton_compile"]["torch_importing_by_runner"].get("remote", 0) > 0
            and set(c["triton_compile"]["torch_importing_by_runner"]) == {"remote"} for c in colds),
        "no failed action in any run": all(not r["failed_spawns"] for r in result["runs"]),
        **({"corpus (Liger-Kernel, imports torch): every TritonCompile ran remotely on the bare worker":
            by["corpus_archive_bare_worker"]["triton_compile"]["actions"] > 0
            and by["corpus_archive_bare_worker"]["triton_compile"]["by_runner"] == {
                "remote": by["corpus_archive_bare_worker"]["triton_compile"]["actions"]}}
           if "corpus_archive_bare_worker" in by else {}),
        "second checkout: 100% remote cache hits":
            set(by["second_checkout"]["spawns_by_runner"]) <= {"remote cache hit"},
        "clean rebuild: 100% remote cache hits":
            set(by["cached_archive"]["spawns_by_runner"]) <= {"remote cache hit"},
        "outputs byte-identical to the local build (corpus: to its local build)": all(result["outputs_identical_to_local"].values()),
        "cold remote <= 1.2x the worker that has the interpreter":
            result["cold_ratio_archive_vs_worker_with_interpreter"] <= 1.2,
    }
    result["checks"] = checks
    json.dump(result, open(args.out_json, "w"), indent=1, sort_keys=True)
    open(args.out_json, "a").write("\n")

    lines = [
        "# Remote execution: the examples on BuildGrid + buildbox (127.0.0.1)",
        "",
        "Written by `tools/remote_exec_test` (%s). Commit %s, %s, %s CPU cores, %s." % (
            result["date"], result["commit"], result["bazel"], result["cores"], result["server"]),
        "",
        "Executor: a Debian forky chroot with buildbox-casd, buildbox-worker and buildbox-run-hosttools "
        "(%s), %s concurrent jobs; no /opt/rules_triton (the client's interpreter), no GPU. "
        "Bazel: `--jobs=%s`, `--remote_download_all`." % (result["buildbox"], result["worker_jobs"], result["bazel_jobs"]),
        "",
        "Archive (`--@rules_triton//:python_mode=archive`): %s files, %.1f MiB packed, %.1f MiB unpacked (%s)." % (
            result["archive"]["files"], result["archive"]["archive_bytes"] / 2**20,
            result["archive"]["unpacked_bytes"] / 2**20, ", ".join(result["archive"]["distributions"])),
        "",
        "Kernel targets whose files import torch (%d): %s." % (
            len(result["torch_importing_targets"]), ", ".join("`%s`" % t for t in result["torch_importing_targets"])),
        "",
        "| run | wall s | load avg before | spawns by runner | TritonCompile (by runner) | of them torch-importing | inputs / TritonCompile | input MiB / TritonCompile | TritonCompile command s (median) |",
        "|---|---:|---:|---|---|---|---:|---:|---:|",
    ]
    for r in result["runs"]:
        tc = r["triton_compile"]
        files = tc.get("input_files_per_action", {})
        nbytes = tc.get("input_bytes_per_action", {})
        lines.append("| %s | %.1f | %s | %s | %d (%s) | %s | %s | %s | %s |" % (
            r["description"], r["wall_s"], r.get("load_before", "?"),
            ", ".join("%s %d" % kv for kv in r["spawns_by_runner"].items()),
            tc["actions"], ", ".join("%s %d" % kv for kv in tc["by_runner"].items()),
            ", ".join("%s %d" % kv for kv in tc["torch_importing_by_runner"].items()) or "-",
            "%d-%d" % (files["min"], files["max"]) if files else "-",
            "%.1f" % (nbytes["mean"] / 2**20) if nbytes else "-",
            "%.2f" % tc["execution_wall_s_median"] if tc["execution_wall_s_median"] is not None else "-",
        ))
    lines += [
        "",
        "Input MiB per TritonCompile are the action's nominal input size (what its key covers): the "
        "archive is one blob of it, uploaded once per build and fetched once per worker, then "
        "hard-linked into each action's input root and unpacked once per worker.",
        "",
        "Cold remote build, archive mode on the bare worker (median %.1f s), against the same cold build "
        "in local mode on a worker that has the interpreter at /opt/rules_triton (median %.1f s): "
        "**%.2fx** (target <= 1.2x; per round: %s). The machine is shared (see the load averages), so "
        "single runs vary; the cold runs alternate to spread the load over both." % (
            cold_s, base_s, result["cold_ratio_archive_vs_worker_with_interpreter"],
            ", ".join("%.2fx" % x for x in result["cold_ratio_per_round"])),
        "",
        "| check | result |",
        "|---|---|",
    ]
    for name, ok in checks.items():
        lines.append("| %s | %s |" % (name, "yes" if ok else "**NO**"))
    lines.append("")
    open(args.out_md, "w").write("\n".join(lines))
    print("\n".join(lines))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
