// One thread per element; its channel is (i / (H * W)) % C.
// @kerncast launch batchnorm grid(ceil_div(B * C * H * W, 256)) block(256) args(x, mean, var, w, b, y, eps, B, C, H, W)

extern "C" __global__ void batchnorm(const float* x, const float* mean, const float* var, const float* w,
                                     const float* b, float* y, float eps, int B, int C, int H, int W) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)B * C * H * W) return;
    const int c = (int)((i / ((size_t)H * W)) % C);
    y[i] = (x[i] - mean[c]) / sqrtf(var[c] + eps) * w[c] + b[c];
}
