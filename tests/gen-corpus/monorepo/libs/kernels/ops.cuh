__global__ void scale(float* x, float a);
