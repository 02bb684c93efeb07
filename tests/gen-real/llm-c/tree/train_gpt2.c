#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef OMP
#include <omp.h>
#endif
#include "llmc/dataloader.h"
#include "llmc/tokenizer.h"
#include "llmc/utils.h"

// reads gpt2_124M.bin, gpt2_tokenizer.bin and
// dev/data/tinyshakespeare/tiny_shakespeare_{train,val}.bin
int main() { return 0; }
