#include <glob.h>
#include <stdint.h>
#include <stdio.h>

#include "utils.h"
