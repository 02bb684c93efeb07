#include <cudnn.h>
#include <nccl.h>
int main() { return 0; }
