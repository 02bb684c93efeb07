#include "cudnn_att.h"

#include <cudnn_frontend.h>
