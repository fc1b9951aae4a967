# Replays the scale cases of the runs named on the command line through each
# candidate cost model: each case estimated from the cases of its pair before
# it, beside what it took (t / estimate).
import json, glob, math, sys
PRIOR_PART=0.5e-3
def fit(obs, mode):
  U=sum(o[0] for o in obs); P=sum(o[1] for o in obs); T=sum(o[2] for o in obs)
  by_rate=T/U
  b=sum(1 for o in obs if o[1]>0)
  if mode=='rate': return by_rate,0
  if b==0: return by_rate, PRIOR_PART
  pw = 2 if mode.startswith('rel') else 1
  uu=sum(u*u/t**pw for u,p,t in obs); pp=sum(p*p/t**pw for u,p,t in obs); up=sum(u*p/t**pw for u,p,t in obs)
  su=sum(u*t/t**pw for u,p,t in obs); sp=sum(p*t/t**pw for u,p,t in obs)
  det=uu*pp-up*up
  if b>=2 and det>1e-9*uu*pp:
    a=(su*pp-sp*up)/det; c=(uu*sp-up*su)/det
    if c<0: return by_rate,0
    if a>0 or mode.endswith('match') or mode.endswith('cap'):
      if 'match' in mode:
        if 'cap' in mode: c=min(c,0.5*T/P)
        c=min(c, T/P*0.999)
        a=(T-c*P)/U
      if a>0: return a,c
  c=min(PRIOR_PART,0.5*T/P)
  return (T-c*P)/U, c
for mode in ['rate','rel','relmatch','relmatchcap','w1','w1match']:
  allr=[]; big=[]
  for d in sys.argv[1:]:
    for f in sorted(glob.glob(d+'/*.json')):
      j=json.load(open(f))
      for r in j['results']:
        obs=[]
        for s in r['scale_runs']:
          u,p,t=s['units'],s['parts'],s['seconds']
          if obs:
            a,c=fit(obs,mode); e=a*u+c*p
            allr.append(t/e)
            big.append(t-e)
          obs.append((u,p,t))
  allr.sort(); n=len(allr)
  over=sum(x for x in big if x>0)
  print('%-12s n %d over2x %3d over4x %3d worst %6.1f p90 %.2f median %.2f under<0.25 %d | sum of seconds past estimates %.2f, max %.2f'%(mode,n,sum(x>2 for x in allr),sum(x>4 for x in allr),allr[-1],allr[int(.9*n)],allr[n//2],sum(x<0.25 for x in allr),over,max(big)))
