#!/usr/bin/env python3
"""trace_plot.py SUMMARY.json OUT.png - the picture of `upvm trace summary
FILE --plot OUT.png` (the upvm tool runs it with the summary's JSON).

Two panels: the utilization over time, stacked per task (each task's
running time per time bin over the bin's length: 1.0 = one core busy),
and the communication matrix (bytes from sender to receiver, the message
count written in each cell).  Needs matplotlib (Debian python3-matplotlib);
without it says so on one line and exits 1.
"""

import json
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: trace_plot.py SUMMARY.json OUT.png", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("upvm trace: --plot needs matplotlib: install python3-matplotlib",
              file=sys.stderr)
        return 1
    with open(sys.argv[1]) as f:
        s = json.load(f)
    tasks = s["tasks"]
    bin_ns = max(s.get("bin_ns", 1), 1)
    fig, (ax_u, ax_m) = plt.subplots(1, 2, figsize=(14, 5.5),
                                     gridspec_kw={"width_ratios": [3, 2]})
    # utilization, stacked per task
    if tasks:
        nbins = len(tasks[0]["running_bins_ns"])
        x = [(k + 0.5) * bin_ns / 1e6 for k in range(nbins)]  # ms
        ys = [[v / bin_ns for v in t["running_bins_ns"]] for t in tasks]
        ax_u.stackplot(x, ys, labels=[t["task"] for t in tasks], step="mid")
        if len(tasks) <= 16:
            ax_u.legend(loc="upper right", fontsize="small")
    ax_u.set_xlabel("time (ms since the first event)")
    ax_u.set_ylabel("running tasks (cores busy)")
    ax_u.set_title("utilization over time, per task")
    # the communication matrix
    names = sorted({m["src"] for m in s["messages"]} | {m["dst"] for m in s["messages"]},
                   key=lambda n: int(n[1:], 16) if n[1:].isalnum() else 0)
    idx = {n: i for i, n in enumerate(names)}
    grid = [[0] * len(names) for _ in names]
    count = [[0] * len(names) for _ in names]
    for m in s["messages"]:
        grid[idx[m["src"]]][idx[m["dst"]]] = m["bytes"]
        count[idx[m["src"]]][idx[m["dst"]]] = m["count"]
    if names:
        im = ax_m.imshow(grid, cmap="viridis")
        fig.colorbar(im, ax=ax_m, label="bytes")
        ax_m.set_xticks(range(len(names)))
        ax_m.set_yticks(range(len(names)))
        ax_m.set_xticklabels(names, rotation=90 if len(names) > 8 else 0)
        ax_m.set_yticklabels(names)
        if len(names) <= 24:
            for i in range(len(names)):
                for j in range(len(names)):
                    if count[i][j]:
                        ax_m.text(j, i, str(count[i][j]), ha="center", va="center",
                                  color="white", fontsize="small")
    ax_m.set_xlabel("receiver")
    ax_m.set_ylabel("sender")
    ax_m.set_title("messages (count in each cell)")
    fig.suptitle("%s: %.3f ms" % (s.get("trace", ""), s.get("duration_ns", 0) / 1e6))
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
