#include <stdint.h>

#include "utils.h"
