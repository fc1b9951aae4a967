# The Python door (docs/python.md): `--impl python:TARGET` runs a Python
# callable inside gatecheck through an embedded CPython, and the `gatecheck`
# Python package runs gatecheck's engine from Python. Both put gatecheck's
# LibTorch and Python's torch into one process, so they must be the same
# library files. It needs:
#   - a Python 3 interpreter whose `import torch` loads the LibTorch this build
#     links: Python3_EXECUTABLE if given, else the first of /usr/bin/python3
#     (Debian's, whose python3-torch shares libtorch-dev's files; the `python3`
#     on PATH may be another one without torch) and `python3` on PATH (a
#     virtual environment's, as on a machine with pip's torch, whose LibTorch
#     this build then links through torch.utils.cmake_prefix_path);
#   - its headers and libpython (python3-dev): Development.Embed for the CLI,
#     Development.Module for the package;
#   - pybind11 (pybind11-dev, or pip's, found through the interpreter).
# Sets GATECHECK_HAVE_PYTHON, GATECHECK_PYTHON_EXECUTABLE and pybind11's targets.
set(GATECHECK_HAVE_PYTHON OFF)
if(NOT GATECHECK_WITH_PYTHON)
  return()
endif()
if(NOT GATECHECK_HAVE_TORCH)
  message(STATUS "gatecheck: the Python door needs LibTorch: disabled")
  return()
endif()

file(REAL_PATH "${TORCH_LIBRARY}" _gc_libtorch)
# Sets ${out} to "" if `py` imports torch from the same libtorch, else why not.
function(_gc_python_mismatch py out)
  execute_process(
    COMMAND "${py}" -c "import os, torch; print(os.path.realpath(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch.so')))"
    OUTPUT_VARIABLE lib ERROR_VARIABLE err RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    string(REGEX REPLACE ".*\n([^\n]+)\n?$" "\\1" err "${err}")
    set(${out} "${py} cannot import torch (${err})" PARENT_SCOPE)
  elseif(NOT lib STREQUAL "${_gc_libtorch}")
    set(${out} "${py}'s torch loads ${lib}, this build links ${_gc_libtorch}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

if(Python3_EXECUTABLE)
  set(_gc_candidates "${Python3_EXECUTABLE}")
else()
  find_program(_gc_path_python3 NAMES python3 NO_CACHE)
  set(_gc_candidates /usr/bin/python3 ${_gc_path_python3})
  list(REMOVE_DUPLICATES _gc_candidates)
endif()
set(_gc_why "")
foreach(py IN LISTS _gc_candidates)
  if(NOT EXISTS "${py}")
    continue()
  endif()
  _gc_python_mismatch("${py}" why)
  if(why STREQUAL "")
    set(GATECHECK_PYTHON_EXECUTABLE "${py}")
    break()
  endif()
  list(APPEND _gc_why "${why}")
endforeach()
if(NOT GATECHECK_PYTHON_EXECUTABLE)
  message(STATUS "gatecheck: no Python whose torch is this LibTorch (${_gc_why}): the Python door is disabled "
                 "(pass -DPython3_EXECUTABLE=/path/to/python3 whose torch this build links)")
  return()
endif()

set(Python3_EXECUTABLE "${GATECHECK_PYTHON_EXECUTABLE}" CACHE FILEPATH "the Python whose torch is this LibTorch" FORCE)
find_package(Python3 COMPONENTS Interpreter Development.Embed Development.Module)
if(NOT Python3_Development.Embed_FOUND OR NOT Python3_Development.Module_FOUND)
  message(STATUS "gatecheck: ${GATECHECK_PYTHON_EXECUTABLE} has no headers or libpython (python3-dev): "
                 "the Python door is disabled")
  return()
endif()
find_package(pybind11 CONFIG QUIET)
if(NOT pybind11_FOUND)  # pip's pybind11 tells where its CMake files are
  execute_process(COMMAND "${GATECHECK_PYTHON_EXECUTABLE}" -c "import pybind11; print(pybind11.get_cmake_dir())"
                  OUTPUT_VARIABLE _gc_pybind11_dir RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    find_package(pybind11 CONFIG QUIET PATHS "${_gc_pybind11_dir}" NO_DEFAULT_PATH)
  endif()
endif()
if(NOT pybind11_FOUND)
  message(STATUS "gatecheck: pybind11 not found (pybind11-dev): the Python door is disabled")
  return()
endif()
set(GATECHECK_HAVE_PYTHON ON)
message(STATUS "gatecheck: Python door enabled: ${GATECHECK_PYTHON_EXECUTABLE} (Python ${Python3_VERSION}, "
               "pybind11 ${pybind11_VERSION})")
