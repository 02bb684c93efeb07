#include <torch/extension.h>

#include <vector>
