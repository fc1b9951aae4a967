# For each run: scale cases, their seconds, the share of the pair's time, the
# estimate's error (t / est: worst over, worst under), overruns and skips.
import json, glob, os, sys
def summary(d):
  out = {}
  for f in sorted(glob.glob(d + '/*.json')):
    j = json.load(open(f))
    for r in j['results']:
      runs = r['scale_runs']
      ratios = [s['seconds'] / s['estimate_seconds'] for s in runs if s['estimate_seconds'] > 0]
      key = os.path.basename(f)[:-5] + ' ' + r['property']
      out[key] = (len(runs), sum(s['seconds'] for s in runs), max(ratios) if ratios else 0,
                  min(ratios) if ratios else 0, len(r['overruns']))
  return out
a, b = summary(sys.argv[1]), summary(sys.argv[2])
print('%-46s %25s   %25s' % ('', 'rate alone', 'rate and a part\'s time'))
print('%-46s %5s %6s %6s %6s %3s   %5s %6s %6s %6s %3s' % ('pair', 'cases', 'sec', 'worst', 'least', 'ovr', 'cases', 'sec', 'worst', 'least', 'ovr'))
for k in sorted(a):
  x, y = a[k], b.get(k, (0, 0, 0, 0, 0))
  print('%-46s %5d %6.2f %6.2f %6.2f %3d   %5d %6.2f %6.2f %6.2f %3d' % ((k,) + x + y))
