#include <torch/extension.h>
