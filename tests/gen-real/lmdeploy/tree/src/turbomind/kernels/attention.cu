#include <cuda_fp16.h>
#include <cuda_runtime.h>
