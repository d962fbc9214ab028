#!/usr/bin/env python3
"""Prints the README's benchmark table for one size from a results JSON object.

    Benchmarks/scripts/readme-table.py Benchmarks/results/size-1000000.json
"""
import json
import sys

# figure -> (target text, test on (value, ratio) or None when the figure has no target)
TARGETS = {
    "insert": ("≥ 0.9", lambda v, r: r >= 0.9),
    "lookup": ("≥ 0.8", lambda v, r: r >= 0.8),
    "index_query_us": ("≥ 0.5", lambda v, r: r >= 0.5),
    "index_count_ns": ("value ≤ 200 ns", lambda v, r: v <= 200),
    "range_topk_us": ("≥ 0.3", lambda v, r: r >= 0.3),
    "join_us": ("≥ 0.3", lambda v, r: r >= 0.3),
    "commit_p50_us": ("≤ 10 µs", lambda v, r: v <= 10),
    "commit_p9999_us": ("value ≤ 100 µs", lambda v, r: v <= 100),
    "commit_max_us": ("value ≤ 1 ms", lambda v, r: v <= 1000),
    "derived_notify_us": ("≤ 10 µs", lambda v, r: v <= 10),
    "bytes_per_entity": ("≤ 1.3", lambda v, r: r <= 1.3),
    "live_query_update_us": ("≤ 10 µs at 1M (see live_query_work_us)", None),
    "live_query_work_us": ("work ≤ 10 µs", lambda v, r: v <= 10),
    "snapshot": ("≥ 1.2", lambda v, r: r >= 1.2),
    "restore": ("≥ 0.7", lambda v, r: r >= 0.7),
    "incremental_save_1pct": ("≤ 0.05", lambda v, r: r <= 0.05),
    "commit_p99_during_snapshot_us": ("≤ 2", lambda v, r: r <= 2),
}


def number(x):
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:.2f}"


def main(path):
    with open(path) as f:
        report = json.loads(f.readline())
    print(f"**N = {report['size']:,}**\n")
    print("| figure | value | unit | baseline | ratio | target | met |")
    print("| --- | ---: | --- | ---: | ---: | --- | --- |")
    for name, figure in report["results"].items():
        value, ratio = figure["value"], figure["ratio"]
        target, test = TARGETS.get(name, ("—", None))
        met = "—" if test is None else ("yes" if test(value, ratio) else "**no**")
        print(f"| `{name}` | {number(value)} | {figure['unit']} | {number(figure['baseline'])} | {ratio:.2f} | {target} | {met} |")


if __name__ == "__main__":
    main(sys.argv[1])
