#define TESTING
#include "train_gpt2.cu"
