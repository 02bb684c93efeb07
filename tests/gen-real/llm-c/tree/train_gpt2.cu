#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "llmc/cuda_common.h"
#include "llmc/dataloader.h"
#include "llmc/tokenizer.h"
#include "llmc/utils.h"
#ifdef ENABLE_CUDNN
#include "llmc/cudnn_att.h"
#endif
#ifdef MULTI_GPU
#include <nccl.h>
#endif
#ifdef USE_MPI
#include <mpi.h>
#endif

// defaults: -i dev/data/tinyshakespeare/tiny_shakespeare_train.bin -j ..._val.bin
// -e gpt2_124M_bf16.bin, -o (output log/checkpoint dir, default none)
int main(int argc, char* argv[]) { return 0; }
