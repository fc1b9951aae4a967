# Replays the scale cases of the runs named on the command line through the
# scale tier's cost model (properties/scale/scale_cost.cpp) as it was and with a
# case's own fixed time: every case counted as at least one part, so that a
# check without a batch plan learns a time a case beside its rate. Each case is
# estimated from the cases of its pair before it (else its implementation's),
# the implementation's first case left out (a warm-up), beside what it took.
#   python3 replay.py DIR_OR_JSON...
import json, glob, os, sys

def fit(obs, prior_part, min_parts):
    obs = [(u, max(p, min_parts), t) for u, p, t in obs]
    U = sum(o[0] for o in obs); P = sum(o[1] for o in obs); T = sum(o[2] for o in obs)
    b = sum(1 for o in obs if o[1] > 0)
    if b == 0: return T / U, prior_part
    uu = sum(u * u / t**2 for u, p, t in obs); pp = sum(p * p / t**2 for u, p, t in obs)
    up = sum(u * p / t**2 for u, p, t in obs); su = sum(u / t for u, p, t in obs); sp = sum(p / t for u, p, t in obs)
    c = prior_part
    det = uu * pp - up * up
    if b >= 2 and det > 1e-9 * uu * pp: c = max(0.0, (uu * sp - up * su) / det)
    c = min(c, 0.5 * T / P)
    return (T - c * P) / U, c

def files(args):
    for a in args:
        yield from (sorted(glob.glob(os.path.join(a, '*.json'))) if os.path.isdir(a) else [a])

for min_parts, name in ((0, 'as it was'), (1, 'a case at least one part')):
    ratios = []
    for f in files(sys.argv[1:]):
        j = json.load(open(f))
        prior = 20e-3 if any(r.get('device') == 'cuda' for r in j['results']) else 0.5e-3
        by_impl = {}
        for r in j['results']:
            pair = []
            seen = by_impl.setdefault(r['impl'], [])
            for s in r.get('scale_runs', []):
                u, p, t = s['units'], s['parts'], s['seconds'] - s.get('waited_seconds', 0)
                if not seen and not pair and not by_impl.get(r['impl'] + '/warm'):
                    by_impl[r['impl'] + '/warm'] = True  # the implementation's first case: a warm-up
                    continue
                src = pair or seen
                if src and u > 0 and t > 0:
                    a, c = fit(src, prior, min_parts)
                    ratios.append(t / (a * u + c * max(p, min_parts)))
                if u > 0 and t > 0:
                    pair.append((u, p, t))
                    seen.append((u, p, t))
    ratios.sort(); n = len(ratios)
    q = lambda x: ratios[min(n - 1, int(x * n))]
    print('%-26s n %4d  time/estimate: p10 %.2f  p25 %.2f  median %.2f  p75 %.2f  p90 %.2f  max %7.1f  | over 4x %3d, under 1/4 %3d'
          % (name, n, q(.1), q(.25), q(.5), q(.75), q(.9), ratios[-1], sum(x > 4 for x in ratios), sum(x < .25 for x in ratios)))
