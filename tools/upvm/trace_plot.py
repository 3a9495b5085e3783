#!/usr/bin/env python3
"""trace_plot.py SUMMARY.json OUT.png - the picture of `upvm trace summary
FILE --plot OUT.png` (the upvm tool runs it with the summary's JSON).

Two panels: the utilization over time, stacked per task (each task's
running time per time bin over the bin's length: 1.0 = one core busy),
and the communication matrix (bytes from sender to receiver, the message
count written in each cell).  When the converted trace FILE.json is there
too (upvm trace convert), a third panel above them: the timeline, one row
per task on a node (a task that moved has a row on each node it ran on),
its calls and waits as bars, each message a line from its send to its
receive, each migration a dashed arrow; as XPVM's space-time view, for
the first 64 rows.  Needs matplotlib (Debian python3-matplotlib);
without it says so on one line and exits 1.
"""

import json
import sys


MAX_ROWS = 64
COLOURS = {"api": "#4878d0", "wait": "#d0d0d0", "group": "#ee854a", "migrate": "#d65f5f",
           "coupled": "#956cb4"}


def load_timeline(path):
    """The rows, slices, messages and migrations of FILE.json, or None."""
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError):
        return None
    names, nodes, rows = {}, {}, []
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_name":
            nodes[e["pid"]] = e["args"]["name"]
    for key in sorted(names):
        if names[key] != "node" and len(rows) < MAX_ROWS:
            rows.append(key)
    row_of = {k: i for i, k in enumerate(rows)}
    slices, starts, ends = [], {}, {}
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if key not in row_of:
            continue
        if e.get("ph") == "X" and e.get("cat") != "task":
            slices.append((row_of[key], e["ts"], e.get("dur", 0), e.get("cat")))
        elif e.get("ph") == "s":
            starts[(e["cat"], e["id"])] = (row_of[key], e["ts"])
        elif e.get("ph") == "f":
            ends[(e["cat"], e["id"])] = (row_of[key], e["ts"])
    arrows = [(c, starts[k], ends[k]) for k in starts if k in ends for c in [k[0]]]
    labels = ["%s  %s" % (names[k], nodes.get(k[0], "").split(" @")[0]) for k in rows]
    return {"labels": labels, "slices": slices, "arrows": arrows}


def draw_timeline(ax, t):
    """XPVM's space-time view: a row per task and node, time across."""
    for row, ts, dur, cat in t["slices"]:
        h = 0.3 if cat == "wait" else 0.6
        ax.broken_barh([(ts / 1e3, max(dur / 1e3, 1e-4))], (row - h / 2, h),
                       facecolors=COLOURS.get(cat, "#8c8c8c"))
    for cat, (r0, t0), (r1, t1) in t["arrows"]:
        ax.annotate("", xy=(t1 / 1e3, r1), xytext=(t0 / 1e3, r0),
                    arrowprops={"arrowstyle": "->", "lw": 0.6,
                                "color": "#d65f5f" if cat == "migrate" else "black",
                                "linestyle": "--" if cat == "migrate" else "-"})
    ax.set_yticks(range(len(t["labels"])))
    ax.set_yticklabels(t["labels"], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title("timeline: calls (blue), waits (grey), groups (orange), migrating (red); "
                 "messages as arrows, migrations dashed")


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
    timeline = load_timeline(s.get("trace", "") + ".json")
    if timeline:
        fig = plt.figure(figsize=(14, 11))
        grid = fig.add_gridspec(2, 2, height_ratios=[1.2, 1], width_ratios=[3, 2])
        draw_timeline(fig.add_subplot(grid[0, :]), timeline)
        ax_u, ax_m = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
    else:
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
