#include "cuda_common.h"
