"""torch.distributed (gloo, CPU, 4 processes, and 2 of them as a group) with gate_residual's split
exchange as LibTorch ops: each rank takes the state of its shard of the batch
(torch.ops.gatecheck.gate_residual_grad_gate_state), the states are
all-reduced with two ordinary integer all-reduces (all_reduce_state below),
and the finalized grad_gate (gate_residual_state_finalize) equals the
single-process full batch's bit for bit, for contiguous and strided shards,
bf16, fp16 and fp32. The control, which must differ: each rank's own
grad_gate all-reduced in fp32 and rounded, as DDP combines gradients. The same
for rmsnorm_modulate's dweight, dshift and dscale through its state ops.

usage: torch_op_gloo_test.py LIBGATECHECK_TORCH_OP.so WORKDIR
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from gloo_allreduce import DIM, GATES, ROWS, batch, bits, report_shards, shard
from rmsnorm_torch_op_state_test import batch as rmsnorm_batch
from torch_op_state_test import load


def all_reduce_state(state, group=None, combine=None):
    """The all-reduce of a binned state [rows, dim, 4]: MAX of the top bins (the low
    byte of each element's last word), each rank's state aligned to them (combined
    with an empty state of that top bin), then SUM of the words with the top bin
    taken out; it is put back."""
    combine = combine or torch.ops.gatecheck.gate_residual_state_combine
    top = state[..., 3] & 0xff
    dist.all_reduce(top, op=dist.ReduceOp.MAX, group=group)
    empty = torch.zeros_like(state)
    empty[..., 3] = top
    aligned = combine([state, empty])
    aligned[..., 3] -= top
    dist.all_reduce(aligned, op=dist.ReduceOp.SUM, group=group)
    aligned[..., 3] += top
    return aligned


def worker(rank, lib, store, failures):
    """Rank `rank` of 4; ranks 0 and 1 also form a world of 2."""
    load(lib)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=4)
    pair = dist.new_group([0, 1])  # every rank takes part in creating it
    check(rank, 4, None, failures)
    check_rmsnorm(rank, 4, None, failures)
    if rank < 2:
        check(rank, 2, pair, failures)
        check_rmsnorm(rank, 2, pair, failures)
    dist.destroy_process_group()


def check(rank, world, group, failures):
    ops = torch.ops.gatecheck
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for how in ("contiguous", "strided"):
            grad_out, gate, index, y = batch(dtype, 7)
            rows = shard(rank, world, how, 11 + world)
            part = (grad_out[rows], gate, index[rows], y[rows])
            state = all_reduce_state(ops.gate_residual_grad_gate_state(*part), group)
            got = ops.gate_residual_state_finalize(state, dtype)
            full_state = ops.gate_residual_grad_gate_state(grad_out, gate, index, y)  # one process, whole batch
            full = ops.gate_residual_state_finalize(full_state, dtype)
            same = torch.equal(state, full_state) and torch.equal(bits(got), bits(full))
            # The control: each rank's own grad_gate, all-reduced in fp32 and rounded (what DDP does).
            mine = ops.gate_residual_state_finalize(ops.gate_residual_grad_gate_state(*part), dtype).float()
            dist.all_reduce(mine, op=dist.ReduceOp.SUM, group=group)
            framework_same = torch.equal(bits(mine.to(dtype)), bits(full))
            report_shards(rank, f"world {world}, {how} shards, {dtype}", same, framework_same, failures)


def rms_batch(dtype, seed):
    return rmsnorm_batch(ROWS, DIM, GATES, dtype, seed)


def check_rmsnorm(rank, world, group, failures):
    ops = torch.ops.gatecheck
    state_of, finalize = ops.rmsnorm_modulate_param_grad_state, ops.rmsnorm_modulate_state_finalize
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for how in ("contiguous", "strided"):
            grad_out, x, w, scale, index = rms_batch(dtype, 17)
            rows = shard(rank, world, how, 23 + world)
            part = (grad_out[rows], x[rows], w, scale, index[rows], 1e-6)
            state = all_reduce_state(state_of(*part), group, ops.rmsnorm_modulate_state_combine)
            got = finalize(state, dtype)
            full_state = state_of(grad_out, x, w, scale, index, 1e-6)  # one process, whole batch
            full = finalize(full_state, dtype)
            same = torch.equal(state, full_state) and all(torch.equal(bits(a), bits(b)) for a, b in zip(got, full))
            # The control: each rank's own gradients, all-reduced in fp32 and rounded (what DDP does).
            mine = [t.float() for t in finalize(state_of(*part), dtype)]
            for t in mine:
                dist.all_reduce(t, op=dist.ReduceOp.SUM, group=group)
            framework_same = all(torch.equal(bits(a.to(dtype)), bits(b)) for a, b in zip(mine, full))
            report_shards(rank, f"rmsnorm_modulate, world {world}, {how} shards, {dtype}", same, framework_same,
                          failures)


def main():
    lib, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    store = os.path.join(work, "store")
    if os.path.exists(store):
        os.remove(store)
    failures = mp.get_context("fork").Queue()
    # fork: the ranks start without importing torch again (a CPU-only test)
    mp.start_processes(worker, args=(lib, store, failures), nprocs=4, join=True, start_method="fork")
    bad = []
    while not failures.empty():
        bad.append(failures.get())
    if bad:
        print("FAIL: " + "; ".join(bad))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
