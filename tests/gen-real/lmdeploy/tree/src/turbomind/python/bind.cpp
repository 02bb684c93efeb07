#include <cuda_runtime.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
