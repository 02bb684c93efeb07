#define TESTING
#include "train_gpt2_fp32.cu"
