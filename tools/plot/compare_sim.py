#!/usr/bin/python3
"""compare_sim.py - how well the simulator ranks algorithms: reads a measured
pccl-bench CSV and a pccl-sim CSV of the same candidates (same collective,
layout and sizes) and prints, per size, the measured and predicted best, the
measured time of the predicted best relative to the measured best, the
rank agreement (Kendall's tau), and how many of the pairs that the
measurement tells apart (times more than --margin apart) the simulator
orders as measured; then the geometric mean over sizes, and where
the best parameterized choice beats its unparameterized baseline (ring, or
k = 2). Measured times are taken relative to Open MPI's in the same row (see
load). With -o it also draws measured and predicted times side by side.
Needs Debian's python3 (with python3-matplotlib for -o).

usage: compare_sim.py MEASURED.csv SIMULATED.csv [-o OUT.png] [--csv OUT.csv] [--raw]
                      [--margin FRACTION] [--times CANDIDATE]
"""
import argparse
import csv
import math
import sys


def load(path, raw=False, choices=None):
    """Times by size and candidate; the library's own choice ("auto" rows of
    pccl-bench) under the key "auto", and, in `choices` when given, the
    candidate it ran (auto:NAME with its k) by size. A measured file's times are normalized
    by Open MPI's time in the same row (interleaved, so it saw the same
    machine state) times the median of Open MPI's times at that size: on a
    noisy machine the algorithms are compared through their ratio to MPI."""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = row["algorithm"]
            key = "auto" if name.startswith("auto") else \
                name if int(row["k"]) == 0 else f"{name}:{row['k']}"
            t, m = float(row["time_us"]), row.get("mpi_time_us", "")
            if key == "auto" and choices is not None and name.startswith("auto:"):
                choices[int(row["bytes"])] = \
                    name[5:] if int(row["k"]) == 0 else f"{name[5:]}:{row['k']}"
            out.setdefault(int(row["bytes"]), {})[key] = (t, float(m) if m else None)
    for s, cands in out.items():
        ms = sorted(m for (_, m) in cands.values() if m)
        med = ms[len(ms) // 2] if ms else None
        out[s] = {k: (t / m * med if m and med and not raw else t) for k, (t, m) in cands.items()}
    return out


def unify(a, b):
    """An algorithm whose k is fixed (recdbl, hier_rec) is NAME in
    pccl-bench's CSV (k 0) and NAME:K in pccl-sim's (its k): where one file
    has NAME and the other only NAME:K at a size, the latter is renamed."""
    for x, y in ((a, b), (b, a)):
        for s, cands in x.items():
            names = y.get(s, {})
            for key in [k for k in cands if ":" in k]:
                name = key.split(":")[0]
                if name in names and key not in names and name not in cands:
                    cands[name] = cands.pop(key)


def kendall(a, b):
    keys = list(a)
    agree = total = 0
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            x = a[keys[i]] - a[keys[j]]
            y = b[keys[i]] - b[keys[j]]
            if x == 0 or y == 0:
                continue
            total += 1
            agree += 1 if (x > 0) == (y > 0) else -1
    return agree / total if total else float("nan")


def separated(a, b, margin):
    """Pairs whose times in a differ by more than the fraction margin (closer
    ones are within this machine's noise), and how many of them b orders the
    same way."""
    keys = list(a)
    agree = total = 0
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            x, y = a[keys[i]], a[keys[j]]
            if max(x, y) <= (1 + margin) * min(x, y):
                continue
            total += 1
            agree += (x < y) == (b[keys[i]] < b[keys[j]])
    return agree, total


def baseline(key):
    name = key.split(":")[0]
    if name in ("kring",):
        return "ring"
    if name in ("recmul", "precmul"):
        return "recmul:2"
    if name == "rabenseifner":
        return "rabenseifner:2"
    if name == "hier_recmul":
        return "hier_recmul:2"
    return None


def print_times(meas, sim, sizes, cand):
    rows = [(s, meas[s][cand], sim[s][cand]) for s in sizes if cand in meas[s] and cand in sim[s]]
    if not rows:
        print(f"no size has {cand} in both files", file=sys.stderr)
        return 1
    print(f"{'bytes':>10} {'candidate':>18} {'measured us':>12} {'predicted us':>13} {'ratio':>6}")
    for s, m, p in rows:
        print(f"{s:>10} {cand:>18} {m:>12.1f} {p:>13.1f} {m / p:>6.2f}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measured")
    ap.add_argument("simulated")
    ap.add_argument("-o", "--output")
    ap.add_argument("--csv")
    ap.add_argument("--raw", action="store_true",
                    help="compare measured times as they are, not relative to Open MPI's")
    ap.add_argument("--times", metavar="CANDIDATE",
                    help="instead: per size, CANDIDATE's measured time as it is (implies --raw), "
                         "its predicted time and their ratio")
    ap.add_argument("--margin", type=float, default=0.10,
                    help="measured times closer than this fraction count as a tie (default 0.10)")
    args = ap.parse_args()
    if not 0 <= args.margin < 10:
        print("--margin must be in [0, 10)", file=sys.stderr)
        return 2
    # a time set beside its prediction must be the one measured, so --times implies --raw
    choices = {}
    meas, sim = load(args.measured, args.raw or bool(args.times), choices), load(args.simulated)
    unify(meas, sim)
    sizes = sorted(set(meas) & set(sim))
    if not sizes:
        print("no size in common", file=sys.stderr)
        return 1
    if args.times:
        return print_times(meas, sim, sizes, args.times)
    rows, logs, hits, taus, seps = [], [], 0, [], []
    print(f"{'bytes':>10} {'measured best':>16} {'us':>10} {'predicted best':>16} "
          f"{'its measured us':>15} {'ratio':>6} {'tau':>6} {'separated':>10}")
    for s in sizes:
        common = sorted((set(meas[s]) & set(sim[s])) - {"auto"})
        m = {k: meas[s][k] for k in common}
        p = {k: sim[s][k] for k in common}
        mb, pb = min(m, key=m.get), min(p, key=p.get)
        ratio = m[mb] / m[pb]
        tau = kendall(m, p)
        agree, total = separated(m, p, args.margin)
        hits += mb == pb
        logs.append(math.log(ratio))
        taus.append(tau)
        seps.append((agree, total))
        rows.append((s, mb, m[mb], pb, m[pb], ratio, tau, agree, total))
        print(f"{s:>10} {mb:>16} {m[mb]:>10.1f} {pb:>16} {m[pb]:>15.1f} {ratio:>6.3f} {tau:>6.2f} "
              f"{f'{agree}/{total}':>10}")
    gm = math.exp(sum(logs) / len(logs))
    print(f"# predicted best achieves {100 * gm:.1f}% of the measured best (geometric mean over "
          f"{len(sizes)} sizes); same top choice at {hits} of {len(sizes)} sizes; "
          f"mean Kendall tau {sum(taus) / len(taus):.2f}")
    agree, total = sum(a for a, _ in seps), sum(t for _, t in seps)
    most = sum(1 for a, t in seps if t and a >= 0.8 * t)
    print(f"# of the pairs measured more than {100 * args.margin:.0f}% apart, the simulator orders "
          f"{agree} of {total} as measured ({100 * agree / max(total, 1):.0f}%); at least 80% of "
          f"them at {most} of {len(sizes)} sizes")
    autos = [(s, meas[s]["auto"], min(meas[s].values()))
             for s in sizes if "auto" in meas[s]]
    if autos:
        gm_auto = math.exp(sum(math.log(b / a) for _, a, b in autos) / len(autos))
        print(f"# the library's own choice (auto) achieves {100 * gm_auto:.1f}% of the measured "
              f"best (geometric mean over {len(autos)} sizes; per size: "
              + ", ".join(f"{s} {b / a:.2f}" for s, a, b in autos) + ")")
    # The choice timed by its own candidate row: on a noisy machine the auto
    # row and the row of the same algorithm differ by the noise alone.
    picked = [(s, choices[s], min(v for k, v in meas[s].items() if k != "auto") / meas[s][choices[s]])
              for s in sizes if choices.get(s) in meas[s]]
    if picked:
        near = sum(1 for _, _, r in picked if r >= 0.95)
        print(f"# the library's choice, timed by its candidate row, is within 5% of the fastest "
              f"candidate at {near} of {len(picked)} sizes (per size: "
              + ", ".join(f"{s} {c} {r:.2f}" for s, c, r in picked) + ")")
    gains = []
    for s in sizes:
        for key, t in meas[s].items():
            b = baseline(key)
            if b and b != key and b in meas[s]:
                gains.append((meas[s][b] / t, s, key, b))
    gains.sort(reverse=True)
    for g, s, key, b in gains[:5]:
        print(f"# {key} beats its baseline {b} by {100 * (g - 1):.0f}% at {s} bytes (measured)")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["bytes", "measured_best", "measured_us", "predicted_best",
                        "predicted_best_measured_us", "ratio", "kendall_tau",
                        "separated_agree", "separated_pairs"])
            w.writerows(rows)
    if args.output:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=False)
        for ax, data, title in ((axes[0], meas, "measured"), (axes[1], sim, "predicted")):
            for key in sorted(set().union(*(set(data[s]) for s in sizes)) - {"auto"}):
                xs = [s for s in sizes if key in data[s]]
                ax.plot(xs, [data[s][key] for s in xs], marker="o", ms=3, label=key)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("size (bytes)")
            ax.set_ylabel("time (us)")
            ax.set_title(title)
        axes[1].legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(args.output, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
