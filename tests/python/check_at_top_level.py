"""A script that calls gatecheck.check() at its top level, with no __main__ guard: gatecheck's
process imports it to find `op`, and must refuse the nested check() rather than start another
gatecheck, which would import it again, without end."""
import gatecheck
import ops

op = ops.correct
report = gatecheck.check(op, seconds=0, cases=2, properties="accuracy")
