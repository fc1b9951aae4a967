"""gate_residual in Python with a declared split exchange, for the Python
door's tests: grad_gate is the exact sum of the fp32 terms g*y (Python
integers in units of 2^-149), kept as host-repro keeps it (6 int64 words an
element: four digits of radix 2^56, a signed top digit, special-term counts),
correctly rounded once to the dtype. Exact passes split_invariance; Lossy's
combine drops the last rank's state, which the property must catch."""
import torch

_MASK = (1 << 56) - 1
_FORMATS = {torch.float32: (24, -126, 127), torch.bfloat16: (8, -126, 127), torch.float16: (11, -14, 15)}


def _to_word(v):  # a Python int as int64 (two's complement)
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def _encode(v, nan, pinf, ninf):
    return [_to_word((v >> (56 * i)) & _MASK) for i in range(4)] + [_to_word(v >> 224),
                                                                   nan + (pinf << 21) + (ninf << 42)]


def _decode(w):
    v = sum(w[i] * (1 << (56 * i)) for i in range(4)) + w[4] * (1 << 224)
    v %= 1 << 288
    if v >= 1 << 287:
        v -= 1 << 288
    c = w[5]
    return v, c & ((1 << 21) - 1), (c >> 21) & ((1 << 21) - 1), (c >> 42) & ((1 << 21) - 1)


def _round(v, nan, pinf, ninf, fmt):
    """The exact value v * 2^-149 rounded once to nearest even to the format."""
    if nan or (pinf and ninf):
        return float("nan")
    if pinf or ninf:
        return float("inf") if pinf else float("-inf")
    if v == 0:
        return 0.0
    p, emin, emax = fmt
    sign, m = (-1.0 if v < 0 else 1.0), abs(v)
    e = m.bit_length() - 1 - 149
    q = max(e, emin) - (p - 1)
    shift = q + 149
    kept = m >> shift
    if shift > 0:
        rem, half = m & ((1 << shift) - 1), 1 << (shift - 1)
        if rem > half or (rem == half and kept & 1):
            kept += 1
    if kept.bit_length() - 1 + q > emax:
        return sign * float("inf")
    return sign * float(kept) * 2.0 ** q


class _Exchange:
    state = "grad_gate exact in Python integers: gates x dim x 6 int64 words; combine = integer sum"

    @staticmethod
    def partial(grad_out, res, gate, index, y):
        gates, dim = gate.shape
        terms = (grad_out.float() * y.float()).tolist()
        acc = [[0, 0, 0, 0] for _ in range(gates * dim)]  # value, nan, +inf, -inf
        for r, k in enumerate(index.tolist()):
            for j, t in enumerate(terms[r]):
                a = acc[k * dim + j]
                if t != t:
                    a[1] += 1
                elif t in (float("inf"), float("-inf")):
                    a[2 if t > 0 else 3] += 1
                else:
                    a[0] += int(t * 2.0 ** 149)  # exact: a power-of-two scaling of an fp32 value
        return torch.tensor([w for a in acc for w in _encode(*a)], dtype=torch.int64)

    @classmethod
    def combine(cls, states):
        total = torch.zeros_like(states[0])
        for s in states:
            total += s  # integer addition, as an all-reduce SUM
        w = total.tolist()
        return torch.tensor([x for i in range(0, len(w), 6) for x in _encode(*_decode(w[i:i + 6]))],
                            dtype=torch.int64)

    @staticmethod
    def finalize(state, grad_out, res, gate, index, y):
        w = state.tolist()
        vals = [_round(*_decode(w[i:i + 6]), _FORMATS[gate.dtype]) for i in range(0, len(w), 6)]
        return torch.tensor(vals, dtype=torch.float64).to(gate.dtype).reshape(gate.shape)


class _Lossy(_Exchange):
    @classmethod
    def combine(cls, states):
        return _Exchange.combine(states[:-1] if len(states) > 1 else states)


class _GateResidual:
    """forward and backward as torch eager rounds them; grad_gate from the exchange."""

    exchange = _Exchange

    def forward(self, res, gate, index, y):
        return res + gate[index] * y

    def backward(self, grad_out, res, gate, index, y):
        ex = self.exchange
        grad_gate = ex.finalize(ex.partial(grad_out, res, gate, index, y), grad_out, res, gate, index, y)
        return grad_out.clone(), grad_gate, grad_out * gate[index]


class ExactImpl(_GateResidual):
    gatecheck_split_exchange = _Exchange


class LossyImpl(_GateResidual):
    gatecheck_split_exchange = _Lossy


Exact = ExactImpl()
Lossy = LossyImpl()
NoExchange = _GateResidual()  # the same sums, no exchange declared: the framework combine
