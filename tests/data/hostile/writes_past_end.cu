// Correct everywhere, but the last block also writes 16 elements past the end of z: a guard zone must report it
// as a write past the end of z (not as a modified input, nor as a crash).
// @kerncast launch saxpy grid(ceil_div(N, 256) + 1) block(256) args(x, y, z, a, N)
extern "C" __global__ void saxpy(const float* x, const float* y, float* z, float a, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + y[i];
    else if (i < n + 16)
        z[i] = 1.0f;
}
