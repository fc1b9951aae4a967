// The Python door: an implementation that is a Python callable,
// `--impl python:MODULE:ATTR` or `python:path/to/file.py:ATTR`
// (docs/python.md). It runs in gatecheck's own process, in a CPython
// embedded in it and started once per process. Each call views gatecheck's
// guarded buffers as torch tensors through DLPack, without a copy; the glue
// on the Python side is python/gatecheck/_door.py.
//
// Python's headers stay in python_impl.cpp; this header has none. Link
// gc_python and libpython (Python3::Python).
#pragma once

#include <string>

#include "implementation.h"

namespace gatecheck {

// Registers the maker of "python:" specs with make_implementation. A program
// calls it before anything makes implementations: first thing in main(),
// before run_isolate_worker_if_requested (a fresh-process child rebuilds its
// implementation from the spec).
void enable_python_implementations();

}  // namespace gatecheck
