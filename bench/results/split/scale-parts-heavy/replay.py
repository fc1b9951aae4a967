# Replays scale cases through candidate cost models (properties/scale/
# scale_cost.cpp's fit): each case of a result estimated from the cases of
# that result before it, beside what it took. Per data set: how often and by
# how much a model falls short (the case runs past its share) and how often it
# overestimates by 4 or 10 times (the draw is skipped: the tier starves).
#   python3 replay.py NAME=GLOB... [--prior-part S]
import glob, json, sys

def cases_of(pattern):
    seqs = []
    for f in sorted(glob.glob(pattern)):
        for r in json.load(open(f))["results"]:
            seq = [(s["units"], s["parts"], s["seconds"]) for s in r.get("scale_runs", []) if s["units"] > 0 and s["seconds"] > 0]
            if seq:
                seqs.append(seq)
    return seqs

def sums(obs):
    S = dict(U=0.0, P=0.0, T=0.0, b=0, uu=0.0, pp=0.0, up=0.0, u=0.0, p=0.0)
    for u, p, t in obs:
        w = 1.0 / (t * t)
        S["U"] += u; S["P"] += p; S["T"] += t; S["b"] += p > 0
        S["uu"] += u * u * w; S["pp"] += p * p * w; S["up"] += u * p * w; S["u"] += u * t * w; S["p"] += p * t * w
    return S

def fit(obs, cap_one, cap_many, prior, unit_max=None):
    """The model as scale_cost.cpp has it, with the caps on a part's share of the time as parameters:
    cap_one with one case that has parts (the prior's time a part, at most cap_one of it),
    cap_many where least squares tells parts from elements."""
    S = sums(obs)
    if S["b"] == 0:
        return S["T"] / S["U"], prior
    c, cap = prior, cap_one
    det = S["uu"] * S["pp"] - S["up"] ** 2
    if S["b"] >= 2 and det > 1e-9 * S["uu"] * S["pp"]:
        c = max(0.0, (S["uu"] * S["p"] - S["up"] * S["u"]) / det)
        cap = cap_many
    c = min(c, cap * S["T"] / S["P"])
    a = (S["T"] - c * S["P"]) / S["U"]
    if unit_max is not None and a > unit_max:  # the elements no slower than the device's slowest: the rest is the parts'
        a = unit_max
        c = (S["T"] - a * S["U"]) / S["P"]
    return a, c

def replay(seqs, model):
    r = []
    for seq in seqs:
        for i in range(1, len(seq)):
            a, c = model(seq[:i])
            u, p, t = seq[i]
            r.append(t / (a * u + c * p))
    return sorted(r)

def line(name, r):
    n = len(r)
    q = lambda f: r[min(n - 1, int(f * n))]
    return (f"{name:<22} n {n:4d} | short: >2x {sum(x > 2 for x in r):3d} >4x {sum(x > 4 for x in r):3d} worst {r[-1]:6.1f}"
            f" | over: <1/4 {sum(x < 0.25 for x in r):3d} <1/10 {sum(x < 0.1 for x in r):3d} least {r[0]:7.4f}"
            f" | median {q(0.5):.2f}")

if __name__ == "__main__":
    args = sys.argv[1:]
    prior = 0.5e-3
    if "--prior-part" in args:
        i = args.index("--prior-part")
        prior = float(args[i + 1])
        del args[i:i + 2]
    sets = [(a.split("=", 1)[0], cases_of(a.split("=", 1)[1])) for a in args]
    models = {
        "half (today)": (0.5, 0.5, None),
        "half, 0.9 fitted": (0.5, 0.9, None),
        "half, unit <= 1e-6": (0.5, 0.5, 1e-6),
        "half, unit <= 5e-7": (0.5, 0.5, 5e-7),
        "half, unit <= 2.5e-7": (0.5, 0.5, 2.5e-7),
        "half, unit <= 5e-8": (0.5, 0.5, 5e-8),
    }
    for name, seqs in sets:
        print(f"{name}: {sum(len(s) for s in seqs)} cases in {len(seqs)} results (prior {prior * 1e3:g} ms a part)")
        for m, (one, many, umax) in models.items():
            print("  " + line(m, replay(seqs, lambda obs: fit(obs, one, many, prior, umax))))
