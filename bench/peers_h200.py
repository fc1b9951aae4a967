#!/usr/bin/env python3
"""Peer baseline for gate_residual on a CUDA GPU: out = res + gate[idx] * y.

Measures, in one run: copy bandwidth (the ceiling), torch eager (the diffusers
composition), torch eager with deterministic algorithms, and torch.compile;
fwd and fwd+bwd latency, gate-grad accuracy against a float64 reference, and
run-to-run repeatability of the gate grad. Prints a table; JSON to $OUT.
Run by the device stage bench/device/stages/peers.sh (a copy of the project's
shared device/peers_h200.py, so that it travels with the repository).
"""
import json, os, statistics, sys, subprocess
import torch

dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
out_dir = os.environ.get("OUT", "/tmp")


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:  # noqa
        return f"ERR {e}"


env = {
    "torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(),
    "cmake_prefix": torch.utils.cmake_prefix_path,
    "os": sh("grep PRETTY_NAME /etc/os-release"), "glibc": sh("ldd --version | head -1"),
    "gcc": sh("gcc --version | head -1"), "gxx": sh("g++ --version | head -1"), "nvcc": sh("nvcc --version | tail -2"),
    "cmake": sh("cmake --version | head -1"), "clang": sh("which clang clang++; clang --version | head -1"),
    "gtest": sh("ls /usr/include/gtest 2>/dev/null | head -2; ls /usr/lib/x86_64-linux-gnu/libgtest* 2>/dev/null"),
    "rapidcheck": sh("ls /usr/include/rapidcheck* 2>/dev/null | head -2"),
    "ncu": sh("which ncu compute-sanitizer"),
}
print(json.dumps(env, indent=1), flush=True)


def bench(fn, reps=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1000.0)
    return statistics.median(ts)


# ceiling: big device-to-device copy
src = torch.randn(1 << 30, device=dev, dtype=torch.bfloat16)  # 2 GiB
dst = torch.empty_like(src)
t = bench(lambda: dst.copy_(src), reps=20)
copy_bw = 2 * src.numel() * 2 / (t * 1e-6) / 1e12
print(f"copy bandwidth (read+write): {copy_bw:.2f} TB/s", flush=True)
del src, dst


def eager(res, gate, idx, y):
    return res + gate.index_select(0, idx) * y


compiled = torch.compile(eager, dynamic=False)

rows_list = [4097, 32768, 131072]
D = 3072
results = []
for N in rows_list:
    for G in [max(1, N // 1024), max(1, N // 3)]:
        torch.manual_seed(0)
        NSETS = 4  # rotate inputs so repeated runs do not sit in L2
        sets = []
        for _ in range(NSETS):
            res = torch.randn(N, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
            y = torch.randn(N, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
            gate = torch.randn(G, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
            idx = (torch.arange(N, device=dev) * G // N).to(torch.int64)
            go = torch.randn(N, D, device=dev, dtype=torch.bfloat16)
            sets.append((res, gate, idx, y, go))
        # float64 reference for set 0
        res, gate, idx, y, go = sets[0]
        g64 = (go.double() * y.double()).new_zeros(G, D).index_add_(0, idx, go.double() * y.double())
        f64 = res.double() + gate.double()[idx] * y.double()
        gy64 = go.double() * gate.double()[idx]
        min_bytes_fwd = 2 * (3 * N * D + G * D) + 8 * N
        min_bytes_bwd = 2 * (3 * N * D + 2 * G * D) + 8 * N
        for name, fn, det in [("eager", eager, False), ("eager_det", eager, True), ("compile", compiled, False)]:
            torch.use_deterministic_algorithms(det)
            k = [0]

            def fwd():
                s = sets[k[0] % NSETS]; k[0] += 1
                with torch.no_grad():
                    return fn(s[0], s[1], s[2], s[3])

            def fwdbwd():
                s = sets[k[0] % NSETS]; k[0] += 1
                o = fn(s[0], s[1], s[2], s[3])
                torch.autograd.grad(o, (s[0], s[1], s[3]), s[4])

            try:
                tf = bench(fwd)
                tb = bench(fwdbwd, reps=30)
                o = fn(res, gate, idx, y)
                gr, gg, gy = torch.autograd.grad(o, (res, gate, y), go)
                gr2, gg2, gy2 = torch.autograd.grad(fn(res, gate, idx, y), (res, gate, y), go)
                rel = lambda a, b: ((a.double() - b).norm() / b.norm()).item()
                row = dict(impl=name, rows=N, gates=G, D=D, fwd_us=tf, fwd_bwd_us=tb,
                           fwd_GBps=min_bytes_fwd / (tf * 1e-6) / 1e9,
                           fwd_bwd_GBps=(min_bytes_fwd + min_bytes_bwd) / (tb * 1e-6) / 1e9,
                           fwd_rel_err=rel(o, f64), grad_gate_rel_err=rel(gg, g64), grad_y_rel_err=rel(gy, gy64),
                           gate_grad_repeatable=bool(torch.equal(gg, gg2)))
            except Exception as e:  # noqa
                row = dict(impl=name, rows=N, gates=G, error=repr(e)[:300])
            torch.use_deterministic_algorithms(False)
            results.append(row)
            print(json.dumps(row), flush=True)
        del sets
        torch.cuda.empty_cache()

print(f"\ncopy bandwidth {copy_bw:.2f} TB/s (read+write)")
print(f"{'impl':10} {'rows':>7} {'gates':>6} {'fwd_us':>8} {'fb_us':>8} {'fwdTB/s':>8} {'fbTB/s':>8} {'gErr':>8} {'rep':>5}")
for r in results:
    if "error" in r:
        print(r["impl"], r["rows"], r["gates"], r["error"][:120]); continue
    print(f"{r['impl']:10} {r['rows']:>7} {r['gates']:>6} {r['fwd_us']:8.1f} {r['fwd_bwd_us']:8.1f} "
          f"{r['fwd_GBps']/1e3:8.2f} {r['fwd_bwd_GBps']/1e3:8.2f} {r['grad_gate_rel_err']:8.4f} {str(r['gate_grad_repeatable']):>5}")
json.dump(dict(env=env, copy_TBps=copy_bw, results=results), open(os.path.join(out_dir, "peers_h200.json"), "w"), indent=1)
