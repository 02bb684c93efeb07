#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
