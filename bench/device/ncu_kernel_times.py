#!/usr/bin/env python3
"""Each kernel launch's time, a line each, from Nsight Compute's CSV on stdin
(`ncu --metrics gpu__time_duration.sum --print-units base --csv ...`):
"   123.4 us  kernel name". --launch puts ncu's launch ID first and the grid
after the time, to tell the launches of one call from the next."""
import csv
import sys


def main():
    launch = "--launch" in sys.argv[1:]
    rows = [r for r in csv.reader(line for line in sys.stdin if line.startswith('"')) if len(r) > 10]
    if not rows:
        return
    h = rows[0]
    for r in rows[1:]:
        us = float(r[h.index("Metric Value")].replace(",", "")) / 1000
        name = r[h.index("Kernel Name")]
        if launch:
            print(f'{r[h.index("ID")]:>4} {us:9.1f} us  grid {r[h.index("Grid Size")]:>14}  {name[:110]}')
        else:
            print(f"{us:9.1f} us  {name[:100]}")


if __name__ == "__main__":
    main()
